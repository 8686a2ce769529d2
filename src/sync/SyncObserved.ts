import { Effect, Metric, Option } from "effect"
import type { LabId } from "../labs/LabId.js"
import { syncFailures, syncSeconds } from "../observability/Metrics.js"
import type { EngineDeps } from "./EngineDeps.js"
import type { SyncResult } from "./RepoLink.js"

type Kind = "pull" | "push"

const seconds = { pull: Metric.tagged(syncSeconds, "kind", "pull"), push: Metric.tagged(syncSeconds, "kind", "push") }
const failures = { pull: Metric.tagged(syncFailures, "kind", "pull"), push: Metric.tagged(syncFailures, "kind", "push") }

/**
 * A pull's or a push's log line and metrics: its lab, commit, counts and duration; a failure counted and logged as
 * a warning (the worker retries it). A job that found nothing to do is measured and logged at debug level only.
 */
const observed = <A, E, R>(
  kind: Kind,
  labId: LabId,
  job: Effect.Effect<A, E, R>,
  describe: (a: A) => Effect.Effect<{ readonly idle: boolean; readonly fields: Record<string, unknown> }>
) =>
  Effect.gen(function* () {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const result = yield* job.pipe(
      Effect.tapError((error) =>
        Effect.zipRight(
          Metric.increment(failures[kind]),
          Effect.logWarning(`${kind} failed`, { lab: labId, duration_ms: elapsed(), error: String(error) })
        )
      )
    )
    const millis = elapsed()
    yield* Metric.update(seconds[kind], millis / 1000)
    const { idle, fields } = yield* describe(result)
    const line = { lab: labId, ...fields, duration_ms: millis }
    yield* idle ? Effect.logDebug(kind, line) : Effect.logInfo(kind, line)
    return result
  }).pipe(Effect.withSpan(`sync.${kind}`, { attributes: { "lab.id": labId } }))

export const observedPull = <E, R>(labId: LabId, job: Effect.Effect<SyncResult, E, R>) =>
  observed("pull", labId, job, (r) =>
    Effect.succeed({
      idle: r.pulled + r.updated + r.removed === 0,
      fields: { commit: r.sha, added: r.pulled, updated: r.updated, removed: r.removed, skipped: r.skipped }
    })
  )

/**
 * A host probe before a job (JobSlots.ts): its failure counts as the failure of what the job would have failed
 * at, as before there was a probe: its push when writes wait (noted on them, as a push's own), else its pull.
 */
export const observedProbe = <E extends { readonly message: string }, R>(deps: EngineDeps, labId: LabId, probe: Effect.Effect<void, E, R>) =>
  Effect.gen(function* () {
    const started = performance.now()
    yield* probe.pipe(
      Effect.tapError((error) =>
        Effect.gen(function* () {
          const kind: Kind = (yield* deps.links.pendingCount(labId)) > 0 ? "push" : "pull"
          if (kind === "push") yield* deps.links.noteAttempt(labId, error.message)
          yield* Metric.increment(failures[kind])
          yield* Effect.logWarning(`${kind} failed`, { lab: labId, duration_ms: Math.round(performance.now() - started), error: String(error) })
        })
      )
    )
  })

export const observedPush = <E, R>(deps: EngineDeps, labId: LabId, job: Effect.Effect<number, E, R>) =>
  observed("push", labId, job, (pushed) =>
    pushed === 0
      ? Effect.succeed({ idle: true, fields: { pushed } })
      : deps.links.link(labId).pipe(
          Effect.map((link) => ({
            idle: false,
            fields: { pushed, commit: Option.match(link, { onNone: () => "", onSome: (l) => l.lastSyncSha ?? "" }) }
          })),
          Effect.orElseSucceed(() => ({ idle: false, fields: { pushed } }))
        )
  )
