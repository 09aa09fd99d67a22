"""What an engine asks (`Decision`) and what a player answers (`Action`).

An engine hands a player only its own observation. Whether the answer comes from an LLM,
a heuristic bot or a script is invisible to the engine: all of them implement `decide`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from stille_post.providers.base import ChatRequest, LegalMoves, Tool, ToolCall, Usage

if TYPE_CHECKING:
    from stille_post.players.generation import GenerationConfig

Obs = TypeVar("Obs")


@dataclass(frozen=True)
class Decision(Generic[Obs]):
    game: str
    kind: str  # the game's decision kinds, e.g. "intro" | "turn" | "identity_guess"
    seat: int
    observation: Obs
    tools: tuple[Tool, ...] = ()
    # On a corrective re-ask: why the previous answer could not be used.
    repair: str | None = None
    # The phase's generation settings (a short answer, say); they win over the seat's.
    generation: GenerationConfig | None = None
    # The engine's own validation of an answer (raises a ResponseError), so that a person
    # at the seat can be told at once and asked again (players/forms.py). Models, bots
    # and agents never see it; it must not change the game's state.
    check: Callable[[Action], object] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Action:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    model: str | None = None
    provider_data: dict[str, Any] = field(default_factory=dict, compare=False)
    # The legal moves the reply was decoded under (a structured seat), for the kit's
    # count of refused replies that met them (games/kit/adherence.py); None: free.
    legal: LegalMoves | None = field(default=None, compare=False)


class Player(Protocol):
    name: str  # how the seat was specified: "bot:random", "openai:gpt-5-mini", ...

    async def decide(self, decision: Decision[Any]) -> Action: ...


def is_instant(player: object) -> bool:
    """True for a player whose `decide` never suspends (the games' in-process bots set
    `instant = True`). A deadline can only fire at a suspension point, so the table arms
    none for such a player, and a bot tournament arms no timer per decision."""
    return getattr(player, "instant", False) is True


class PromptBook(Protocol):
    """A game's prompts: turns a decision into the request an LLM sees.

    A game may also say what the rules allow at that moment, for constrained decoding:
    `legal_moves(decision, narrow=False) -> LegalMoves | None` (see `legal_moves`)."""

    def render(self, decision: Decision[Any]) -> ChatRequest: ...


def legal_moves(prompts: PromptBook, decision: Decision[Any], *,
                narrow: bool = False) -> LegalMoves | None:
    """What the rules allow as the answer to `decision`, as the game's prompt book states
    it (None: a game that states nothing, or a free answer). `narrow`: also narrow free
    vocabularies to the legal ones where the rules define them (structured = "legal")."""
    method = getattr(prompts, "legal_moves", None)
    if method is None:
        return None
    found: LegalMoves | None = method(decision, narrow=narrow)
    return found
