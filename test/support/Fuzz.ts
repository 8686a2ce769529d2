/**
 * Requests for the fuzz test (test/http/fuzz.test.ts): every operation of the
 * OpenAPI document, filled with values derived from the contract's own schemas
 * (effect's Arbitrary) and with hostile ones (NUL, lone surrogates, deep
 * nesting, huge and non-integer numbers, wrong types, odd paths, long strings).
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { Arbitrary, Either, FastCheck as fc, Option, Schema, SchemaAST } from "effect"
import { Api } from "../../src/Api.js"
import { hostileBody, hostileCursor, hostileString, hostileValue, webhookBody } from "./Hostile.js"

export interface Operation {
  /** `group.endpoint`, as the OpenAPI document names it. */
  readonly id: string
  readonly method: string
  /** The path with `{param}` placeholders. */
  readonly path: string
  readonly params: ReadonlyArray<string>
  readonly query: Option.Option<Payload>
  readonly payload: Option.Option<Payload>
}

export interface FuzzRequest {
  readonly operation: string
  readonly method: string
  /** Path and query, already encoded. */
  readonly url: string
  readonly token: "admin" | "writer" | "reader" | "none"
  /** The raw body and its content type, if any. */
  readonly body?: string
  readonly contentType?: string
  readonly headers?: Readonly<Record<string, string>>
}

/** What the fuzzer knows of the fixture: the labs and an existing resource per path segment (`agents` → agent_…). */
export interface Context {
  readonly labIds: ReadonlyArray<string>
  readonly existing: Readonly<Record<string, string>>
}

type Payload = Schema.Schema<unknown, unknown>

/** Every operation of the document, with the contract's schemas of its query and body. */
export const operations = (): ReadonlyArray<Operation> => {
  const endpoints = new Map<string, { readonly query: Option.Option<Payload>; readonly payload: Option.Option<Payload> }>()
  const api: HttpApi.HttpApi.Any = Api
  // reflect wants the props view of an API; every HttpApi value is one (the type only hides its groups)
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint }) => {
      const schema = (s: Schema.Schema.All): Payload => Schema.make<unknown, unknown>(s.ast)
      endpoints.set(`${group.identifier}.${endpoint.name}`, {
        query: Option.map(endpoint.urlParamsSchema, schema),
        payload: Option.map(endpoint.payloadSchema, schema)
      })
    }
  })
  const spec = OpenApi.fromApi(Api)
  const found: Array<Operation> = []
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of ["get", "post", "put", "patch", "delete"] as const) {
      const operation = item[method]
      if (operation === undefined) continue
      const endpoint = endpoints.get(operation.operationId)
      if (endpoint === undefined) throw new Error(`no endpoint for ${operation.operationId}`)
      found.push({
        id: operation.operationId,
        method: method.toUpperCase(),
        path,
        params: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? ""),
        query: endpoint.query,
        payload: endpoint.payload
      })
    }
  }
  return found
}

// ---------------------------------------------------------------------------
// valid values, from the contract's schemas

