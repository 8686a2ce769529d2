import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { keyset, pageOf, type PageQuery } from "../http/Pagination.js"
import { ApiKey } from "./ApiKey.js"

const Row = Schema.typeSchema(ApiKey)

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

export class ApiKeysRepo extends Effect.Service<ApiKeysRepo>()("ApiKeysRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Find a live key by the hash of its secret, and note that it was used. */
    const useByHash = SqlSchema.findOne({
      Request: Schema.String,
      Result: Row,
      execute: (hash) => sql`
        UPDATE api_keys SET last_used_at = now()
        WHERE secret_hash = ${hash} AND revoked_at IS NULL
        RETURNING id, name, prefix, scopes, created_by, expires_at, revoked_at, last_used_at, created_at`
    })

    const findById = SqlSchema.findOne({
      Request: Schema.String,
      Result: Row,
      execute: (id) => sql`
        SELECT id, name, prefix, scopes, created_by, expires_at, revoked_at, last_used_at, created_at
        FROM api_keys WHERE id = ${id}`
    })

    const list = (query: PageQuery, owner: string | "all") =>
      Effect.gen(function* () {
        const rows = yield* sql`
          SELECT id, name, prefix, scopes, created_by, expires_at, revoked_at, last_used_at, created_at
          FROM api_keys
          WHERE ${owner === "all" ? sql`TRUE` : sql`(created_by = ${owner} OR id = ${owner})`}
            AND ${keyset(sql, query.cursor)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${query.limit + 1}`
        return pageOf(yield* decodeRows(rows), query.limit)
      })

    const insert = (key: ApiKey, secretHash: string) =>
      sql`INSERT INTO api_keys ${sql.insert({
        id: key.id,
        name: key.name,
        prefix: key.prefix,
        secretHash,
        scopes: JSON.stringify(key.scopes),
        createdBy: key.createdBy,
        expiresAt: key.expiresAt,
        createdAt: key.createdAt
      })}`

    const revoke = (id: string) =>
      sql`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = ${id}`

    return {
      useByHash: (hash: string): Effect.Effect<Option.Option<ApiKey>> => Effect.orDie(useByHash(hash)),
      findById: (id: string): Effect.Effect<Option.Option<ApiKey>> => Effect.orDie(findById(id)),
      list: (query: PageQuery, owner: string | "all") => Effect.orDie(list(query, owner)),
      insert: (key: ApiKey, secretHash: string) => Effect.orDie(insert(key, secretHash)),
      revoke: (id: string) => Effect.orDie(revoke(id))
    }
  })
}) {}
