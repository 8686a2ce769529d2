import { Schema } from "effect"
import { Body, Name, Timestamp } from "../common/Schemas.js"
import { ScopeString } from "./Principal.js"

export const ApiKey = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  prefix: Schema.String.annotations({ description: "the first characters of the key, to recognise it" }),
  scopes: Schema.Array(Schema.String),
  createdBy: Schema.String.annotations({ description: "the account that created the key" }),
  expiresAt: Schema.NullOr(Timestamp),
  revokedAt: Schema.NullOr(Timestamp),
  lastUsedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp
}).annotations({ identifier: "ApiKey" })
export type ApiKey = typeof ApiKey.Type

export const CreatedApiKey = Schema.Struct({
  ...ApiKey.fields,
  key: Schema.String.annotations({ description: "the full key: shown once, store it now" })
}).annotations({ identifier: "CreatedApiKey" })

export const CreateApiKey = Body({
  name: Name(100),
  scopes: Schema.Array(ScopeString).pipe(Schema.minItems(1), Schema.maxItems(50)),
  expiresAt: Schema.optional(Timestamp)
})
export type CreateApiKey = typeof CreateApiKey.Type
