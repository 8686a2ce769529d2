import { Context, Duration, Effect, Layer, Option, Schedule, type Scope } from "effect"

/**
 * Free space under DATA_DIR, watched (README "Operating": a full disk). Below the reserve the service refuses writes
 * (507 insufficient_storage) and /readyz says why; reads go on, and writes come back by themselves once space does.
 * The embedded database needs room for a new 16 MiB WAL segment at any write: a reserve well above that keeps it from
 * ever meeting a full disk (where it stops until space returns). A disk-full error from the database (SQLSTATE 53100,
 * ENOSPC: PostgreSQL's disk is not watched from here) refuses writes for a short while too.
 */
export interface DiskSpaceService {
  /** Why writes are refused now (a sentence for the client and /readyz), or none. */
  readonly refusal: Effect.Effect<Option.Option<string>>
  /** The same, read at once (the global middleware asks it on every write). */
  readonly writesRefused: () => Option.Option<string>
  /** A write failed for lack of space (53100, ENOSPC): refuse writes for a while, and look at the disk again now. */
  readonly reportFull: Effect.Effect<void>
  /**
   * Run `action` each time the watched free space climbs back above the reserve (writes refused, then not), for the
   * life of the caller's scope: work paused meanwhile (pulls) resumes without waiting for an outside event.
   */
  readonly onSpaceReturned: (action: Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>
}

export class DiskSpace extends Context.Tag("DiskSpace")<DiskSpace, DiskSpaceService>() {}

export interface DiskWatch {
  /** Bytes free for the service (statfs's bavail × bsize); none when the filesystem cannot be asked. */
  readonly freeBytes: Effect.Effect<Option.Option<number>>
  /** Below this many free bytes writes are refused; 0: never (the free space is still logged). */
  readonly reserveBytes: number
  /** How often the free space is asked (a statfs: microseconds). */
  readonly every: Duration.DurationInput
}

/** After a disk-full error, writes are refused this long (each new one starts it again): the next write probes. */
export const REPORTED_FULL_HOLD = Duration.seconds(5)

const MIB = 1024 * 1024
export const mebibytes = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`

const belowReserve = (free: number, reserve: number) =>
  `${mebibytes(free)} free under DATA_DIR, below the reserve of ${mebibytes(reserve)}: writes are refused until space is freed`

const REPORTED = "the database reported its disk full: writes are refused until space is freed"

/** The service over a source of free bytes: asked every `every` by a fiber of the scope, and at once after a report. */
export const make = (watch: DiskWatch): Effect.Effect<DiskSpaceService, never, Scope.Scope> =>
  Effect.gen(function* () {
    let low: Option.Option<number> = Option.none()
    let fullUntil = 0
    const scope = yield* Effect.scope
    const listeners = new Set<Effect.Effect<void>>()
    // each listener runs on its own fiber: a slow one (a database call) does not hold up the watch
    const resume = (action: Effect.Effect<void>) =>
      Effect.forkIn(Effect.catchAllCause(action, (cause) => Effect.logWarning("work resumed after space returned failed", cause)), scope)
    const returned = Effect.suspend(() => Effect.forEach([...listeners], resume, { discard: true }))
    const look = Effect.flatMap(watch.freeBytes, (free) => {
      const next = Option.filter(free, (bytes) => bytes < watch.reserveBytes)
      const was = low
      low = next
      if (Option.isSome(next) && Option.isNone(was)) return Effect.logWarning(belowReserve(next.value, watch.reserveBytes))
      // only the watched reserve's recovery resumes work: a database's disk-full hold ends on a clock, not on space
      // seen to return (a disk that stays full would otherwise ask every lab to pull every few seconds)
      if (Option.isNone(next) && Option.isSome(was)) {
        return Effect.zipRight(
          Effect.logInfo(`free space under DATA_DIR is above the reserve of ${mebibytes(watch.reserveBytes)} again: writes are accepted`),
          returned
        )
      }
      return Effect.void
    })
    yield* look
    yield* Effect.forkScoped(Effect.repeat(look, Schedule.spaced(watch.every)))
    const writesRefused = () =>
      Option.isSome(low)
        ? Option.some(belowReserve(low.value, watch.reserveBytes))
        : Date.now() < fullUntil
          ? Option.some(REPORTED)
          : Option.none()
    return {
      writesRefused,
      refusal: Effect.sync(writesRefused),
      reportFull: Effect.suspend(() => {
        const now = Date.now()
        const first = now >= fullUntil
        fullUntil = now + Duration.toMillis(REPORTED_FULL_HOLD)
        return Effect.zipRight(first ? Effect.logWarning(REPORTED) : Effect.void, look)
      }),
      onSpaceReturned: (action) =>
        Effect.acquireRelease(
          Effect.sync(() => listeners.add(action)),
          () => Effect.sync(() => listeners.delete(action))
        ).pipe(Effect.asVoid)
    }
  })

export const layer = (watch: DiskWatch): Layer.Layer<DiskSpace> => Layer.scoped(DiskSpace, make(watch))

/** No disk of the service's own to watch (an in-memory test instance): only reported disk-full errors refuse writes. */
export const unwatched: Layer.Layer<DiskSpace> = layer({ freeBytes: Effect.succeed(Option.none()), reserveBytes: 0, every: Duration.hours(1) })
