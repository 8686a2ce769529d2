import * as SqlClient from "@effect/sql/SqlClient"
import { Duration, Effect, Schedule, Schema } from "effect"
import { inBackground } from "../db/Priority.js"
import { indexInPieces } from "./SearchPieces.js"

/** Queued records indexed per statement: on PGlite a statement holds the database, so it stays short (~20 ms). */
const BATCH = 20
/** In the background a batch shrinks after a slow statement (big records: a restored lab's files) and grows back. */
const SLOW = Duration.millis(50)
const FAST = Duration.millis(20)
/** A queued file larger than this (bytes) is indexed in pieces in the background (SearchPieces.ts). */
const BIG_FILE_BYTES = 16 * 1024

/** How often the background indexer looks for queued records when it found none. */
const IDLE_POLL = Duration.seconds(1)

const Drained = Schema.Array(Schema.Struct({ taken: Schema.Number }))
const decodeDrained = Schema.decodeUnknown(Drained)
const Queued = Schema.Array(Schema.Struct({ labId: Schema.String, ref: Schema.String, version: Schema.String, big: Schema.Boolean }))
const decodeQueued = Schema.decodeUnknown(Queued)

/**
 * Indexes the records whose triggers queue them (search_queue, files: see
 * src/db/migrations/0005-search-queue.ts) off the writers' transactions: in the background, a batch per
 * statement (a big file in pieces, a statement each), and on demand for one lab before a search reads the index.
 */
export class SearchIndexer extends Effect.Service<SearchIndexer>()("SearchIndexer", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const batch = (labId: string | null, size = BATCH) =>
      sql`SELECT search_drain(${labId}, ${size}) AS taken`.pipe(
        Effect.flatMap(decodeDrained),
        Effect.map((rows) => rows[0]?.taken ?? 0)
      )

    /** Index until nothing is queued (for the lab, or for all labs when null). */
    const drain = (labId: string | null) =>
      Effect.iterate(BATCH, { while: (taken) => taken > 0, body: () => batch(labId) })

    /** The next queued records in search_drain's order, each said big when it is a file to index in pieces. */
    const next = (size: number) =>
      sql`SELECT q.lab_id, q.ref, q.version::text AS version, coalesce(f.size > ${BIG_FILE_BYTES}, false) AS big
          FROM search_queue q
          LEFT JOIN files f ON q.kind = 'files' AND f.lab_id = q.lab_id AND f.path = q.ref COLLATE "C"
          ORDER BY q.lab_id, q.kind, q.ref LIMIT ${size}`.pipe(Effect.flatMap(decodeQueued))

    /**
     * One background step: a big file first in line is indexed in pieces, each followed by a pause as long as it
     * took; otherwise search_drain takes the small records of the first lab up to the next big one. Records taken.
     */
    const backgroundBatch = (size: number) =>
      Effect.gen(function* () {
        const queued = yield* inBackground(next(size))
        const first = queued[0]
        if (first === undefined) return 0
        if (first.big) {
          yield* indexInPieces(sql, first, (took) => Effect.sleep(took))
          return 1
        }
        const small = queued.findIndex((q) => q.big || q.labId !== first.labId)
        return yield* inBackground(batch(first.labId, small < 0 ? queued.length : small))
      })

    /**
     * In the background, each batch is followed by a pause as long as it took: the indexer keeps to half a core. Its
     * size is halved after a slow statement and doubled (up to BATCH) after a fast full one.
     */
    const drainGently = Effect.suspend(() => {
      let size = BATCH
      return Effect.iterate(BATCH, {
        while: (taken) => taken > 0,
        body: () =>
          Effect.timed(backgroundBatch(size)).pipe(
            Effect.tap(([took, taken]) =>
              Effect.sync(() => {
                if (Duration.greaterThan(took, SLOW)) size = Math.max(1, Math.floor(size / 2))
                else if (Duration.lessThan(took, FAST) && taken === size) size = Math.min(BATCH, size * 2)
              })
            ),
            Effect.flatMap(([took, taken]) => Effect.as(Effect.sleep(took), taken))
          )
      })
    })

    yield* drainGently.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("search indexer: a batch failed; retrying", cause)),
      Effect.repeat(Schedule.spaced(IDLE_POLL)),
      Effect.forkScoped
    )

    return {
      /** Index what the lab still has queued, so a search right after a write finds it. */
      catchUp: (labId: string) => Effect.orDie(Effect.asVoid(drain(labId)))
    }
  })
}) {}
