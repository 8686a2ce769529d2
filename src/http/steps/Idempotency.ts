import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Context, Effect, Either, Exit, Option, Schema } from "effect"
import type { Principal } from "../../auth/Principal.js"
import type { DomainError } from "../../common/DomainErrors.js"
import { CurrentRequest, type Identified } from "../../common/RequestContext.js"
import { type Answer, credentialOf, HEADER, IdempotencyKey, type IdempotencyKeysService, type KeyedRequest } from "../../idempotency/IdempotencyKeys.js"
import { toApiError } from "../DomainErrorsHttp.js"
import { errorBody } from "../Errors.js"
import type { Step } from "./Step.js"

/**
 * The `Idempotency-Key` step: a POST, PATCH or DELETE with a key runs once per credential and key; its repeats are
 * answered with the first answer, marked `Idempotent-Replayed: true` (src/idempotency/IdempotencyKeys.ts keeps them).
 * It comes after the credential is known and wraps the route once its failures are answers, so a kept 404 or 422 is
 * replayed as it was sent.
 */

const KEYED_METHODS: ReadonlySet<string> = new Set(["POST", "PATCH", "DELETE"])
const isKey = Schema.is(IdempotencyKey)

const refusal = (error: DomainError) => {
  const apiError = toApiError(error)
  const body = errorBody(apiError._tag, apiError.message)
  return HttpServerResponse.unsafeJson(body, { status: body.error.status })
}

/** Seconds a repeat sent while the first request runs is told to wait (most writes are answered well within it). */
const RUNNING_RETRY_AFTER_SECONDS = 1

const running = () =>
  HttpServerResponse.unsafeJson(
    errorBody("Conflict", `a request with this ${HEADER} is still being processed: retry once it has been answered`),
    { status: 409, headers: { "retry-after": String(RUNNING_RETRY_AFTER_SECONDS) } }
  )

const replayed = (answer: Answer) =>
  HttpServerResponse.uint8Array(answer.body, {
    status: answer.status,
    ...(answer.contentType === undefined ? {} : { contentType: answer.contentType }),
    headers: { "idempotent-replayed": "true" }
  })

/** The answer as it can be kept: the statuses a repeat should see again (not a refusal to retry), with its bytes. */
const keepable = (response: HttpServerResponse.HttpServerResponse): Option.Option<Answer> => {
  if (response.status >= 500 || response.status === 429) return Option.none()
  const body = response.body
  if (body._tag === "Uint8Array") return Option.some({ status: response.status, contentType: body.contentType, body: body.body })
  if (body._tag === "Empty") return Option.some({ status: response.status, contentType: undefined, body: new Uint8Array(0) })
  return Option.none()
}

const principalOf = (identified: Identified): Option.Option<Principal> =>
  Either.isRight(identified) ? identified.right : Option.none()

/** The route run once per key (or as it is, without a key, for a read, or for a request with no credential). */
export const keepAnswers =
  (keys: IdempotencyKeysService): Step<never> =>
  (app) =>
    Effect.withFiberRuntime<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>((fiber) => {
      const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
      // the steps inside answer every failure: what is left is a defect, which the outer steps answer
      const serve = Effect.orDie(app)
      const header = request.headers["idempotency-key"]
      if (header === undefined || !KEYED_METHODS.has(request.method)) return serve
      const principal = principalOf(fiber.getFiberRef(CurrentRequest).identity)
      // no credential: the request is answered 401
      if (Option.isNone(principal)) return serve
      if (!isKey(header)) {
        return Effect.succeed(
          HttpServerResponse.unsafeJson(errorBody("ValidationError", `${HEADER}: must be 1 to 255 printable ASCII characters`), { status: 422 })
        )
      }
      return Effect.flatMap(Effect.orElseSucceed(request.text, () => undefined), (body) => {
        // a body that cannot be read is refused by the route (413, 422): nothing to keep
        if (body === undefined) return serve
        const keyed: KeyedRequest = { credential: credentialOf(principal.value), key: header, method: request.method, url: request.url, body }
        return Effect.matchEffect(keys.claim(keyed), {
          onFailure: (error) => Effect.succeed(refusal(error)),
          onSuccess: (claim) => {
            if (claim._tag === "Replay") return Effect.succeed(replayed(claim.answer))
            if (claim._tag === "Running") return Effect.succeed(running())
            return Effect.onExit(serve, (exit) => {
              const answer = Exit.isSuccess(exit) ? keepable(exit.value) : Option.none()
              return Option.match(answer, { onNone: () => keys.forget(keyed), onSome: (kept) => keys.keep(keyed, kept) })
            })
          }
        })
      })
    })
