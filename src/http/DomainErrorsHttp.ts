import { Effect } from "effect"
import { type DomainError, type InvalidField, isDomainError, type NotFoundInLab, type StateConflict } from "../common/DomainErrors.js"
import { Conflict, NotFound, ValidationError } from "./Errors.js"

/** The envelope error a domain failure is sent as. */
export const toApiError = (error: DomainError): NotFound | ValidationError | Conflict => {
  switch (error._tag) {
    case "NotFoundInLab":
      return new NotFound({ message: error.message })
    case "InvalidField":
      return new ValidationError({ message: error.message })
    case "StateConflict":
      return new Conflict({ message: error.message })
  }
}

/** The envelope errors the domain failures among `E` are sent as (only those: a read declares no 409). */
export type AsHttp<E> =
  | Exclude<E, DomainError>
  | (E extends NotFoundInLab ? NotFound : never)
  | (E extends InvalidField ? ValidationError : never)
  | (E extends StateConflict ? Conflict : never)

/** At the HTTP edge: domain failures become envelope errors, the others pass as they are. */
export const domainErrorsAsHttp = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, AsHttp<E>, R> =>
  Effect.catchIf(
    effect,
    (e): e is Extract<E, DomainError> => isDomainError(e),
    (e) => Effect.fail(toApiError(e))
  ) as Effect.Effect<A, AsHttp<E>, R>
