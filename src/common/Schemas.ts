import { ParseResult, Schema } from "effect"
import { isoString } from "./IsoTime.js"

/** A lab is addressed by its id (`lab_…`) or, for convenience, its slug. */
export const LabRef = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(64),
  Schema.annotations({ description: "the lab's id (lab_…) or slug", message: () => "must be a lab id or slug" })
)

export const Slug = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/),
  Schema.annotations({
    description: "1-63 characters: lowercase letters, digits and inner hyphens",
    message: () => "must be 1-63 lowercase letters, digits or inner hyphens"
  })
)

export const Plan = Schema.Literal("free", "pro", "team")
export type Plan = typeof Plan.Type

/** An id of this service's making (`task_…`), as a cursor or reference carries it: ASCII, bounded. */
export const ResourceId = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/, { message: () => "must be an id (1-64 letters, digits, _ or -)" }))

/** A bounded, trimmed, non-empty line of text (names, titles). */
export const Name = (max = 200) =>
  Schema.Trim.pipe(Schema.minLength(1, { message: () => "must not be empty" }), Schema.maxLength(max))

/**
 * A request body that rejects unknown fields, so a typo is a 422 naming the
 * field instead of a silently ignored value.
 */
export const Body = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

/** The times a client may send: years 1 to 9999, which JavaScript, PGlite and PostgreSQL all read alike. */
export const EARLIEST_TIME = Date.parse("0001-01-01T00:00:00.000Z")
export const LATEST_TIME = Date.parse("9999-12-31T23:59:59.999Z")

const OUT_OF_RANGE = "must be a time from 0001-01-01 to 9999-12-31 (ISO 8601)"

/**
 * Timestamps on the wire: ISO 8601 strings. Decoding (what a client sends)
 * refuses an unreadable date and one outside years 1-9999 (422); encoding (what
 * the service answers) writes any stored time.
 */
export const Timestamp = Schema.transformOrFail(Schema.String, Schema.DateFromSelf, {
  strict: true,
  decode: (text, _, ast) => {
    const date = new Date(text)
    const time = date.getTime()
    if (Number.isNaN(time)) return ParseResult.fail(new ParseResult.Type(ast, text, "must be a date and time (ISO 8601)"))
    if (time < EARLIEST_TIME || time > LATEST_TIME) return ParseResult.fail(new ParseResult.Type(ast, text, OUT_OF_RANGE))
    return ParseResult.succeed(date)
  },
  encode: (date, _, ast) =>
    Number.isNaN(date.getTime()) ? ParseResult.fail(new ParseResult.Type(ast, date, "is an invalid date")) : ParseResult.succeed(isoString(date))
}).annotations({
  identifier: "Timestamp",
  description: "ISO 8601 date and time, years 0001-9999",
  arbitrary: () => (fc) => fc.date({ min: new Date(EARLIEST_TIME), max: new Date(LATEST_TIME), noInvalidDate: true })
})

/**
 * A lab resource as the service answers it: its id and lab first, then its own
 * fields, then when it was created and last changed.
 */
export const LabResource = <Id extends Schema.Schema.Any, Fields extends Schema.Struct.Fields>(id: Id, fields: Fields) =>
  Schema.Struct({ id, labId: Schema.String, ...fields, createdAt: Timestamp, updatedAt: Timestamp })

/** Date-range filter every list that has one accepts: `from` inclusive, `to` exclusive, ISO 8601. */
export const DateRange = {
  from: Schema.optional(Timestamp).annotations({ description: "only items created at or after this time (ISO 8601)" }),
  to: Schema.optional(Timestamp).annotations({ description: "only items created before this time (ISO 8601)" })
}

/** Bounded free text (descriptions, bodies). */
export const Text = (max: number) => Schema.String.pipe(Schema.maxLength(max))

/** Bounded string tags. */
export const Tags = Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))).pipe(Schema.maxItems(32))

/**
 * A resource's id as the service issues it (`prefix_…`), branded so one kind
 * of id cannot stand in for another: `export const TaskId = resourceId("TaskId", "task")`.
 */
export const resourceId = <const B extends string>(brand: B, prefix: string) =>
  Schema.String.pipe(Schema.maxLength(64), Schema.brand(brand)).annotations({ description: `${prefix}_…` })
