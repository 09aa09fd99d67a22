"""Constrained decoding: the pieces the adapters share to hold an answer to a decision's
legal moves (`ChatRequest.legal`, players/llm.py) by each API's own mechanism.

Two shapes of answer:
- a tool call (a vote, a guess): the tool's `parameters` become its legal schema, and
  the call is forced by name as before. OpenAI marks those tools `strict` (its decoder
  then holds the arguments to the schema); Anthropic, Gemini (mode ANY) and the
  OpenAI-compatible servers (llama.cpp turns a forced tool's schema into a grammar)
  decode a forced call under its schema;
- a text answer with a schema (a player number, one word, a model id): OpenAI
  `response_format: json_schema` (strict), Anthropic a forced `answer` tool, Gemini
  `response_json_schema` (or, when the request lists tools, a forced `answer` function:
  Gemini refuses a JSON answer beside function declarations), an OpenAI-compatible
  server `response_format` (or a GBNF `grammar` on the plain text, see openai_api.py).
  The JSON forms wrap the answer as `{"answer": ...}` (5-10 output tokens), and the
  adapter unwraps it back to text (`unwrap_text`, `answer_call_to_text`).
Free text (a public message) stays free.

Keep string bounds short: llama-cpp-python's server crashed building the grammar of a
schema with `maxLength: 1800` (480 and below worked); the games' bounds are 300 or less.

`admits(schema, value)` is the check of a reply against the schema it was decoded under
(games/kit/adherence.py counts the refusals of replies that met it apart: those are the
rules no schema states). It knows the keywords the games' schemas use, no more
(`KEYWORDS`; a test walks every game's schemas for others).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from stille_post.providers.base import ChatRequest, Completion, LegalMoves, Tool

MODES = ("schema", "legal")
ANSWER_KEY = "answer"  # the wrapper of a text answer in a JSON form
ANSWER_TOOL = "answer"  # the forced tool that carries a text answer (Anthropic, Gemini)
ANSWER_TOOL_TEXT = "Give your answer."

KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items",
                      "enum", "pattern", "minLength", "maxLength", "minimum", "maximum",
                      "minItems", "maxItems", "uniqueItems", "description"})
# What OpenAI's strict mode accepts of them (it refuses a schema with the others).
_OPENAI_STRICT = KEYWORDS - {"minLength", "maxLength", "uniqueItems"}


# What a structured seat's free-text turn (`tool_choice` "none", no schema on the text: a
# public message) lists: the tools with the moment's legal schemas ("legal": each of the
# seat's requests then starts with the same tools, which a prompt cache serves), the
# tools as the game defines them ("plain"), or none ("omitted": a model cannot write a
# call where a message is asked). Chosen per provider kind from the measurements in
# docs/adherence.md ("Free-text turns"); `free_text_tools` (a provider option)
# overrides it for a measurement.
FREE_TEXT_LAYOUTS = ("legal", "plain", "omitted")
FREE_TEXT_TOOLS: dict[str, str] = {"openai": "legal", "google": "legal",
                                   "anthropic": "plain", "openai-compatible": "omitted"}


def free_text_turn(request: ChatRequest) -> bool:
    """A structured request whose answer is free text (tools listed, none wanted)."""
    return (request.structured in MODES and request.tool_choice == "none"
            and (request.legal is None or request.legal.text is None))


def request_tools(request: ChatRequest, kind: str, layout: str | None = None) -> list[Tool]:
    """The tools `kind`'s adapter sends: the request's, with their legal schemas on a
    structured request, laid out on a free-text turn as `layout` (else the kind's) says."""
    if free_text_turn(request):
        layout = layout or FREE_TEXT_TOOLS.get(kind, "legal")
        if layout == "omitted":
            return []
        if layout == "plain":
            return list(request.tools)
    return tools_of(request)


def legal_of(request: ChatRequest) -> LegalMoves | None:
    """The legal moves to decode under, or None when the request is free."""
    legal = request.legal
    if request.structured not in MODES or legal is None or legal.empty:
        return None
    return legal


def tools_of(request: ChatRequest) -> list[Tool]:
    """The request's tools, each with its legal schema as its parameters."""
    legal = legal_of(request)
    if legal is None or not legal.tools:
        return list(request.tools)
    return [Tool(t.name, t.description, dict(legal.tools[t.name])) if t.name in legal.tools
            else t for t in request.tools]


def text_schema(request: ChatRequest) -> dict[str, Any] | None:
    """The schema of a legal text answer, when the request asks for text under one."""
    legal = legal_of(request)
    if legal is None or legal.text is None:
        return None
    if request.tool_choice not in (None, "none"):
        return None  # a tool is wanted: the text is not the answer
    return dict(legal.text)


def wrapped(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A text answer's schema as the one-key object the JSON forms ask for."""
    return {"type": "object", "properties": {ANSWER_KEY: dict(schema)},
            "required": [ANSWER_KEY], "additionalProperties": False}


def answer_tool(schema: Mapping[str, Any]) -> Tool:
    return Tool(ANSWER_TOOL, ANSWER_TOOL_TEXT, wrapped(schema))


def for_openai_strict(schema: Any) -> Any:
    """`schema` without the keywords OpenAI's strict mode refuses (the game still checks
    what they said)."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in KEYWORDS and key not in _OPENAI_STRICT:
            continue
        if key == "properties" and isinstance(value, dict):
            value = {name: for_openai_strict(p) for name, p in value.items()}
        elif key == "items":
            value = for_openai_strict(value)
        out[key] = value
    return out


def _answer_value(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def unwrap_text(text: str) -> str | None:
    """The answer inside `{"answer": ...}` (or a bare JSON string), or None when the
    text is not that shape (then it is kept as it came, for the game to judge)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict) and set(value) == {ANSWER_KEY}:
        return _answer_value(value[ANSWER_KEY])
    return _answer_value(value) if isinstance(value, str) else None


def unwrap_completion(completion: Completion) -> Completion:
    answer = unwrap_text(completion.text) if completion.text else None
    return completion if answer is None else replace(completion, text=answer)


def answer_call_to_text(completion: Completion) -> Completion:
    """A forced `answer` call read back as the text it carries."""
    calls = [c for c in completion.tool_calls if c.name == ANSWER_TOOL]
    if not calls or calls[0].malformed:
        return completion
    answer = _answer_value(calls[0].arguments.get(ANSWER_KEY))
    if answer is None:
        return completion
    rest = [c for c in completion.tool_calls if c.name != ANSWER_TOOL]
    return replace(completion, text=answer, tool_calls=rest)


# --- plain text under a grammar (llama.cpp's GBNF) -------------------------------------------

def gbnf(schema: Mapping[str, Any]) -> str | None:
    """A GBNF grammar for a string schema (an enum, or a pattern of the small regex
    subset the games write), or None when it cannot be put so."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return "root ::= " + " | ".join(_literal(str(v)) for v in enum)
    pattern = schema.get("pattern")
    if not isinstance(pattern, str):
        return None
    limit = schema.get("maxLength")
    joined = _JOINED_RUNS.fullmatch(pattern)
    if joined is not None and isinstance(limit, int) and limit >= 1 \
            and joined["run"] == joined["again"]:
        return _bounded_runs(joined["run"], joined["sep"], limit)
    try:
        return "root ::= " + _Regex(pattern).parse()
    except ValueError:
        return None


# Runs of one class joined by single separators (`^[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*$`,
# the Chameleon's word). A grammar of the pattern alone lets a small model write one run
# for ever (SmolLM2 wrote 150 letters where one word of at most 40 was asked): with a
# `maxLength`, the grammar itself counts, one rule per character left.
_JOINED_RUNS = re.compile(r"\^(?P<run>\[[^\]]+\])\+\(\?:(?P<sep>\[[^\]]+\])"
                          r"(?P<again>\[[^\]]+\])\+\)\*\$")


def _bounded_runs(run: str, sep: str, limit: int) -> str:
    """`run`+ (`sep` `run`+)* of at most `limit` characters: `left-k` is what may follow
    with k characters left."""
    rules = [f"root ::= {run} left-{limit - 1}", "left-0 ::= \"\""]
    if limit >= 2:
        rules.append(f"left-1 ::= {run} left-0 | \"\"")
    for k in range(2, limit):
        rules.append(f"left-{k} ::= {run} left-{k - 1} | {sep} {run} left-{k - 2} | \"\"")
    return "\n".join(rules)


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


class _Regex:
    """A regex of literals, character classes, (?:...) groups, | and the quantifiers
    * + ? {m,n}, anchored with ^ and $, as a GBNF expression."""

    def __init__(self, pattern: str) -> None:
        self.s = pattern.removeprefix("^").removesuffix("$")
        self.i = 0

    def parse(self) -> str:
        out = self._alternation()
        if self.i != len(self.s):
            raise ValueError("unsupported regex")
        return out

    def _alternation(self) -> str:
        parts = [self._sequence()]
        while self.i < len(self.s) and self.s[self.i] == "|":
            self.i += 1
            parts.append(self._sequence())
        return " | ".join(parts) if len(parts) > 1 else parts[0]

    def _sequence(self) -> str:
        items: list[str] = []
        while self.i < len(self.s) and self.s[self.i] not in "|)":
            atom = self._atom()
            items.append(atom + self._quantifier())
        return " ".join(items) if items else '""'

    def _atom(self) -> str:
        c = self.s[self.i]
        if c == "(":
            self.i += 3 if self.s.startswith("(?:", self.i) else 1
            inner = self._alternation()
            if self.i >= len(self.s) or self.s[self.i] != ")":
                raise ValueError("unbalanced group")
            self.i += 1
            return f"({inner})"
        if c == "[":
            end = self.s.find("]", self.i + 2)
            if end < 0:
                raise ValueError("unclosed class")
            body = self.s[self.i + 1:end]
            self.i = end + 1
            return f"[{body}]"
        if c == "\\":
            if self.i + 1 >= len(self.s) or self.s[self.i + 1].isalnum():
                raise ValueError("unsupported escape")
            self.i += 2
            return _literal(self.s[self.i - 1])
        if c in ".*+?{}^$":
            raise ValueError("unsupported regex")
        self.i += 1
        return _literal(c)

    def _quantifier(self) -> str:
        if self.i < len(self.s) and self.s[self.i] in "*+?":
            self.i += 1
            return self.s[self.i - 1]
        if self.i < len(self.s) and self.s[self.i] == "{":
            end = self.s.find("}", self.i)
            if end < 0 or not re.fullmatch(r"\d+(,\d*)?", self.s[self.i + 1:end]):
                raise ValueError("unsupported quantifier")
            found = self.s[self.i:end + 1]
            self.i = end + 1
            return found
        return ""


# --- checking a reply against its schema -------------------------------------------------------

_TYPES: dict[str, Any] = {"object": dict, "array": list, "string": str, "boolean": bool}


def admits(schema: Mapping[str, Any], value: Any) -> bool:
    """Whether `value` meets `schema` (the keywords in `KEYWORDS`)."""
    kind = schema.get("type")
    if kind == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            return False
    elif kind == "number":
        if not isinstance(value, int | float) or isinstance(value, bool):
            return False
    elif kind in _TYPES and not isinstance(value, _TYPES[kind]):
        return False
    if "enum" in schema and not any(type(value) is type(e) and value == e
                                    for e in schema["enum"]):
        return False
    if isinstance(value, str):
        if "pattern" in schema and re.search(schema["pattern"], value) is None:
            return False
        if len(value) < schema.get("minLength", 0) or len(value) > schema.get(
                "maxLength", len(value)):
            return False
    if isinstance(value, int | float) and not isinstance(value, bool) and (
            value < schema.get("minimum", value) or value > schema.get("maximum", value)):
        return False
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get(
                "maxItems", len(value)):
            return False
        if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True)
                                              for v in value}) != len(value):
            return False
        items = schema.get("items")
        if isinstance(items, Mapping) and not all(admits(items, v) for v in value):
            return False
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        if any(k not in value for k in schema.get("required", ())):
            return False
        if schema.get("additionalProperties") is False and any(k not in props for k in value):
            return False
        if not all(admits(props[k], v) for k, v in value.items() if k in props):
            return False
    return True


__all__ = [
    "ANSWER_KEY",
    "ANSWER_TOOL",
    "FREE_TEXT_LAYOUTS",
    "FREE_TEXT_TOOLS",
    "KEYWORDS",
    "MODES",
    "admits",
    "answer_call_to_text",
    "answer_tool",
    "for_openai_strict",
    "free_text_turn",
    "gbnf",
    "legal_of",
    "request_tools",
    "text_schema",
    "tools_of",
    "unwrap_completion",
    "unwrap_text",
    "wrapped",
]
