"""Round trips through the real SDKs against the loopback emulators, which enforce the
APIs' request rules: a seat's own tool calls come back with their results (and Gemini 3's
thought signatures), so a multi-turn history is accepted; the same history with the
signature dropped is refused, as the real API refuses it."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from stille_post.core.errors import ProviderError
from stille_post.providers import ChatRequest, Message, ToolCall, create_provider
from tests.emulators import scenarios as S
from tests.emulators.server import running

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

LOOPBACK = pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])


def _follow_up(first: ChatRequest, calls: list[ToolCall], text: str) -> ChatRequest:
    # The engine gives each id-less call an id of its own before rendering it back.
    calls = [c if c.id else replace(c, id=f"call_r1t3_{i}") for i, c in enumerate(calls)]
    msgs = [*first.messages, Message("assistant", text, calls)]
    msgs += [Message("tool", "Player 2 guessed Player 4's model: wrong.", tool_call_id=c.id)
             for c in calls]
    msgs.append(Message("user", "[GAME MASTER]: Identity guess #1: every active player, reply "
                                "now with the model id you believe you are."))
    return replace(first, messages=msgs, tool_choice="none")


@LOOPBACK
@pytest.mark.parametrize(("kind", "model"), [("openai", "gpt-5-mini"),
                                             ("anthropic", "claude-haiku-4-5-20251001"),
                                             ("google", "gemini-3-flash-preview")])
def test_tool_call_then_result_then_guess_round_trip(kind: str, model: str) -> None:
    with running(kind) as emu:
        provider: Any = create_provider(kind, model, api_key="dummy", base_url=emu.base_url,
                                        max_retries=0)

        async def go() -> tuple[Any, Any]:
            first = S.tool_request()
            turn = await provider.complete(first)
            guess = await provider.complete(_follow_up(first, turn.tool_calls, turn.text))
            await provider.aclose()
            return turn, guess

        turn, guess = asyncio.run(go())
    assert turn.tool_calls and guess.text.strip()


@LOOPBACK
def test_gemini3_refuses_a_call_without_its_thought_signature() -> None:
    with running("google") as emu:
        provider: Any = create_provider("google", "gemini-3-flash-preview", api_key="dummy",
                                        base_url=emu.base_url, max_retries=0)

        async def go() -> None:
            first = S.tool_request()
            turn = await provider.complete(first)
            stripped = [replace(c, provider_data={}) for c in turn.tool_calls]
            try:
                await provider.complete(_follow_up(first, stripped, turn.text))
            finally:
                await provider.aclose()

        with pytest.raises(ProviderError) as info:
            asyncio.run(go())
    assert info.value.status == 400 and "thought_signature" in str(info.value)


@LOOPBACK
@pytest.mark.parametrize("kind", ["openai", "anthropic", "google"])
def test_real_sdk_errors_retry_exactly_as_classified(kind: str) -> None:
    from stille_post.providers.retry import RetryPolicy, no_sleep

    with running(kind) as emu:
        policy = RetryPolicy(max_retries=3, sleep=no_sleep)
        provider: Any = create_provider(kind, S.TURN_MODEL[kind], api_key="dummy",
                                        base_url=emu.base_url, retry_policy=policy)
        overloaded = 529 if kind == "anthropic" else 503

        async def go() -> Any:
            emu.fail_next(overloaded)
            emu.fail_next(500)
            ok = await provider.complete(S.text_request())  # 2 failures, then success
            emu.fail_next(401)
            try:
                await provider.complete(S.text_request())
            except ProviderError as exc:
                return ok, exc
            finally:
                await provider.aclose()
            return ok, None

        ok, error = asyncio.run(go())
    assert ok.text
    assert isinstance(error, ProviderError) and error.status == 401
    assert len(emu.state.requests) == 4  # 3 for the first call, 1 (no retry) for the 401
