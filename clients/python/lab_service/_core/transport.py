"""One HTTP exchange over urllib.request, the standard library's client (written by hand)."""
import http.client
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional

from . import errors


@dataclass(frozen=True)
class HttpRequest:
    method: str
    url: str
    headers: Mapping[str, str]
    body: Optional[bytes]
    timeout: float


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: Mapping[str, str]
    """header names in lower case"""
    body: Any
    """the decoded JSON; the text of a text/* body; the bytes of any other type; None when empty"""


class _KeepErrors(urllib.request.HTTPErrorProcessor):
    """Hand 4xx and 5xx answers back like any other: their envelope is read by the caller."""

    def http_response(self, request: urllib.request.Request, response: Any) -> Any:
        return response

    https_response = http_response


_opener = urllib.request.build_opener(_KeepErrors)


def send(request: HttpRequest) -> HttpResponse:
    """Send the request and read the whole answer; a failure before a status line arrives is a ConnectionError,
    and no progress for `timeout` seconds while connecting or reading is a TimeoutError."""
    raw = urllib.request.Request(request.url, data=request.body, method=request.method, headers=dict(request.headers))
    try:
        with _opener.open(raw, timeout=request.timeout) as answer:
            status = answer.status
            headers = {name.lower(): value for name, value in answer.headers.items()}
            payload = answer.read()
    except socket.timeout as error:  # an alias of the builtin TimeoutError since 3.10
        raise errors.TimeoutError(f"no answer from {_where(request.url)} within {request.timeout} s") from error
    except urllib.error.URLError as error:
        if isinstance(error.reason, socket.timeout):
            raise errors.TimeoutError(f"no answer from {_where(request.url)} within {request.timeout} s") from error
        raise errors.ConnectionError(f"could not reach {_where(request.url)}: {error.reason}") from error
    except (http.client.HTTPException, OSError) as error:
        raise errors.ConnectionError(f"connection to {_where(request.url)} failed: {error!r}") from error
    return HttpResponse(status=status, headers=headers, body=_decode(payload, headers))


def _decode(payload: bytes, headers: Dict[str, str]) -> Any:
    if not payload:
        return None
    kind = headers.get("content-type", "")
    if kind and "json" not in kind and not kind.startswith("text/"):
        return payload
    text = payload.decode("utf-8", errors="replace")
    if "json" in kind or text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _where(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
