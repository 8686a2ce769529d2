import { Effect, Option } from "effect"
import { NotFound, ValidationError } from "../http/Errors.js"

/** Lookups the experiment services share: a missing resource of a path is 404, one a body names is 422. */

export const invalid = (message: string) => new ValidationError({ message })

export const orNotFound =
  (what: string, id: string) =>
  <A>(found: Option.Option<A>): Effect.Effect<A, NotFound> =>
    Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(new NotFound({ message: `no ${what} ${id} in this lab` }))

/** A resource a body names (templateId, queueId, experimentId): 422 naming the field when it is not in the lab. */
export const named =
  (field: string, what: string, id: string) =>
  <A>(found: Option.Option<A>): Effect.Effect<A, ValidationError> =>
    Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(invalid(`${field}: no ${what} ${id} in this lab`))
