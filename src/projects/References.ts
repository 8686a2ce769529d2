import { Schema } from "effect"

/** What a project groups: resources of other features, by id (checked by src/common/References.ts). */
export const RefKind = Schema.Literal("experiment", "paper", "task")
export type RefKind = typeof RefKind.Type
