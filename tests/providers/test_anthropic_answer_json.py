"""The Anthropic adapter reads a 200 answer as the JSON the SDK parsed (`cast_to=object`),
not as the SDK's `Message` model. Any answer, of any shape, must read exactly as it did
through the model: the same completion (thinking blocks included), or the same re-ask
(`MalformedReply`, with the same reason). And the request it sends is `messages.create`'s
body, plus what that method no longer takes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from anthropic._models import construct_type
from anthropic.types import Message as SDKMessage
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stille_post.providers.anthropic_api import (
    THINKING_KEY,
    AnthropicProvider,
    completion_from_anthropic,
)
from stille_post.providers.base import ChatRequest, Message
from tests.emulators.server import running
from tests.providers.answer_shapes import JSON, maybe, merge, reading

_input = st.one_of(st.just({"player_id": 2}), st.just("{not json"), st.just(""),
                   st.just([1]), JSON)
_block = st.one_of(
    merge(maybe("type", st.just("text")), maybe("text", st.one_of(st.text(max_size=6), JSON)),
          maybe("citations", st.one_of(st.none(), JSON))),
    merge(maybe("type", st.just("tool_use")), maybe("id", st.one_of(st.just("toolu_1"), JSON)),
          maybe("name", st.one_of(st.sampled_from(["vote", ""]), JSON)),
          maybe("input", _input)),
    merge(maybe("type", st.just("thinking")), maybe("thinking", st.one_of(st.text(max_size=6),
                                                                          JSON)),
          maybe("signature", st.one_of(st.just("c2ln"), st.none(), JSON)),
          maybe("extra", JSON)),
    merge(maybe("type", st.just("redacted_thinking")), maybe("data", st.one_of(
        st.just("ZGF0YQ=="), JSON))),
    merge(maybe("type", st.sampled_from(["server_tool_use", "image", "?"])),
          maybe("text", st.text(max_size=4))),
    JSON)
_usage = st.one_of(merge(
    maybe("input_tokens", st.one_of(st.integers(0, 10**6), JSON)),
    maybe("output_tokens", st.integers(0, 10**6)),
    maybe("cache_creation_input_tokens", st.one_of(st.none(), st.integers(0, 10**6), JSON)),
    maybe("cache_read_input_tokens", st.one_of(st.none(), st.integers(0, 10**6)))), JSON)
_answer = st.one_of(merge(
    maybe("id", st.just("msg_1")), maybe("type", st.just("message")),
    maybe("role", st.just("assistant")),
    maybe("model", st.one_of(st.just("claude-sonnet-4-5"), JSON)),
    maybe("content", st.one_of(st.lists(_block, max_size=4), JSON)),
    maybe("stop_reason", st.one_of(st.sampled_from(["end_turn", "tool_use", "max_tokens"]),
                                   JSON)),
    maybe("usage", _usage)), JSON)


def _read(answer: Any) -> tuple[str, Any]:
    return reading(completion_from_anthropic, answer, "anthropic:m")


GOOD = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 12, "output_tokens": 3, "cache_creation_input_tokens": 5,
                  "cache_read_input_tokens": 8},
        "content": [{"type": "thinking", "thinking": "hm", "signature": "c2ln"},
                    {"type": "text", "text": "I vote "},
                    {"type": "tool_use", "id": "toolu_1", "name": "vote",
                     "input": {"player_id": 2}}]}


@settings(max_examples=400, deadline=None)
@given(_answer)
@example(GOOD)
@example({"content": [{"type": "text", "text": "hi"}]})  # no usage, no stop_reason
@example({"content": [{"type": "thinking", "thinking": "x", "signature": None}]})
@example({"content": [{"type": "redacted_thinking", "data": "ZA==", "x": {"y": None}}]})
@example({"content": [{"type": "tool_use", "name": "vote", "input": "{not json"}]})
@pytest.mark.filterwarnings("ignore::UserWarning")  # the SDK side: pydantic on odd values
def test_an_answer_reads_as_json_exactly_as_through_the_sdk_model(answer: Any) -> None:
    as_model = construct_type(value=answer, type_=SDKMessage)
    assert _read(answer) == _read(as_model)


def test_a_well_formed_answer_is_read_field_by_field() -> None:
    kind, (text, calls, usage, model, finish, data) = _read(GOOD)
    assert kind == "completion"
    thinking = [{"type": "thinking", "thinking": "hm", "signature": "c2ln"}]
    assert (text, model, finish) == ("I vote ", "claude-sonnet-4-5", "tool_use")
    assert calls == [("vote", {"player_id": 2}, "toolu_1", None, {THINKING_KEY: thinking})]
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (17, 3, 8)
    assert data == {THINKING_KEY: thinking, "cache_creation_input_tokens": 5}


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with running("anthropic") as emu:
        yield emu


@pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])  # the emulator
def test_the_body_is_create_s_with_temperature_and_extra(emulator: Any) -> None:
    """`temperature` goes in the body (the API takes it; anthropic 2.12's `create` has no
    such parameter, so it failed every call), and `extra` merges in at the top level, as
    `messages.create(extra_body=...)` merges it."""
    provider = AnthropicProvider("claude-sonnet-4-5", base_url=emulator.base_url)
    request = ChatRequest("rules", [Message("user", "go")], temperature=0.7,
                          extra={"top_k": 5, "max_tokens": 99})
    completion = asyncio.run(provider.complete(request))
    assert completion.text
    body = emulator.state.requests[-1]["body"]
    assert body["temperature"] == 0.7 and body["top_k"] == 5 and body["max_tokens"] == 99
    assert body["model"] == "claude-sonnet-4-5" and "extra_body" not in body
    assert body["system"][0]["text"] == "rules"


def test_a_body_not_labelled_json_is_still_read_when_it_parses() -> None:
    """`messages.create` (cast to the SDK's `Message`) read such a body as JSON; the post
    with `cast_to=object` hands over its text, which is read the same way."""
    import json

    assert _read(json.dumps(GOOD)) == _read(GOOD)
    assert _read("<html>busy</html>")[0] == "completion"  # as before: an empty answer
