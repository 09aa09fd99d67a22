"""Reliability for every provider, in one place: retries, backoff, final error (calls in
flight: providers/inflight.py).

Every adapter builds its SDK client with the SDK's own retries OFF (`max_retries=0`) and
sends each call through `RetryPolicy.run`. That keeps one loop with one behaviour for all
four APIs (TextArena copies a retry loop into every agent; we do not), and it lets a test
inject the randomness and the sleeping so nothing real waits.

What is retried: HTTP 429, 408, 409 (OpenAI's "try again" lock), every 5xx including
Anthropic's 529 "overloaded", timeouts, dropped connections and bodies cut short. Everything
else (400, 401, 403, 404, 422) fails at once. The final failure is a `ProviderError`
carrying the HTTP status; the engine turns it into a forfeit.

Two failures are not the provider being down, and end differently:
- a 200 answer whose body is not valid JSON (or not the API's shape) is retried once, as
  a transient glitch, then raised as `MalformedReply`: the player turns it into a parse
  error, which earns the seat the usual corrective re-ask;
- a request that is not in a replayed cassette raises `ReplayMiss` at once: nothing real
  can happen in that game any more, so the player aborts it.

Each attempt also has a total deadline (`attempt_timeout_s`): the SDKs' timeouts are per
read, so a server that sends its body one byte at a time would otherwise hold a call
until the game's decision deadline.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from stille_post.core.errors import ProviderError
from stille_post.core.text import clean_text
from stille_post.providers.base import MalformedReply, ReplayMiss
from stille_post.providers.inflight import (  # noqa: F401  (re-exported)
    THROTTLE_STATUS,
    CallLimiter,
    limiter_for,
    set_concurrency,
)
from stille_post.providers.secrets import redact

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 522, 524, 529})
# A server that asks us to wait longer than this is treated as down: a game has a deadline.
MAX_RETRY_AFTER_S = 60.0
DEFAULT_MAX_RETRIES = 4
# Longer than any real completion of a game turn (the SDK read timeout is 120 s), far
# shorter than the game's 300 s decision deadline.
DEFAULT_ATTEMPT_TIMEOUT_S = 180.0
# How often an unreadable 200 answer is tried again before it counts as a bad reply.
MALFORMED_RETRIES = 1


@dataclass(frozen=True)
class Failure:
    """What went wrong in one attempt, in SDK-independent terms."""

    message: str
    status: int | None = None
    retryable: bool = False
    retry_after: float | None = None
    # "malformed": a 200 answer we could not read; "replay_miss": not in the cassette.
    kind: str = "transport"


def _status_of(exc: BaseException) -> int | None:
    # openai/anthropic: `status_code`; google-genai APIError: `code` (an int HTTP status).
    for attr in ("status_code", "code"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and 100 <= value <= 599:
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` / `retry-after` (seconds or an HTTP date)."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    if "retry-after-ms" in lower:
        try:
            return max(0.0, float(lower["retry-after-ms"]) / 1000.0)
        except ValueError:
            pass
    raw = lower.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _in_chain(exc: BaseException, name: str) -> bool:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if type(cur).__name__ == name:
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def _find_in_chain(exc: BaseException, name: str) -> BaseException | None:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if type(cur).__name__ == name:
            return cur
        cur = cur.__cause__ or cur.__context__
    return None


def replay_miss_message(exc: BaseException) -> str:
    """Name the cassette and the request, from vcrpy's exception."""
    cassette = getattr(exc, "cassette", None)
    path = getattr(cassette, "_path", None) or getattr(cassette, "path", None)
    request = getattr(exc, "failed_request", None)
    method = getattr(request, "method", None)
    uri = getattr(request, "uri", None)
    what = f"{method} {redact(str(uri))}" if method and uri else "a request"
    where = f" {path}" if path else ""
    why = {"already_played": "; its recorded answer was already used",
           "cassette_not_found": "; the cassette file is missing"}.get(
               str(getattr(exc, "reason", "")), "")
    return (f"{what} is not in the replayed cassette{where}{why} (the game diverged from "
            "the recording, or the cassette is from another version or another seed)")


_MALFORMED_NAMES = ("JSONDecodeError", "ValidationError", "UnicodeDecodeError")
_TRANSPORT_NAMES = ("RemoteProtocolError", "ReadError", "NetworkError", "ProtocolError",
                    "IncompleteRead", "ServerDisconnected", "DecodingError")


