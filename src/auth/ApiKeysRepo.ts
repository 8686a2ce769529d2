import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Effect, Option, Schema } from "effect"
import { keyset, pageOf, type PageQuery } from "../db/Paging.js"
import { ApiKey, type ApiKeyId } from "./ApiKey.js"

const Row = Schema.typeSchema(ApiKey)

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

/** How far up its creators a key's liveness is checked (keys minted by keys; a real chain is a few long). */
const MAX_CHAIN = 64

export class ApiKeysRepo extends Effect.Service<ApiKeysRepo>()("ApiKeysRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * A key is live when neither it nor any key up its chain of creators is revoked: a child minted by a revoked key
     * (on a replica whose cache still trusted it) dies with it.
     */
    const liveChain = (hash: string) => sql`
        WITH RECURSIVE chain (created_by, revoked, depth) AS (
          SELECT created_by, revoked_at IS NOT NULL, 0 FROM api_keys WHERE secret_hash = ${hash}
          UNION ALL
          SELECT k.created_by, k.revoked_at IS NOT NULL, c.depth + 1
          FROM api_keys k JOIN chain c ON k.id = c.created_by
          WHERE c.depth < ${MAX_CHAIN}
        )`

    /** Find a live key by the hash of its secret, and note that it was used. */
    const useByHash = SqlSchema.findOne({
      Request: Schema.String,
      Result: Row,
      execute: (hash) => sql`
        ${liveChain(hash)}
        UPDATE api_keys SET last_used_at = now()
        WHERE secret_hash = ${hash} AND NOT EXISTS (SELECT 1 FROM chain WHERE revoked)
        RETURNING id, name, prefix, scopes, created_by, expires_at, revoked_at, last_used_at, created_at`
    })

    /** The same live key without noting its use: identification while the disk is full (the note cannot be written). */
    const findLiveByHash = SqlSchema.findOne({
      Request: Schema.String,
      Result: Row,
      execute: (hash) => sql`
        ${liveChain(hash)}
        SELECT id, name, prefix, scopes, created_by, expires_at, revoked_at, last_used_at, created_at
        FROM api_keys
        WHERE secret_hash = ${hash} AND NOT EXISTS (SELECT 1 FROM chain WHERE revoked)`
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

    /** Revoke the key and every key it created, transitively, in one statement. */
    const revoke = (id: string) =>
      sql`
        WITH RECURSIVE tree (id) AS (
          SELECT id FROM api_keys WHERE id = ${id}
          UNION
          SELECT k.id FROM api_keys k JOIN tree t ON k.created_by = t.id
        )
        UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id IN (SELECT id FROM tree)`

    return {
      useByHash: (hash: string): Effect.Effect<Option.Option<ApiKey>> => Effect.orDie(useByHash(hash)),
      findLiveByHash: (hash: string): Effect.Effect<Option.Option<ApiKey>> => Effect.orDie(findLiveByHash(hash)),
      findById: (id: ApiKeyId): Effect.Effect<Option.Option<ApiKey>> => Effect.orDie(findById(id)),
      list: (query: PageQuery, owner: string | "all") => Effect.orDie(list(query, owner)),
      insert: (key: ApiKey, secretHash: string) => Effect.orDie(insert(key, secretHash)),
      revoke: (id: ApiKeyId) => Effect.orDie(revoke(id))
    }
  })
}) {}
