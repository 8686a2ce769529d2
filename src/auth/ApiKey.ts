import { Schema } from "effect"
import { Body, Name, resourceId, Timestamp } from "../common/Schemas.js"
import { ScopeString } from "./Principal.js"

export const ApiKeyId = resourceId("ApiKeyId", "key")
export type ApiKeyId = typeof ApiKeyId.Type

export const ApiKey = Schema.Struct({
  id: ApiKeyId,
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

/** No key with this id that the principal may see (another account's key is as absent as a missing one). */
export class ApiKeyNotFound extends Schema.TaggedError<ApiKeyNotFound>()("ApiKeyNotFound", { id: Schema.String }) {
  override get message() {
    return `no API key ${this.id}`
  }
}
