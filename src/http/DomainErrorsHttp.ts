import { Effect } from "effect"
import type * as D from "../common/DomainErrors.js"
import { isDomainError } from "../common/DomainErrors.js"
import {
  BadGateway,
  Conflict,
  Forbidden,
  InsufficientStorage,
  NotFound,
  PreconditionFailed,
  QuotaExceeded,
  RateLimited,
  ServiceUnavailable,
  Unauthorized,
  ValidationError
} from "./Errors.js"

/** The envelope error each domain error becomes (so a route declares only the statuses it can send). */
export type AsHttp<E> = E extends D.NotFoundInLab | D.UnknownLab | D.NotKnown
  ? NotFound
  : E extends D.InvalidField
    ? ValidationError
    : E extends D.StateConflict | D.TransitionRefused
      ? Conflict
      : E extends D.NotAuthenticated
        ? Unauthorized
        : E extends D.AccessDenied
          ? Forbidden
          : E extends D.OverRateLimit
            ? RateLimited
            : E extends D.OverQuota
              ? QuotaExceeded
              : E extends D.NotConfigured
                ? PreconditionFailed
                : E extends D.UpstreamFailed
                  ? BadGateway
                  : E extends D.Unavailable
                    ? ServiceUnavailable
                    : E extends D.OutOfSpace
                      ? InsufficientStorage
                      : E

/** The envelope error a domain failure is sent as. */
export const toApiError = <E extends D.DomainError>(error: E): AsHttp<E> => {
  const message = error.message
  const mapped = (() => {
    switch (error._tag) {
      case "NotFoundInLab":
      case "UnknownLab":
      case "NotKnown":
        return new NotFound({ message })
      case "InvalidField":
        return new ValidationError({ message })
      case "StateConflict":
      case "TransitionRefused":
        return new Conflict({ message })
      case "NotAuthenticated":
        return new Unauthorized({ message })
      case "AccessDenied":
        return new Forbidden({ message })
      case "OverRateLimit":
        return new RateLimited({ message })
      case "OverQuota":
        return new QuotaExceeded({ message })
      case "NotConfigured":
        return new PreconditionFailed({ message })
      case "UpstreamFailed":
        return new BadGateway({ message })
      case "Unavailable":
        return new ServiceUnavailable({ message })
      case "OutOfSpace":
        return new InsufficientStorage({ message })
    }
  })()
  // each case builds the error AsHttp<E> names for its tag; TypeScript cannot follow a conditional type through a
  // switch, hence the one cast
  return mapped as AsHttp<E>
}

/** At the HTTP edge: domain failures become envelope errors, the others pass as they are. */
export const domainErrorsAsHttp = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, AsHttp<E>, R> =>
  // as toApiError: the mapped error is the one AsHttp<E> names
  Effect.catchIf(
    effect,
    (e): e is Extract<E, D.DomainError> => isDomainError(e),
    (e) => Effect.fail(toApiError(e))
  ) as Effect.Effect<A, AsHttp<E>, R>
