import { PgClient } from "@effect/sql-pg"
import { Redacted } from "effect"
import * as pg from "pg"
import { parseTimestamptz } from "./PgTimestamps.js"
import { camelToSnake, snakeToCamel } from "./SqlNames.js"

const INT8 = 20
const TIMESTAMPTZ = 1184
const timestamptz = parseTimestamptz(pg.types.getTypeParser(TIMESTAMPTZ, "text"))

/**
 * int8 as a JS number, as PGlite returns it, so both drivers decode alike;
 * timestamptz as pg parses it, through a fast path for UTC (layers/PgTimestamps.ts).
 */
const types = {
  getTypeParser: (oid: number, format?: "text" | "binary") =>
    oid === INT8
      ? (value: string) => Number(value)
      : oid === TIMESTAMPTZ && format !== "binary"
        ? timestamptz
        : pg.types.getTypeParser(oid, format)
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
