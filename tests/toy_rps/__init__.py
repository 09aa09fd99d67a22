"""A toy game, rock-paper-scissors, that proves the kit is complete: it lives in this one
folder, touches no module outside it, and is registered from outside the package with
`STILLE_POST_GAMES=tests.toy_rps:GAME`. The suite plays it through `play`,
`tournament`, `report` and `view` (tests/kit/test_toy_game.py).

Rules: every round, all seats throw at the same moment; each throw scores one point per
other seat it beats. After `rounds` rounds the highest score wins (ties share a place).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from stille_post.core.errors import ParseError
from stille_post.core.events import Event
from stille_post.core.outcome import OutcomeSummary, Status
from stille_post.games.kit import (
    BotContext,
    Engine,
    EventKind,
    GameDefinition,
    GenerationConfig,
    PlayerRange,
    Preset,
    Role,
    SetupContext,
    Table,
)
from stille_post.games.kit.framing import GM, Conversation
from stille_post.players.base import Action, Decision, Player
from stille_post.providers.base import ChatRequest

NAME = "toy-rps"
THROWS = ("rock", "paper", "scissors")
BEATS = {"rock": "scissors", "paper": "rock", "scissors": "paper"}


class RpsConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    num_players: int = Field(2, ge=2, le=4, description="seats")
    rounds: int = Field(3, ge=1, le=50, description="rounds of throws")
    repair_attempts: int = Field(1, ge=0, le=3, description="re-asks on a bad throw")
    decision_timeout_s: float = Field(30.0, gt=0, description="answer deadline")


def parse_throw(action: Action) -> str:
    word = action.text.strip().strip(".!\"'").casefold()
    if word not in THROWS:
        raise ParseError("reply with one word: rock, paper or scissors")
    return word


def points(throws: dict[int, str]) -> dict[int, int]:
    return {s: sum(BEATS[t] == o for o in throws.values()) for s, t in throws.items()}


@dataclass(frozen=True)
class RpsView:
    seat: int
    events: Sequence[Event]


class RpsGame(Engine[RpsConfig]):
    name = NAME

    def __init__(self, config: RpsConfig, table: Table, specs: Sequence[Any]) -> None:
        super().__init__(config, table, specs)
        self.score = dict.fromkeys(table.seats, 0)

    async def run(self) -> None:
        for r in range(1, self.config.rounds + 1):
            self.table.log.round = r
            self.emit("round_start", text=f"Round {r}: throw now.")
            answers = await self.table.ask_all(
                self.seats, "throw", observe=lambda s, ev: RpsView(s, ev),
                validate=parse_throw, generation=GenerationConfig(max_output_tokens=5))
            throws = {s: a.value or "forfeit" for s, a in answers.items()}
            for seat, throw in throws.items():
                self.emit("throw", actor=seat, throw=throw)
            valid = {s: t for s, t in throws.items() if t in THROWS}
            for seat, p in points(valid).items():
                self.score[seat] += p
            self.emit("score", scores={str(s): v for s, v in self.score.items()},
                      text="Scores: " + ", ".join(f"Player {s} {v}"
                                                  for s, v in self.score.items()))

    def finish(self, status: Status, reason: str | None
               ) -> tuple[dict[int, int], OutcomeSummary]:
        best = max(self.score.values())
        placements = {s: 1 + sum(v > self.score[s] for v in self.score.values())
                      for s in self.seats}
        winners = tuple(s for s in self.seats if self.score[s] == best)
        self.emit("game_over", text=f"Game over: {status}.")
        return placements, OutcomeSummary(
            winners=winners, turns=self.table.log.round,
            notes={s: f"{v} points" for s, v in self.score.items()},
            details={"scores": {str(s): v for s, v in self.score.items()}})


class RpsPrompts:
    def render(self, decision: Decision[Any]) -> ChatRequest:
        view: RpsView = decision.observation
        convo = Conversation()
        for e in view.events:
            if e.type == "throw" and e.actor == view.seat:
                convo.assistant(str(e.data["throw"]))
            elif e.type == "throw":
                convo.user(f"[Player {e.actor}]: {e.data['throw']}")
            elif e.data.get("text"):
                convo.user(f"{GM}: {e.data['text']}")
        if decision.repair:
            convo.user(f"{GM}: {decision.repair}")
        return ChatRequest(system=f"You are Player {view.seat} in rock-paper-scissors. "
                           "Reply with one word: rock, paper or scissors.",
                           messages=convo.done())


class FixedBot:
    def __init__(self, throw: str | None, rng: random.Random) -> None:
        self.throw, self.rng, self.name = throw, rng, f"bot:{throw or 'random'}"

    async def decide(self, decision: Decision[Any]) -> Action:
        return Action(text=self.throw or self.rng.choice(THROWS))


def _bot(throw: str | None) -> Any:
    def make(ctx: BotContext) -> Player:
        return FixedBot(throw, ctx.rng)
    return make


def setup(ctx: SetupContext) -> RpsGame:
    specs = ctx.seat_specs()
    config: RpsConfig = ctx.config
    return RpsGame(config, ctx.table(ctx.players_for(specs)), specs)


GAME = GameDefinition(
    name=NAME,
    title="Rock-paper-scissors (toy)",
    description="All throw at once; a throw scores a point per seat it beats.",
    package=__name__,
    config=RpsConfig,
    roles=(Role("player", "every seat", "random"),),
    players=PlayerRange(2, 2, 4),
    bots={"rock": _bot("rock"), "paper": _bot("paper"), "random": _bot(None)},
    setup=setup,
    prompts=RpsPrompts(),
    events={"round_start": EventKind("heading"), "throw": EventKind("speech", "throw"),
            "score": EventKind("notice"), "repair_request": EventKind("private"),
            "game_over": EventKind("game_over")},
    default_seats=lambda n: ["rock", "random", "paper", "random"][:n],
    presets={"long": Preset("long", "ten rounds", {"rounds": 10})},
)
