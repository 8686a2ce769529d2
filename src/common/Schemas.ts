import { Schema } from "effect"

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

/** A bounded, trimmed, non-empty line of text (names, titles). */
export const Name = (max = 200) =>
  Schema.Trim.pipe(Schema.minLength(1, { message: () => "must not be empty" }), Schema.maxLength(max))

/**
 * A request body that rejects unknown fields, so a typo is a 422 naming the
 * field instead of a silently ignored value.
 */
export const Body = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

/** Timestamps on the wire: ISO 8601 strings. */
export const Timestamp = Schema.Date

/** Date-range filter every list that has one accepts: `from` inclusive, `to` exclusive, ISO 8601. */
export const DateRange = {
  from: Schema.optional(Schema.Date).annotations({ description: "only items created at or after this time (ISO 8601)" }),
  to: Schema.optional(Schema.Date).annotations({ description: "only items created before this time (ISO 8601)" })
}

/** Bounded free text (descriptions, bodies). */
export const Text = (max: number) => Schema.String.pipe(Schema.maxLength(max))

/** Bounded string tags. */
export const Tags = Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))).pipe(Schema.maxItems(32))
