import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Duration, Effect, Layer, Schedule, Schema } from "effect"
import { createHash } from "node:crypto"
import { InvalidField, OverQuota, StateConflict } from "../common/DomainErrors.js"

/**
 * Idempotency keys: a write sent with an `Idempotency-Key` is done once, and a repeat of it (same credential, key,
 * method, path and body) within a day gets the first answer again instead of doing the work twice. Kept in the
 * database, so every replica answers a repeat. Bounded by a quota of its own: a credential holds at most `maxKeys`
 * live keys (the answers of a day), and an answer over `maxAnswerBytes` is not kept (a repeat is told to read the
 * resource instead).
 */

/** What a key may be: 1–255 printable ASCII characters. */
export const IdempotencyKey = Schema.String.pipe(Schema.pattern(/^[\x20-\x7e]{1,255}$/))

export const HEADER = "Idempotency-Key"

export interface IdempotencySettings {
  /** Live keys one credential may hold (IDEMPOTENCY_KEYS_MAX). */
  readonly maxKeys: number
  /** How long an answer is kept. */
  readonly keepFor: Duration.Duration
  /** Answers larger than this are not kept. */
  readonly maxAnswerBytes: number
  /** A first request still marked running after this long is taken to have died with its process. */
  readonly abandonedAfter: Duration.Duration
}

export const DEFAULT_IDEMPOTENCY: IdempotencySettings = {
  maxKeys: 10_000,
  keepFor: Duration.hours(24),
  maxAnswerBytes: 256 * 1024,
  abandonedAfter: Duration.minutes(10)
}

/** The request a key stands for: who sent it, and what. */
export interface KeyedRequest {
  readonly credential: string
  readonly key: string
  readonly method: string
  /** Path and query, as sent. */
  readonly url: string
  readonly body: string
}

export interface Answer {
  readonly status: number
  readonly contentType: string | undefined
  readonly body: Uint8Array
}

/**
 * What to do with a request that carries a key: run it (and then `keep` or `forget` its answer), replay the first
 * answer, or refuse it while the first request with the key is still running.
 */
export type Claim = { readonly _tag: "Run" } | { readonly _tag: "Replay"; readonly answer: Answer } | { readonly _tag: "Running" }

export interface IdempotencyKeysService {
  /** Claims the key for this request, or finds the answer a first request with it got. */
  readonly claim: (request: KeyedRequest) => Effect.Effect<Claim, InvalidField | StateConflict | OverQuota>
  /** The first request's answer, kept for its repeats. */
  readonly keep: (request: KeyedRequest, answer: Answer) => Effect.Effect<void>
  /** The first request did not complete (an error of the service, a refusal before any work): a repeat runs again. */
  readonly forget: (request: KeyedRequest) => Effect.Effect<void>
}

export class IdempotencyKeys extends Context.Tag("IdempotencyKeys")<IdempotencyKeys, IdempotencyKeysService>() {}

const fingerprintOf = (request: KeyedRequest) =>
  createHash("sha256").update(`${request.method}\n${request.url}\n`).update(request.body).digest("hex")

const Row = Schema.Struct({
  fingerprint: Schema.String,
  request: Schema.String,
  status: Schema.NullOr(Schema.Number),
  contentType: Schema.NullOr(Schema.String),
  body: Schema.NullOr(Schema.Uint8ArrayFromSelf),
  bodyBytes: Schema.NullOr(Schema.Number)
})
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

/**
 * The write is done and answered whatever happens to its record: a key whose answer could not be kept stays marked
 * running, and its repeats are refused as in flight until `abandonedAfter`.
 */
const unrecorded = <E>(effect: Effect.Effect<void, E>) =>
  Effect.catchAllCause(effect, (cause) => Effect.logWarning("an idempotency key's answer could not be recorded", cause))

