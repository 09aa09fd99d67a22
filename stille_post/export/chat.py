"""A decision row read back as our neutral request: `ChatRequest` and the reply.

The exported columns are the request's own fields (system, messages with their tool
calls, tools, tool choice, the settings the prompt set, and a structured seat's mode
and legal-move schemas), so a row turns back into
the request the game's PromptBook rendered, which each provider adapter turns into its
API's body (tests/export/test_cassette_prompts.py sends them through the adapters and
finds each in the game's cassette). A seat's own settings (a provider default, a
models.toml alias) are not in a transcript and so not here; `LLMPlayer` lays them under
the phase's settings (`phase_settings`), as players/generation.py says.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from stille_post.players.base import Action
from stille_post.players.generation import GenerationConfig
from stille_post.providers.base import ChatRequest, LegalMoves, Message, Tool, ToolCall


def _json(text: Any) -> Any:
    return json.loads(text) if isinstance(text, str) else None


def _call(c: Mapping[str, Any]) -> ToolCall:
    return ToolCall(c["name"], _json(c["arguments"]) or {}, id=c.get("id"),
                    malformed=c.get("malformed"),
                    provider_data=_json(c.get("provider_data")) or {})


def _message(m: Mapping[str, Any]) -> Message:
    return Message(m["role"], m["content"], [_call(c) for c in m.get("tool_calls") or []],
                   tool_call_id=m.get("tool_call_id"),
                   provider_data=_json(m.get("provider_data")) or {})


def request_of(row: Mapping[str, Any], ask: int = 0) -> ChatRequest | None:
    """The request of a decision row's `ask`-th ask (0: the first; then its re-asks), or
    None when the row has no prompt (`prompt_source` null)."""
    if ask == 0:
        system, messages = row.get("system"), row.get("messages")
    else:
        reask = (row.get("reasks") or [])[ask - 1]
        system, messages = reask.get("system"), reask.get("messages")
    if system is None or messages is None:
        return None
    tools: Sequence[Mapping[str, Any]] = row.get("tools") or []
    settings: Mapping[str, Any] = row.get("settings") or {}
    return ChatRequest(
        system=system,
        messages=[_message(m) for m in messages],
        tools=[Tool(t["name"], t["description"], _json(t["parameters"]) or {})
               for t in tools],
        max_output_tokens=settings.get("max_output_tokens"),
        temperature=settings.get("temperature"),
        tool_choice=row.get("tool_choice"),
        reasoning_effort=settings.get("reasoning_effort"),
        extra=_json(settings.get("extra")) or {},
        structured=row.get("structured"),
        legal=_legal(row.get("legal")),
    )


def _legal(text: Any) -> LegalMoves | None:
    """A structured seat's legal moves, read back from the `legal` column."""
    data = _json(text)
    if not isinstance(data, dict):
        return None
    return LegalMoves(tools=data.get("tools") or {}, text=data.get("text"),
                      free=bool(data.get("free")))


def phase_of(row: Mapping[str, Any]) -> GenerationConfig | None:
    """The decision's phase settings (None: the game set none)."""
    p = row.get("phase_settings")
    if not p:
        return None
    return GenerationConfig(p.get("max_output_tokens"), p.get("temperature"),
                            p.get("reasoning_effort"), _json(p.get("extra")) or {})


def reply_of(row: Mapping[str, Any], ask: int = 0) -> Action | None:
    """The reply to the `ask`-th ask as the game received it (None: no reply came)."""
    reply = row.get("reply") if ask == 0 else (row.get("reasks") or [])[ask - 1].get("reply")
    if reply is None:
        return None
    return Action(text=reply["text"], tool_calls=tuple(_call(c) for c in reply["tool_calls"]),
                  model=reply.get("model"),
                  provider_data=_json(reply.get("provider_data")) or {})
