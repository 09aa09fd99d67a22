"""Request building and reply normalisation of the three adapters, without HTTP."""

from __future__ import annotations

from types import SimpleNamespace as NS
from typing import Any

from stille_post.providers import ChatRequest, Message, Tool, ToolCall, create_provider
from stille_post.providers.anthropic_api import completion_from_anthropic, to_anthropic_messages
from stille_post.providers.google_api import completion_from_google, to_google_contents
from stille_post.providers.openai_api import completion_from_openai, to_openai_messages

TOOL = Tool("guess_model", "guess", {"type": "object", "properties": {}})
CALLS = [ToolCall("guess_model", {"player_id": 2, "model_id": "gpt-5"}, "c1"),
         ToolCall("propose_task", {"task": "x"}, "c2")]
HISTORY = ChatRequest(
    "system text",
    [Message("user", "hello"),
     Message("assistant", "", CALLS),  # a tool-only turn: empty content
     Message("tool", "correct", tool_call_id="c1"),
     Message("tool", "refused", tool_call_id="c2"),
     Message("user", "next"),
     Message("assistant", "I think so."),
     Message("user", "go")],
    [TOOL], max_output_tokens=50, tool_choice="auto")


def _openai_resp(content: Any, calls: list[tuple[str, Any]], finish: str = "tool_calls") -> Any:
    tcs = [NS(id=f"call_{i}", function=NS(name=n, arguments=a)) for i, (n, a) in enumerate(calls)]
    return NS(choices=[NS(message=NS(content=content, tool_calls=tcs or None),
                          finish_reason=finish)],
              usage=NS(prompt_tokens=10, completion_tokens=5, prompt_tokens_details=None),
              model="m")


def test_openai_history_keeps_tool_results_right_after_their_calls() -> None:
    msgs = to_openai_messages(HISTORY)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool", "user",
                                         "assistant", "user"]
    assert msgs[2]["content"] is None
    assert [c["id"] for c in msgs[2]["tool_calls"]] == ["c1", "c2"]
    assert msgs[2]["tool_calls"][0]["function"]["arguments"] == \
        '{"player_id": 2, "model_id": "gpt-5"}'


def test_openai_normalises_null_content_several_calls_and_bad_json() -> None:
    got = completion_from_openai(_openai_resp(None, [
        ("guess_model", '{\n  "player_id": 3,\n  "model_id": "gpt-5"\n}'),
        ("propose_task", "{not json"),
        ("proclaim_superiority", '["a list"]'),
        ("russian_roulette", ""),
    ]), "m")
    assert got.text == ""
    assert [c.name for c in got.tool_calls] == ["guess_model", "propose_task",
                                                 "proclaim_superiority", "russian_roulette"]
    assert got.tool_calls[0].arguments == {"player_id": 3, "model_id": "gpt-5"}
    assert got.tool_calls[0].malformed is None
    assert "not valid JSON" in (got.tool_calls[1].malformed or "")
    assert "not a JSON object" in (got.tool_calls[2].malformed or "")
    assert got.tool_calls[3].malformed is None and got.tool_calls[3].arguments == {}


def test_openai_text_when_tools_were_expected_is_just_text() -> None:
    got = completion_from_openai(_openai_resp("I pass.", [], "stop"), "m")
    assert got.text == "I pass." and got.tool_calls == []


def test_max_output_tokens_parameter_name_per_kind() -> None:
    openai: Any = create_provider("openai", "gpt-5", api_key="k")
    local: Any = create_provider("openai-compatible", "x", base_url="http://127.0.0.1:9/v1")
    assert openai._params(HISTORY)["max_completion_tokens"] == 50
    assert "max_tokens" not in openai._params(HISTORY)
    assert local._params(HISTORY)["max_tokens"] == 50
    # llama-cpp-python's server answers HTTP 500 to null content beside tool calls (seen
    # on a seat's own earlier `give_clue` call in Connections): compatible servers get "".
    assert openai._params(HISTORY)["messages"][2]["content"] is None
    assert local._params(HISTORY)["messages"][2]["content"] == ""
    assert local._params(HISTORY)["messages"][2]["tool_calls"][0]["id"] == "c1"
    named = ChatRequest("s", [Message("user", "x")], [TOOL], tool_choice="guess_model")
    assert openai._params(named)["tool_choice"] == {"type": "function",
                                                    "function": {"name": "guess_model"}}


