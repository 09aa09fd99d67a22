"""The OpenAI adapter reads a 200 answer as the JSON the SDK parsed (`cast_to=object`),
not as the SDK's pydantic models. Any answer, of any shape, must read exactly as it did
through the models: the same completion, or the same re-ask (`MalformedReply`, with the
same reason)."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from openai._models import construct_type
from openai.types.chat import ChatCompletion

from stille_post.providers.openai_api import completion_from_openai
from tests.providers.answer_shapes import JSON, maybe, merge, reading

_arguments = st.one_of(st.just('{"player_id": 2}'), st.just("{not json"), st.just(""),
                       st.just("[1]"), JSON)
_function = st.one_of(merge(maybe("name", st.one_of(st.sampled_from(["vote", ""]), JSON)),
                             maybe("arguments", _arguments)), JSON)
_tool_call = st.one_of(merge(maybe("id", st.one_of(st.just("call_1"), JSON)),
                              maybe("type", st.just("function")),
                              maybe("function", _function)), JSON)
_content = st.one_of(st.none(), st.text(max_size=8),
                     st.lists(st.one_of(st.fixed_dictionaries(
                         {"type": st.sampled_from(["text", "output_text", "image_url"]),
                          "text": st.one_of(st.text(max_size=4), JSON)}), JSON),
                         max_size=3),
                     JSON)
_message = st.one_of(merge(maybe("role", st.just("assistant")), maybe("content", _content),
                            maybe("tool_calls", st.one_of(st.lists(_tool_call, max_size=3),
                                                           JSON))), JSON)
_choice = st.one_of(merge(maybe("index", st.just(0)), maybe("message", _message),
                           maybe("finish_reason", st.one_of(
                               st.sampled_from(["stop", "tool_calls", "length"]), JSON))),
                    JSON)
_usage = st.one_of(merge(maybe("prompt_tokens", st.one_of(st.integers(0, 10**6), JSON)),
                          maybe("completion_tokens", st.integers(0, 10**6)),
                          maybe("prompt_tokens_details", st.one_of(
                              st.none(), merge(maybe("cached_tokens", st.one_of(
                                  st.integers(0, 10**6), JSON))), JSON))), JSON)
_answer = st.one_of(merge(maybe("id", st.just("chatcmpl-1")),
                           maybe("model", st.one_of(st.just("gpt-4.1"), JSON)),
                           maybe("choices", st.one_of(st.lists(_choice, max_size=2), JSON)),
                           maybe("usage", _usage)), JSON)


def _read(answer: Any) -> tuple[str, Any]:
    return reading(completion_from_openai, answer, "openai:m")


GOOD = {"id": "chatcmpl-1", "model": "gpt-4.1", "usage": {
    "prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 8}},
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "vote", "arguments": '{"player_id": 2}'}}]}}]}


@settings(max_examples=400, deadline=None)
@given(_answer)
@example(GOOD)
@example({"choices": [{"message": {"content": "hi"}}]})  # no finish_reason
@example({"choices": [{"finish_reason": "stop"}]})  # no message
@example({"choices": [{"message": {"content": {"a": 1}}, "finish_reason": "stop"}]})
def test_an_answer_reads_as_json_exactly_as_through_the_sdk_models(answer: Any) -> None:
    as_models = construct_type(value=answer, type_=ChatCompletion)
    assert _read(answer) == _read(as_models)


def test_a_well_formed_answer_is_read_field_by_field() -> None:
    kind, (text, calls, usage, model, finish, _) = _read(GOOD)
    assert kind == "completion"
    assert (text, calls, model, finish) == (
        "", [("vote", {"player_id": 2}, "call_1", None, {})], "gpt-4.1", "tool_calls")
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (12, 3, 8)


def test_a_body_not_labelled_json_is_still_read_when_it_parses() -> None:
    import json

    assert _read(json.dumps(GOOD)) == _read(GOOD)
    assert _read("<html>busy</html>")[0] == "completion"  # as before: an empty answer
