import { SqlClient } from "@effect/sql"
import { Effect, Layer, type Redacted } from "effect"
import { trackingWrites } from "../src/db/ConnectionLoss.js"
import { runMigrations } from "../src/db/Migrator.js"
import { DatabaseKind } from "../src/db/DatabaseKind.js"
import * as PgDatabase from "./PgDatabase.js"
import * as PgliteClient from "./PgliteClient.js"

export type DatabaseSettings =
  | { readonly kind: "postgresql"; readonly url: Redacted.Redacted<string> }
  /** `dataDir` undefined: an in-memory database (tests). */
  | { readonly kind: "pglite"; readonly dataDir: string | undefined }

/** The client whose transactions are noted for the retry of requests that lost their connection (src/db/ConnectionLoss.ts). */
const tracked = <E>(client: Layer.Layer<SqlClient.SqlClient, E>) =>
  Layer.effect(SqlClient.SqlClient, Effect.map(SqlClient.SqlClient, trackingWrites)).pipe(Layer.provide(client))

const withMigrations = <E>(client: Layer.Layer<SqlClient.SqlClient, E>) =>
  Layer.effectDiscard(runMigrations).pipe(Layer.provideMerge(tracked(client)))

/** SqlClient on PostgreSQL or embedded PGlite, migrated before anything uses it. */
export const layer = (settings: DatabaseSettings) =>
  Layer.merge(
    settings.kind === "postgresql" ? withMigrations(PgDatabase.layer(settings.url)) : withMigrations(PgliteClient.layer(settings.dataDir)),
    Layer.succeed(DatabaseKind, settings.kind)
  )
