"""The one retry loop: backoff, jitter, Retry-After, what is retried, the final error, the
concurrency limit, and keys/missing keys. Nothing here sleeps for real."""

from __future__ import annotations

import asyncio
import email.utils
from typing import Any

import pytest

from stille_post.core.errors import MissingKeyError, ProviderError
from stille_post.providers import create_provider
from stille_post.providers.retry import (
    Failure,
    RetryPolicy,
    classify,
    limiter_for,
    parse_retry_after,
    set_concurrency,
)

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


class FakeResponse:
    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        self.status_code = status
        self.headers = headers or {}


class FakeStatusError(Exception):
    """Shaped like openai/anthropic APIStatusError: status_code + response."""

    def __init__(self, status: int, headers: dict[str, str] | None = None,
                 message: str = "boom") -> None:
        super().__init__(message)
        self.status_code = status
        self.response = FakeResponse(status, headers)


class FakeGoogleError(Exception):
    """Shaped like google.genai.errors.APIError: `code` + `message`."""

    def __init__(self, code: int) -> None:
        super().__init__(f"{code} UNAVAILABLE")
        self.code = code
        self.message = "The model is overloaded."


def flaky(*failures: BaseException, result: str = "ok") -> Any:
    queue = list(failures)
    calls = {"n": 0}

    async def call() -> str:
        calls["n"] += 1
        if queue:
            raise queue.pop(0)
        return result

    call.calls = calls  # type: ignore[attr-defined]
    return call


def test_backoff_is_exponential_capped_and_jittered() -> None:
    p = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=lambda: 1.0)
    f = Failure("x", 503, True)
    assert [p.delay(a, f) for a in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    low = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=lambda: 0.0)
    assert low.delay(2, f) == 2.0  # equal jitter: at least half the ceiling, never 0


def test_retry_after_wins_over_a_shorter_backoff_and_is_capped() -> None:
    p = RetryPolicy(jitter=lambda: 0.0)
    assert p.delay(0, Failure("x", 429, True, retry_after=7.0)) == 7.0
    assert p.delay(0, Failure("x", 429, True, retry_after=10_000.0)) == 60.0


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    when = email.utils.formatdate(1_000_030, usegmt=True)
    assert parse_retry_after({"retry-after": when}, now=1_000_000) == pytest.approx(30, abs=1)
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize("exc", [FakeStatusError(429), FakeStatusError(500),
                                 FakeStatusError(503), FakeStatusError(529),
                                 FakeGoogleError(503), TimeoutError()])
def test_transient_failures_are_retried_until_success(exc: BaseException) -> None:
    sleeps = Sleeps()
    call = flaky(exc, exc, result="done")
    got = asyncio.run(RetryPolicy(max_retries=3, jitter=lambda: 0.5, sleep=sleeps)
                      .run(call, label="t"))
    assert got == "done"
    assert call.calls["n"] == 3
    assert sleeps.calls == [0.75, 1.5]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_fail_at_once_with_their_status(status: int) -> None:
    sleeps = Sleeps()
    call = flaky(FakeStatusError(status))
    with pytest.raises(ProviderError) as info:
        asyncio.run(RetryPolicy(max_retries=5, sleep=sleeps).run(call, label="openai:m"))
    assert info.value.status == status
    assert not info.value.retryable
    assert call.calls["n"] == 1 and sleeps.calls == []
    assert str(info.value).startswith("openai:m: HTTP")


def test_gives_up_after_max_retries_with_the_last_status() -> None:
    sleeps = Sleeps()
    call = flaky(*[FakeStatusError(503)] * 10)
    with pytest.raises(ProviderError) as info:
        asyncio.run(RetryPolicy(max_retries=2, jitter=lambda: 0.0, sleep=sleeps)
                    .run(call, label="x"))
    assert info.value.status == 503 and info.value.retryable
    assert call.calls["n"] == 3 and len(sleeps.calls) == 2
    assert "after 3 attempts" in str(info.value)
    assert isinstance(info.value.__cause__, FakeStatusError)


def test_retry_after_header_from_the_response_is_honoured() -> None:
    sleeps = Sleeps()
    call = flaky(FakeStatusError(429, {"retry-after": "4"}))
    asyncio.run(RetryPolicy(max_retries=1, jitter=lambda: 0.0, sleep=sleeps)
                .run(call, label="x"))
    assert sleeps.calls == [4.0]


def test_missing_cassette_request_is_not_retried() -> None:
    class CannotOverwriteExistingCassetteException(Exception):
        pass

    class APIConnectionError(Exception):
        pass

    try:
        try:
            raise CannotOverwriteExistingCassetteException("no match")
        except Exception as inner:
            raise APIConnectionError("Connection error.") from inner
    except APIConnectionError as exc:
        outer = exc
    failure = classify(outer)
    assert not failure.retryable
    assert "not in the replayed cassette" in failure.message


def test_concurrency_limit_per_provider_endpoint() -> None:
    set_concurrency("test-kind", "http://limit.test", 2)
    active = {"now": 0, "max": 0}

    async def call() -> None:
        active["now"] += 1
        active["max"] = max(active["max"], active["now"])
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        active["now"] -= 1

    async def main() -> None:
        limiter = limiter_for("test-kind", "http://limit.test")
        assert limiter.endpoint is limiter_for("test-kind", "http://limit.test").endpoint
        assert limiter.endpoint is not limiter_for("test-kind", "http://other.test").endpoint
        policy = RetryPolicy(max_retries=0)
        await asyncio.gather(*(policy.run(call, label="c", limiter=limiter)
                               for _ in range(7)))

    asyncio.run(main())
    asyncio.run(main())  # a fresh loop gets a fresh semaphore, not a loop-bound one
    assert active["max"] == 2


@pytest.mark.parametrize(("kind", "var"), [("openai", "OPENAI_API_KEY"),
                                           ("anthropic", "ANTHROPIC_API_KEY"),
                                           ("google", "GEMINI_API_KEY")])
def test_missing_key_is_one_line_naming_the_variable(kind: str, var: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(MissingKeyError) as info:
        create_provider(kind, "some-model")
    message = str(info.value)
    assert var in message and "\n" not in message


def test_google_accepts_either_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google-var")
    create_provider("google", "gemini-2.5-flash")  # no MissingKeyError


def test_openai_compatible_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    p: Any = create_provider("openai-compatible", "local", base_url="http://127.0.0.1:9/v1")
    assert p.client.api_key == "not-needed"


def test_a_key_echoed_by_a_server_never_reaches_the_error() -> None:
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    call = flaky(FakeStatusError(401, message=f"Incorrect API key provided: {key}"))
    with pytest.raises(ProviderError) as info:
        asyncio.run(RetryPolicy(max_retries=0).run(call, label="openai:gpt-5"))
    assert key not in str(info.value)
    assert "[redacted]" in str(info.value)


def test_sdk_retries_are_off() -> None:
    for kind in ("openai", "anthropic"):
        p: Any = create_provider(kind, "m", api_key="test-key")
        assert p.client.max_retries == 0
    g: Any = create_provider("google", "m", api_key="test-key")
    assert g.client._api_client._http_options.retry_options.attempts == 1
    assert g.client._api_client._http_options.api_version == "v1beta"
    # httpx2, never aiohttp (vcrpy would record aiohttp's lowercase method).
    assert g.client._api_client._use_aiohttp() is False
    assert type(g.client._api_client._async_httpx_client).__module__.startswith("httpx2")
