import { Effect } from "effect"
import type * as D from "../common/DomainErrors.js"
import { isDomainError } from "../common/DomainErrors.js"
import { type DomainErrorCode, errorCodeOf } from "../common/ErrorCodes.js"
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

/** The envelope error class of each code a domain failure has (src/common/ErrorCodes.ts names the code). */
const BY_CODE: Record<DomainErrorCode, new (fields: { readonly message: string }) => AsHttp<D.DomainError>> = {
  not_found: NotFound,
  validation_error: ValidationError,
  conflict: Conflict,
  unauthorized: Unauthorized,
  forbidden: Forbidden,
  rate_limited: RateLimited,
  quota_exceeded: QuotaExceeded,
  precondition_failed: PreconditionFailed,
  bad_gateway: BadGateway,
  service_unavailable: ServiceUnavailable,
  insufficient_storage: InsufficientStorage
}

/** The envelope error a domain failure is sent as. */
export const toApiError = <E extends D.DomainError>(error: E): AsHttp<E> =>
  // the class of the error's code is the one AsHttp<E> names for its tag; TypeScript cannot follow a conditional type
  // through a lookup, hence the one cast
  new BY_CODE[errorCodeOf(error).code]({ message: error.message }) as AsHttp<E>

/** At the HTTP edge: domain failures become envelope errors, the others pass as they are. */
export const domainErrorsAsHttp = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, AsHttp<E>, R> =>
  // as toApiError: the mapped error is the one AsHttp<E> names
  Effect.catchIf(
    effect,
    (e): e is Extract<E, D.DomainError> => isDomainError(e),
    (e) => Effect.fail(toApiError(e))
  ) as Effect.Effect<A, AsHttp<E>, R>
