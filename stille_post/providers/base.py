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
from stille_post.core.usage import Usage as Usage  # lives in core: outcomes count it too

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
class LegalMoves:
    """What the rules allow as the answer to one request, as JSON Schemas, for a
    constrained decoder (`ChatRequest.structured`). A hint, never the judge: the game
    validates every answer itself, whatever the decoder did.

    `tools`: a tool's name -> the schema of its legal arguments now (an enum of the
    players one may vote for, a pattern on a revealed prefix); it replaces the tool's
    `parameters` in a structured request. `text`: the schema of a legal text answer (a
    string schema: an enum of player numbers, a one-word pattern), or None when the text
    is free (a public message).

    `free`: the answer itself is free (a message); the tools' schemas are the moment's,
    carried so that each of a seat's requests lists the same tools (a changed tool list
    is a changed prompt prefix, which a provider's cache no longer serves)."""

    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    text: Mapping[str, Any] | None = None
    free: bool = False

    @property
    def empty(self) -> bool:
        return not self.tools and self.text is None


@dataclass(frozen=True)
class ChatRequest:
    system: str
    messages: list[Message]
    tools: list[Tool] = field(default_factory=list)
    max_output_tokens: int | None = None
    temperature: float | None = None
    tool_choice: str | None = None  # "auto" | "required" | "none" | a tool name
    # Seat or phase settings (models.toml, players/generation.py). Unset, an adapter
    # sends nothing for them, so requests recorded before they existed replay unchanged.
    reasoning_effort: str | None = None  # "low" | "medium" | "high" ..., where the API has it
    extra: dict[str, Any] = field(default_factory=dict)  # extra body parameters, sent as is
    # Constrained decoding (players/llm.py): "schema" or "legal" asks the adapter to hold
    # the answer to `legal` by the API's own mechanism (providers/structured.py). None:
    # nothing of it is sent, so a free request is byte for byte what it always was.
    structured: str | None = None
    legal: LegalMoves | None = None


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
    player turns it into a parse error, which earns the seat the usual re-ask.

    The server may bill such a call: an adapter sets `usage` to its request's input,
    counted by an estimate (`_common.counted_unreadable`), which the seat's usage adds."""

    usage: Usage | None = None


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
