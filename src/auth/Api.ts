import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
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
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(Envelope(Me))
      .annotateContext(
        OpenApi.annotations({
          summary: "Get the calling credential",
          description:
            "Who the bearer token is (the operator, an API key or a JWT user), its scopes, plan, rate limits and expiry. Use it to check a token and what it may do."
        })
      )
  )
  .middleware(Authentication)
  .prefix("/api/v1")
  .annotate(
    OpenApi.Description,
    "The calling credential: identity, scopes and limits."
  ) {}

export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/auth/keys")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(ListEnvelope(ApiKey))
      .annotateContext(
        OpenApi.annotations({
          summary: "List API keys",
          description:
            "The keys this credential created, and itself (the operator sees all), newest first; never their secrets."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/auth/keys")
      .setPayload(CreateApiKey)
      .addSuccess(Envelope(CreatedApiKey), { status: 201 })
      .addError(QuotaExceededWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Create an API key",
          description:
            "Mints a key with a name, scopes (`lab:<slug>:rw`, `lab:<slug>:r`, `admin`) and an optional expiry, never more than the creating credential holds. The secret (`data.key`) is in this answer only: store it. 403 `quota_exceeded` past the lab's plan's live keys."
        })
      )
  )
  .add(
    HttpApiEndpoint.del("revoke", "/auth/keys")
      .setUrlParams(Schema.Struct({ id: ApiKeyId.pipe(Schema.minLength(1)) }))
      .addSuccess(Envelope(ApiKey))
      .addError(NotFoundWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Revoke an API key",
          description:
            "Revokes the key `id` at once, and every key minted from it, transitively; answers the key with `revokedAt` set. Safe to repeat."
        })
      )
  )
  .addError(ForbiddenWire)
  .middleware(Authentication)
  .prefix("/api/v1")
  .annotate(
    OpenApi.Description,
    "API keys: bearer tokens scoped to labs, created, listed and revoked by the credentials that made them."
  ) {}
