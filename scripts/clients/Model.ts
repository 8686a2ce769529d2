/**
 * The language-neutral model both official clients are generated from: the
 * service's OpenAPI document (made from the HttpApi definition itself), cut into
 * operations with the namespace and method name every client uses. The naming
 * rule lives only here so the TypeScript and Python clients cannot disagree.
 */
import * as OpenApi from "@effect/platform/OpenApi"
import { Api } from "../../src/Api.js"

/** A JSON Schema fragment as the document has it ($ref points into #/components/schemas). */
export type JsonSchema = { readonly [key: string]: unknown }

export interface Param {
  /** identifier in the client (the wire names are already camelCase) */
  readonly name: string
  readonly wireName: string
  readonly required: boolean
  readonly schema: JsonSchema
  readonly description: string | undefined
}

/** How a success answer is shaped. */
export type Success =
  /** `{data, meta}`: `data` is the answer (for a list, an array; meta has next_cursor) */
  | { readonly kind: "envelope"; readonly statuses: ReadonlyArray<number>; readonly data: JsonSchema }
  /** a JSON body that is the answer itself (no envelope) */
  | { readonly kind: "bare"; readonly statuses: ReadonlyArray<number>; readonly data: JsonSchema }
  | { readonly kind: "text"; readonly statuses: ReadonlyArray<number>; readonly contentType: string }
  | { readonly kind: "binary"; readonly statuses: ReadonlyArray<number>; readonly contentType: string }

export interface Operation {
  /** `group.endpoint`, as in the document */
  readonly operationId: string
  readonly method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE"
  /** the path as the document writes it, e.g. /api/v1/tasks/{taskId} */
  readonly path: string
  /** e.g. ["experiments", "queues"] */
  readonly namespace: ReadonlyArray<string>
  /** e.g. "list" */
  readonly name: string
  readonly summary: string | undefined
  readonly description: string | undefined
  readonly pathParams: ReadonlyArray<Param>
  readonly queryParams: ReadonlyArray<Param>
  /**
   * The application/json request body, or undefined for none. `schema` names
   * the properties as clients do; `wireNames` maps each renamed one (client
   * name → name on the wire), so an emitter renames before sending.
   */
  readonly body:
    | { readonly schema: JsonSchema; readonly required: boolean; readonly wireNames: Readonly<Record<string, string>> }
    | undefined
  readonly success: Success
  /**
   * A paginated list: takes `cursor` and `limit` and answers `meta.next_cursor`;
   * `item` is the schema of one element of `data` (for an answer that is a list
   * only for some queries, e.g. files.read without `path`, the list variant's).
   */
  readonly pagination: { readonly item: JsonSchema } | undefined
  /** POST, PATCH or DELETE: carries an Idempotency-Key */
  readonly isWrite: boolean
  /** whether the operation needs a credential */
  readonly authenticated: boolean
}

export interface Model {
  readonly title: string
  readonly version: string
  readonly description: string | undefined
  readonly operations: ReadonlyArray<Operation>
  /** operations of the document no client offers, with the reason */
  readonly excluded: ReadonlyArray<{ readonly operationId: string; readonly reason: string }>
  /** #/components/schemas, by name */
  readonly schemas: Readonly<Record<string, JsonSchema>>
}

/** Operations deliberately left out of the clients; the coverage test reads this list. */
export const EXCLUDED: Readonly<Record<string, string>> = {
  "webhooks.receive": "called by the git host, signed with the webhook secret (HMAC), not with an API key"
}

/**
 * Where the general rule (below) reads awkwardly. Keyed by operationId.
 */
export const OVERRIDES: Readonly<Record<string, { readonly namespace?: ReadonlyArray<string>; readonly name: string }>> = {
  // POST /sync pulls the repository now: the contract calls it "sync now"
  "sync.pull": { name: "now" },
  // POST /experiments/queues puts an experiment on a queue: a new queue entry
  "experiments.queue": { name: "create" },
  "search.search": { name: "query" },
  "contributions.summary": { namespace: ["contributions"], name: "summary" },
  "health.healthz": { name: "live" },
  "health.readyz": { name: "ready" }
}

/**
 * Fields clients name otherwise than the wire (keyed by operationId, wire name
 * → client name): the `sha` a write compares against is the sha the caller
 * expects the file to have now.
 */
