import type { DomainError } from "./DomainErrors.js"

/** The envelope codes a domain failure can have. */
export type DomainErrorCode =
  | "not_found"
  | "validation_error"
  | "conflict"
  | "unauthorized"
  | "forbidden"
  | "rate_limited"
  | "quota_exceeded"
  | "precondition_failed"
  | "bad_gateway"
  | "service_unavailable"
  | "insufficient_storage"

/** The envelope's `code` and `status` of each domain failure: what every edge tells a client (spec 2.3). */
export const errorCodeOf = (error: DomainError): { readonly code: DomainErrorCode; readonly status: number } => {
  switch (error._tag) {
    case "NotFoundInLab":
    case "UnknownLab":
    case "NotKnown":
      return { code: "not_found", status: 404 }
    case "InvalidField":
      return { code: "validation_error", status: 422 }
    case "StateConflict":
    case "TransitionRefused":
      return { code: "conflict", status: 409 }
    case "NotAuthenticated":
      return { code: "unauthorized", status: 401 }
    case "AccessDenied":
      return { code: "forbidden", status: 403 }
    case "OverRateLimit":
      return { code: "rate_limited", status: 429 }
    case "OverQuota":
      return { code: "quota_exceeded", status: 403 }
    case "NotConfigured":
      return { code: "precondition_failed", status: 412 }
    case "UpstreamFailed":
      return { code: "bad_gateway", status: 502 }
    case "Unavailable":
      return { code: "service_unavailable", status: 503 }
    case "OutOfSpace":
      return { code: "insufficient_storage", status: 507 }
  }
}
