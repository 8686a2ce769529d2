import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Chunk, Effect, Option, Schema, Stream } from "effect"
import { createHash } from "node:crypto"
import { createGzip } from "node:zlib"
import { inBackground } from "../db/Priority.js"
import { ArchiveError } from "./ArchiveSchema.js"

/**
 * Where archives live: the rows of backup_chunks (migration 13), 1 MiB of the gzip'd archive each, written as the dump
 * compresses and read one at a time, so no step holds more than a chunk of an archive. Every statement is its own
 * short step, at background priority (src/db/Priority.ts).
 */
export const CHUNK_BYTES = 1024 * 1024

const io = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (cause) => new ArchiveError({ message: `${what}: ${String(cause)}` }) })

/** Forget what an earlier attempt (or a failed backup) stored. */
export const clearChunks = (sql: SqlClient.SqlClient, backupId: string) =>
  inBackground(Effect.asVoid(sql`DELETE FROM backup_chunks WHERE backup_id = ${backupId}`))

/** What the archive became: its bytes and their SHA-256 (hex). */
export interface Stored {
  readonly size: number
  readonly sha256: string
}

/** Text in, gzip'd chunks out to backup_chunks, with the archive's size and checksum at the end. */
export interface ChunkWriter {
  readonly write: (text: string) => Effect.Effect<void, ArchiveError | SqlError>
  readonly end: Effect.Effect<Stored, ArchiveError | SqlError>
}

export const chunkWriter = (sql: SqlClient.SqlClient, backupId: string): Effect.Effect<ChunkWriter> =>
  Effect.sync(() => {
    const gzip = createGzip({ level: 6 })
    const hash = createHash("sha256")
    let pending: Array<Buffer> = []
    let pendingBytes = 0
    let seq = 0
    let size = 0
    gzip.on("data", (chunk: Buffer) => {
      pending.push(chunk)
      pendingBytes += chunk.byteLength
    })
    const ended = new Promise<void>((resolve, reject) => {
      gzip.once("end", resolve)
      gzip.once("error", reject)
    })
    const store = (data: Buffer) =>
      Effect.suspend(() => {
        hash.update(data)
        size += data.byteLength
        const at = seq++
        // as base64 text: embedded PGlite kept every bytea parameter it was sent alive until the dump ended (+250 MiB
        // for a 64 MiB lab); text is collected as it should be
        const text = data.toString("base64")
        return inBackground(
          Effect.asVoid(sql`INSERT INTO backup_chunks (backup_id, seq, data) VALUES (${backupId}, ${at}, decode(${text}, 'base64'))`)
        )
      })
    /** Store whole chunks of what gzip produced (all of it at the end). */
    const flush = (all: boolean) =>
      Effect.suspend(() => {
        if (pendingBytes < CHUNK_BYTES && !(all && pendingBytes > 0)) return Effect.void
        const bytes = Buffer.concat(pending)
        const whole = all ? bytes.byteLength : bytes.byteLength - (bytes.byteLength % CHUNK_BYTES)
        const rest = bytes.subarray(whole)
        pending = rest.byteLength > 0 ? [rest] : []
        pendingBytes = rest.byteLength
        const parts = Array.from({ length: Math.ceil(whole / CHUNK_BYTES) }, (_, i) =>
          bytes.subarray(i * CHUNK_BYTES, Math.min(whole, (i + 1) * CHUNK_BYTES))
        )
        return Effect.forEach(parts, store, { discard: true })
      })
    return {
      write: (text) =>
        Effect.zipRight(
          io("compressing the archive", () => new Promise<void>((resolve, reject) => gzip.write(text, (e) => (e ? reject(e) : resolve())))),
          flush(false)
        ),
      end: Effect.gen(function* () {
        yield* io("compressing the archive", () => {
          gzip.end()
          return ended
        })
        yield* flush(true)
        return { size, sha256: hash.digest("hex") }
      })
    }
  })

const Part = Schema.Array(Schema.Struct({ data: Schema.String }))
const decodePart = Schema.decodeUnknown(Part)

/** The archive's bytes, a chunk per read, as the consumer takes them; a chunk gone (the backup deleted) ends it early. */
export const readChunks = (sql: SqlClient.SqlClient, backupId: string): Stream.Stream<Uint8Array, SqlError> =>
  Stream.paginateChunkEffect(0, (seq) =>
    inBackground(sql`SELECT encode(data, 'base64') AS data FROM backup_chunks WHERE backup_id = ${backupId} AND seq = ${seq}`).pipe(
      Effect.flatMap((rows) => Effect.orDie(decodePart(rows))),
      Effect.map((rows) => {
        const data = rows[0]?.data
        return data === undefined
          ? [Chunk.empty<Uint8Array>(), Option.none<number>()]
          : [Chunk.of<Uint8Array>(Buffer.from(data, "base64")), Option.some(seq + 1)]
      })
    )
  )
