import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Schema } from "effect"
import { Plan } from "../common/Schemas.js"
import { Envelope, ListEnvelope } from "../http/Envelope.js"
import { ForbiddenWire, NotFoundWire, QuotaExceededWire } from "../http/Errors.js"
import { PageParams } from "../db/Paging.js"
import { ApiKey, ApiKeyId, CreateApiKey, CreatedApiKey } from "./ApiKey.js"
import { Authentication } from "../http/Authentication.js"

export const Me = Schema.Struct({
  id: Schema.String.annotations({ description: "the account: key id, user id, or admin" }),
  kind: Schema.Literal("admin", "api_key", "jwt"),
  name: Schema.String,
  scopes: Schema.Array(Schema.String),
  plan: Plan,
  limits: Schema.Struct({ perMinute: Schema.Number, perDay: Schema.Number }),
  expiresAt: Schema.NullOr(Schema.Date)
}).annotations({ identifier: "Me" })

export class MeApi extends HttpApiGroup.make("me")
  .add(HttpApiEndpoint.get("me", "/me").addSuccess(Envelope(Me)))
  .middleware(Authentication)
  .prefix("/api/v1") {}

export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/auth/keys")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ListEnvelope(ApiKey))
  )
  .add(
    HttpApiEndpoint.post("create", "/auth/keys")
      .setPayload(CreateApiKey)
      .addSuccess(Envelope(CreatedApiKey), { status: 201 })
      .addError(QuotaExceededWire)
  )
  .add(
    HttpApiEndpoint.del("revoke", "/auth/keys")
      .setUrlParams(Schema.Struct({ id: ApiKeyId.pipe(Schema.minLength(1)) }))
      .addSuccess(Envelope(ApiKey))
      .addError(NotFoundWire)
  )
  .addError(ForbiddenWire)
  .middleware(Authentication)
  .prefix("/api/v1") {}
