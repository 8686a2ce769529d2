import * as HttpApi from "@effect/platform/HttpApi"

/** Which methods each declared path answers, to tell 405 from 404; and the names of path parameters. */
export interface RouteTable {
  readonly methodsFor: (url: string) => ReadonlyArray<string>
  /** The name of the path parameter at this segment of a path (split on `/`), when a declared route has one there. */
  readonly parameterAt: (path: string, segment: number) => string | undefined
  /** The declared path template a request matches (`/api/v1/labs/:id`), or "unmatched": a label that cannot grow. */
  readonly templateOf: (method: string, url: string) => string
}

const toPattern = (path: string): RegExp =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+")}/?$`)

export const makeRouteTable = (api: HttpApi.HttpApi.Any, extra: ReadonlyArray<{ method: string; path: string }> = []): RouteTable => {
  const declared: Array<{ method: string; path: string }> = [...extra]
  // reflect wants the props view of an API; every HttpApi value is one (the type only hides its groups)
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      declared.push({ method: endpoint.method, path: endpoint.path })
    }
  })
  const routes = declared.map((r) => ({ method: r.method, path: r.path, pattern: toPattern(r.path), segments: r.path.split("/") }))
  // most requests name a path without parameters: found without trying every pattern
  const fixed = new Map(routes.filter((r) => !r.path.includes(":")).map((r) => [`${r.method} ${r.path}`, r.path]))
  return {
    templateOf: (method, url) => {
      const path = url.split("?")[0] ?? url
      return fixed.get(`${method} ${path}`) ?? routes.find((r) => r.method === method && r.pattern.test(path))?.path ?? "unmatched"
    },
    methodsFor: (url) => {
      const path = url.split("?")[0] ?? url
      return [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))]
    },
    parameterAt: (path, segment) => {
      const parts = path.split("/")
      const fits = (template: ReadonlyArray<string>) =>
        template.length === parts.length && template.every((t, i) => t.startsWith(":") || t === parts[i] || i === segment)
      const template = routes.find((r) => r.segments[segment]?.startsWith(":") && fits(r.segments))?.segments[segment]
      return template?.slice(1)
    }
  }
}
