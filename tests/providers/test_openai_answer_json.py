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

from stille_post.providers._common import read_completion
from stille_post.providers.base import MalformedReply
from stille_post.providers.openai_api import completion_from_openai

_scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**12), st.text(max_size=8),
                    st.floats(allow_nan=False, allow_infinity=False))
_json = st.recursive(_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8)


def _maybe(key: str, value: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """{key: value}, or nothing: a field present or absent."""
    return st.one_of(st.just({}), value.map(lambda v: {key: v}))


def _merge(*parts: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.tuples(*parts).map(lambda ds: {k: v for d in ds for k, v in d.items()})


_arguments = st.one_of(st.just('{"player_id": 2}'), st.just("{not json"), st.just(""),
                       st.just("[1]"), _json)
_function = st.one_of(_merge(_maybe("name", st.one_of(st.sampled_from(["vote", ""]), _json)),
                             _maybe("arguments", _arguments)), _json)
_tool_call = st.one_of(_merge(_maybe("id", st.one_of(st.just("call_1"), _json)),
                              _maybe("type", st.just("function")),
                              _maybe("function", _function)), _json)
_content = st.one_of(st.none(), st.text(max_size=8),
                     st.lists(st.one_of(st.fixed_dictionaries(
                         {"type": st.sampled_from(["text", "output_text", "image_url"]),
                          "text": st.one_of(st.text(max_size=4), _json)}), _json),
                         max_size=3),
                     _json)
_message = st.one_of(_merge(_maybe("role", st.just("assistant")), _maybe("content", _content),
                            _maybe("tool_calls", st.one_of(st.lists(_tool_call, max_size=3),
                                                           _json))), _json)
_choice = st.one_of(_merge(_maybe("index", st.just(0)), _maybe("message", _message),
                           _maybe("finish_reason", st.one_of(
                               st.sampled_from(["stop", "tool_calls", "length"]), _json))),
                    _json)
_usage = st.one_of(_merge(_maybe("prompt_tokens", st.one_of(st.integers(0, 10**6), _json)),
                          _maybe("completion_tokens", st.integers(0, 10**6)),
                          _maybe("prompt_tokens_details", st.one_of(
                              st.none(), _merge(_maybe("cached_tokens", st.one_of(
                                  st.integers(0, 10**6), _json))), _json))), _json)
_answer = st.one_of(_merge(_maybe("id", st.just("chatcmpl-1")),
                           _maybe("model", st.one_of(st.just("gpt-4.1"), _json)),
                           _maybe("choices", st.one_of(st.lists(_choice, max_size=2), _json)),
                           _maybe("usage", _usage)), _json)


def _read(answer: Any) -> tuple[str, Any]:
    try:
        c = read_completion(completion_from_openai, answer, "m", "openai:m")
    except MalformedReply as exc:
        return "re-ask", str(exc)
    except Exception as exc:  # compared, not hidden: both readings must raise alike
        return "raised", type(exc).__name__
    return "completion", (c.text, [(t.name, t.arguments, t.id, t.malformed)
                                   for t in c.tool_calls],
                          c.usage, c.model, c.finish_reason)


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
    kind, (text, calls, usage, model, finish) = _read(GOOD)
    assert kind == "completion"
    assert (text, calls, model, finish) == (
        "", [("vote", {"player_id": 2}, "call_1", None)], "gpt-4.1", "tool_calls")
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (12, 3, 8)


def test_a_body_not_labelled_json_is_still_read_when_it_parses() -> None:
    import json

    assert _read(json.dumps(GOOD)) == _read(GOOD)
    assert _read("<html>busy</html>")[0] == "completion"  # as before: an empty answer
