/**
 * Errors a call can throw. Every answer the service refuses is an `ApiError`
 * (one subclass per envelope code); a call that got no answer is a
 * `ConnectionError`, or its subclass `TimeoutError`.
 */

/** The root of every error this client throws. */
export class LabServiceError extends Error {
  override readonly name: string = "LabServiceError"
}

/** The service answered with an error envelope `{error: {code, message, status}}`. */
export class ApiError extends LabServiceError {
  override readonly name: string = "ApiError"
  constructor(
    /** the HTTP status */
    readonly status: number,
    /** the envelope's code, e.g. "not_found" */
    readonly code: string,
    message: string,
    /** X-Request-Id of the answer: quote it when reporting a problem */
    readonly requestId: string | undefined,
    /** the answer's headers (Retry-After, Allow, …) */
    readonly headers: Headers,
    /** the parsed body as it came */
    readonly body: unknown
  ) {
    super(message)
  }
}

export class BadRequestError extends ApiError {
  override readonly name: string = "BadRequestError"
}
/** 401: no credential, or one the service does not accept. */
export class AuthenticationError extends ApiError {
  override readonly name: string = "AuthenticationError"
}
/** 403: the credential may not do this. */
export class PermissionDeniedError extends ApiError {
  override readonly name: string = "PermissionDeniedError"
}
/** 403: a quota of the lab or the credential is used up. */
export class QuotaExceededError extends PermissionDeniedError {
  override readonly name: string = "QuotaExceededError"
}
/** 404 */
export class NotFoundError extends ApiError {
  override readonly name: string = "NotFoundError"
}
/** 405 */
export class MethodNotAllowedError extends ApiError {
  override readonly name: string = "MethodNotAllowedError"
}
/** 409: e.g. a file changed since the `expectedSha` the caller gave; read it again and retry. */
export class ConflictError extends ApiError {
  override readonly name: string = "ConflictError"
}
/** 412 */
export class PreconditionFailedError extends ApiError {
  override readonly name: string = "PreconditionFailedError"
}
/** 413 */
export class PayloadTooLargeError extends ApiError {
  override readonly name: string = "PayloadTooLargeError"
}
/** 415 */
export class UnsupportedMediaTypeError extends ApiError {
  override readonly name: string = "UnsupportedMediaTypeError"
}
/** 422: the message names the field and what is wrong with it. */
export class ValidationError extends ApiError {
  override readonly name: string = "ValidationError"
}
/** 429: retried by the client (honouring Retry-After) until its retries are spent. */
export class RateLimitedError extends ApiError {
  override readonly name: string = "RateLimitedError"
}
/** 431 */
export class HeadersTooLargeError extends ApiError {
  override readonly name: string = "HeadersTooLargeError"
}
/** 500 */
export class ServerError extends ApiError {
  override readonly name: string = "ServerError"
}
/** 502: the git host failed. */
export class BadGatewayError extends ApiError {
  override readonly name: string = "BadGatewayError"
}
/** 503: retried by the client until its retries are spent. */
export class ServiceUnavailableError extends ApiError {
  override readonly name: string = "ServiceUnavailableError"
}
/** 507: the service's disk is below its reserve; reads go on. */
export class InsufficientStorageError extends ApiError {
  override readonly name: string = "InsufficientStorageError"
}

/** No answer: the connection failed or was dropped. */
export class ConnectionError extends LabServiceError {
  override readonly name: string = "ConnectionError"
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options)
  }
}

/** No answer within the call's timeout. */
export class TimeoutError extends ConnectionError {
  override readonly name: string = "TimeoutError"
}

type ApiErrorClass = new (...args: ConstructorParameters<typeof ApiError>) => ApiError

/** The class of each envelope code (the service's src/http/Errors.ts ErrorCodes). */
export const errorClassByCode: Readonly<Record<string, ApiErrorClass>> = {
  bad_request: BadRequestError,
  unauthorized: AuthenticationError,
  forbidden: PermissionDeniedError,
  quota_exceeded: QuotaExceededError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  conflict: ConflictError,
  precondition_failed: PreconditionFailedError,
  payload_too_large: PayloadTooLargeError,
  unsupported_media_type: UnsupportedMediaTypeError,
  headers_too_large: HeadersTooLargeError,
  validation_error: ValidationError,
  rate_limited: RateLimitedError,
  server_error: ServerError,
  bad_gateway: BadGatewayError,
  service_unavailable: ServiceUnavailableError,
  insufficient_storage: InsufficientStorageError
}

const errorClassByStatus: Readonly<Record<number, ApiErrorClass>> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  405: MethodNotAllowedError,
  409: ConflictError,
  412: PreconditionFailedError,
  413: PayloadTooLargeError,
  415: UnsupportedMediaTypeError,
  422: ValidationError,
  429: RateLimitedError,
  431: HeadersTooLargeError,
  500: ServerError,
  502: BadGatewayError,
  503: ServiceUnavailableError,
  507: InsufficientStorageError
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/** The error for a refused answer: by the envelope's code, else by status (a proxy's own page). */
export const apiErrorOf = (status: number, headers: Headers, body: unknown): ApiError => {
  const envelope = isRecord(body) && isRecord(body["error"]) ? body["error"] : undefined
  const code = typeof envelope?.["code"] === "string" ? envelope["code"] : `http_${status}`
  const message = typeof envelope?.["message"] === "string" ? envelope["message"] : `HTTP ${status}`
  const requestId = headers.get("x-request-id") ?? undefined
  const ErrorClass = errorClassByCode[code] ?? errorClassByStatus[status] ?? (status >= 500 ? ServerError : ApiError)
  return new ErrorClass(status, code, message, requestId, headers, body)
}
