"""Every failure is raised as the class of its envelope code, carrying status, code, message and request id."""
import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import builtins

from lab_service import (
    ApiError,
    ConnectionError,
    TimeoutError,
    AuthenticationError,
    BadGatewayError,
    BadRequestError,
    ConflictError,
    HeadersTooLargeError,
    InsufficientStorageError,
    LabServiceError,
    LabService,
    MethodNotAllowedError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    PreconditionFailedError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
    ServiceUnavailableError,
    UnsupportedMediaTypeError,
    ValidationError,
)

from support import API_KEY, BASE_URL, LAB_ID, READER_KEY, free_port, needs_server, unique

EVERY_CODE = [
    ("bad_request", 400, BadRequestError),
    ("unauthorized", 401, AuthenticationError),
    ("forbidden", 403, PermissionDeniedError),
    ("quota_exceeded", 403, QuotaExceededError),
    ("not_found", 404, NotFoundError),
    ("method_not_allowed", 405, MethodNotAllowedError),
    ("conflict", 409, ConflictError),
    ("precondition_failed", 412, PreconditionFailedError),
    ("payload_too_large", 413, PayloadTooLargeError),
    ("unsupported_media_type", 415, UnsupportedMediaTypeError),
    ("validation_error", 422, ValidationError),
    ("rate_limited", 429, RateLimitedError),
    ("headers_too_large", 431, HeadersTooLargeError),
    ("server_error", 500, ServerError),
    ("bad_gateway", 502, BadGatewayError),
    ("service_unavailable", 503, ServiceUnavailableError),
    ("insufficient_storage", 507, InsufficientStorageError),
]


class CannedServer:
    """Answers every request with the envelope of `code` and `status`."""

    def __init__(self) -> None:
        self.answer = ("server_error", 500)
        canned = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                code, status = canned.answer
                payload = json.dumps({"error": {"code": code, "message": f"canned {code}", "status": status}}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("X-Request-Id", f"req_{code}")
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class EveryCodeTest(unittest.TestCase):
    """The mapping itself, against a server that answers each envelope code in turn."""

    def test_each_envelope_code_raises_its_class(self) -> None:
        canned = CannedServer()
        self.addCleanup(canned.close)
        client = LabService("key", canned.url, lab_id="lab_x", max_retries=0)
        for code, status, cls in EVERY_CODE:
            with self.subTest(code=code):
                canned.answer = (code, status)
                with self.assertRaises(cls) as raised:
                    client.tasks.create(title="t")
                error = raised.exception
                self.assertIs(type(error), cls)
                self.assertIsInstance(error, ApiError)
                self.assertIsInstance(error, LabServiceError)
                self.assertEqual((error.status, error.code, error.message), (status, code, f"canned {code}"))
                self.assertEqual(error.request_id, f"req_{code}")
        self.assertTrue(issubclass(QuotaExceededError, PermissionDeniedError))

    def test_a_refused_connection_is_an_api_connection_error(self) -> None:
        client = LabService("key", f"http://127.0.0.1:{free_port()}", lab_id="lab_x", max_retries=0)
        with self.assertRaises(ConnectionError) as raised:
            client.tasks.create(title="t")
        self.assertNotIsInstance(raised.exception, TimeoutError)
        self.assertIsNone(raised.exception.status)
        self.assertIsInstance(raised.exception, LabServiceError)
        self.assertIsInstance(raised.exception, builtins.ConnectionError)
        self.assertNotIsInstance(raised.exception, ApiError)


@needs_server
class ServerErrorsTest(unittest.TestCase):
    """The classes the running server gives for what a caller gets wrong."""

    def setUp(self) -> None:
        self.client = LabService(API_KEY, BASE_URL, lab_id=LAB_ID)

    def assert_error(self, cls: type, status: int, code: str, call) -> LabServiceError:  # type: ignore[no-untyped-def]
        with self.assertRaises(cls) as raised:
            call()
        error = raised.exception
        self.assertEqual((error.status, error.code), (status, code))
        self.assertTrue(error.message)
        self.assertTrue(str(error.request_id).startswith("req_"), error.request_id)
        return error

    def test_an_unknown_key_is_an_authentication_error(self) -> None:
        client = LabService("lab_not_a_key", BASE_URL, lab_id=LAB_ID)
        self.assert_error(AuthenticationError, 401, "unauthorized", lambda: client.tasks.list().first_page())

    def test_a_read_only_key_writing_is_a_permission_denied_error(self) -> None:
        client = LabService(READER_KEY, BASE_URL, lab_id=LAB_ID)
        error = self.assert_error(
            PermissionDeniedError, 403, "forbidden", lambda: client.files.write(path="/notes/nope.md", content="x")
        )
        self.assertNotIsInstance(error, QuotaExceededError)

    def test_a_missing_file_is_a_not_found_error(self) -> None:
        self.assert_error(NotFoundError, 404, "not_found", lambda: self.client.files.read(path=f"/{unique('missing')}.md"))

    def test_a_stale_expected_sha_is_a_conflict_error(self) -> None:
        path = f"/notes/{unique('conflict')}.md"
        first = self.client.files.write(path=path, content="one")
        second = self.client.files.write(path=path, content="two", expected_sha=first.sha)
        self.assertNotEqual(first.sha, second.sha)
        self.assert_error(
            ConflictError, 409, "conflict", lambda: self.client.files.write(path=path, content="three", expected_sha=first.sha)
        )
        self.assertEqual(self.client.files.read(path=path).content, "two")

    def test_a_refused_argument_is_a_validation_error(self) -> None:
        error = self.assert_error(ValidationError, 422, "validation_error", lambda: self.client.tasks.create(title=""))
        self.assertIn("title", error.message)
