import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { type Duration, Effect, Schema } from "effect"
import type { ParseError } from "effect/ParseResult"
import { inBackground } from "../db/Priority.js"

/**
 * A long file indexed by the background indexer in pieces, a statement each, instead of one search_put over its whole
 * text (100,000 characters took a quarter of a second on PGlite, where every request waits for the statement in
 * progress). The document is the one search_drain writes (migrations 5 and 14): title at weight A, then the body at
 * weight B, `tsvector || tsvector` placing each piece's words after the previous ones'. It is written in one last
 * statement, and only if the file is still at the version read: a file written or removed meanwhile is left queued.
 */

/** Characters of a file's text parsed per statement; a piece ends at a space when one is near. */
const PIECE_CHARS = 8_000
/** What search_put indexes of a body (migration 14). */
const BODY_CHARS = 100_000
const TITLE_CHARS = 500

const Text = Schema.Array(Schema.Struct({ body: Schema.String, title: Schema.String, titleText: Schema.String }))
const Vector = Schema.Array(Schema.Struct({ tsv: Schema.String }))
const BREAK = /[\s/~._<@&:]/

/** The text in pieces of about `size` characters, each ending after a separator when one is in its last tenth. */
export const pieces = (text: string, size = PIECE_CHARS): ReadonlyArray<string> => {
  const out: Array<string> = []
  let at = 0
  while (at < text.length) {
    let end = Math.min(text.length, at + size)
    if (end < text.length) {
      let cut = end
      while (cut > end - size / 10 && !BREAK.test(text.charAt(cut - 1))) cut--
      if (cut > end - size / 10) end = cut
      else if (/[\uD800-\uDBFF]/.test(text.charAt(end - 1))) end--
    }
    out.push(text.slice(at, end))
    at = end
  }
  return out
}

export interface QueuedFile {
  readonly labId: string
  readonly ref: string
  readonly version: string
}

/** Index the queued file in pieces, `pause` after each statement (given how long it took). */
export const indexInPieces = (
  sql: SqlClient.SqlClient,
  file: QueuedFile,
  pause: (took: Duration.Duration) => Effect.Effect<void>
): Effect.Effect<void, SqlError | ParseError> =>
  Effect.gen(function* () {
    const timed = <A, E>(statement: Effect.Effect<A, E>) =>
      Effect.flatMap(Effect.timed(inBackground(statement)), ([took, a]) => Effect.as(pause(took), a))
    const [text] = yield* timed(
      Effect.flatMap(
        sql`SELECT left(f.content, ${BODY_CHARS}) AS body, f.path AS title,
                   f.path || ' ' || regexp_replace(f.path, '[/._-]+', ' ', 'g') AS title_text
            FROM files f JOIN search_queue q ON q.lab_id = f.lab_id AND q.kind = 'files' AND q.ref = f.path::text
            WHERE q.lab_id = ${file.labId} AND q.ref = ${file.ref} AND q.version = ${file.version}::bigint`,
        Schema.decodeUnknown(Text)
      )
    )
    // written or removed since it was queued: the next pass takes it again
    if (text === undefined) return
    let tsv = ""
    for (const piece of pieces(text.body)) {
      const [vector] = yield* timed(
        Effect.flatMap(
          tsv === ""
            ? sql`SELECT (setweight(to_tsvector('english', search_text(${text.titleText})), 'A')
                       || setweight(to_tsvector('english', search_text(${piece})), 'B'))::text AS tsv`
            : sql`SELECT (${tsv}::tsvector || setweight(to_tsvector('english', search_text(${piece})), 'B'))::text AS tsv`,
          Schema.decodeUnknown(Vector)
        )
      )
      tsv = vector?.tsv ?? tsv
    }
    if (tsv === "") {
      const [vector] = yield* Effect.flatMap(
        sql`SELECT setweight(to_tsvector('english', search_text(${text.titleText})), 'A')::text AS tsv`,
        Schema.decodeUnknown(Vector)
      )
      tsv = vector?.tsv ?? ""
    }
    yield* timed(sql`
      WITH taken AS (
        DELETE FROM search_queue q
        WHERE q.lab_id = ${file.labId} AND q.kind = 'files' AND q.ref = ${file.ref} AND q.version = ${file.version}::bigint
          AND EXISTS (SELECT 1 FROM files f WHERE f.lab_id = q.lab_id AND f.path = q.ref COLLATE "C")
        RETURNING q.lab_id
      )
      INSERT INTO search_documents (lab_id, kind, ref, title, body, tsv, updated_at)
      SELECT t.lab_id, 'files', ${file.ref}, left(${text.title}, ${TITLE_CHARS}), ${text.body}, ${tsv}::tsvector, now() FROM taken t
      ON CONFLICT (lab_id, kind, ref) DO UPDATE
        SET title = EXCLUDED.title, body = EXCLUDED.body, tsv = EXCLUDED.tsv, updated_at = EXCLUDED.updated_at`)
  })
