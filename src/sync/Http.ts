import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import { domainErrorsAsHttp } from "../http/DomainErrorsHttp.js"
import { isDiskFull } from "../db/DiskFull.js"
import { bodyTooLarge, WEBHOOK_MAX_BODY_BYTES } from "../http/BodyLimit.js"
import { BadGateway, PayloadTooLarge, ValidationError } from "../http/Errors.js"
import { respondWith } from "../http/Envelope.js"
import { LabRequests } from "../http/LabRequests.js"
import { Quotas } from "../quotas/Quotas.js"
import { WebhookAnswer } from "./RepoLink.js"
import { Sync } from "./Sync.js"
import { WebhookReceiver } from "./WebhookReceiver.js"

export const SyncHttp = HttpApiBuilder.group(Api, "sync", (handlers) =>
  Effect.gen(function* () {
    const lab = yield* LabRequests
    const sync = yield* Sync
    const quotas = yield* Quotas
    return handlers
      .handle("status", ({ urlParams }) => lab.read(urlParams.labId, (scope) => sync.status(scope.labId)))
      .handle("link", ({ payload: { labId, ...input } }) => lab.write(labId, (scope) => sync.link(scope.labId, input)))
      .handle("pull", ({ payload }) =>
        lab.write(payload.labId, (scope) =>
          Effect.zipRight(quotas.forcedSync(scope.lab), sync.syncNow(scope.labId, Option.fromNullable(payload.subPath))).pipe(
            // the lab's store out of space is the disk's failure (507, src/http/steps/ErrorEnvelope.ts), not the host's (502)
            Effect.catchTag("GitError", (e) => (isDiskFull(e) ? Effect.die(e) : Effect.fail(new BadGateway({ message: `git: ${e.message}` }))))
          )
        )
      )
      .handle("secret", ({ payload }) => lab.write(payload.labId, (scope) => sync.secret(scope.labId)))
  })
)

export const WebhooksHttp = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function* () {
    const receiver = yield* WebhookReceiver
    return handlers.handle("receive", ({ path, request }) =>
      Effect.gen(function* () {
        const address = Option.getOrElse(request.remoteAddress, () => "unknown")
        // an address sending what no git host sends is refused before its body is read
        yield* receiver.admit(address)
        // made only when needed: an error captures a stack trace, a cost every delivery would pay
        const tooLarge = () => new PayloadTooLarge({ message: `the request body exceeds ${WEBHOOK_MAX_BODY_BYTES} bytes` })
        // a declared length over the limit is refused unread; a streamed body is read under the limit (BodyLimit.ts):
        // past it the bytes are dropped, not kept
        const read = Number(request.headers["content-length"] ?? 0) > WEBHOOK_MAX_BODY_BYTES
          ? Effect.fail(tooLarge())
          : request.arrayBuffer.pipe(
              Effect.mapError(() => new ValidationError({ message: "the webhook body could not be read" })),
              Effect.filterOrFail(() => !bodyTooLarge(request), tooLarge)
            )
        const body = yield* Effect.tapError(read, () => receiver.failed(address))
        const answer = yield* receiver.receive(address, path.host, request.headers, new Uint8Array(body))
        return answer.action === "queued" ? yield* respondWith(WebhookAnswer, answer, 202) : answer
      }).pipe(domainErrorsAsHttp)
    )
  })
)