export const CLIENT_NAMES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "files.write": { sha: "expectedSha" },
  "files.update": { sha: "expectedSha" },
  "files.delete": { sha: "expectedSha" }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const asRecord = (u: unknown): Record<string, unknown> => (isRecord(u) ? u : {})
const asString = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

const camel = (kebab: string) => kebab.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())
const upperFirst = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)
const singular = (s: string) => (s.endsWith("s") ? s.slice(0, -1) : s)

/** The OpenAPI document of the service, as `GET /openapi.json` serves it. */
export const openApiDocument = (): Record<string, unknown> => asRecord(JSON.parse(JSON.stringify(OpenApi.fromApi(Api))))

const resolveRef = (doc: Record<string, unknown>, schema: unknown): Record<string, unknown> => {
  const ref = asString(asRecord(schema)["$ref"])
  if (ref === undefined) return asRecord(schema)
  const name = ref.replace("#/components/schemas/", "")
  return asRecord(asRecord(asRecord(doc["components"])["schemas"])[name])
}

/**
 * URL parameters reach the server as strings, so the document types a numeric
 * one as "a string to be decoded into a number"; clients take a number.
 */
const clientParamSchema = (name: string, schema: Record<string, unknown>): JsonSchema => {
  if (schema["type"] === "string" && schema["description"] === "a string to be decoded into a number") {
    return name === "limit"
      ? { type: "integer", minimum: 1, maximum: 100, description: "page size, default 20, max 100" }
      : { type: "number" }
  }
  return schema
}

const paramOf = (operationId: string) => (p: Record<string, unknown>): Param => {
  const wireName = asString(p["name"]) ?? ""
  const schema = clientParamSchema(wireName, asRecord(p["schema"]))
  const description = asString(p["description"])
  return {
    name: CLIENT_NAMES[operationId]?.[wireName] ?? wireName,
    wireName,
    required: p["required"] === true,
    schema,
    description: description === "a string to be decoded into a number" ? asString(schema["description"]) : description
  }
}

/** The `{data, meta}` variants of a JSON answer (several when the schema is an anyOf). */
const envelopeVariants = (doc: Record<string, unknown>, schema: Record<string, unknown>) => {
  const variants = Array.isArray(schema["anyOf"]) ? schema["anyOf"].map((v) => resolveRef(doc, v)) : [resolveRef(doc, schema)]
  return variants.map((v) => {
    const properties = asRecord(v["properties"])
    const meta = resolveRef(doc, properties["meta"])
    return {
      isEnvelope: "data" in properties && "meta" in properties,
      data: asRecord(properties["data"]),
      isPage: "next_cursor" in asRecord(meta["properties"])
    }
  })
}

const successOf = (doc: Record<string, unknown>, responses: Record<string, unknown>) => {
  const statuses = Object.keys(responses).filter((s) => /^2\d\d$/.test(s)).map(Number)
  const first = asRecord(responses[String(statuses[0])])
  const [contentType, media] = Object.entries(asRecord(first["content"]))[0] ?? ["application/json", {}]
  const schema = asRecord(asRecord(media)["schema"])
  if (contentType.startsWith("text/")) return { success: { kind: "text", statuses, contentType } as const, page: undefined }
  if (contentType !== "application/json") return { success: { kind: "binary", statuses, contentType } as const, page: undefined }
  const variants = envelopeVariants(doc, schema)
  const page = variants.find((v) => v.isPage && v.data["type"] === "array")
  if (variants.every((v) => v.isEnvelope)) {
    const data = variants.length === 1 ? variants[0]!.data : { anyOf: variants.map((v) => v.data) }
    return { success: { kind: "envelope", statuses, data } as const, page: page && asRecord(page.data["items"]) }
  }
  return { success: { kind: "bare", statuses, data: schema } as const, page: undefined }
}

/**
 * The naming rule. The namespace is the path's static segments after /api/v1
 * (for paths outside it, the operation's group). A trailing segment that is
 * the endpoint's own verb (/experiments/{id}/cancel) is the method, not a
 * namespace. The method name is the endpoint's name with the namespace's noun
 * dropped (experiments.listQueues → list, projects.addItem → add); an endpoint
 * named after its collection (papers.versions) is list, get or create by method.
 */
