"""The rules of Highest Unique Number (see __init__.py) and its prompts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stille_post.core.errors import ParseError
from stille_post.core.events import Event
from stille_post.core.outcome import OutcomeSummary, Status
from stille_post.games.kit import Engine, Table
from stille_post.games.kit.framing import GM, Conversation
from stille_post.players.base import Action, Decision
from stille_post.providers.base import ChatRequest

NAME = "highest-unique"


@dataclass(frozen=True)
class View:
    seat: int
    choices: Sequence[int]
    events: Sequence[Event]


def round_winner(picks: dict[int, int], rng: Any) -> int:
    """The seat with the highest unique pick; with none unique, a draw among the seats
    that picked the highest number."""
    counts = Counter(picks.values())
    unique = [n for n, c in counts.items() if c == 1]
    if unique:
        best = max(unique)
        return next(s for s, n in picks.items() if n == best)
    top = max(picks.values())
    return int(rng.choice(sorted(s for s, n in picks.items() if n == top)))


class HighestUniqueGame(Engine[Any]):
    name = NAME

    def __init__(self, config: Any, table: Table, specs: Sequence[Any], *,
                 choices: Sequence[int]) -> None:
        super().__init__(config, table, specs)
        self.choices = list(choices)
        self.score = dict.fromkeys(table.seats, 0)

    def parse(self, action: Action) -> int:
        text = action.text.strip().strip(".!\"'")
        if not text.isdigit() or int(text) not in self.choices:
            raise ParseError(f"reply with one of the numbers {self.choices}")
        return int(text)

    async def run(self) -> None:
        for r in range(1, self.config.rounds + 1):
            self.table.log.round = r
            self.emit("round_start", text=f"Round {r}: pick a number.")
            answers = await self.table.ask_all(
                self.seats, "pick", observe=lambda s, ev: View(s, self.choices, ev),
                validate=self.parse)
            picks = {s: a.value for s, a in answers.items() if a.value is not None}
            for seat, pick in picks.items():
                self.emit("pick", actor=seat, pick=str(pick))
            if picks:
                winner = round_winner(picks, self.table.rng)
                self.score[winner] += 1
                self.emit("round_result", winner=winner,
                          text=f"Player {winner} scores this round.")

    def finish(self, status: Status, reason: str | None
               ) -> tuple[dict[int, int], OutcomeSummary]:
        best = max(self.score.values())
        placements = {s: 1 + sum(v > self.score[s] for v in self.score.values())
                      for s in self.seats}
        self.emit("game_over", text=f"Game over: {status}.")
        return placements, OutcomeSummary(
            winners=tuple(s for s in self.seats if self.score[s] == best),
            turns=self.table.log.round,
            details={"scores": {str(s): v for s, v in self.score.items()}})


class Prompts:
    def render(self, decision: Decision[Any]) -> ChatRequest:
        view: View = decision.observation
        convo = Conversation()
        for e in view.events:
            if e.type == "pick" and e.actor == view.seat:
                convo.assistant(str(e.data["pick"]))
            elif e.type == "pick":
                convo.user(f"[Player {e.actor}]: {e.data['pick']}")
            elif e.data.get("text"):
                convo.user(f"{GM}: {e.data['text']}")
        if decision.repair:
            convo.user(f"{GM}: {decision.repair}")
        return ChatRequest(system=f"You are Player {view.seat} in Highest Unique Number. "
                           f"Reply with one number of {list(view.choices)}.",
                           messages=convo.done())