export const make = (settings: IdempotencySettings) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const keepSeconds = Duration.toSeconds(settings.keepFor)
    const abandonedSeconds = Duration.toSeconds(settings.abandonedAfter)

    // a new key is taken only while the credential holds fewer than maxKeys live ones; an expired row is taken over
    const insert = (request: KeyedRequest, fingerprint: string) =>
      sql<{ readonly taken: boolean }>`
        INSERT INTO idempotency_keys (credential, key, fingerprint, request, expires_at)
        SELECT ${request.credential}, ${request.key}, ${fingerprint}, ${`${request.method} ${request.url.split("?")[0]}`},
               now() + make_interval(secs => ${keepSeconds})
        WHERE (SELECT count(*) FROM (
          SELECT 1 FROM idempotency_keys WHERE credential = ${request.credential} AND expires_at > now() LIMIT ${settings.maxKeys}
        ) live) < ${settings.maxKeys}
        ON CONFLICT (credential, key) DO UPDATE
          SET fingerprint = EXCLUDED.fingerprint, request = EXCLUDED.request, status = NULL, content_type = NULL,
              body = NULL, body_bytes = NULL, started_at = now(), expires_at = EXCLUDED.expires_at
          WHERE idempotency_keys.expires_at <= now()
             OR (idempotency_keys.status IS NULL AND idempotency_keys.started_at < now() - make_interval(secs => ${abandonedSeconds})
                 AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
        RETURNING true AS taken`
    const existing = (request: KeyedRequest) =>
      sql`
        SELECT fingerprint, request, status, content_type, body, body_bytes FROM idempotency_keys WHERE credential = ${request.credential} AND key = ${request.key} AND expires_at > now()`.pipe(
        Effect.flatMap(decodeRows)
      )

    const claim = (request: KeyedRequest): Effect.Effect<Claim, InvalidField | StateConflict | OverQuota> =>
      Effect.gen(function* () {
        const fingerprint = fingerprintOf(request)
        const taken = yield* insert(request, fingerprint)
        if (taken.length > 0) return { _tag: "Run" } as const
        const [row] = yield* existing(request)
        if (row === undefined) {
          return yield* new OverQuota({
            quota: "idempotency_keys",
            reason: `quota exceeded: this credential holds ${settings.maxKeys} idempotency keys of the last ${Duration.format(settings.keepFor)}; send the write without ${HEADER}, or wait`
          })
        }
        if (row.fingerprint !== fingerprint) {
          return yield* new InvalidField({
            field: HEADER,
            problem: `this key was used for a different request (${row.request} with another body): use a new key for each write`
          })
        }
        if (row.status === null) return { _tag: "Running" } as const
        if (row.body === null) {
          return yield* new StateConflict({
            resource: "idempotency key",
            id: request.key,
            problem: `the write with this ${HEADER} was done (status ${row.status}) but its answer (${row.bodyBytes ?? 0} bytes) was too large to keep: read the resource instead`
          })
        }
        return { _tag: "Replay", answer: { status: row.status, contentType: row.contentType ?? undefined, body: row.body } } as const
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.catchTag("ParseError", Effect.die))

    const keep = (request: KeyedRequest, answer: Answer) => {
      const body = answer.body.byteLength > settings.maxAnswerBytes ? null : answer.body
      return sql`
        UPDATE idempotency_keys SET status = ${answer.status}, content_type = ${answer.contentType ?? null},
               body = ${body}, body_bytes = ${answer.body.byteLength}
        WHERE credential = ${request.credential} AND key = ${request.key} AND status IS NULL`.pipe(Effect.asVoid, unrecorded)
    }

    const forget = (request: KeyedRequest) =>
      sql`DELETE FROM idempotency_keys WHERE credential = ${request.credential} AND key = ${request.key} AND status IS NULL`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    return { claim, keep, forget } satisfies IdempotencyKeysService
  })

const SWEEP_BATCH = 1_000

/** Removes the expired answers, in short batches (other requests go on between them); how many it removed. */
export const removeExpired = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  let total = 0
  for (;;) {
    const removed = yield* sql<{ readonly key: string }>`
      DELETE FROM idempotency_keys WHERE (credential, key) IN (
        SELECT credential, key FROM idempotency_keys WHERE expires_at <= now() LIMIT ${SWEEP_BATCH}
      ) RETURNING key`
    total += removed.length
    if (removed.length < SWEEP_BATCH) return total
  }
})

/** Expired answers removed every few minutes for the life of the layer. */
const sweep = Effect.gen(function* () {
  yield* removeExpired.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("removing expired idempotency keys failed", cause)),
    Effect.repeat(Schedule.spaced(Duration.minutes(5))),
    Effect.forkScoped
  )
})

export const layer = (settings: IdempotencySettings = DEFAULT_IDEMPOTENCY) =>
  Layer.scoped(IdempotencyKeys, Effect.zipLeft(make(settings), sweep))

export const credentialOf = (principal: { readonly kind: string; readonly id: string }) => `${principal.kind}:${principal.id}`
