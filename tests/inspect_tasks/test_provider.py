"""The Inspect provider: our ChatRequest in Inspect's types, Inspect's ModelOutput back
as a Completion, and what an Inspect failure becomes for our rules."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolFunction
from inspect_ai.util import LimitExceededError

from stille_post.core.errors import GameAborted, ProviderError
from stille_post.core.transcript import Transcript
from stille_post.players.llm import LLMPlayer
from stille_post.providers import create_provider
from stille_post.providers.base import ChatRequest, Message, Tool, ToolCall
from stille_post.providers.inspect_model import (
    InspectLimitReached,
    InspectProvider,
    from_model_output,
    to_generate_config,
    to_inspect_messages,
    to_inspect_tool,
    to_tool_choice,
)
from stille_post.session import play_game
from tests.inspect_tasks.policies import plausible

VOTE = Tool("cast_vote", "Vote a player out.", {
    "type": "object", "properties": {"target": {"type": "integer", "minimum": 1},
                                     "reason": {"type": "string", "maxLength": 200}},
    "required": ["target"], "additionalProperties": False})

REQUEST = ChatRequest(
    system="You are Player 1.",
    messages=[Message("user", "Vote now."),
              Message("assistant", "", tool_calls=[ToolCall("cast_vote", {"target": 2},
                                                            id="c1")]),
              Message("tool", "accepted", tool_call_id="c1"),
              Message("user", "Again.")],
    tools=[VOTE], max_output_tokens=50, temperature=0.2, tool_choice="cast_vote",
    reasoning_effort="low", extra={"seed": 7})


def test_a_request_becomes_inspect_messages_tools_and_config() -> None:
    messages = to_inspect_messages(REQUEST)
    assert [type(m) for m in messages] == [ChatMessageSystem, ChatMessageUser,
                                           ChatMessageAssistant, ChatMessageTool,
                                           ChatMessageUser]
    call = messages[2].tool_calls[0]  # type: ignore[union-attr]
    assert (call.id, call.function, call.arguments) == ("c1", "cast_vote", {"target": 2})
    tool_result = messages[3]
    assert isinstance(tool_result, ChatMessageTool)
    assert (tool_result.tool_call_id, tool_result.function) == ("c1", "cast_vote")
    info = to_inspect_tool(VOTE)
    assert info.parameters.required == ["target"]
    assert info.parameters.properties["reason"].maxLength == 200
    config = to_generate_config(REQUEST)
    assert (config.max_tokens, config.temperature, config.reasoning_effort,
            config.extra_body) == (50, 0.2, "low", {"seed": 7})


@pytest.mark.parametrize(("ours", "theirs"), [
    ("auto", "auto"), ("none", "none"), ("required", "any"),
    ("cast_vote", ToolFunction("cast_vote")), (None, None)])
def test_tool_choice(ours: str | None, theirs: Any) -> None:
    assert to_tool_choice(ours, [VOTE]) == theirs
    assert to_tool_choice(ours, []) is None  # no tools, no choice


def test_an_output_becomes_a_completion() -> None:
    out = ModelOutput.for_tool_call("mockllm/model", "cast_vote", {"target": 3})
    out.usage = ModelUsage(input_tokens=90, output_tokens=4, total_tokens=94,
                           input_tokens_cache_read=60)
    done = from_model_output(out, fallback_model="x")
    assert [(c.name, c.arguments, c.malformed) for c in done.tool_calls] == \
        [("cast_vote", {"target": 3}, None)]
    assert (done.usage.input_tokens, done.usage.output_tokens,
            done.usage.cached_input_tokens) == (90, 4, 60)
    out.choices[0].message.tool_calls = [
        InspectToolCall(id="b", function="cast_vote", arguments={}, parse_error="bad JSON")]
    [bad] = from_model_output(out, fallback_model="x").tool_calls
    assert bad.malformed == "bad JSON"  # a parse error: the kit re-asks


def _failing(exc: Exception) -> InspectProvider:
    def answer(*_: Any) -> ModelOutput:
        raise exc
    return InspectProvider(get_model("mockllm/model", custom_outputs=answer, memoize=False))


def test_a_call_that_still_fails_is_a_provider_error_and_a_limit_aborts() -> None:
    with pytest.raises(ProviderError, match="RuntimeError: overloaded"):
        asyncio.run(_failing(RuntimeError("overloaded\nmore")).complete(REQUEST))
    limited = _failing(LimitExceededError("token", value=10, limit=5))
    with pytest.raises(InspectLimitReached) as caught:
        asyncio.run(limited.complete(REQUEST))
    assert isinstance(caught.value, GameAborted)
    assert limited.limit_error is caught.value.error  # the task re-raises Inspect's own


def test_an_inspect_seat_plays_valid_decisions_with_usage(tmp_path: Path) -> None:
    model = get_model("mockllm/model", custom_outputs=plausible, memoize=False)

    def factory(spec: str, prompts: Any) -> LLMPlayer:
        return LLMPlayer(InspectProvider(model), prompts, name=spec)

    run = asyncio.run(play_game("chameleon", seed=2, out=tmp_path / "g.jsonl",
                                players=["inspect:mockllm/model", "bot", "bot", "bot"],
                                llm_factory=factory))
    result = Transcript.load(run.transcript).result
    assert result is not None
    adherence = result["adherence"]["1"]
    assert adherence["decisions"] >= 2 and adherence["valid_first_try"] >= 1
    assert result["usage"]["1"]["input_tokens"] >= 100  # the policy's usage, counted


def test_create_provider_knows_the_inspect_kind() -> None:
    provider = create_provider("inspect", "mockllm/model", api_key="ignored",
                               retry_policy=None, alias=None)
    assert isinstance(provider, InspectProvider)
