"""When a failed attempt is tried again, and after how long (written by hand)."""
import email.utils
import random
import time
from dataclasses import dataclass
from typing import Mapping, Optional

from . import errors
from .errors import ConflictError, LabServiceError, RateLimitedError, ServiceUnavailableError

# a Retry-After longer than this is not waited for: the error is raised with its retry_after instead
MAX_RETRY_AFTER_SECONDS = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    """max_retries tries after the first attempt; the n-th waits about initial_delay * 2**n (at most max_delay),
    less up to a quarter of it at random so that many clients do not come back at once."""

    max_retries: int = 2
    initial_delay: float = 0.5
    max_delay: float = 8.0

    def backoff(self, retry_index: int) -> float:
        delay = min(self.max_delay, self.initial_delay * (2**retry_index))
        return delay * (1 - 0.25 * random.random())


def is_retryable(error: LabServiceError) -> bool:
    """Connection failures and timeouts, 429 and 503: what a later attempt may get past. A 409 too when it says when
    to try again (Retry-After): the first attempt under this idempotency key is still being processed."""
    if isinstance(error, ConflictError):
        return retry_after_seconds(error.headers) is not None
    return isinstance(error, (errors.ConnectionError, RateLimitedError, ServiceUnavailableError))


def retry_after_seconds(headers: Mapping[str, str]) -> Optional[float]:
    """Retry-After in seconds, given as a number of seconds or as an HTTP date; None when absent or unreadable."""
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def wait_before_retry(error: LabServiceError, policy: RetryPolicy, retry_index: int) -> Optional[float]:
    """Seconds to wait before retry number retry_index (0-based), or None when the error is not to be retried."""
    if retry_index >= policy.max_retries or not is_retryable(error):
        return None
    told = retry_after_seconds(error.headers)
    if told is not None:
        return told if told <= MAX_RETRY_AFTER_SECONDS else None
    return policy.backoff(retry_index)
