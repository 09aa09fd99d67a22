"""Play one game end to end: seed -> rng -> players -> engine -> transcript.

The CLI's `play` and the tournament runner both go through `play_game`, so a game played
either way writes the same transcript.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stille_post.core.events import Event, EventSink
from stille_post.core.rng import make_rng
from stille_post.core.transcript import TranscriptWriter
from stille_post.games import get_game
from stille_post.games.base import GameOutcome, LLMFactory


@dataclass
class GameRun:
    game: str
    seed: int
    transcript: Path
    seats: dict[str, dict[str, Any]]
    outcome: GameOutcome

    def summary(self) -> dict[str, Any]:
        """The `play --json` summary (stable keys; see README)."""
        s = self.outcome.summary
        return {
            "status": self.outcome.status,
            "seed": self.seed,
            "seats": {k: v.get("model", v.get("player")) for k, v in self.seats.items()},
            "winners": s.get("winners", []),
            "eliminated": s.get("eliminated", []),
            "placements": {str(k): v for k, v in self.outcome.placements.items()},
            "turns": s.get("turns", 0),
            **({"outcome": s["outcome"]} if "outcome" in s else {}),
            **({"reason": self.outcome.reason} if self.outcome.reason else {}),
        }


async def play_game(
    game_name: str,
    *,
    seed: int,
    out: Path,
    players: Sequence[str] | None = None,
    options: Mapping[str, Any] | None = None,
    llm_factory: LLMFactory | None = None,
    watch: EventSink | None = None,
) -> GameRun:
    game = get_game(game_name)
    rng = make_rng(seed)
    prepared = game.prepare(seed=seed, rng=rng, players=players, options=options or {},
                            llm_factory=llm_factory)
    seats = prepared.seats_json()
    with TranscriptWriter(out) as writer:
        writer.header(game=game.name, config=prepared.config_json(), seed=seed, seats=seats,
                      extra=prepared.header_extra())

        def sink(event: Event) -> None:
            writer.event(event)
            if watch is not None:
                watch(event)

        outcome = await prepared.play(sink)
        writer.result(
            status=outcome.status,
            reason=outcome.reason,
            placements=outcome.placements,
            usage={s: u.to_json() for s, u in outcome.usage.items()},
            summary=outcome.summary,
        )
    return GameRun(game.name, seed, out, seats, outcome)