def classify(exc: BaseException) -> Failure:
    """Map any SDK's exception to a `Failure`. Never includes headers or request data,
    and every message goes through `redact`, so an API key cannot leak into it."""
    if isinstance(exc, ProviderError):
        kind = ("replay_miss" if isinstance(exc, ReplayMiss) else
                "malformed" if isinstance(exc, MalformedReply) else "transport")
        return Failure(redact(str(exc)), exc.status, exc.retryable, kind=kind)
    miss = _find_in_chain(exc, "CannotOverwriteExistingCassetteException")
    if miss is not None:
        # Replaying and the request is not in the cassette: retrying cannot help, and the
        # SDK would report it as a connection error, hiding the real cause.
        return Failure(replay_miss_message(miss), kind="replay_miss")
    for bad in _MALFORMED_NAMES:
        found = _find_in_chain(exc, bad)
        if found is not None:
            # A 200 answer whose body is not JSON, or not the API's shape: the SDK fails
            # while parsing it. Once may be a glitch (a proxy cutting the body); retry.
            return Failure(f"the provider's answer could not be read ({bad}: "
                           f"{_short_message(found)[:120]})", None, True, kind="malformed")
    unreadable = _unreadable_body(exc)
    if unreadable is not None:
        # The server did answer: a body nested too deep for the JSON parser, or a number
        # no parser holds, is an unreadable reply (a re-ask), not a provider out of reach.
        return Failure(f"the provider's answer could not be read ({unreadable})", None, True,
                       kind="malformed")
    name = type(exc).__name__
    status = _status_of(exc)
    if status is not None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        retry_after = parse_retry_after(headers) if headers is not None else None
        detail = _short_message(exc)
        return Failure(f"HTTP {status} from the provider ({name}: {detail})", status,
                       status in RETRYABLE_STATUS, retry_after)
    if isinstance(exc, TimeoutError | asyncio.TimeoutError) or "Timeout" in name:
        return Failure(f"the provider did not answer in time ({name})", None, True)
    if "Connection" in name or "Connect" in name or isinstance(exc, ConnectionError):
        return Failure(f"could not reach the provider ({name})", None, True)
    if any(_in_chain(exc, n) for n in _TRANSPORT_NAMES):
        return Failure(f"the provider's answer was cut off ({name})", None, True)
    return Failure(f"{name}: {_short_message(exc)}", None, False)


def _unreadable_body(exc: BaseException) -> str | None:
    """Why the SDK could not read a body it was sent, when the exception says so: JSON
    nested deeper than the parser recurses, an integer past Python's 4,300 digits, a
    number out of range."""
    if _in_chain(exc, "RecursionError"):
        return "the JSON is nested too deeply"
    if _in_chain(exc, "OverflowError"):
        return "a number is out of range"
    found = _find_in_chain(exc, "ValueError")
    if found is not None and "integer string conversion" in str(found):
        return "a number has too many digits"
    return None


def _short_message(exc: BaseException) -> str:
    # google-genai and openai put the server's message in `.message`; fall back to str().
    text = str(getattr(exc, "message", None) or exc)
    # Redact before cutting: a key cut in half would no longer match its value.
    text = redact(" ".join(text.split()))
    return clean_text(text[:300])


@dataclass
class RetryPolicy:
    """Exponential backoff with "equal jitter" (half fixed, half random: a retry never
    comes at once, and clients that failed together spread out), honouring Retry-After.

    `jitter` returns a float in [0, 1) and `sleep` waits: both are injectable so that tests
    (and replays, which have nothing to wait for) never sleep for real.
    """

    max_retries: int = DEFAULT_MAX_RETRIES
    base_delay: float = 1.0
    max_delay: float = 30.0
    jitter: Callable[[], float] = field(default=random.random)
    sleep: Callable[[float], Awaitable[Any]] = field(default=asyncio.sleep)
    attempt_timeout_s: float = DEFAULT_ATTEMPT_TIMEOUT_S

    def delay(self, attempt: int, failure: Failure) -> float:
        """Seconds to wait before retry number `attempt + 1` (attempt counts from 0)."""
        ceiling = min(self.max_delay, self.base_delay * (2**attempt))
        backoff = ceiling * (0.5 + 0.5 * self.jitter())
        if failure.retry_after is not None:
            # The server knows best; never retry before it says we may.
            return max(min(failure.retry_after, MAX_RETRY_AFTER_S), backoff)
        return backoff

    async def run(self, call: Callable[[], Awaitable[T]], *, label: str,
                  limiter: CallLimiter | None = None) -> T:
        attempt = 0
        malformed = 0
        while True:
            slot = limiter.slot() if limiter is not None else None
            try:
                if slot is None:
                    return await self._attempt(call)
                async with slot:
                    result = await self._attempt(call)
                slot.succeeded()
                return result
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failure = classify(exc)
                if slot is not None and (failure.status in THROTTLE_STATUS
                                         or failure.retry_after is not None):
                    slot.throttled()  # fewer calls in flight to this endpoint (AIMD)
                tries = f" after {attempt + 1} attempts" if attempt else ""
                message = f"{label}: {failure.message}{tries}"
                if failure.kind == "replay_miss":
                    raise ReplayMiss(message) from exc
                if failure.kind == "malformed":
                    malformed += 1
                    if malformed > MALFORMED_RETRIES or attempt >= self.max_retries:
                        raise MalformedReply(message) from exc
                elif not failure.retryable or attempt >= self.max_retries:
                    raise ProviderError(message, status=failure.status,
                                        retryable=failure.retryable) from exc
                # Sleep outside the limiter so a waiting call does not block the others.
                await self.sleep(self.delay(attempt, failure))
                attempt += 1

    async def _attempt(self, call: Callable[[], Awaitable[T]]) -> T:
        # A total deadline for the attempt, body included (the SDK's timeout is per read).
        async with asyncio.timeout(self.attempt_timeout_s):
            return await call()


async def no_sleep(_seconds: float) -> None:
    """A `sleep` for replays: recorded 429s are retried exactly as live, without waiting."""
    return None
