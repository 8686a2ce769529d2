import { Schema } from "effect"
import { Body, LabRef, resourceId, Timestamp } from "../common/Schemas.js"

/** A calendar day, YYYY-MM-DD. */
export const Day = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "must be a date as YYYY-MM-DD" }),
  Schema.filter((s) => {
    const d = new Date(`${s}T00:00:00Z`)
    if (s.startsWith("0000")) return "must be a day from 0001-01-01 to 9999-12-31"
    return (!Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s) || "must be a real calendar date"
  })
).annotations({ description: "a calendar day, YYYY-MM-DD" })

export const AuthorKind = Schema.Literal("member", "agent")
export type AuthorKind = typeof AuthorKind.Type

export const Author = Schema.Struct({
  kind: AuthorKind,
  id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128)).annotations({
    description: "member: who the member is (a key or user id, an email, a handle); agent: an agent of the lab (agent_…)"
  })
}).annotations({ identifier: "StandupAuthor", parseOptions: { onExcessProperty: "error" } })
export type Author = typeof Author.Type

export const MAX_ITEMS = 50

const Items = Schema.Array(
  Schema.String.pipe(Schema.filter((s) => s.trim().length > 0 || "must not be empty"), Schema.maxLength(2000))
).pipe(Schema.maxItems(MAX_ITEMS))

export const StandupId = resourceId("StandupId", "std")
export type StandupId = typeof StandupId.Type

export const Standup = Schema.Struct({
  id: StandupId,
  labId: Schema.String,
  date: Schema.String.annotations({ description: "the day it reports on, YYYY-MM-DD" }),
  author: Author,
  done: Schema.Array(Schema.String),
  planned: Schema.Array(Schema.String),
  blockers: Schema.Array(Schema.String),
  createdAt: Timestamp
}).annotations({ identifier: "Standup", description: "one per author and day" })
export type Standup = typeof Standup.Type

export const CreateStandup = Body({
  labId: LabRef,
  date: Schema.optional(Day).annotations({ description: "default: today (UTC); at most one day ahead" }),
  author: Schema.optional(Author).annotations({ description: "default: the calling credential, as a member" }),
  done: Schema.optionalWith(Items, { default: () => [] }),
  planned: Schema.optionalWith(Items, { default: () => [] }),
  blockers: Schema.optionalWith(Items, { default: () => [] })
}).annotations({ identifier: "CreateStandup", description: `lists of at most ${MAX_ITEMS} lines; at least one line in all` })
export type CreateStandup = typeof CreateStandup.Type

export const StandupQuery = Schema.Struct({
  labId: LabRef,
  from: Schema.optional(Day).annotations({ description: "only standups of this day or later" }),
  to: Schema.optional(Day).annotations({ description: "only standups before this day (exclusive)" }),
  authorKind: Schema.optional(AuthorKind),
  authorId: Schema.optional(Schema.String.pipe(Schema.maxLength(128)))
})
