"""The request loop both clients share: credentials, URLs, idempotency keys, retries, timeouts (written by hand)."""
import asyncio
import json
import os
import time
import urllib.parse
import uuid
from typing import Any, Mapping, Optional

from .errors import LabServiceError, error_from_response
from .retries import RetryPolicy, wait_before_retry
from .transport import HttpRequest, HttpResponse, send

VERSION = "0.1.0"
DEFAULT_TIMEOUT = 60.0
_WRITES = frozenset({"POST", "PATCH", "DELETE"})


class _Core:
    """What a call needs besides its own arguments. Credentials and the base URL default to the environment:
    LAB_SERVICE_API_KEY (an API key or a JWT), LAB_SERVICE_BASE_URL, and LAB_SERVICE_LAB_ID for lab_id."""

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        lab_id: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 2,
        retry_initial_delay: float = 0.5,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("LAB_SERVICE_API_KEY")
        url = base_url if base_url is not None else os.environ.get("LAB_SERVICE_BASE_URL")
        if not key:
            raise ValueError("no API key: pass api_key= or set LAB_SERVICE_API_KEY")
        if not url:
            raise ValueError("no base URL: pass base_url= or set LAB_SERVICE_BASE_URL")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.api_key = key
        self.base_url = url.rstrip("/")
        self.lab_id = lab_id if lab_id is not None else os.environ.get("LAB_SERVICE_LAB_ID") or None
        self.timeout = timeout
        self.retry_policy = RetryPolicy(max_retries=max_retries, initial_delay=retry_initial_delay)
        self.headers = dict(headers or {})

    def lab(self, lab_id: Optional[str]) -> str:
        """The call's lab, else the client's; a lab-scoped call without either is a mistake of the caller."""
        chosen = lab_id if lab_id is not None else self.lab_id
        if chosen is None:
            raise ValueError("no lab: pass lab_id= to the call or to the client, or set LAB_SERVICE_LAB_ID")
        return chosen

    def _prepare(
        self,
        method: str,
        path: str,
        query: Optional[Mapping[str, Any]],
        body: Any,
        timeout: Optional[float],
        idempotency_key: Optional[str],
    ) -> HttpRequest:
        url = self.base_url + path
        pairs = [(name, _query_value(value)) for name, value in (query or {}).items() if value is not None]
        if pairs:
            url += "?" + urllib.parse.urlencode(pairs)
        headers = {
            "Accept": "application/json",
            "User-Agent": f"lab-service-python/{VERSION}",
            **self.headers,
            "Authorization": f"Bearer {self.api_key}",
        }
        data: Optional[bytes] = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if method in _WRITES:
            # one key for every attempt of this call, so a retry after a lost answer is not done twice
            headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        return HttpRequest(method, url, headers, data, self.timeout if timeout is None else timeout)

    def _policy(self, max_retries: Optional[int]) -> RetryPolicy:
        if max_retries is None:
            return self.retry_policy
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        return RetryPolicy(max_retries, self.retry_policy.initial_delay, self.retry_policy.max_delay)


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _checked(response: HttpResponse) -> HttpResponse:
    if 200 <= response.status < 300:
        return response
    raise error_from_response(response.status, response.body, response.headers)


class SyncCore(_Core):
    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> HttpResponse:
        """Send the call, retrying what may succeed later; a non-2xx answer is raised as its error class."""
        request = self._prepare(method, path, query, body, timeout, idempotency_key)
        policy = self._policy(max_retries)
        retry_index = 0
        while True:
            try:
                return _checked(send(request))
            except LabServiceError as error:
                wait = wait_before_retry(error, policy, retry_index)
                if wait is None:
                    raise
            time.sleep(wait)
            retry_index += 1


class AsyncCore(_Core):
    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> HttpResponse:
        """As SyncCore.request; each attempt runs urllib in the default thread pool, the waits are asyncio's."""
        request = self._prepare(method, path, query, body, timeout, idempotency_key)
        policy = self._policy(max_retries)
        retry_index = 0
        while True:
            try:
                return _checked(await asyncio.get_running_loop().run_in_executor(None, send, request))
            except LabServiceError as error:
                wait = wait_before_retry(error, policy, retry_index)
                if wait is None:
                    raise
            await asyncio.sleep(wait)
            retry_index += 1
