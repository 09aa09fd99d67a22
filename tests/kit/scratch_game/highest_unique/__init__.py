"""Highest Unique Number: a scratch built-in game, written against the kit only.

Every round all seats pick a number from the shipped list at the same moment. The
highest number that exactly one seat picked scores that seat a point; when no pick is
unique, the rng draws the point among the seats that picked the highest number. After
`rounds` rounds the highest score wins (ties share a place).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from stille_post.games.kit import (
    BotContext,
    EventKind,
    GameConfig,
    GameDefinition,
    PlayerRange,
    Role,
    SetupContext,
)
from stille_post.games.kit.config import repair_field, seats_field, timeout_field
from stille_post.players.base import Action, Decision, Player

from .game import NAME, HighestUniqueGame, Prompts


class HighestUniqueConfig(GameConfig):
    num_players: int = seats_field(3, ge=2, le=6)
    rounds: int = Field(3, ge=1, le=20, description="rounds of picks")
    repair_attempts: int = repair_field("re-asks on a bad pick", le=3)
    decision_timeout_s: float = timeout_field(default=30.0)


class PickBot:
    def __init__(self, name: str, ctx: BotContext) -> None:
        self.name, self.rng, self.choices = f"bot:{name}", ctx.rng, ctx.setup

    async def decide(self, decision: Decision[Any]) -> Action:
        pick = max(self.choices) if self.name == "bot:greedy" else self.rng.choice(self.choices)
        return Action(text=str(pick))


def _bot(name: str) -> Any:
    def make(ctx: BotContext) -> Player:
        return PickBot(name, ctx)
    return make


def setup(ctx: SetupContext) -> HighestUniqueGame:
    choices = [int(line) for line in ctx.load("data/numbers.txt").text.split()]
    specs = ctx.seat_specs()
    config: HighestUniqueConfig = ctx.config
    return HighestUniqueGame(config, ctx.table(ctx.players_for(specs, choices)), specs,
                             choices=choices)


GAME = GameDefinition(
    name=NAME,
    title="Highest Unique Number",
    description="All pick a number at once; the highest unique pick scores.",
    package=__name__,
    config=HighestUniqueConfig,
    roles=(Role("player", "every seat", "random"),),
    players=PlayerRange(2, 3, 6),
    bots={"greedy": _bot("greedy"), "random": _bot("random")},
    setup=setup,
    prompts=Prompts(),
    events={"round_start": EventKind("heading"), "pick": EventKind("speech", "pick"),
            "round_result": EventKind("notice"), "repair_request": EventKind("private"),
            "game_over": EventKind("game_over")},
)
