"""What every game folder provides, so the CLI, the tournament runner and the report can
treat games alike. A game is a `GameDefinition` (registered in games/__init__.py) that
prepares a `PreparedGame` from a seed, an rng, seat specs and options."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from stille_post.core.errors import ConfigError
from stille_post.core.events import EventSink
from stille_post.core.rng import Rng
from stille_post.players.base import Player, PromptBook
from stille_post.providers.base import Usage

# Builds an LLM seat from a spec such as "openai:gpt-5-mini" and the game's prompts.
# The CLI supplies one that knows about --online / --replay; without it LLM seats are refused.
LLMFactory = Callable[[str, PromptBook], Player]


@dataclass
class GameOutcome:
    status: str  # "completed" | "aborted"
    reason: str | None
    placements: dict[int, int]
    usage: dict[int, Usage] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)  # game-specific, JSON-safe


class PreparedGame(Protocol):
    def config_json(self) -> dict[str, Any]: ...
    def seats_json(self) -> dict[str, dict[str, Any]]: ...
    def header_extra(self) -> dict[str, Any]: ...
    async def play(self, sink: EventSink | None = None) -> GameOutcome: ...


class GameDefinition(Protocol):
    name: str
    bot_names: tuple[str, ...]

    def default_players(self, num_players: int) -> list[str]: ...

    def prepare(
        self,
        *,
        seed: int,
        rng: Rng,
        players: Sequence[str] | None,
        options: Mapping[str, Any],
        llm_factory: LLMFactory | None = None,
    ) -> PreparedGame: ...


ConfigT = TypeVar("ConfigT", bound=BaseModel)


def build_config(
    config_cls: type[ConfigT], options: Mapping[str, Any], players: Sequence[str] | None
) -> ConfigT:
    """A game's validated config from the options the user gave (None = not given).

    `--players` sets the seat count unless `--num-players` was given too, in which case the
    two must agree. A validation error becomes one line naming the offending option.
    """
    opts = {k: v for k, v in options.items() if v is not None}
    if players:
        n = opts.setdefault("num_players", len(players))
        if n != len(players):
            raise ConfigError(f"--players names {len(players)} seats but --num-players is {n}")
    try:
        return config_cls(**opts)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "config"
        raise ConfigError(f"{where}: {first['msg']}") from None


def resolve_default_bots(players: Sequence[str], defaults: Sequence[str]) -> list[str]:
    """A bare `bot` seat plays the game's default bot for that seat, so one can write
    `--players openai:gpt-5-mini,bot,bot,bot`."""
    return [d if p.strip() in ("bot", "bot:") else p for p, d in zip(players, defaults,
                                                                      strict=True)]
