"""Custom outputs for Inspect's own `mockllm/model`: a model that plays by the rules as
well as a few lines can (`plausible`), one that only returns garbage (`garbage`), and
`mixed`, which alternates them. Each is a function of the request, as mockllm calls it:
(messages, tools, tool_choice, config) -> ModelOutput, with its usage set (left unset,
mockllm would count tokens with tiktoken's o200k_base file, fetched from the network).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage
from inspect_ai.tool import ToolCall, ToolFunction, ToolInfo

Policy = Callable[[list[ChatMessage], list[ToolInfo], Any, Any], ModelOutput]
USAGE = ModelUsage(input_tokens=100, output_tokens=5, total_tokens=105)
_PLAYERS = re.compile(r"Players? ((?:\d+(?:, | and )?)+)")


def _numbers(text: str) -> list[int]:
    groups = _PLAYERS.findall(text)
    return [int(n) for n in re.findall(r"\d+", groups[-1])] if groups else [2]


def _args(tool: ToolInfo, text: str) -> dict[str, Any]:
    players = _numbers(text)
    args: dict[str, Any] = {}
    for name, schema in tool.parameters.properties.items():
        if schema.type == "integer":
            args[name] = players[0]
        elif schema.type == "array":
            args[name] = players
        elif name == "model_id":
            args[name] = "gpt-5-mini"
        else:
            args[name] = "apple"
    return args


def _output(*, text: str = "", call: tuple[str, dict[str, Any]] | None = None,
            parse_error: str | None = None) -> ModelOutput:
    if call is not None:
        out = ModelOutput.for_tool_call("mockllm/model", call[0], call[1])
        if parse_error is not None:
            out.choices[0].message.tool_calls = [ToolCall(
                id="bad", function=call[0], arguments={}, parse_error=parse_error)]
    else:
        out = ModelOutput.from_content("mockllm/model", text)
    out.usage = USAGE
    return out


def plausible(messages: list[ChatMessage], tools: list[ToolInfo], tool_choice: Any,
              config: Any) -> ModelOutput:
    """Calls the tool it must call with arguments read off the request; otherwise a
    player number when one is asked for, else one word."""
    text = messages[-1].text if messages else ""
    forced = tool_choice.name if isinstance(tool_choice, ToolFunction) else \
        tools[0].name if tool_choice == "any" and tools else None
    if forced is not None:
        tool = next(t for t in tools if t.name == forced)
        return _output(call=(tool.name, _args(tool, text)))
    if "player number" in text:
        return _output(text=str(_numbers(text)[0]))
    return _output(text="apple")


_GARBAGE = ("\x00\x1b[2J}{", "", "{\"name\": \"no_such_tool\", \"arguments\": 7}",
            "word " * 400)


def garbage(messages: list[ChatMessage], tools: list[ToolInfo], tool_choice: Any,
            config: Any) -> ModelOutput:
    """Never an answer the rules accept: control bytes, nothing, a call to a tool nobody
    offered written as text, a wall of words, or a call whose arguments do not parse."""
    n = len(messages)
    if tools and n % 2:
        return _output(call=(tools[0].name, {}), parse_error="Expecting value: line 1")
    return _output(text=_GARBAGE[n % len(_GARBAGE)])


def mixed() -> Policy:
    """`plausible` and `garbage` in turn, call by call."""
    turn = itertools.cycle((plausible, garbage))

    def policy(messages: list[ChatMessage], tools: list[ToolInfo], tool_choice: Any,
               config: Any) -> ModelOutput:
        return next(turn)(messages, tools, tool_choice, config)

    return policy