export const nameOf = (
  operationId: string,
  method: string,
  path: string,
  paginated: boolean
): { namespace: ReadonlyArray<string>; name: string } => {
  const [group = "", endpoint = ""] = operationId.split(".")
  const override = OVERRIDES[operationId]
  const segments = path.split("/").filter((s) => s.length > 0)
  const underV1 = segments[0] === "api" && segments[1] === "v1"
  let namespace: Array<string> = underV1 ? segments.slice(2).filter((s) => !s.startsWith("{")).map(camel) : [group]
  const last = segments.at(-1) ?? ""
  const beforeLast = segments.at(-2) ?? ""
  if (underV1 && beforeLast.startsWith("{") && camel(last) === endpoint && !paginated) namespace = namespace.slice(0, -1)
  let name = endpoint
  const noun = namespace.at(-1) ?? ""
  if (name === noun) {
    name = method === "GET" ? (paginated ? "list" : "get") : method === "POST" ? "create" : method.toLowerCase()
  } else {
    for (const suffix of [upperFirst(noun), upperFirst(singular(noun))]) {
      if (noun !== group && name.length > suffix.length && name.endsWith(suffix)) {
        name = name.slice(0, -suffix.length)
        break
      }
    }
  }
  return { namespace: override?.namespace ?? namespace, name: override?.name ?? name }
}

/** The body schema with the client's property names, and the renames made. */
const clientBody = (doc: Record<string, unknown>, operationId: string, schema: Record<string, unknown>) => {
  const renames = CLIENT_NAMES[operationId] ?? {}
  const resolved = resolveRef(doc, schema)
  const properties = asRecord(resolved["properties"])
  const wireNames: Record<string, string> = {}
  for (const wire of Object.keys(properties)) if (renames[wire] !== undefined) wireNames[renames[wire]] = wire
  if (Object.keys(wireNames).length === 0) return { schema, wireNames }
  const clientName = (wire: string) => renames[wire] ?? wire
  const required = Array.isArray(resolved["required"]) ? resolved["required"].map((r) => clientName(String(r))) : []
  return {
    schema: {
      ...resolved,
      required,
      properties: Object.fromEntries(Object.entries(properties).map(([wire, s]) => [clientName(wire), s]))
    },
    wireNames
  }
}

const METHODS = ["get", "post", "patch", "put", "delete"] as const

export const buildModel = (doc: Record<string, unknown> = openApiDocument()): Model => {
  const info = asRecord(doc["info"])
  const operations: Array<Operation> = []
  const excluded: Array<{ operationId: string; reason: string }> = []
  for (const [path, item] of Object.entries(asRecord(doc["paths"]))) {
    for (const lower of METHODS) {
      const op = asRecord(asRecord(item)[lower])
      const operationId = asString(op["operationId"])
      if (operationId === undefined) continue
      const reason = EXCLUDED[operationId]
      if (reason !== undefined) {
        excluded.push({ operationId, reason })
        continue
      }
      const method = lower.toUpperCase() as Operation["method"]
      const params = (Array.isArray(op["parameters"]) ? op["parameters"] : []).map(asRecord).filter((p) => !("$ref" in p))
      const pathParams = params.filter((p) => p["in"] === "path").map(paramOf(operationId))
      const queryParams = params.filter((p) => p["in"] === "query").map(paramOf(operationId))
      const requestBody = asRecord(op["requestBody"])
      const jsonBody = asRecord(asRecord(requestBody["content"])["application/json"])
      const { success, page } = successOf(doc, asRecord(op["responses"]))
      const takesPage = queryParams.some((p) => p.wireName === "cursor") && queryParams.some((p) => p.wireName === "limit")
      const pagination = takesPage && page !== undefined ? { item: page } : undefined
      operations.push({
        operationId,
        method,
        path,
        ...nameOf(operationId, method, path, pagination !== undefined),
        summary: asString(op["summary"]),
        description: asString(op["description"]),
        pathParams,
        queryParams,
        body:
          "schema" in jsonBody
            ? { ...clientBody(doc, operationId, asRecord(jsonBody["schema"])), required: requestBody["required"] === true }
            : undefined,
        success,
        pagination,
        isWrite: method === "POST" || method === "PATCH" || method === "DELETE",
        authenticated: Array.isArray(op["security"]) && op["security"].length > 0
      })
    }
  }
  return {
    title: asString(info["title"]) ?? "",
    version: asString(info["version"]) ?? "",
    description: asString(info["description"]),
    operations,
    excluded,
    schemas: asRecord(asRecord(doc["components"])["schemas"]) as Record<string, JsonSchema>
  }
}
