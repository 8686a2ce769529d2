import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Schema } from "effect"
import { Body, LabRef } from "../common/Schemas.js"
import {
  BadGatewayWire,
  NotFoundWire,
  PreconditionFailedWire,
  ServiceUnavailableWire,
  UnauthorizedWire
} from "../http/Errors.js"
import { labGroup } from "../http/LabEndpoints.js"
import { RepoDirectory } from "../files/File.js"
import { LinkRepo, SyncResult, SyncStatus, WebhookAnswer, WebhookSecretResult } from "./RepoLink.js"

/** Spec 4.4 with bare bodies (2.5-2.7), plus PATCH to link a repository. */
export class SyncApi extends HttpApiGroup.make("sync")
  .add(HttpApiEndpoint.get("status", "/sync").setUrlParams(Schema.Struct({ labId: LabRef })).addSuccess(SyncStatus))
  .add(HttpApiEndpoint.patch("link", "/sync").setPayload(LinkRepo).addSuccess(SyncStatus))
  .add(
    HttpApiEndpoint.post("pull", "/sync")
      .setPayload(Body({ labId: LabRef, subPath: Schema.optional(RepoDirectory) }))
      .addSuccess(SyncResult)
      .addError(BadGatewayWire)
      // the service stopped before the sync could run (README: "Workers"); Retry-After says when to try again
      .addError(ServiceUnavailableWire)
  )
  .add(
    HttpApiEndpoint.post("secret", "/sync/secret")
      .setPayload(Body({ labId: LabRef }))
      .addSuccess(WebhookSecretResult)
  )
  .pipe(labGroup) {}

/** Spec 6.1: authenticated by the webhook secret's signature, not a bearer token. */
export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("receive", "/api/webhooks/:host")
      .setPath(Schema.Struct({ host: Schema.String }))
      .addSuccess(WebhookAnswer.annotations({ description: "nothing to do: ping, another branch, another event" }))
      .addSuccess(WebhookAnswer.annotations({ description: "a pull of the default branch was queued" }), { status: 202 })
      .addError(UnauthorizedWire)
      .addError(NotFoundWire)
      .addError(PreconditionFailedWire)
  ) {}
