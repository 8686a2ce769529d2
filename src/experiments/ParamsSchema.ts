import { Either, ParseResult, Schema } from "effect"

/**
 * The part of JSON Schema that templates' `paramsSchema` enforces on params.
 * Other keywords ($schema, title, examples, …) are allowed and ignored, as JSON
 * Schema itself ignores unknown keywords.
 *
 * - top level: `properties`, `required`, `additionalProperties` (boolean)
 * - per property: `type` (string, number, integer, boolean, array, object,
 *   null, or a list of them), `enum`, `minimum`, `maximum`, `minLength`, `maxLength`
 */
const JsonType = Schema.Literal("string", "number", "integer", "boolean", "array", "object", "null")
type JsonType = typeof JsonType.Type

const Property = Schema.Struct({
  type: Schema.optional(Schema.Union(JsonType, Schema.Array(JsonType))),
  enum: Schema.optional(Schema.Array(Schema.Unknown)),
  minimum: Schema.optional(Schema.Number),
  maximum: Schema.optional(Schema.Number),
  minLength: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.nonNegative())),
  maxLength: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.nonNegative()))
})

const Subset = Schema.Struct({
  type: Schema.optional(Schema.Literal("object")),
  properties: Schema.optional(Schema.Record({ key: Schema.String, value: Property })),
  required: Schema.optional(Schema.Array(Schema.String)),
  additionalProperties: Schema.optional(Schema.Boolean)
})
type Subset = typeof Subset.Type

const decodeSubset = Schema.decodeUnknownEither(Subset, { onExcessProperty: "ignore" })

/** Is `schema` a params schema this service can enforce? Left: what is wrong, naming the keyword. */
export const checkSchema = (schema: unknown): Either.Either<Subset, string> =>
  Either.mapLeft(decodeSubset(schema), (error) => {
    const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
    const path = issue ? issue.path.map(String).join(".") : ""
    return `paramsSchema${path ? `.${path}` : ""}: ${issue?.message ?? "is not a supported JSON Schema"}`
  })

const typeOf = (value: unknown): ReadonlyArray<JsonType> => {
  if (value === null) return ["null"]
  if (Array.isArray(value)) return ["array"]
  switch (typeof value) {
    case "string":
      return ["string"]
    case "boolean":
      return ["boolean"]
    case "number":
      return Number.isInteger(value) ? ["integer", "number"] : ["number"]
    case "object":
      return ["object"]
    default:
      return []
  }
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/**
 * Check params against a template's schema. Left: the first problem, naming
 * the param (`params.lr: must be at most 1`).
 */
export const validateParams = (schema: unknown, params: Readonly<Record<string, unknown>>): Either.Either<void, string> => {
  const decoded = checkSchema(schema)
  if (Either.isLeft(decoded)) return Either.left(decoded.left)
  const s = decoded.right
  const properties = s.properties ?? {}
  for (const name of s.required ?? []) {
    if (!(name in params)) return Either.left(`params.${name} is required by the template`)
  }
  for (const [name, value] of Object.entries(params)) {
    const p = properties[name]
    if (p === undefined) {
      if (s.additionalProperties === false) return Either.left(`params.${name} is not a parameter of the template`)
      continue
    }
    const at = `params.${name}`
    if (p.type !== undefined) {
      const allowed: ReadonlyArray<JsonType> = typeof p.type === "string" ? [p.type] : p.type
      if (!typeOf(value).some((t) => allowed.includes(t))) return Either.left(`${at}: must be of type ${allowed.join(" or ")}`)
    }
    if (p.enum !== undefined && !p.enum.some((e) => sameJson(e, value))) {
      return Either.left(`${at}: must be one of ${p.enum.map((e) => JSON.stringify(e)).join(", ")}`)
    }
    if (typeof value === "number") {
      if (p.minimum !== undefined && value < p.minimum) return Either.left(`${at}: must be at least ${p.minimum}`)
      if (p.maximum !== undefined && value > p.maximum) return Either.left(`${at}: must be at most ${p.maximum}`)
    }
    if (typeof value === "string") {
      if (p.minLength !== undefined && value.length < p.minLength) return Either.left(`${at}: must be at least ${p.minLength} characters`)
      if (p.maxLength !== undefined && value.length > p.maxLength) return Either.left(`${at}: must be at most ${p.maxLength} characters`)
    }
  }
  return Either.right(undefined)
}
