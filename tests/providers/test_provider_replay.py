"""Replays of the cassettes in cassettes/providers/<kind>/ for all four kinds: a text turn,
a tool-call turn, an identity guess, a 429-then-success retry and a whole 4-seat game.

Run with `--block-network`: replay needs no socket at all. Which cassettes are emulated
and which are real is in each folder's PROVENANCE.md.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from stille_post.cli.llm_seats import DEFAULT_MAX_OUTPUT_TOKENS, llm_session
from stille_post.core.errors import ProviderError
from stille_post.games.stille_post.prompts import TOOL_NAMES
from stille_post.games.stille_post.roster import load_roster
from stille_post.providers import Completion, create_provider
from stille_post.providers.recording import cassette
from stille_post.providers.retry import RetryPolicy
from stille_post.session import play_game
from tests.emulators import scenarios as S
from tests.providers._helpers import cassette_or_skip, comparable

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

KINDS = S.KINDS


class SleepLog:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def _provider(kind: str, policy: RetryPolicy | None = None, **extra: Any) -> Any:
    options: dict[str, Any] = {"api_key": "test-key",
                               "retry_policy": policy or RetryPolicy(max_retries=0)}
    if kind == "openai-compatible":
        options["base_url"] = S.LOCAL_URL
    options.update(extra)
    return create_provider(kind, S.TURN_MODEL[kind], **options)


# Single-call cassettes match on method, host and path only: they test how each adapter
# reads recorded replies, and must not break whenever someone rewords a prompt. Whole games
# match on the body too (concurrent calls), so a prompt change shows up there.
SINGLE = ["method", "scheme", "host", "port", "path"]
RERECORD = ("the game no longer sends the recorded requests (did prompts.py change?): "
            "re-record with `python -m tests.emulators.record {kind}` "
            "(openai-compatible: see its PROVENANCE.md)")


def _replay(kind: str, name: str, request: Any, policy: RetryPolicy | None = None
            ) -> tuple[Completion, int, bool]:
    path = cassette_or_skip(kind, name)
    with cassette(path, mode="replay", match_on=SINGLE) as cas:
        got = asyncio.run(_provider(kind, policy).complete(request))
        return got, cas.play_count, cas.all_played


CAP = DEFAULT_MAX_OUTPUT_TOKENS.get


@pytest.mark.parametrize("kind", KINDS)
def test_text_turn(kind: str) -> None:
    got, played, all_played = _replay(kind, "text_turn",
                                      S.text_request(max_output_tokens=CAP(kind)))
    assert played == 1 and all_played
    assert got.text.strip()
    assert got.tool_calls == []
    assert got.usage.input_tokens > 500  # the system prompt alone is ~800 tokens
    assert got.usage.output_tokens > 0
    assert got.finish_reason in ("stop", "end_turn", "length")


@pytest.mark.parametrize("kind", KINDS)
def test_tool_call_turn(kind: str) -> None:
    choice = "guess_model" if kind == "openai-compatible" else "auto"
    got, played, _ = _replay(kind, "tool_call_turn",
                             S.tool_request(max_output_tokens=CAP(kind), tool_choice=choice))
    assert played == 1
    assert len(got.tool_calls) >= 1
    call = got.tool_calls[0]
    assert call.name in TOOL_NAMES
    assert call.malformed is None, call.malformed
    assert isinstance(call.arguments, dict)
    if call.name == "guess_model":
        assert set(call.arguments) >= {"player_id", "model_id"}
    if kind == "google":
        # Gemini 3 signs its function calls; the signature must survive for sending back.
        assert call.provider_data.get("thought_signature")
    if kind in ("openai", "anthropic"):
        assert call.id  # the API's own id, echoed in the tool result


@pytest.mark.parametrize("kind", KINDS)
def test_identity_guess(kind: str) -> None:
    got, played, _ = _replay(kind, "identity_guess", S.guess_request(max_output_tokens=CAP(kind)))
    assert played == 1
    assert got.text.strip()
    assert got.tool_calls == []
    if kind != "openai-compatible":  # the emulated policy always names a roster id
        assert got.text.strip() in load_roster().ids


@pytest.mark.parametrize("kind", KINDS)
def test_429_then_success_is_retried_honouring_retry_after(kind: str) -> None:
    sleeps = SleepLog()
    policy = RetryPolicy(max_retries=3, jitter=lambda: 0.0, sleep=sleeps)
    got, played, all_played = _replay(kind, "retry_429",
                                      S.text_request(max_output_tokens=CAP(kind)), policy)
    assert played == 2 and all_played  # the 429, then the answer
    assert got.text.strip()
    assert sleeps.calls == [1.0]  # Retry-After: 1, although the jitter asked for 0


@pytest.mark.parametrize("kind", KINDS)
def test_429_without_retries_is_a_provider_error_with_status(kind: str) -> None:
    with pytest.raises(ProviderError) as info:
        _replay(kind, "retry_429", S.text_request(max_output_tokens=CAP(kind)),
                RetryPolicy(max_retries=0))
    assert info.value.status == 429
    assert info.value.retryable


def _game(kind: str) -> tuple[Path, dict[str, Any]]:
    path = cassette_or_skip(kind, "game_4seat")
    setup = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    return path, setup


def _replay_game(kind: str, out: Path) -> Any:
    path, setup = _game(kind)
    with llm_session(online=False, record=None, replay=path) as factory:
        return asyncio.run(play_game("stille-post", seed=setup["seed"], out=out,
                                     players=setup["players"], options=setup["options"],
                                     llm_factory=factory))


@pytest.mark.parametrize("kind", KINDS)
def test_whole_game_replays_identically_twice(kind: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    first = _replay_game(kind, tmp_path / "a.jsonl")
    second = _replay_game(kind, tmp_path / "b.jsonl")
    a, b = comparable(first.transcript), comparable(second.transcript)
    events = [e for e in a if e["kind"] == "event"]
    missing = [e for e in events if e["type"] == "forfeit"
               and "not in the replayed cassette" in e["data"]["reason"]]
    assert not missing, RERECORD.format(kind=kind)
    assert first.outcome.status == "completed"
    assert a == b
    # ... and it is the game that was recorded, not merely a stable one.
    assert a == comparable(S.transcript_path(kind))
    llm_seats = [i for i, p in enumerate(_game(kind)[1]["players"], 1) if ":" in p]
    spoke = {e["actor"] for e in events if e["type"] in ("message", "tool_calls")}
    assert set(llm_seats) <= spoke  # every LLM seat really played
    usage = a[-1]["usage"]
    assert all(usage[str(s)]["input_tokens"] > 0 for s in llm_seats)
    if kind != "openai-compatible":
        # The append-only history keeps each seat's prefix stable, so the (emulated)
        # prompt cache hits on later calls, and the cached count reaches the result.
        assert any(usage[str(s)]["cached_input_tokens"] > 0 for s in llm_seats)


def test_replay_of_a_diverging_game_aborts_naming_cassette_and_request(
        tmp_path: Path) -> None:
    """A request that is not in the cassette aborts the game at once (no retries, no
    network, no game of forfeits that "completes"); the reason names both."""
    path, setup = _game("openai")
    with llm_session(online=False, record=None, replay=path) as factory:
        # Another round limit changes every system prompt, so no request is in the cassette.
        options = {**setup["options"], "max_rounds": setup["options"]["max_rounds"] + 1}
        run = asyncio.run(play_game("stille-post", seed=setup["seed"],
                                    out=tmp_path / "x.jsonl", players=setup["players"],
                                    options=options, llm_factory=factory))
    assert run.outcome.status == "aborted"
    reason = run.outcome.reason or ""
    assert "not in the replayed cassette" in reason and path.name in reason
    assert "POST https://api.openai.com/v1/chat/completions" in reason
    events = [e for e in comparable(run.transcript) if e["kind"] == "event"]
    assert not [e for e in events if e["type"] == "forfeit"]
