"""Constrained decoding by each API's own mechanism (providers/structured.py and the
adapters): what a structured request sends, how the answer comes back as text, a server
that refuses a form degrading in one line at its first call, and a free request sent
byte for byte as before."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from stille_post.providers import ChatRequest, Message, Tool, create_provider
from stille_post.providers.base import Completion, LegalMoves, ToolCall, Usage
from stille_post.providers.replicas import watching
from stille_post.providers.structured import (
    admits,
    answer_call_to_text,
    for_openai_strict,
    free_text_turn,
    gbnf,
    unwrap_text,
)
from tests.emulators.server import Emulator

LOOPBACK = pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])
VOTE = Tool("cast_vote", "Vote.", {"type": "object", "properties": {
    "target": {"type": "integer", "minimum": 1, "maximum": 5}}, "required": ["target"],
    "additionalProperties": False})
CHAT = Tool("chat", "Say something.", {"type": "object", "properties": {
    "text": {"type": "string"}}, "required": ["text"], "additionalProperties": False})
LEGAL_VOTE = {"type": "object", "properties": {"target": {"type": "integer", "enum": [2, 4]},
              "reason": {"type": "string", "maxLength": 300}},
              "required": ["target", "reason"], "additionalProperties": False}
WORD = {"type": "string", "pattern": "^[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*$", "maxLength": 40}
MSGS = [Message("user", "Your move.")]
TOOL_TURN = ChatRequest("rules", MSGS, [VOTE, CHAT], tool_choice="cast_vote",
                        structured="schema", legal=LegalMoves(tools={"cast_vote": LEGAL_VOTE}))
TEXT_TURN = ChatRequest("rules", MSGS, [VOTE, CHAT], tool_choice="none", structured="schema",
                        legal=LegalMoves(text={"type": "string", "enum": ["1", "2", "3"]}))
FREE_TURN = ChatRequest("rules", MSGS, [VOTE, CHAT], tool_choice="none", structured="schema",
                        legal=None)


def _provider(kind: str, **options: Any) -> Any:
    extra = {"base_url": "http://127.0.0.1:9/v1"} if kind == "openai-compatible" else \
        {"api_key": "k"}
    return create_provider(kind, "m", **extra, **options)


def test_a_free_request_is_sent_as_before_by_every_adapter() -> None:
    # The legal moves are ignored without a structured mode: the body does not change.
    for kind in ("openai", "openai-compatible", "anthropic"):
        p = _provider(kind)
        plain = replace(TOOL_TURN, structured=None, legal=None)
        assert p._params(replace(TOOL_TURN, structured=None)) == p._params(plain)
        assert "strict" not in json.dumps(p._params(plain))
    g = _provider("google")
    plain = replace(TEXT_TURN, structured=None, legal=None)
    assert g._config(replace(TEXT_TURN, structured=None)) == g._config(plain)


def test_openai_forced_tool_is_strict_under_its_legal_schema() -> None:
    params = _provider("openai")._params(TOOL_TURN)
    tools = {t["function"]["name"]: t["function"] for t in params["tools"]}
    assert tools["cast_vote"]["strict"] is True
    # strict mode refuses maxLength: it goes, the enum stays (the game still checks)
    assert tools["cast_vote"]["parameters"]["properties"] == {
        "target": {"type": "integer", "enum": [2, 4]}, "reason": {"type": "string"}}
    assert "strict" not in tools["chat"] and tools["chat"]["parameters"] == CHAT.parameters
    assert "response_format" not in params


def test_openai_text_answer_is_a_strict_json_schema_read_back_as_text() -> None:
    params = _provider("openai")._params(TEXT_TURN)
    fmt = params["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["properties"]["answer"]["enum"] == ["1", "2", "3"]
    assert params["tool_choice"] == "none" and len(params["tools"]) == 2  # cacheable


def test_compatible_servers_get_the_schema_without_strict_and_free_text_without_tools(
        ) -> None:
    p = _provider("openai-compatible")
    forced = {t["function"]["name"]: t["function"] for t in p._params(TOOL_TURN)["tools"]}
    assert forced["cast_vote"]["parameters"] == LEGAL_VOTE and "strict" not in forced["cast_vote"]
    assert "tools" not in p._params(FREE_TURN)  # the kind's free-text layout
    plain = _provider("openai-compatible", free_text_tools="plain")._params(FREE_TURN)
    assert [t["function"]["parameters"] for t in plain["tools"]] == \
        [VOTE.parameters, CHAT.parameters]
    assert not free_text_turn(replace(FREE_TURN, structured=None))
    assert not free_text_turn(TEXT_TURN) and not free_text_turn(TOOL_TURN)


def test_a_free_text_turn_lists_the_moments_legal_tools_or_the_plain_ones_per_kind() -> None:
    turn = replace(FREE_TURN, legal=LegalMoves(tools={"cast_vote": LEGAL_VOTE}, free=True))
    openai = {t["function"]["name"]: t["function"] for t in
              _provider("openai")._params(turn)["tools"]}
    assert openai["cast_vote"]["strict"] is True  # the same tools as the vote turns
    assert openai["cast_vote"]["parameters"]["properties"]["target"]["enum"] == [2, 4]
    assert [t["input_schema"] for t in _provider("anthropic")._params(turn)["tools"]] == \
        [VOTE.parameters, CHAT.parameters]  # as the game defines them
    google = _provider("google")._config(turn).tools[0].function_declarations
    assert google[0].parameters_json_schema == LEGAL_VOTE
    assert "tools" not in _provider("openai-compatible")._params(turn)


def test_anthropic_text_answer_is_a_forced_answer_tool() -> None:
    params = _provider("anthropic")._params(TEXT_TURN)
    assert params["tool_choice"] == {"type": "tool", "name": "answer"}
    answer = params["tools"][-1]
    assert answer["name"] == "answer"
    assert answer["input_schema"]["properties"]["answer"]["enum"] == ["1", "2", "3"]
    tools = {t["name"]: t for t in _provider("anthropic")._params(TOOL_TURN)["tools"]}
    assert tools["cast_vote"]["input_schema"] == LEGAL_VOTE
    reply = Completion("", [ToolCall("answer", {"answer": "2"}, "t1")], Usage(), "m")
    assert answer_call_to_text(reply).text == "2" and not answer_call_to_text(reply).tool_calls


def test_google_text_answer_is_a_json_schema_or_a_forced_function() -> None:
    g = _provider("google")
    bare = g._config(replace(TEXT_TURN, tools=[]))
    assert bare.response_mime_type == "application/json"
    assert bare.response_json_schema["properties"]["answer"]["enum"] == ["1", "2", "3"]
    with_tools = g._config(TEXT_TURN)  # Gemini refuses JSON beside function declarations
    assert with_tools.response_mime_type is None
    names = [f.name for f in with_tools.tools[0].function_declarations]
    assert names == ["cast_vote", "chat", "answer"]
    calling = with_tools.tool_config.function_calling_config
    assert calling.mode == "ANY" and calling.allowed_function_names == ["answer"]
    vote = g._config(TOOL_TURN).tools[0].function_declarations[0]
    assert vote.parameters_json_schema == LEGAL_VOTE


@LOOPBACK
def test_a_server_that_refuses_json_schema_degrades_once_in_one_line() -> None:
    emu = Emulator("openai", decoder=True, refuses=("json_schema",)).start()
    lines: list[str] = []
    try:
        provider: Any = create_provider("openai-compatible", "tiny", base_url=emu.base_url)

        async def three() -> list[str]:
            return [(await provider.complete(TEXT_TURN)).text for _ in range(3)]

        with watching(lines.append):
            answers = asyncio.run(three())
    finally:
        emu.stop()
    assert answers and all(a in ("1", "2", "3") for a in answers)  # unwrapped
    kinds = [(r["body"].get("response_format") or {}).get("type") for r in emu.state.requests]
    # the first call: refused once (no retry), sent again as json_object; then only that
    assert kinds == ["json_schema", "json_object", "json_object", "json_object"]
    assert len(lines) == 1 and "refused response_format json_schema (HTTP 500)" in lines[0]


@LOOPBACK
def test_a_llama_cpp_server_gets_a_grammar_on_the_plain_text() -> None:
    emu = Emulator("openai", models_owner="me").start()  # llama-cpp-python's models list
    try:
        provider: Any = create_provider("openai-compatible", "tiny", base_url=emu.base_url)

        async def two() -> None:
            for _ in range(2):
                await provider.complete(TEXT_TURN)

        asyncio.run(two())
    finally:
        emu.stop()
    bodies = [r["body"] for r in emu.state.requests]
    assert len(bodies) == 2  # the models list was read once, before the first
    for b in bodies:
        assert b["grammar"] == 'root ::= "1" | "2" | "3"' and "response_format" not in b


def test_which_models_lists_say_llama_cpp() -> None:
    from stille_post.providers.openai_api import says_llama_cpp

    assert says_llama_cpp({"data": [{"id": "q", "owned_by": "llamacpp"}]})
    assert says_llama_cpp('{"data": [{"id": "q", "owned_by": "me", "permissions": []}]}')
    for other in ({"data": [{"id": "q", "owned_by": "vllm"}]}, {"data": [{"owned_by": "me"}]},
                  {"data": []}, {"data": "x"}, [], "not json", None):
        assert not says_llama_cpp(other)


def test_unwrap_takes_the_answer_and_leaves_anything_else_as_it_came() -> None:
    assert unwrap_text('{"answer": "zebra"}') == "zebra"
    assert unwrap_text('{"answer": 3}') == "3"
    assert unwrap_text('"zebra"') == "zebra"
    for other in ('{"answer": "x", "y": 1}', "zebra", "3", '{"answer": null}', "[1]", "{"):
        assert unwrap_text(other) is None


def test_openai_strict_keeps_only_what_strict_mode_takes() -> None:
    schema = {"type": "object", "properties": {"r": {"type": "array", "items": {
        "type": "integer", "enum": [1, 2]}, "minItems": 2, "maxItems": 2, "uniqueItems": True},
        "s": {"type": "string", "maxLength": 5, "pattern": "^a"}},
        "required": ["r", "s"], "additionalProperties": False}
    assert for_openai_strict(schema) == {"type": "object", "properties": {
        "r": {"type": "array", "items": {"type": "integer", "enum": [1, 2]}, "minItems": 2,
              "maxItems": 2}, "s": {"type": "string", "pattern": "^a"}},
        "required": ["r", "s"], "additionalProperties": False}


def test_grammars_for_an_enum_and_a_one_word_pattern() -> None:
    assert gbnf({"type": "string", "enum": ["1", 'a"b']}) == 'root ::= "1" | "a\\"b"'
    unbounded = {k: v for k, v in WORD.items() if k != "maxLength"}
    assert gbnf(unbounded) == ("root ::= [A-Za-z0-9]+ ([\'-] [A-Za-z0-9]+)*")
    assert gbnf({"type": "string", "pattern": "^[bB][A-Za-z]*$"}) == \
        "root ::= [bB] [A-Za-z]*"
    assert gbnf({"type": "string", "pattern": "^(?=x)"}) is None  # beyond the subset
    assert gbnf({"type": "string"}) is None


def test_admits_judges_the_keywords_the_games_use() -> None:
    assert admits(LEGAL_VOTE, {"target": 2, "reason": "x"})
    assert not admits(LEGAL_VOTE, {"target": 3, "reason": "x"})  # not legal
    assert not admits(LEGAL_VOTE, {"target": True, "reason": "x"})  # a bool is no seat
    assert not admits(LEGAL_VOTE, {"target": 2})  # required
    assert not admits(LEGAL_VOTE, {"target": 2, "reason": "x", "extra": 1})
    assert not admits(LEGAL_VOTE, {"target": 2, "reason": "x" * 301})
    ranking = {"type": "array", "items": {"type": "integer", "enum": [1, 2, 3]},
               "minItems": 3, "maxItems": 3, "uniqueItems": True}
    assert admits(ranking, [3, 1, 2])
    assert not admits(ranking, [3, 1, 1]) and not admits(ranking, [3, 1])
    assert admits(WORD, "rock-n-roll") and not admits(WORD, "two words")
    assert not admits(WORD, "x" * 41)


def _gbnf_matches(grammar: str, text: str) -> bool:
    """A GBNF grammar of alternatives of sequences of `[class]`, `"literal"` and rule
    names (what `gbnf` writes for a bounded word) run on `text`, by brute force."""
    import re

    rules = {name: [alt.split() for alt in body.split(" | ")]
             for name, body in (line.split(" ::= ") for line in grammar.splitlines())}

    def ends(items: list[str], start: int) -> set[int]:
        at = {start}
        for item in items:
            nxt: set[int] = set()
            for i in at:
                if item == '""':
                    nxt.add(i)
                elif item.startswith("["):
                    if i < len(text) and re.fullmatch(item, text[i]):
                        nxt.add(i + 1)
                else:
                    nxt |= {e for alt in rules[item] for e in ends(alt, i)}
            at = nxt
        return at

    return len(text) in {e for alt in rules["root"] for e in ends(alt, 0)}


@given(st.text(alphabet="ab1'-", min_size=0, max_size=9), st.integers(1, 7))
@example("a-bc", 3).via("a separator near the end")
@example("a-b", 3).via("exactly the limit")
@example("ab-cde", 5).via("one over")
@example("a--b", 7).via("two separators")
@example("-ab", 7).via("a leading separator")
def test_a_bounded_word_grammar_is_the_pattern_cut_at_its_length(word: str,
                                                                 limit: int) -> None:
    import re

    grammar = gbnf({**WORD, "maxLength": limit})
    assert grammar is not None and grammar.count("\n") == limit  # one rule per length
    expected = re.fullmatch(WORD["pattern"], word) is not None and len(word) <= limit
    assert _gbnf_matches(grammar, word) == expected


@given(st.text(alphabet="ab1'-", min_size=1, max_size=12))
def test_the_word_grammar_and_the_pattern_agree(word: str) -> None:
    import re

    # The same language, read two ways: a GBNF-free check of the conversion.
    expr = gbnf({k: v for k, v in WORD.items() if k != "maxLength"})
    assert expr is not None
    as_regex = "^" + expr.removeprefix("root ::= ").replace(" ", "").replace("'", "'") + "$"
    assert (re.fullmatch(WORD["pattern"], word) is not None) == (
        re.fullmatch(as_regex.strip("^$").replace("(", "(?:"), word) is not None)
