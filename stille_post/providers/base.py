"""The Provider contract (DESIGN.md): what every model adapter takes and returns.

Everything above this layer speaks only these types; one module per API translates them.
Opaque provider data (Gemini's thought signatures, Anthropic's thinking blocks) rides on
`provider_data` and is sent back untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from stille_post.core.errors import ProviderError

Role = Literal["user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]
    id: str | None = None
    # Why the call could not be read (arguments that are not a JSON object, no name).
    # A malformed call is a parse error for the engine: it earns a corrective re-ask.
    malformed: str | None = None
    provider_data: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Message:
    role: Role
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    provider_data: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments object


@dataclass(frozen=True)
class ChatRequest:
    system: str
    messages: list[Message]
    tools: list[Tool] = field(default_factory=list)
    max_output_tokens: int | None = None
    temperature: float | None = None
    tool_choice: str | None = None  # "auto" | "required" | "none" | a tool name
    # Seat or phase settings (models.toml, games/kit/generation.py). Unset, an adapter
    # sends nothing for them, so requests recorded before they existed replay unchanged.
    reasoning_effort: str | None = None  # "low" | "medium" | "high" ..., where the API has it
    extra: dict[str, Any] = field(default_factory=dict)  # extra body parameters, sent as is


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        # Usage is immutable, so a zero side can hand back the other (a seat's first
        # answer, a bot's empty usage): no new object on the hot path.
        if not (other.input_tokens or other.output_tokens or other.cached_input_tokens):
            return self
        if not (self.input_tokens or self.output_tokens or self.cached_input_tokens):
            return other
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
        )

    def to_json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
        }

    @classmethod
    def from_json(cls, row: Mapping[str, Any] | None) -> Usage:
        """A transcript's usage row (extra keys such as `cost_usd` are ignored)."""
        d = row or {}
        return cls(int(d.get("input_tokens", 0)), int(d.get("output_tokens", 0)),
                   int(d.get("cached_input_tokens", 0)))


@dataclass(frozen=True)
class Completion:
    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    model: str
    finish_reason: str | None = None
    provider_data: dict[str, Any] = field(default_factory=dict, compare=False)


class MalformedReply(ProviderError):
    """A 200 answer that cannot be read: a body that is not JSON or not the API's shape,
    or content that is not text. It is the *model's* bad output, not an outage: the
    player turns it into a parse error, which earns the seat the usual re-ask."""


class ReplayMiss(ProviderError):
    """Replaying, and the request is not in the cassette: nothing real can happen in this
    game any more. The player aborts the game with this message (it names the cassette
    and the request)."""


@runtime_checkable
class Provider(Protocol):
    async def complete(self, request: ChatRequest) -> Completion: ...


def request_text(request: ChatRequest) -> str:
    """Every piece of text a request carries: used by the isolation tests and key scans."""
    parts = [request.system]
    for m in request.messages:
        parts.append(m.content)
        parts.extend(f"{c.name} {c.arguments}" for c in m.tool_calls)
    return "\n".join(parts)
