"""What the tests share: the server they are given (environment variables), and a small HTTP proxy in front of it
that can answer 429 or 503, drop a connection after the server answered, or wait before forwarding."""
import http.client
import json
import os
import socket
import threading
import time
import unittest
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, List, Optional, Tuple

BASE_URL = os.environ.get("LAB_SERVICE_BASE_URL")
API_KEY = os.environ.get("LAB_SERVICE_API_KEY")
READER_KEY = os.environ.get("LAB_SERVICE_TEST_READER_KEY")
LAB_ID = os.environ.get("LAB_SERVICE_LAB_ID")

needs_server = unittest.skipUnless(
    BASE_URL and API_KEY and READER_KEY and LAB_ID,
    "set LAB_SERVICE_BASE_URL, LAB_SERVICE_API_KEY, LAB_SERVICE_TEST_READER_KEY and LAB_SERVICE_LAB_ID (npm test does)",
)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def free_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up (a timeout test) breaks the pipe; that is expected, not worth a traceback."""


# what the proxy does with a request: forward it, answer it itself, or forward it and drop the connection
Answer = Tuple[str, int, dict]


class Proxy:
    """An HTTP proxy on loopback in front of `upstream`. `plan(n)` decides the n-th request's fate (0-based):
    ("forward", 0, {}), ("answer", status, headers) with an error envelope, ("drop", 0, {}) to forward and then close
    the connection without answering, ("delay", seconds, {}) to wait and then forward."""

    def __init__(self, upstream: str, plan: Callable[[int], Answer]) -> None:
        self.upstream = urllib.parse.urlsplit(upstream)
        self.plan = plan
        self.seen: List[Tuple[str, str, Optional[str]]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                with proxy._lock:
                    index = len(proxy.seen)
                    proxy.seen.append((self.command, self.path, self.headers.get("Idempotency-Key")))
                action, value, headers = proxy.plan(index)
                if action == "answer":
                    code = {409: "conflict", 429: "rate_limited", 503: "service_unavailable"}.get(value, "server_error")
                    payload = json.dumps({"error": {"code": code, "message": f"proxy says {value}", "status": value}}).encode()
                    self.send_response(value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.send_header("X-Request-Id", "req_proxy")
                    for name, header in headers.items():
                        self.send_header(name, header)
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if action == "delay":
                    time.sleep(value)
                status, reply_headers, reply = proxy._forward(self.command, self.path, dict(self.headers), body)
                if action == "drop":
                    # the server did the work; the client never hears of it
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response(status)
                for name, header in reply_headers:
                    if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(name, header)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            do_GET = do_POST = do_PATCH = do_DELETE = _handle

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _forward(self, method: str, path: str, headers: dict, body: Optional[bytes]) -> Tuple[int, list, bytes]:
        connection = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=30)
        headers = {k: v for k, v in headers.items() if k.lower() not in ("host", "connection")}
        connection.request(method, path, body=body, headers=headers)
        answer = connection.getresponse()
        reply = answer.read()
        connection.close()
        return answer.status, answer.getheaders(), reply

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "Proxy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def forward(_: int) -> Answer:
    return ("forward", 0, {})


class Clock:
    def __enter__(self) -> "Clock":
        self.start = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.monotonic() - self.start
