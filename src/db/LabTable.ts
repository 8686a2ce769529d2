import * as SqlClient from "@effect/sql/SqlClient"
import { type Fragment, unsafeFragment } from "@effect/sql/Statement"
import { Effect, Option, Schema } from "effect"
import type { Page } from "./Paging.js"
import { keyset, pageOf, type PageQuery } from "./Paging.js"
import type { LabId } from "../labs/LabId.js"

/**
 * One table of lab-scoped resources, keyed by (lab_id, id), listed newest first. `Model.makeRepository` of
 * @effect/sql is the model: it keys a table by one column, while every read here must carry the checked lab, so
 * the resources share this instead. `row` decodes what `SELECT *` gives (column names already camelCase);
 * `columns` gives what a row stores (JSON columns as strings).
 */
export interface LabTableSpec<A extends Row, I> {
  readonly table: string
  readonly row: Schema.Schema<A, I>
  readonly columns: (value: A) => Record<string, unknown>
}

interface Row {
  readonly id: string
  readonly labId: string
  readonly createdAt: Date
}

/** Conditions a list filter adds; an absent filter value adds none. */
export interface Where {
  readonly eq: (column: string, value: unknown) => Fragment
  readonly hasTag: (column: string, tag: string | undefined) => Fragment
  /** created in [from, to): either end may be absent */
  readonly created: (range: { readonly from?: Date | undefined; readonly to?: Date | undefined }) => Fragment
  readonly sql: SqlClient.SqlClient
}

/** An absent filter's condition, made once. */
const TRUE = unsafeFragment("TRUE")

export const makeLabTable = <A extends Row, I>(spec: LabTableSpec<A, I>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const table = sql(spec.table)
    const decodeRows = Schema.decodeUnknown(Schema.Array(spec.row))
    const one = (rows: ReadonlyArray<unknown>) =>
      Effect.map(decodeRows(rows.slice(0, 1)), (decoded) => Option.fromNullable(decoded[0]))
    const where: Where = {
      sql,
      eq: (column, value) => (value === undefined ? TRUE : sql`${sql(column)} = ${value}`),
      hasTag: (column, tag) => (tag === undefined ? TRUE : sql`${sql(column)} @> ${JSON.stringify([tag])}::jsonb`),
      created: ({ from, to }) =>
        sql.and([from === undefined ? TRUE : sql`created_at >= ${from}`, to === undefined ? TRUE : sql`created_at < ${to}`])
    }

    const find = (labId: LabId, id: string): Effect.Effect<Option.Option<A>> =>
      Effect.orDie(Effect.flatMap(sql`SELECT * FROM ${table} WHERE id = ${id} AND lab_id = ${labId}`, one))

    /** As find, locking the row until the transaction ends. */
    const findForUpdate = (labId: LabId, id: string): Effect.Effect<Option.Option<A>> =>
      Effect.orDie(Effect.flatMap(sql`SELECT * FROM ${table} WHERE id = ${id} AND lab_id = ${labId} FOR UPDATE`, one))

    /** The row deleted, if there was one. */
    const remove = (labId: LabId, id: string): Effect.Effect<Option.Option<A>> =>
      Effect.orDie(Effect.flatMap(sql`DELETE FROM ${table} WHERE id = ${id} AND lab_id = ${labId} RETURNING *`, one))

    /** Fails with the SqlError of a unique violation, for the service to tell the client what is taken. */
    const insert = (value: A) => Effect.asVoid(sql`INSERT INTO ${table} ${sql.insert(spec.columns(value))}`)

    /** Every column but the key and the creation time. */
    const update = (value: A) => {
      const { id, labId, createdAt: _, ...fields } = spec.columns(value)
      return Effect.asVoid(sql`UPDATE ${table} SET ${sql.update(fields)} WHERE id = ${id} AND lab_id = ${labId}`)
    }

    /** One page of the lab's rows matching every condition, newest first. */
    const page = (
      labId: LabId,
      conditions: (where: Where) => ReadonlyArray<Fragment>,
      query: PageQuery
    ): Effect.Effect<Page<A>> =>
      // direct steps rather than Effect.gen: every list request runs this
      Effect.orDie(
        Effect.flatMap(
          sql`
          SELECT * FROM ${table}
          WHERE lab_id = ${labId} AND ${sql.and([...conditions(where), keyset(sql, query.cursor)])}
          ORDER BY created_at DESC, id DESC
          LIMIT ${query.limit + 1}`,
          (rows) => Effect.map(decodeRows(rows), (decoded) => pageOf(decoded, query.limit))
        )
      )

    /** A list by the conditions its filter gives: `(labId, filter)` pages the lab's rows matching them. */
    const listBy =
      <F extends PageQuery>(conditions: (where: Where, filter: F) => ReadonlyArray<Fragment>) =>
      (labId: LabId, filter: F) =>
        page(labId, (where) => conditions(where, filter), filter)

    return { sql, find, findForUpdate, remove, insert, update, page, listBy }
  })
