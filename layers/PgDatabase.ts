import { PgClient } from "@effect/sql-pg"
import { Redacted } from "effect"
import * as pg from "pg"
import { camelToSnake, snakeToCamel } from "./SqlNames.js"

/** int8 as a JS number, as PGlite returns it, so both drivers decode alike. */
const types = {
  getTypeParser: (oid: number, format?: "text" | "binary") =>
    oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)
} as pg.CustomTypesConfig

export const layer = (url: Redacted.Redacted<string>, maxConnections = 10) =>
  PgClient.layer({
    url,
    maxConnections,
    types,
    applicationName: "lab-service",
    // columns are snake_case in SQL and camelCase in rows; JSON values are left as stored
    transformQueryNames: camelToSnake,
    transformResultNames: snakeToCamel,
    transformJson: false
  })
