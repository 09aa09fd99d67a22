"""A rule-based agent: no model, and it always votes the same way (for the lowest-numbered
other player it has heard of).

    stille-post play chameleon --players python:examples.agents.rule_based:Agent,bot,bot,bot

It reads only the request it is given, as a model would: the system prompt says which
player it is, the messages name the others, and the tools (or the last instruction) say
what kind of answer is wanted.
"""

from __future__ import annotations

import re
from typing import Any

from stille_post.players.agents import AgentContext
from stille_post.providers.base import ChatRequest, Completion, Tool, ToolCall, Usage

_PLAYER = re.compile(r"\bPlayer (\d+)\b")
_CARD = re.compile(r"The card: ([a-z' ,-]+)\.")


class Agent:
    def __init__(self, context: AgentContext) -> None:
        self.name = context.name

    def respond(self, request: ChatRequest) -> Completion:
        text = "\n".join([request.system, *(m.content for m in request.messages)])
        me = _me(request.system)
        others = sorted({int(n) for n in _PLAYER.findall(text)} - {me})
        target = others[0] if others else 1
        tool = _wanted_tool(request)
        if tool is not None:
            args = {name: _value(schema, target, others)
                    for name, schema in tool.parameters.get("properties", {}).items()}
            return _reply("", [ToolCall(tool.name, args, id="call_0")])
        last = request.messages[-1].content.lower() if request.messages else ""
        card = _CARD.search(text)
        if "card word" in last and card:  # the Chameleon's guess at the secret word
            return _reply(card.group(1).split(",")[0].strip())
        if "vote" in last or "which player" in last:
            return _reply(str(target))
        return _reply("pass")


def _me(system: str) -> int:
    found = re.search(r"You are Player (\d+)", system)
    return int(found.group(1)) if found else 0


def _wanted_tool(request: ChatRequest) -> Tool | None:
    """The tool the request insists on (a tool name, or `required` with one tool)."""
    choice = request.tool_choice
    if choice in (None, "auto", "none"):
        return None
    named = [t for t in request.tools if t.name == choice]
    if named:
        return named[0]
    return request.tools[0] if choice == "required" and request.tools else None


def _value(schema: dict[str, Any], target: int, others: list[int]) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        return target
    if kind == "array":
        return others
    return "pass"


def _reply(text: str, calls: list[ToolCall] | None = None) -> Completion:
    return Completion(text, calls or [], Usage(), "rule-based",
                      "tool_calls" if calls else "stop")