def test_anthropic_merges_tool_results_and_marks_the_stable_prefix() -> None:
    provider: Any = create_provider("anthropic", "claude-haiku-4-5", api_key="k")
    params = provider._params(HISTORY)
    msgs = params["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    # both results and the following user text share the one user turn after the calls
    assert [b["type"] for b in msgs[2]["content"]] == ["tool_result", "tool_result", "text"]
    assert [b["type"] for b in msgs[1]["content"]] == ["tool_use", "tool_use"]  # no empty text
    # the newest user turn, and the end of the history before it (test_provider_anthropic_cache)
    marked = [b for m in msgs for b in m["content"] if "cache_control" in b]
    assert marked == [msgs[-2]["content"][-1], msgs[-1]["content"][-1]]
    assert params["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert params["tool_choice"] == {"type": "auto"}
    uncached: Any = create_provider("anthropic", "m", api_key="k", prompt_caching=False)
    assert "cache_control" not in str(uncached._params(HISTORY))


def test_anthropic_tool_only_reply_and_usage_with_cache_writes() -> None:
    resp = NS(content=[NS(type="tool_use", id="t1", name="guess_model", input={"a": 1})],
              usage=NS(input_tokens=3, output_tokens=7, cache_read_input_tokens=None,
                       cache_creation_input_tokens=900),
              stop_reason="tool_use", model="claude")
    got = completion_from_anthropic(resp, "claude")
    assert got.text == "" and got.tool_calls[0].arguments == {"a": 1}
    assert (got.usage.input_tokens, got.usage.cached_input_tokens) == (903, 0)
    assert got.provider_data["cache_creation_input_tokens"] == 900


def test_anthropic_first_message_stays_user_when_history_starts_oddly() -> None:
    req = ChatRequest("s", [Message("user", ""), Message("user", "a"), Message("user", "b")])
    assert to_anthropic_messages(req, cache=False) == [
        {"role": "user", "content": [{"type": "text", "text": "a"},
                                     {"type": "text", "text": "b"}]}]


def test_google_parallel_responses_share_one_turn_and_carry_the_call_names() -> None:
    from google.genai import types

    # Dicts on the wire side: read back through the SDK's own model, as it validates them.
    contents = [types.Content.model_validate(c) for c in to_google_contents(HISTORY)]
    roles = [c.role for c in contents]
    assert roles == ["user", "model", "user", "model", "user"]
    responses = [p.function_response for p in contents[2].parts if p.function_response]
    assert [r.name for r in responses] == ["guess_model", "propose_task"]
    assert responses[0].id is None  # our engine's ids are not Gemini's: not sent
    assert contents[2].parts[-1].text == "next"


def test_google_thoughts_are_not_text_and_usage_counts_thinking_as_output() -> None:
    part_thought = NS(text="secret plan", thought=True, function_call=None,
                      thought_signature=None)
    part_text = NS(text="gpt-5\n", thought=None, function_call=None, thought_signature=b"sig")
    resp = NS(candidates=[NS(content=NS(parts=[part_thought, part_text]),
                             finish_reason=NS(value="STOP"))],
              usage_metadata=NS(prompt_token_count=20, candidates_token_count=3,
                                thoughts_token_count=40, cached_content_token_count=8),
              model_version="gemini-2.5-flash")
    got = completion_from_google(resp, "gemini-2.5-flash")
    assert got.text == "gpt-5\n" and got.finish_reason == "stop"
    assert (got.usage.input_tokens, got.usage.output_tokens,
            got.usage.cached_input_tokens) == (20, 43, 8)
    assert got.provider_data["google_text_signature"] == "c2ln"


def test_google_blocked_prompt_is_an_empty_completion_not_a_crash() -> None:
    resp = NS(candidates=None, prompt_feedback=NS(block_reason=NS(value="SAFETY")),
              usage_metadata=None)
    got = completion_from_google(resp, "g")
    assert got.text == "" and got.tool_calls == [] and got.finish_reason == "blocked:safety"
