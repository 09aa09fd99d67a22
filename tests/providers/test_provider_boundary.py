"""The provider boundary (issue 11): model text is data, never a crash.

- content as a list of parts is joined; other non-string content earns a re-ask;
- a 200 answer that is not JSON is retried once, then re-asked, and says so;
- a body trickled one byte at a time is ended by the per-attempt deadline;
- a replayed request missing from the cassette aborts the game, naming both;
- a seat that never got a usable answer yields a warning.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from stille_post.cli.warnings import llm_seat_warnings
from stille_post.core.errors import GameAborted, ProviderError
from stille_post.players.base import Decision
from stille_post.players.llm import UNREADABLE_REPLY, LLMPlayer
from stille_post.providers import create_provider
from stille_post.providers._common import content_text
from stille_post.providers.base import ChatRequest, MalformedReply, Message
from stille_post.providers.recording import cassette
from stille_post.providers.retry import RetryPolicy, no_sleep
from tests.emulators.faults import FaultPolicy
from tests.emulators.server import Emulator

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

LOOPBACK = pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])
DECISION: Decision[Any] = Decision("test", "turn", 1, None)


class _Prompts:
    def render(self, decision: Any) -> ChatRequest:
        return ChatRequest(system="You are Player 1.", messages=[Message("user", "Speak.")])


def test_content_parts_are_joined_and_other_types_are_malformed() -> None:
    assert content_text([{"type": "text", "text": "a "}, {"type": "image_url"}, "b"]) == "a b"
    assert content_text(None) == ""
    for bad in (42, {"text": "x"}, True, 3.5, [{"type": "text", "text": 7}]):
        with pytest.raises(MalformedReply):
            content_text(bad)


def _player(emu: Emulator, kind: str = "openai", *, timeout: float = 5.0) -> LLMPlayer:
    policy = RetryPolicy(max_retries=3, sleep=no_sleep, jitter=lambda: 0.0,
                         attempt_timeout_s=timeout)
    provider = create_provider(kind, "gpt-5-mini", api_key="test-key-123456",
                               base_url=emu.base_url, retry_policy=policy)
    return LLMPlayer(provider, _Prompts(), name=f"{kind}:gpt-5-mini")


@LOOPBACK
def test_non_string_content_is_a_reask_not_a_crash() -> None:
    emu = Emulator("openai", faults=FaultPolicy(1.0, kinds=("non_string_content",))).start()
    try:
        for _ in range(5):  # the policy draws a number, a dict, a bool, a float or parts
            action = asyncio.run(_player(emu).decide(DECISION))
            if action.text:  # a list of parts: joined
                assert action.text == "part one, part two."
            else:
                assert action.tool_calls[0].name == UNREADABLE_REPLY
                assert "not text" in (action.tool_calls[0].malformed or "")
    finally:
        emu.stop()


@LOOPBACK
def test_invalid_json_is_retried_once_then_reasked_with_the_reason() -> None:
    emu = Emulator("openai", faults=FaultPolicy(1.0, kinds=("invalid_json",))).start()
    try:
        action = asyncio.run(_player(emu).decide(DECISION))
    finally:
        emu.stop()
    assert emu.state.faults_policy is not None
    assert emu.state.faults_policy.requests == 2  # one retry, not max_retries (3)
    call = action.tool_calls[0]
    assert action.text == "" and call.name == UNREADABLE_REPLY
    assert "could not be read" in (call.malformed or "")


@LOOPBACK
def test_a_trickled_body_is_ended_by_the_attempt_deadline() -> None:
    emu = Emulator("openai", faults=FaultPolicy(1.0, kinds=("trickle",))).start()
    assert emu.state.faults_policy is not None
    emu.state.faults_policy.trickle_gap_s = 0.05  # a ~1 KB body would take a minute
    try:
        with pytest.raises(ProviderError, match="did not answer in time"):
            asyncio.run(_player(emu, timeout=0.1).decide(DECISION))
    finally:
        emu.stop()
    assert emu.state.faults_policy.requests == 4  # the first try and max_retries=3


@LOOPBACK
def test_a_seat_that_never_got_an_answer_is_a_warning() -> None:
    emu = Emulator("openai", faults=FaultPolicy(1.0, kinds=("http500",))).start()
    ok = Emulator("openai").start()
    try:
        bad, good = _player(emu), _player(ok)

        async def game() -> None:  # one event loop, as in a game
            for _ in range(2):
                with pytest.raises(ProviderError):
                    await bad.decide(DECISION)
            await good.decide(DECISION)

        asyncio.run(game())
    finally:
        emu.stop()
        ok.stop()
    warnings = llm_seat_warnings([bad.provider, good.provider])
    assert len(warnings) == 1
    assert warnings[0].startswith("openai:gpt-5-mini never got a valid answer in 2 calls")
    assert "HTTP 500" in warnings[0]


def test_a_request_missing_from_the_cassette_aborts_naming_cassette_and_request(
        tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("interactions: []\nversion: 1\n", encoding="utf-8")
    policy = RetryPolicy(max_retries=3, sleep=no_sleep, jitter=lambda: 0.0)
    provider = create_provider("openai", "gpt-5-mini", api_key="replay-dummy-key",
                               retry_policy=policy)
    player = LLMPlayer(provider, _Prompts(), name="openai:gpt-5-mini")
    with cassette(path, mode="replay"), pytest.raises(GameAborted) as info:
        asyncio.run(player.decide(DECISION))
    message = str(info.value)
    assert "not in the replayed cassette" in message and str(path) in message
    assert "POST https://api.openai.com/v1/chat/completions" in message
    assert llm_seat_warnings([provider])  # and the seat is reported as never answered
