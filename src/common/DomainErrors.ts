import { Effect, Option, Schema } from "effect"

/**
 * Failures of the domain, with the data that explains them. Services fail with these (and never with HTTP
 * errors); `src/http/DomainErrorsHttp.ts` turns them into the error envelope at the edge.
 */

/** 404: the lab has no `resource` with this id (another lab's is as absent as a missing one). */
export class NotFoundInLab extends Schema.TaggedError<NotFoundInLab>()("NotFoundInLab", {
  resource: Schema.String,
  id: Schema.String
}) {
  override get message() {
    return `no ${this.resource} ${this.id} in this lab`
  }
}

/** 422: a field is well formed but names something it cannot (another lab's resource, a retired agent…). */
export class InvalidField extends Schema.TaggedError<InvalidField>()("InvalidField", {
  field: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return `${this.field}: ${this.problem}`
  }
}

/** 409: the request is valid but the resource's state (or a name already taken) does not allow it now. */
export class StateConflict extends Schema.TaggedError<StateConflict>()("StateConflict", {
  resource: Schema.String,
  id: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return this.problem
  }
}

/** 409: a lifecycle does not allow this move (`allowed` empty: `from` is a final state). */
export class TransitionRefused extends Schema.TaggedError<TransitionRefused>()("TransitionRefused", {
  what: Schema.String,
  from: Schema.String,
  to: Schema.String,
  allowed: Schema.Array(Schema.String)
}) {
  override get message() {
    return this.allowed.length === 0
      ? `${this.what} is ${this.from}, a final state: it cannot become ${this.to}`
      : `${this.what} is ${this.from}: it can become ${this.allowed.join(", ")}, not ${this.to}`
  }
}

export type DomainError = NotFoundInLab | InvalidField | StateConflict | TransitionRefused

export const isDomainError = (u: unknown): u is DomainError =>
  u instanceof NotFoundInLab || u instanceof InvalidField || u instanceof StateConflict || u instanceof TransitionRefused

/** The value found, or NotFoundInLab naming what was looked for. */
export const orNotFound =
  (resource: string, id: string) =>
  <A, E, R>(found: Effect.Effect<Option.Option<A>, E, R>): Effect.Effect<A, E | NotFoundInLab, R> =>
    Effect.flatMap(
      found,
      Option.match({ onNone: () => Effect.fail(new NotFoundInLab({ resource, id })), onSome: Effect.succeed })
    )
