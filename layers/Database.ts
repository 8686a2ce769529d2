import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Layer, Option, type Redacted } from "effect"
import { PoolStats } from "../src/observability/PoolStats.js"
import { trackingWrites } from "../src/db/ConnectionLoss.js"
import { runMigrations } from "../src/db/Migrator.js"
import { DatabaseKind } from "../src/db/DatabaseKind.js"
import * as LabLocks from "../src/sync/LabLocks.js"
import * as PgDatabase from "./PgDatabase.js"
import * as PgLabLocks from "./PgLabLocks.js"
import * as PgliteClient from "./PgliteClient.js"

export type DatabaseSettings =
  | { readonly kind: "postgresql"; readonly url: Redacted.Redacted<string> }
  /** `dataDir` undefined: an in-memory database (tests). */
  | { readonly kind: "pglite"; readonly dataDir: string | undefined }

type Client = SqlClient.SqlClient | PoolStats

/** The client whose transactions are noted for the retry of requests that lost their connection (src/db/ConnectionLoss.ts). */
const tracked = <E>(client: Layer.Layer<Client, E>) =>
  Layer.effectContext(
    Effect.map(Effect.context<Client>(), (context) =>
      Context.make(SqlClient.SqlClient, trackingWrites(Context.get(context, SqlClient.SqlClient))).pipe(
        Context.add(PoolStats, Context.get(context, PoolStats))
      )
    )
  ).pipe(Layer.provide(client))

const withMigrations = <E>(client: Layer.Layer<Client, E>) => Layer.effectDiscard(runMigrations).pipe(Layer.provideMerge(tracked(client)))

/**
 * SqlClient on PostgreSQL or embedded PGlite, migrated before anything uses it; with the labs' sync locks that
 * fit it (replicas share PostgreSQL; the embedded database is one process's).
 */
export const layer = (settings: DatabaseSettings) =>
  Layer.merge(
    settings.kind === "postgresql"
      ? PgLabLocks.layer.pipe(Layer.provideMerge(withMigrations(PgDatabase.layer(settings.url))))
      : Layer.merge(
          withMigrations(Layer.merge(PgliteClient.layer(settings.dataDir), Layer.succeed(PoolStats, () => Option.none()))),
          LabLocks.singleProcess
        ),
    Layer.succeed(DatabaseKind, settings.kind)
  )
