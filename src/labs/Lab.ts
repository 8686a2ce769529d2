import { Schema } from "effect"
import { Name, Plan, Slug, Timestamp } from "../common/Schemas.js"

export const Lab = Schema.Struct({
  id: Schema.String,
  slug: Slug,
  name: Schema.String,
  plan: Plan,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotations({ identifier: "Lab" })
export type Lab = typeof Lab.Type

export const CreateLab = Schema.Struct({ slug: Slug, name: Name(200), plan: Plan })
export type CreateLab = typeof CreateLab.Type
