"""The real-path benchmark (benchmarks/realpath.py) plays through every provider kind's SDK
adapter over loopback HTTP. Slow (a server process per kind); no timing is asserted."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.realpath import KINDS, real_tournament

# The loopback servers and the emulator listen on 127.0.0.1; --block-network stays on.
pytestmark = pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_plays_through_its_adapter(kind: str) -> None:
    row = real_tournament(kind, games=2, concurrency=2, latency_s=0.05)
    # every game finished (a failed call aborts its game, which then has no steps counted)
    assert row["critical_path_calls"] > 0
    assert row["peak_in_flight"] >= 1
    assert row["kind"] == kind and ".bench-real" in row["folder"]


def _optimal_makespan(paths: list[int], width: int) -> int:
    """Every way of giving the games to `width` slots (small cases only)."""
    best = sum(paths)

    def place(i: int, loads: list[int]) -> None:
        nonlocal best
        if max(loads) >= best:
            return
        if i == len(paths):
            best = max(loads)
            return
        for s in range(width):
            loads[s] += paths[i]
            place(i + 1, loads)
            loads[s] -= paths[i]

    place(0, [0] * width)
    return best


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=7), st.integers(1, 4))
def test_the_ideal_is_a_lower_bound_no_schedule_beats(paths: list[int], width: int) -> None:
    """bench_tournament.ideal_wall, the efficiency benchmarks' ideal: never above the best
    schedule of the games on `width` slots, never below total / width."""
    from benchmarks.bench_tournament import ideal_wall

    ideal = ideal_wall(paths, 1.0, width)
    assert sum(paths) / min(width, len(paths)) <= ideal <= _optimal_makespan(paths, width)


def test_the_ideal_of_equal_games_is_whole_rounds() -> None:
    from benchmarks.bench_tournament import ideal_wall

    assert ideal_wall([18] * 200, 0.1, 64) == pytest.approx(4 * 1.8)  # 64 + 64 + 64 + 8
    assert ideal_wall([18] * 128, 0.1, 64) == pytest.approx(2 * 1.8)
    assert ideal_wall([30, 1, 1, 1], 0.1, 64) == pytest.approx(3.0)  # the longest game


def _post(origin: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    import http.client
    from urllib.parse import urlsplit

    conn = http.client.HTTPConnection(urlsplit(origin).netloc, timeout=10)
    try:
        conn.request("POST", path, body, {"content-type": "application/json", **headers})
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


def test_the_loopback_server_remembers_answers_without_changing_a_byte() -> None:
    """benchmarks/loopback.py answers a repeated request from memory: the bytes the
    emulator sends for it, and still its 401 when the same body comes without a key."""
    import json

    from benchmarks.loopback import loopback_server
    from tests.emulators.server import running

    body = json.dumps({"model": "gpt-4.1", "messages": [
        {"role": "user", "content": "You are Player 2. Say a line."}]}).encode()
    auth = {"authorization": "Bearer sk-test"}
    with running("openai") as emu:
        expected = _post(emu.origin, "/v1/chat/completions", body, auth)
    assert expected[0] == 200
    with loopback_server("openai", 0.0) as url:
        origin = url.removesuffix("/v1")
        first = _post(origin, "/v1/chat/completions", body, auth)
        again = _post(origin, "/v1/chat/completions", body, auth)
        keyless = _post(origin, "/v1/chat/completions", body, {})
    assert first == expected and again == expected
    assert keyless[0] == 401 and b"API key" in keyless[1]


def test_the_https_loopback_is_trusted_while_it_runs_and_only_then(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`tls=True` serves HTTPS on a certificate made for the run: an adapter's call goes
    through (the shared TLS context trusts it), and afterwards the trust is gone again."""
    import asyncio
    import os

    from benchmarks.loopback import loopback_server
    from stille_post.providers import create_provider
    from stille_post.providers.base import ChatRequest, Message

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with loopback_server("openai", 0.0, tls=True) as url:
        assert url.startswith("https://")
        provider = create_provider("openai-compatible", "gpt-4.1", base_url=url,
                                   api_key="sk-test")
        reply = asyncio.run(provider.complete(ChatRequest("rules", [Message("user", "go")])))
        assert reply.text
    assert "SSL_CERT_FILE" not in os.environ
