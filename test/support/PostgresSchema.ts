import type { SqlClient } from "@effect/sql"
import { Effect, Layer, Redacted } from "effect"
import pg from "pg"

/**
 * PostgreSQL in a fresh schema: created with a plain connection, reached through
 * `options=-c search_path=<schema>` so every pooled connection lands in it, and
 * dropped with everything in it when the layer closes. `client` makes the SqlClient from the scoped URL.
 */
export const postgresInFreshSchema = <E>(
  url: string,
  schema: string,
  client: (scopedUrl: Redacted.Redacted<string>) => Layer.Layer<SqlClient.SqlClient, E>
): Layer.Layer<SqlClient.SqlClient, unknown> =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const admin = (statement: string) =>
        Effect.tryPromise(async () => {
          const connection = new pg.Client({ connectionString: url })
          await connection.connect()
          try {
            await connection.query(statement)
          } finally {
            await connection.end()
          }
        })
      yield* Effect.acquireRelease(admin(`CREATE SCHEMA "${schema}"`), () => Effect.orDie(admin(`DROP SCHEMA "${schema}" CASCADE`)))
      const separator = url.includes("?") ? "&" : "?"
      return client(Redacted.make(`${url}${separator}options=-c%20search_path%3D${schema}`))
    })
  )
