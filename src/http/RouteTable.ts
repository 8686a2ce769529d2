import { HttpApi } from "@effect/platform"

/** Which methods each declared path answers, to tell 405 from 404. */
export interface RouteTable {
  readonly methodsFor: (url: string) => ReadonlyArray<string>
}

const toPattern = (path: string): RegExp =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+")}/?$`)

export const makeRouteTable = (api: HttpApi.HttpApi.Any, extra: ReadonlyArray<{ method: string; path: string }> = []): RouteTable => {
  const routes: Array<{ method: string; pattern: RegExp }> = extra.map((r) => ({ method: r.method, pattern: toPattern(r.path) }))
  // reflect wants the props view of an API; every HttpApi value is one (the type only hides its groups)
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      routes.push({ method: endpoint.method, pattern: toPattern(endpoint.path) })
    }
  })
  return {
    methodsFor: (url) => {
      const path = url.split("?")[0] ?? url
      return [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))]
    }
  }
}
