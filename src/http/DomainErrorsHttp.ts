import { Effect } from "effect"
import { type DomainError, type InvalidField, isDomainError, type NotFoundInLab, type StateConflict, type TransitionRefused } from "../common/DomainErrors.js"
import { Conflict, NotFound, ValidationError } from "./Errors.js"

/** The envelope error a domain failure is sent as. */
export const toApiError = (error: DomainError): NotFound | ValidationError | Conflict => {
  switch (error._tag) {
    case "NotFoundInLab":
      return new NotFound({ message: error.message })
    case "InvalidField":
      return new ValidationError({ message: error.message })
    case "StateConflict":
    case "TransitionRefused":
      return new Conflict({ message: error.message })
  }
}

/** The envelope error each domain error in E becomes (so a route declares only the statuses it can send). */
export type AsHttp<E> = E extends NotFoundInLab
  ? NotFound
  : E extends InvalidField
    ? ValidationError
    : E extends StateConflict | TransitionRefused
      ? Conflict
      : E

/** At the HTTP edge: domain failures become envelope errors, the others pass as they are. */
export const domainErrorsAsHttp = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, AsHttp<E>, R> =>
  // toApiError maps each domain error to the error AsHttp<E> names for it; TypeScript cannot follow a conditional
  // type through a function's body, hence the one cast
  Effect.catchIf(
    effect,
    (e): e is Extract<E, DomainError> => isDomainError(e),
    (e) => Effect.fail(toApiError(e))
  ) as Effect.Effect<A, AsHttp<E>, R>