/** fast-check generates strings for a pattern, but not for one with a lookahead or lookbehind. */
const lookaround = (ast: SchemaAST.Refinement): boolean => {
  const json = SchemaAST.getJSONSchemaAnnotation(ast)
  return Option.isSome(json) && "pattern" in json.value && /\(\?<?[=!]/.test(String(json.value["pattern"]))
}

/**
 * The schema's type side without its hand-written filters: effect's Arbitrary
 * filters generated values through them, and a filter few random values pass
 * (a URL check) would make generation loop. Filters with a known constraint
 * (lengths, patterns, ranges) stay: Arbitrary generates within them.
 */
const generatable = (ast: SchemaAST.AST): SchemaAST.AST => {
  switch (ast._tag) {
    case "Transformation":
      return generatable(ast.to)
    case "Refinement": {
      const from = generatable(ast.from)
      const known = Option.isSome(SchemaAST.getSchemaIdAnnotation(ast)) && !lookaround(ast)
      return known ? new SchemaAST.Refinement(from, ast.filter, ast.annotations) : from
    }
    case "TypeLiteral":
      return new SchemaAST.TypeLiteral(
        ast.propertySignatures.map((p) => new SchemaAST.PropertySignature(p.name, generatable(p.type), p.isOptional, p.isReadonly, p.annotations)),
        ast.indexSignatures.map((i) => new SchemaAST.IndexSignature(i.parameter, generatable(i.type), i.isReadonly)),
        ast.annotations
      )
    case "Union":
      return SchemaAST.Union.make(ast.types.map(generatable), ast.annotations)
    case "TupleType":
      return new SchemaAST.TupleType(
        ast.elements.map((e) => new SchemaAST.OptionalType(generatable(e.type), e.isOptional, e.annotations)),
        ast.rest.map((r) => new SchemaAST.Type(generatable(r.type), r.annotations)),
        ast.isReadonly,
        ast.annotations
      )
    case "Suspend":
      return new SchemaAST.Suspend(() => generatable(ast.f()), ast.annotations)
    default:
      return ast
  }
}

/** Wire values of a schema: generated on its type side, encoded when they still pass, sent as they are otherwise. */
const wireValues = (schema: Payload): fc.Arbitrary<unknown> => {
  const encode = Schema.encodeUnknownEither(schema)
  return Arbitrary.make(Schema.make(generatable(schema.ast))).map((value) => Either.getOrElse(encode(value), () => value))
}

// ---------------------------------------------------------------------------
// requests

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const encodeSegment = (value: string) => {
  try {
    return encodeURIComponent(value)
  } catch {
    // a lone surrogate cannot be percent-encoded as UTF-8: send the encoded bytes of one (not UTF-8)
    return "%ED%A0%80"
  }
}

const queryString = (params: Record<string, unknown>) =>
  Object.entries(params)
    .flatMap(([key, value]) =>
      value === undefined ? [] : (Array.isArray(value) ? value : [value]).map((v) => `${encodeSegment(key)}=${encodeSegment(String(v))}`)
    )
    .join("&")

const GIT_HOSTS = ["github", "gitlab", "gitea", "forgejo", "bitbucket"]

const pathValue = (op: Operation, context: Context) => {
  const resource = op.path.split("/")[3] ?? ""
  const known = op.id === "webhooks.receive" ? fc.constantFrom(...GIT_HOSTS) : fc.constant(context.existing[resource] ?? "missing_0000000000000000")
  return fc.oneof(
    { weight: 3, arbitrary: known },
    { weight: 1, arbitrary: fc.constantFrom(...GIT_HOSTS, "nope_0000000000000000") },
    { weight: 2, arbitrary: hostileString.filter((s) => s.length < 5_000).map(encodeSegment) },
    { weight: 1, arbitrary: fc.constantFrom("%ED%BF%BF", "%FF", "%2F..%2F", "..", ".", "%25", "ü", "%F0%9F%92%A5", "a;b", "a%3Fb", "%20") }
  )
}

const withLab = (value: unknown, labId: fc.Arbitrary<string>) =>
  fc.tuple(fc.constant(value), labId).map(([v, id]) => (isRecord(v) && "labId" in v ? { ...v, labId: id } : v))

/**
 * Values that pass the checks a schema cannot tell Arbitrary about (a URL, a
 * figure's file name, an id of the lab), so requests reach past validation.
 */
const goodValues = (context: Context): Readonly<Record<string, unknown>> => ({
  // a figure's extension, and text: a file path, a figure path and a dataset path at once
  path: "/fuzz/figure.svg",
  content: "Fuzz notes: ünïcödé 🧪 \"quoted\" <b>",
  body: "Fuzz body: ünïcödé 🧪",
  // an optional field best left out (a random blob id is a 409)
  sha: undefined,
  url: "https://example.org/figure.png",
  uri: "https://example.org/data.csv",
  repo: "https://example.org/lab/repo.git",
  email: "someone@example.org",
  // a search for a word no record has: ranking the lab's matches costs in proportion to them, which is not what the
  // requests built on these values measure
  q: "zyzzyva",
  experimentId: context.existing["experiments"],
  agentId: context.existing["agents"],
  projectId: context.existing["projects"],
  templateId: context.existing["templates"],
  queueId: context.existing["queues"],
  linkedPaperIds: [context.existing["papers"]],
  author: { kind: "agent", id: context.existing["agents"] }
})

/** Most of the body's fields that have a good value get it. */
const withGood = (value: unknown, context: Context): fc.Arbitrary<unknown> => {
  if (!isRecord(value)) return fc.constant(value)
  const good = goodValues(context)
  const keys = Object.keys(value).filter((k) => k in good)
  return fc
    .tuple(...keys.map(() => fc.integer({ min: 0, max: 3 })))
    .map((dice) => ({ ...value, ...Object.fromEntries(keys.filter((_, i) => dice[i] !== 0).map((k) => [k, good[k]])) }))
}

/** Every field of the body that has a good value gets it. */
const allGood = (value: unknown, context: Context): unknown => {
  if (!isRecord(value)) return value
  const good = goodValues(context)
  return { ...value, ...Object.fromEntries(Object.keys(value).filter((k) => k in good).map((k) => [k, good[k]])) }
}

/** Replace one field (at any depth of the first level) or add one, with a hostile value or key. */
const mutate = (value: unknown): fc.Arbitrary<unknown> => {
  if (!isRecord(value)) return hostileValue
  const keys = Object.keys(value)
  return fc.oneof(
    keys.length === 0 ? hostileValue.map((v) => ({ x: v })) : fc.tuple(fc.constantFrom(...keys), hostileValue).map(([k, v]) => ({ ...value, [k]: v })),
    fc.tuple(hostileString, hostileValue).map(([k, v]) => ({ ...value, [k]: v }))
  )
}

/**
 * An operation's query and body as valid as the contract's schemas and the fixture make them, in the fixture's first
 * lab, without hostile parts: what test/support/Adversarial.ts starts from, one field at a time.
 */
export const validParts = (
  op: Operation,
  context: Context
): fc.Arbitrary<{ readonly query: Record<string, unknown>; readonly body: unknown }> => {
  const labId = fc.constant(context.labIds[0] ?? "")
  const valid = (schema: Option.Option<Payload>) =>
    Option.match(schema, {
      onNone: () => fc.constant<unknown>(undefined),
      onSome: (s) => wireValues(s).chain((v) => withLab(v, labId)).map((v) => allGood(v, context))
    })
  return fc.record({ query: valid(op.query).map((q) => (isRecord(q) ? q : {})), body: valid(op.payload) })
}

/** One request for the operation: valid values, or valid ones with a hostile part. */
export const request = (op: Operation, context: Context): fc.Arbitrary<FuzzRequest> => {
  const labId = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...context.labIds) }, { weight: 1, arbitrary: hostileString })
  const params = fc.tuple(...op.params.map(() => pathValue(op, context)))
  const path = params.map((values) => op.params.reduce((p, name, i) => p.replace(`{${name}}`, values[i] ?? ""), op.path))
  const validQuery = Option.match(op.query, {
    onNone: () => fc.constant<Record<string, unknown>>({}),
    onSome: (schema) => wireValues(schema).map((q) => (isRecord(q) ? q : {}))
  })
  const query = validQuery.chain((q) =>
    fc.oneof(
      { weight: 4, arbitrary: withLab(q, labId).chain((v) => withGood(v, context)) },
      { weight: 2, arbitrary: mutate(q).map((m) => (isRecord(m) ? m : {})) },
      { weight: 1, arbitrary: hostileCursor.map((cursor) => ({ ...q, labId: context.labIds[0], cursor })) }
    ).map((m) => (isRecord(m) ? m : {}))
  )
  const payload: fc.Arbitrary<{ body?: string; contentType?: string; headers?: Record<string, string> }> = Option.match(op.payload, {
    // fetch sends no body with a GET
    onNone: () =>
      op.method === "GET"
        ? fc.constant({})
        : fc.oneof({ weight: 5, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: hostileBody.map((text) => ({ body: text })) }),
    onSome: (schema) =>
      wireValues(schema).chain((valid) =>
        fc.oneof(
          { weight: 4, arbitrary: withLab(valid, labId).chain((v) => withGood(v, context)).map((v) => ({ body: JSON.stringify(v) ?? "null" })) },
          { weight: 3, arbitrary: withLab(valid, labId).chain(mutate).map((v) => ({ body: JSON.stringify(v) ?? "null" })) },
          { weight: 1, arbitrary: hostileBody.map((text) => ({ body: text })) },
          { weight: 1, arbitrary: fc.constantFrom("text/plain", "application/json; charset=latin1", "application/x-www-form-urlencoded").map((contentType) => ({ body: "labId=x", contentType })) }
        )
      )
  })
  // unauthenticated requests share the free plan's 60 a minute: a few are enough
  const token = fc.constantFrom<FuzzRequest["token"]>("admin", "admin", "admin", "admin", "admin", "writer", "writer", "writer", "reader", "none")
  // the webhook receiver reads its raw body: give it git hosts' payloads too
  const body = op.id === "webhooks.receive" ? fc.oneof(payload, webhookBody) : payload
  return fc.record({ path, query, body, token }).map(({ path, query, body, token }) => {
    const search = queryString(query)
    return { operation: op.id, method: op.method, url: search === "" ? path : `${path}?${search}`, token, ...body }
  })
}
