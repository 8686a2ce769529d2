import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Stream } from "effect"
import { createHash } from "node:crypto"
import { GunzipLines } from "./ArchiveFormat.js"
import { ArchiveError, decodeHeader, decodeTrailer, type Header, ROW_PREFIX, type Trailer } from "./ArchiveSchema.js"
import { readChunks } from "./ArchiveStore.js"

/**
 * Reading a backup's archive for a restore, straight from its chunks (ArchiveStore.ts), as often as a restore needs:
 * once to check it (RestoreCheck.ts) and once more for each apply (RestoreApply.ts), so nothing of it is copied
 * into the database but the rows that go back in the lab, and a restarted service reads it again from the same chunks.
 */

/** Compressed bytes given to gunzip at once: what one of them decompresses to is bounded by gzip's ratio (~1000:1). */
const SLICE_BYTES = 16 * 1024

const unreadable = (cause: unknown) =>
  new ArchiveError({ message: `the archive cannot be read: ${cause instanceof Error ? cause.message : String(cause)}` })

/** A backup's archive known to be whole and of its lab: what lab_restores.staged keeps for a restarted apply. */
export interface Verified {
  readonly backupId: string
  readonly header: typeof Header.Type
  readonly trailer: typeof Trailer.Type
}

/** A row line of the archive: its table, and the row's JSON text as the dump wrote it (row_to_json). */
export interface RowLine {
  readonly table: string
  readonly row: string
}

const TABLE_NAME = /^"(?:[^"\\]|\\.)*"/

/** The table and row of a row line; none for any other line. */
export const rowLine = (text: string): Option.Option<RowLine> => {
  if (!text.startsWith(ROW_PREFIX) || !text.endsWith("}")) return Option.none()
  const name = TABLE_NAME.exec(text.slice(ROW_PREFIX.length))?.[0]
  if (name === undefined) return Option.none()
  const rest = ROW_PREFIX.length + name.length
  if (!text.startsWith(',"row":', rest)) return Option.none()
  const table: unknown = JSON.parse(name)
  return typeof table === "string" ? Option.some({ table, row: text.slice(rest + ',"row":'.length, -1) }) : Option.none()
}

/** A line of the archive, classified: its header, a row, its trailer. */
export type Line =
  | { readonly _tag: "header"; readonly header: typeof Header.Type }
  | { readonly _tag: "row"; readonly table: string; readonly row: string }
  | { readonly _tag: "trailer"; readonly trailer: typeof Trailer.Type }

/**
 * Feeds `line` the archive's lines in order, each classified, checking as it goes that it is an archive of this lab
 * in a known format: a header first, rows, a trailer last. Whatever fails, the archive's bytes are still all read
 * and hashed: when they do not match `sha256`, that is what the failure says (a corrupt archive is refused as such).
 */
export const readArchive = <R>(
  sql: SqlClient.SqlClient,
  backupId: string,
  labId: string,
  sha256: string,
  line: (line: Line) => Effect.Effect<void, ArchiveError | SqlError, R>
): Effect.Effect<Verified, ArchiveError | SqlError, R> =>
  Effect.gen(function* () {
    const hash = createHash("sha256")
    const gunzip = new GunzipLines()
    let header = Option.none<typeof Header.Type>()
    let trailer = Option.none<typeof Trailer.Type>()
    let problem = Option.none<ArchiveError>()

    const classify = (text: string): Effect.Effect<Option.Option<Line>, ArchiveError> =>
      Effect.suspend(() => {
        if (text === "") return Effect.succeed(Option.none())
        if (Option.isNone(header)) {
          const decoded = decodeHeader(text)
          if (Option.isNone(decoded) || decoded.value.labId !== labId) {
            return Effect.fail(new ArchiveError({ message: "the archive is not a backup of this lab in a known format" }))
          }
          header = decoded
          return Effect.succeed(Option.some<Line>({ _tag: "header", header: decoded.value }))
        }
        if (Option.isSome(trailer)) return Effect.fail(new ArchiveError({ message: "the archive has data after its end" }))
        const row = rowLine(text)
        if (Option.isSome(row)) return Effect.succeed(Option.some<Line>({ _tag: "row", ...row.value }))
        const decoded = decodeTrailer(text)
        if (Option.isNone(decoded)) return Effect.fail(new ArchiveError({ message: "the archive has a line that is neither a row nor its end" }))
        trailer = decoded
        return Effect.succeed(Option.some<Line>({ _tag: "trailer", trailer: decoded.value }))
      })
    const lines = (texts: ReadonlyArray<string>) =>
      Effect.forEach(texts, (text) => Effect.flatMap(classify(text), Option.match({ onNone: () => Effect.void, onSome: line })), {
        discard: true
      })
    const unlessFailed = <E, R2>(step: Effect.Effect<void, ArchiveError | E, R2>) =>
      Option.isSome(problem)
        ? Effect.void
        : Effect.catchIf(step, (e): e is ArchiveError => e instanceof ArchiveError, (e) => Effect.sync(() => (problem = Option.some(e))))

    yield* Stream.runForEach(readChunks(sql, backupId), (chunk) =>
      Effect.gen(function* () {
        hash.update(chunk)
        for (let at = 0; at < chunk.byteLength && Option.isNone(problem); at += SLICE_BYTES) {
          const slice = chunk.subarray(at, at + SLICE_BYTES)
          yield* unlessFailed(Effect.flatMap(Effect.tryPromise({ try: () => gunzip.push(slice), catch: unreadable }), lines))
        }
      })
    )
    if (hash.digest("hex") !== sha256) {
      return yield* new ArchiveError({ message: "the archive does not match its SHA-256: it is corrupt" })
    }
    if (Option.isSome(problem)) return yield* problem.value
    yield* lines(yield* Effect.tryPromise({ try: () => gunzip.end(), catch: unreadable }))
    if (Option.isNone(header) || Option.isNone(trailer)) return yield* new ArchiveError({ message: "the archive is truncated" })
    return { backupId, header: header.value, trailer: trailer.value }
  })

/**
 * Rows of one table gathered into batches of JSON arrays, each handed to `flush` once it holds `rows()` rows or
 * `bytes` of text (a row of several MiB is a batch of its own), or when a row of another table comes.
 */
export const batcher = <R>(
  rows: () => number,
  bytes: number,
  flush: (table: string, batch: string, count: number) => Effect.Effect<void, ArchiveError | SqlError, R>
) => {
  let table: string | undefined
  let pending: Array<string> = []
  let size = 0
  const drain = Effect.suspend(() => {
    if (table === undefined || pending.length === 0) return Effect.void
    const batch = `[${pending.join(",")}]`
    const count = pending.length
    pending = []
    size = 0
    return flush(table, batch, count)
  })
  return {
    add: (row: RowLine) =>
      Effect.gen(function* () {
        if (row.table !== table) {
          yield* drain
          table = row.table
        }
        if (pending.length > 0 && size + row.row.length > bytes) yield* drain
        pending.push(row.row)
        size += row.row.length
        if (pending.length >= rows() || size >= bytes) yield* drain
      }),
    end: drain
  }
}
