import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
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
  .add(
    HttpApiEndpoint.get("status", "/sync")
      .setUrlParams(Schema.Struct({ labId: LabRef }))
      .addSuccess(SyncStatus)
      .annotateContext(
        OpenApi.annotations({
          summary: "Get the sync status",
          description:
            "The lab's link to its repository and how the sync stands: repository, default branch, last synced commit and time, auto-push, the last error, pushes pending or set aside, whether a token and a webhook secret are stored. Reads only; to pull now, POST. 404 when the lab has no linked repository."
        })
      )
  )
  .add(
    HttpApiEndpoint.patch("link", "/sync")
      .setPayload(LinkRepo)
      .addSuccess(SyncStatus)
      .annotateContext(
        OpenApi.annotations({
          summary: "Link a repository or change the link",
          description:
            "Extension. Links the lab to a git repository (`repo`, required while unlinked), or changes its default branch, auto-push or access `token` (stored encrypted, never returned; `null` removes it). Fields left out keep their value. A new repository or branch is pulled from scratch at once."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("pull", "/sync")
      .setPayload(Body({ labId: LabRef, subPath: Schema.optional(RepoDirectory) }))
      .addSuccess(SyncResult)
      .addError(BadGatewayWire)
      // the service stopped before the sync could run (README: "Workers"); Retry-After says when to try again
      .addError(ServiceUnavailableWire)
      .annotateContext(
        OpenApi.annotations({
          summary: "Sync now",
          description:
            "Pulls the default branch now and answers that pull's counts (pulled, updated, skipped, removed) and commit. With `subPath`, only that directory is reconciled. Use it after a missed webhook delivery; GET reads the status without pulling. 502 when the git host fails; 429 past the plan's forced syncs per minute."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("secret", "/sync/secret")
      .setPayload(Body({ labId: LabRef }))
      .addSuccess(WebhookSecretResult)
      .annotateContext(
        OpenApi.annotations({
          summary: "Create the webhook secret",
          description:
            "Creates the secret the git host signs push webhooks with, and answers it with the `webhookUrl` to configure. The secret is shown only in the first answer (`existed: false`); later calls answer `existed: true` and the URL without it."
        })
      )
  )
  .pipe(labGroup)
  .annotate(
    OpenApi.Description,
    "Two-way sync of the lab's files with its linked git repository (spec 4.4): link, status, pull now, and the webhook secret."
  ) {}

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
      .annotateContext(
        OpenApi.annotations({
          summary: "Receive a git host's push webhook",
          description:
            "Called by the git host (github, gitlab, gitea, forgejo, bitbucket), not by clients: authenticated by the signature made with the secret from POST /api/v1/sync/secret, not a bearer token. A push to the default branch queues a pull (202); a ping, another branch or event, or a repeated delivery is 200. 412 for an unsigned delivery, 401 for a signature no secret matches."
        })
      )
  )
  .annotate(
    OpenApi.Description,
    "The receiver of git hosts' push webhooks (spec 6.1), outside /api/v1."
  ) {}
