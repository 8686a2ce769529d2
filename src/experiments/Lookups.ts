import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option } from "effect"
import { InvalidField } from "../common/DomainErrors.js"
import { inTransaction as transactionOf } from "../db/Transaction.js"

/**
 * What the experiment services share: a missing resource of a path is 404 (`orNotFound` of DomainErrors), one a
 * body names is 422 naming the field; their writes run in a transaction.
 */

/** Run in a transaction of the client `sql`; a database failure is a defect. */
export const inTransaction = ({ sql }: { readonly sql: SqlClient.SqlClient }) => transactionOf(sql)

/** A problem as ParamsSchema phrases it: `params.lr: must be…` names its field; any other is one of `field`. */
export const invalid = (field: string, message: string): InvalidField => {
  const match = /^([A-Za-z0-9_.]+): ([\s\S]*)$/.exec(message)
  return new InvalidField({ field: match?.[1] ?? field, problem: match?.[2] ?? message })
}

/** A resource a body names (templateId, queueId, experimentId): 422 naming the field when it is not in the lab. */
export const named =
  (field: string, what: string, id: string) =>
  <A, E, R>(found: Effect.Effect<Option.Option<A>, E, R>): Effect.Effect<A, E | InvalidField, R> =>
    Effect.flatMap(
      found,
      Option.match({
        onNone: () => Effect.fail(new InvalidField({ field, problem: `no ${what} ${id} in this lab` })),
        onSome: Effect.succeed
      })
    )
