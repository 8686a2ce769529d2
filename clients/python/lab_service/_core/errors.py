"""The errors a call can raise: one class per envelope code under ApiError, ConnectionError and TimeoutError for
calls that got no answer, all under LabServiceError; the names are the TypeScript client's (written by hand)."""
import builtins
from typing import Any, Dict, Mapping, Optional, Type


class LabServiceError(Exception):
    """Any failure of a call: the HTTP status (None when no answer came), the envelope's code and message,
    and the request id the server gave (X-Request-Id), to quote when asking an operator."""

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: str = "unknown",
        request_id: Optional[str] = None,
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.request_id = request_id
        self.body = body
        self.headers: Mapping[str, str] = dict(headers or {})

    def __str__(self) -> str:
        where = f" (request {self.request_id})" if self.request_id else ""
        status = f"{self.status} " if self.status is not None else ""
        return f"{status}{self.code}: {self.message}{where}"


class ApiError(LabServiceError):
    """The service answered with an error envelope {error: {code, message, status}}: status is never None."""

    status: int


class ConnectionError(LabServiceError, builtins.ConnectionError):
    """No answer: the connection was refused, dropped, or failed before a status came back. Also a builtin
    ConnectionError, so `except ConnectionError` catches it whichever of the two names is in scope."""

    def __init__(self, message: str, *, code: str = "connection_error") -> None:
        LabServiceError.__init__(self, message, code=code)


class TimeoutError(ConnectionError, builtins.TimeoutError):
    """No answer within the timeout; a builtin TimeoutError too."""

    def __init__(self, message: str) -> None:
        ConnectionError.__init__(self, message, code="timeout")


class BadRequestError(ApiError):
    """400 bad_request"""


class AuthenticationError(ApiError):
    """401 unauthorized: the API key or JWT is missing, unknown, expired or revoked."""


class PermissionDeniedError(ApiError):
    """403 forbidden: the credential lacks the scope this call needs."""


class QuotaExceededError(PermissionDeniedError):
    """403 quota_exceeded: the lab's allocation (keys, pods, stored bytes, backups) would be passed."""


class NotFoundError(ApiError):
    """404 not_found"""


class MethodNotAllowedError(ApiError):
    """405 method_not_allowed"""


class ConflictError(ApiError):
    """409 conflict: the resource changed (an expected_sha that no longer matches) or is in another state."""


class PreconditionFailedError(ApiError):
    """412 precondition_failed: the lab lacks what the call needs (a linked repository, a webhook secret)."""


class PayloadTooLargeError(ApiError):
    """413 payload_too_large"""


class UnsupportedMediaTypeError(ApiError):
    """415 unsupported_media_type"""


class ValidationError(ApiError):
    """422 validation_error: an argument was refused; the message names it."""


class RateLimitedError(ApiError):
    """429 rate_limited, raised once the retries are spent; retry_after is the server's wait in seconds."""

    @property
    def retry_after(self) -> Optional[float]:
        from .retries import retry_after_seconds

        return retry_after_seconds(self.headers)


class HeadersTooLargeError(ApiError):
    """431 headers_too_large"""


class ServerError(ApiError):
    """500 server_error, or any 5xx without a class of its own."""


class BadGatewayError(ApiError):
    """502 bad_gateway: the linked git host failed."""


class ServiceUnavailableError(ApiError):
    """503 service_unavailable: the service is stopping or busy; raised once the retries are spent."""


class InsufficientStorageError(ApiError):
    """507 insufficient_storage: the server's disk is below its reserve; reads go on."""


ERRORS_BY_CODE: Dict[str, Type[LabServiceError]] = {
    "bad_request": BadRequestError,
    "unauthorized": AuthenticationError,
    "forbidden": PermissionDeniedError,
    "quota_exceeded": QuotaExceededError,
    "not_found": NotFoundError,
    "method_not_allowed": MethodNotAllowedError,
    "conflict": ConflictError,
    "precondition_failed": PreconditionFailedError,
    "payload_too_large": PayloadTooLargeError,
    "unsupported_media_type": UnsupportedMediaTypeError,
    "validation_error": ValidationError,
    "rate_limited": RateLimitedError,
    "headers_too_large": HeadersTooLargeError,
    "server_error": ServerError,
    "bad_gateway": BadGatewayError,
    "service_unavailable": ServiceUnavailableError,
    "insufficient_storage": InsufficientStorageError,
}

# when the body is not an envelope (a proxy's page, say), the status alone picks the class
_ERRORS_BY_STATUS: Dict[int, Type[LabServiceError]] = {
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
    507: InsufficientStorageError,
}


def error_from_response(status: int, body: Any, headers: Mapping[str, str]) -> LabServiceError:
    """The error of a non-2xx answer: by the envelope's code when there is one, else by status."""
    request_id = headers.get("x-request-id")
    envelope = body.get("error") if isinstance(body, dict) else None
    if isinstance(envelope, dict) and isinstance(envelope.get("code"), str):
        code: str = envelope["code"]
        message = envelope.get("message")
        cls = ERRORS_BY_CODE.get(code) or _ERRORS_BY_STATUS.get(status) or _fallback(status)
        text = message if isinstance(message, str) else code
    else:
        cls = _ERRORS_BY_STATUS.get(status) or _fallback(status)
        code = "server_error" if status >= 500 else "unknown"
        text = body if isinstance(body, str) and body else f"HTTP {status}"
    return cls(text, status=status, code=code, request_id=request_id, body=body, headers=headers)


def _fallback(status: int) -> Type[LabServiceError]:
    return ServerError if status >= 500 else ApiError
