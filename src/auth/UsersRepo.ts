import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option, Schema } from "effect"
import { newId } from "../common/Ids.js"

const UserId = Schema.Struct({ id: Schema.String })

const decodeUserIdTuple = Schema.decodeUnknown(Schema.Tuple(UserId))

export class UsersRepo extends Effect.Service<UsersRepo>()("UsersRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    /** The user of an identity provider's subject, created on first sight. */
    const upsert = (issuer: string, subject: string, name: string | null) =>
      Effect.gen(function* () {
        const rows = yield* sql`
          INSERT INTO users (id, issuer, subject, name, created_at, last_seen_at)
          VALUES (${newId("user")}, ${issuer}, ${subject}, ${name}, now(), now())
          ON CONFLICT (issuer, subject) DO UPDATE SET last_seen_at = now(), name = COALESCE(EXCLUDED.name, users.name)
          RETURNING id`
        const [row] = yield* decodeUserIdTuple(rows)
        return row.id
      }).pipe(Effect.orDie)
    /** The user of a subject, if already known, without a write (identification while the disk is full). */
    const find = (issuer: string, subject: string) =>
      Effect.gen(function* () {
        const rows = yield* sql`SELECT id FROM users WHERE issuer = ${issuer} AND subject = ${subject}`
        const [row] = yield* Schema.decodeUnknown(Schema.Array(UserId))(rows)
        return row === undefined ? Option.none<string>() : Option.some(row.id)
      }).pipe(Effect.orDie)
    return { upsert, find }
  })
}) {}
