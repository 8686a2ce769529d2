import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option, Ref, Schema } from "effect"
import { migrations } from "../db/Migrations.js"
import { DiskSpace } from "./DiskSpace.js"

/** Why this replica should not get traffic now (GET /readyz answers 503 with it). */
export type NotReadyReason = "draining" | "database unreachable" | "migrations not applied" | `insufficient storage: ${string}`

/** A readiness check answers within this, or counts the database as unreachable. */
const CHECK_TIMEOUT = "2 seconds"
/** The database's part of the answer is asked again after this. */
const CHECK_EVERY = "1 second"

const Applied = Schema.Array(Schema.Struct({ applied: Schema.NumberFromString }))
const MIGRATION_IDS = migrations.map((m) => m.id)

/**
 * Whether this replica takes traffic. `drain` flips it off for good when the process is asked to stop; `check` is
 * what GET /readyz runs: not draining (at once), the disk above its reserve (at once: DiskSpace.ts; reads are still
 * served, writes refused), the database answering, and every migration this code knows applied (one indexed count,
 * asked at most once a second).
 */
export class Readiness extends Effect.Service<Readiness>()("Readiness", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const disk = yield* DiskSpace
    const draining = yield* Ref.make(false)

    const migrated = sql`SELECT count(*)::text AS applied FROM schema_migrations WHERE id IN ${sql.in(MIGRATION_IDS)}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Applied)),
      Effect.map((rows) => (rows[0]?.applied ?? 0) === MIGRATION_IDS.length),
      Effect.timeout(CHECK_TIMEOUT),
      Effect.option
    )

    // one query a second at most, however many probes come (they skip the rate limits): callers share its answer
    const database = yield* Effect.cachedWithTTL(
      Effect.map(migrated, (applied): NotReadyReason | null =>
        applied._tag === "None" ? "database unreachable" : applied.value ? null : "migrations not applied"
      ),
      CHECK_EVERY
    )

    const storage = Effect.map(disk.refusal, Option.map((why): NotReadyReason => `insufficient storage: ${why}`))
    const check: Effect.Effect<NotReadyReason | null> = Effect.flatMap(Ref.get(draining), (stopping) =>
      stopping
        ? Effect.succeed("draining" as const)
        : Effect.flatMap(storage, Option.match({ onNone: () => database, onSome: Effect.succeed }))
    )

    return { check, drain: Ref.set(draining, true), draining: Ref.get(draining) }
  })
}) {}
