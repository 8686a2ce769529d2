import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option, Stream } from "effect"
import { createHash } from "node:crypto"
import { inBackground } from "../db/Priority.js"
import type { LabId } from "../labs/LabId.js"
import { GunzipLines } from "./ArchiveFormat.js"
import {
  ArchiveError,
  decodeHeader,
  decodeTrailer,
  type Header,
  ROW_PREFIX,
  type Trailer
} from "./ArchiveSchema.js"
import { readChunks } from "./ArchiveStore.js"

/** Rows (and bytes) per statement while staging a restore, and staged rows deleted per statement afterwards. */
const STAGE_ROWS = 500
const STAGE_BYTES = 256 * 1024
const CLEAR_ROWS = 200

const unreadable = (cause: unknown) =>
  new ArchiveError({ message: `the archive cannot be read: ${cause instanceof Error ? cause.message : String(cause)}` })

/** A backup's archive checked and its rows staged in restore_rows (migration 13), ready to be put in the lab. */
export interface Staged {
  readonly backupId: string
  readonly header: typeof Header.Type
  readonly trailer: typeof Trailer.Type
}

/** Delete what a restore staged, a few rows per statement (a restore's rows are megabytes). */
export const clearStaged = (sql: SqlClient.SqlClient, backupId: string) =>
  inBackground(
    Effect.iterate(CLEAR_ROWS, {
      while: (deleted) => deleted >= CLEAR_ROWS,
      body: () =>
        Effect.map(
          sql`WITH gone AS (
                DELETE FROM restore_rows WHERE (backup_id, tbl, seq) IN (
                  SELECT backup_id, tbl, seq FROM restore_rows WHERE backup_id = ${backupId} LIMIT ${CLEAR_ROWS})
                RETURNING 1)
              SELECT count(*)::int AS n FROM gone`,
          (rows) => {
            const n = rows[0]?.["n"]
            return typeof n === "number" ? n : 0
          }
        )
    })
  )

/**
 * Read the backup's archive chunk by chunk into restore_rows, each batch its own statement, checking it is a
 * complete backup of this lab (its header first, its trailer last) whose bytes match their SHA-256.
 */
export const stageArchive = (sql: SqlClient.SqlClient, backupId: string, labId: LabId, sha256: string) =>
  Effect.gen(function* () {
    yield* clearStaged(sql, backupId)
    const hash = createHash("sha256")
    const gunzip = new GunzipLines()
    const state: {
      header: Option.Option<typeof Header.Type>
      trailer: Option.Option<typeof Trailer.Type>
      pending: Array<string>
      bytes: number
    } = { header: Option.none(), trailer: Option.none(), pending: [], bytes: 0 }
    const flush = Effect.suspend(() => {
      if (state.pending.length === 0) return Effect.void
      const batch = `[${state.pending.join(",")}]`
      state.pending = []
      state.bytes = 0
      return inBackground(
        Effect.asVoid(sql`INSERT INTO restore_rows (backup_id, tbl, row)
          SELECT ${backupId}, x->>'table', x->'row' FROM json_array_elements(${batch}::json) x`)
      )
    })
    const line = (text: string) =>
      Effect.gen(function* () {
        if (text === "") return
        if (Option.isNone(state.header)) {
          const header = decodeHeader(text)
          if (Option.isNone(header) || header.value.labId !== labId) {
            return yield* new ArchiveError({ message: "the archive is not a backup of this lab in a known format" })
          }
          state.header = header
          return
        }
        if (Option.isSome(state.trailer)) return yield* new ArchiveError({ message: "the archive has data after its end" })
        // rows are staged as they are (the database parses them); anything else must be the trailer
        if (text.startsWith(ROW_PREFIX)) {
          state.pending.push(text)
          state.bytes += text.length
          if (state.pending.length >= STAGE_ROWS || state.bytes >= STAGE_BYTES) yield* flush
          return
        }
        const trailer = decodeTrailer(text)
        if (Option.isNone(trailer)) return yield* new ArchiveError({ message: "the archive has a line that is neither a row nor its end" })
        state.trailer = trailer
      })
    const lines = (texts: ReadonlyArray<string>) => Effect.forEach(texts, line, { discard: true })

    // the checksum is checked first: whatever else is wrong with a corrupt archive, that is what to say
    let problem = Option.none<ArchiveError>()
    const unlessFailed = <E, R>(step: Effect.Effect<void, ArchiveError | E, R>) =>
      Option.isSome(problem)
        ? Effect.void
        : Effect.catchIf(step, (e): e is ArchiveError => e instanceof ArchiveError, (e) => Effect.sync(() => (problem = Option.some(e))))
    yield* Stream.runForEach(readChunks(sql, backupId), (chunk) =>
      Effect.suspend(() => {
        hash.update(chunk)
        const staged = Effect.flatMap(Effect.tryPromise({ try: () => gunzip.push(chunk), catch: unreadable }), lines)
        return unlessFailed(staged)
      })
    )
    if (hash.digest("hex") !== sha256) {
      return yield* new ArchiveError({ message: "the archive does not match its SHA-256: it is corrupt" })
    }
    if (Option.isSome(problem)) return yield* problem.value
    yield* lines(yield* Effect.tryPromise({ try: () => gunzip.end(), catch: unreadable }))
    yield* flush
    const header = state.header
    const trailer = state.trailer
    if (Option.isNone(header) || Option.isNone(trailer)) {
      return yield* new ArchiveError({ message: "the archive is truncated" })
    }
    const staged: Staged = { backupId, header: header.value, trailer: trailer.value }
    return staged
  }).pipe(Effect.tapErrorCause(() => Effect.ignore(clearStaged(sql, backupId))))

/** Bytes of the files staged (what the stored-bytes quota counts of them), for a backup that did not note them. */
export const stagedFileBytes = (sql: SqlClient.SqlClient, staged: Staged) =>
  Effect.map(
    sql`SELECT COALESCE(sum((row->>'size')::bigint), 0)::float8 AS n FROM restore_rows
        WHERE backup_id = ${staged.backupId} AND tbl = 'files'`,
    (rows) => {
      const n = rows[0]?.["n"]
      return typeof n === "number" ? n : 0
    }
  )
