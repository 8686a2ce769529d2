import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"

/**
 * Every failure a client can see. Handlers fail with these classes; on the wire
 * each one is the error envelope `{error:{code, message, status}}` (spec 2.3).
 */
export const ErrorCodes = {
  BadRequest: ["bad_request", 400],
  Unauthorized: ["unauthorized", 401],
  Forbidden: ["forbidden", 403],
  QuotaExceeded: ["quota_exceeded", 403],
  NotFound: ["not_found", 404],
  MethodNotAllowed: ["method_not_allowed", 405],
  Conflict: ["conflict", 409],
  PreconditionFailed: ["precondition_failed", 412],
  PayloadTooLarge: ["payload_too_large", 413],
  UnsupportedMediaType: ["unsupported_media_type", 415],
  HeadersTooLarge: ["headers_too_large", 431],
  ValidationError: ["validation_error", 422],
  RateLimited: ["rate_limited", 429],
  ServerError: ["server_error", 500],
  BadGateway: ["bad_gateway", 502],
  ServiceUnavailable: ["service_unavailable", 503],
  InsufficientStorage: ["insufficient_storage", 507]
} as const

export type ErrorTag = keyof typeof ErrorCodes

const fields = { message: Schema.String }

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", fields) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fields) {}
/** A lab's allocation quota (keys, running pods, stored bytes, backups kept) would be passed: see src/quotas/. */
export class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", fields) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields) {}
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", fields) {}
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fields) {}
export class PreconditionFailed extends Schema.TaggedError<PreconditionFailed>()("PreconditionFailed", fields) {}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", fields) {}
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", fields) {}
export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", fields) {}
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", fields) {}
export class ServerError extends Schema.TaggedError<ServerError>()("ServerError", fields) {}
export class BadGateway extends Schema.TaggedError<BadGateway>()("BadGateway", fields) {}
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", fields) {}
/** The disk under DATA_DIR (or the database's) is below its reserve or full: writes are refused, reads go on (src/status/DiskSpace.ts). */
export class InsufficientStorage extends Schema.TaggedError<InsufficientStorage>()("InsufficientStorage", fields) {}

export type ApiError =
  | Unauthorized
  | Forbidden
  | QuotaExceeded
  | NotFound
  | MethodNotAllowed
  | Conflict
  | PreconditionFailed
  | PayloadTooLarge
  | UnsupportedMediaType
  | ValidationError
  | RateLimited
  | ServerError
  | BadGateway
  | ServiceUnavailable
  | InsufficientStorage

export const errorBody = (tag: ErrorTag, message: string) => {
  const [code, status] = ErrorCodes[tag]
  return { error: { code, message, status } }
}

/** Is this value one of our declared API errors? */
export const isApiError = (u: unknown): u is ApiError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && u._tag in ErrorCodes &&
  "message" in u && typeof u.message === "string"

/**
 * The wire schema of an error class: the envelope on the encoded side, the
 * class instance on the type side, with the HTTP status for HttpApi/OpenAPI.
 */
const wire = <Tag extends ErrorTag, Self extends { readonly _tag: Tag; readonly message: string }>(
  cls: Schema.Schema<Self, { readonly _tag: Tag; readonly message: string }>,
  tag: Tag
) => {
  const [code, status] = ErrorCodes[tag]
  return Schema.transform(
    Schema.Struct({
      error: Schema.Struct({ code: Schema.Literal(code), message: Schema.String, status: Schema.Literal(status) })
    }),
    cls,
    {
      strict: true,
      decode: (w) => ({ _tag: tag, message: w.error.message }),
      encode: (e) => ({ error: { code, message: e.message, status } })
    }
  ).annotations({ ...HttpApiSchema.annotations({ status }), identifier: `${tag}Error`, description: code })
}

export const UnauthorizedWire = wire(Unauthorized, "Unauthorized")
export const ForbiddenWire = wire(Forbidden, "Forbidden")
export const QuotaExceededWire = wire(QuotaExceeded, "QuotaExceeded")
export const NotFoundWire = wire(NotFound, "NotFound")
export const MethodNotAllowedWire = wire(MethodNotAllowed, "MethodNotAllowed")
export const ConflictWire = wire(Conflict, "Conflict")
export const PreconditionFailedWire = wire(PreconditionFailed, "PreconditionFailed")
export const PayloadTooLargeWire = wire(PayloadTooLarge, "PayloadTooLarge")
export const UnsupportedMediaTypeWire = wire(UnsupportedMediaType, "UnsupportedMediaType")
export const ValidationErrorWire = wire(ValidationError, "ValidationError")
export const RateLimitedWire = wire(RateLimited, "RateLimited")
export const ServerErrorWire = wire(ServerError, "ServerError")
export const BadGatewayWire = wire(BadGateway, "BadGateway")
export const ServiceUnavailableWire = wire(ServiceUnavailable, "ServiceUnavailable")
export const InsufficientStorageWire = wire(InsufficientStorage, "InsufficientStorage")
