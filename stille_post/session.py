"""Play one game end to end: seed -> rng -> players -> engine -> transcript.

The CLI's `play` and the tournament runner both go through `play_game`, so a game played
either way writes the same transcript.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stille_post.core.events import Event, EventSink
from stille_post.core.outcome import GameOutcome, OutcomeSummary
from stille_post.core.rng import make_rng
from stille_post.core.transcript import TranscriptWriter
from stille_post.games import get_game
from stille_post.games.kit.setup import LLMFactory, PreparedGame, prepare
from stille_post.providers.base import Usage
from stille_post.providers.pricing import seat_cost_usd


@dataclass
class GameRun:
    game: str
    seed: int
    transcript: Path
    seats: dict[str, dict[str, Any]]
    outcome: GameOutcome
    usage: dict[int, dict[str, Any]]  # per-seat rows, exactly as the transcript records them

    def cost_usd(self) -> float:
        return round(sum(float(r.get("cost_usd", 0.0)) for r in self.usage.values()), 6)

    def tokens(self) -> int:
        return sum(u.input_tokens + u.output_tokens for u in self.outcome.usage.values())

    def summary(self) -> dict[str, Any]:
        """The `play --json` summary (stable keys; see README). Games with LLM seats add
        `tokens` and `cost_usd`; `details` is the game's own."""
        s = self.outcome.summary
        tokens = self.tokens()
        spent = {"tokens": tokens, "cost_usd": self.cost_usd()} if tokens else {}
        return {
            "game": self.game,
            "status": self.outcome.status,
            "seed": self.seed,
            "seats": {k: v.get("model", v.get("player")) for k, v in self.seats.items()},
            "winners": list(s.winners),
            "eliminated": list(s.eliminated),
            "placements": {str(k): v for k, v in self.outcome.placements.items()},
            "valid": s.valid,
            "turns": s.turns,
            **spent,
            **({"reason": self.outcome.reason} if self.outcome.reason else {}),
            "details": dict(s.details),
        }


async def play_game(
    game_name: str,
    *,
    seed: int,
    out: Path,
    players: Sequence[str] | None = None,
    options: Mapping[str, Any] | None = None,
    roles: Mapping[str, str] | None = None,
    preset: str | None = None,
    llm_factory: LLMFactory | None = None,
    watch: EventSink | None = None,
    stream: bool = False,
    stopped: Callable[[], str | None] | None = None,
) -> GameRun:
    """`stream`: write every line as it happens to a new file (`out` must not exist), as
    `play` does for a game nobody will replay. `stopped`: why the caller cancelled the
    game (a signal), or None; a game cancelled with a reason ends as aborted with it
    (closing events, placements, the usage so far) and returns, while any other
    cancellation is passed on after the transcript is closed as aborted."""
    game = get_game(game_name)
    prepared = prepare(game, seed=seed, rng=make_rng(seed), players=players,
                       options=options or {}, roles=roles, preset=preset,
                       llm_factory=llm_factory)
    return await play_prepared(prepared, seed=seed, out=out, watch=watch, stream=stream,
                               stopped=stopped)


async def play_prepared(prepared: PreparedGame, *, seed: int, out: Path,
                        watch: EventSink | None = None, stream: bool = False,
                        stopped: Callable[[], str | None] | None = None) -> GameRun:
    """Play a prepared game and write its transcript: the part of `play_game` after set-up,
    shared with the environments (stille_post/envs/), which seat players of their own.
    `stream` and `stopped` as for `play_game`."""
    game = prepared.definition
    seats = prepared.seats_json()
    with TranscriptWriter(out, buffered=not stream, exclusive=stream) as writer:
        writer.header(game=game.name, config=prepared.config_json(), seed=seed, seats=seats,
                      extra=prepared.header_extra())

        def sink(event: Event) -> None:
            writer.event(event)
            if watch is not None:
                watch(event)

        try:
            outcome: GameOutcome = await prepared.play(sink)
        except asyncio.CancelledError:
            reason = stopped() if stopped is not None else None
            if reason is None:
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # handled here: the game ends, the caller goes on
            outcome = _cut(prepared.engine, reason)
        usage = usage_json(seats, outcome.usage)
        writer.result(
            status=outcome.status,
            reason=outcome.reason,
            placements=outcome.placements,
            usage=usage,
            summary=outcome.summary.to_json(),
            adherence=outcome.adherence,
        )
    return GameRun(game.name, seed, out, seats, outcome, usage)


def _cut(engine: Any, reason: str) -> GameOutcome:
    """The outcome of a game stopped from outside (a signal): `aborted` with `reason`, the
    game's own closing events and placements (an engine's `finish` runs after a stop at
    any point of its rules: kit/engine.py), and what the seats spent until then."""
    try:
        placements, summary = engine.finish("aborted", reason)
    except Exception:  # the record matters more than the reveal: end it bare
        placements, summary = {}, OutcomeSummary()
    table = engine.table
    return GameOutcome("aborted", reason, placements, summary, dict(table.usage),
                       table.adherence.to_json(table.log.events))


def usage_json(seats: Mapping[str, Mapping[str, Any]], usage: Mapping[int, Usage]
               ) -> dict[int, dict[str, Any]]:
    """Per-seat tokens, and dollars for seats that called a priced model.

    A seat is priced by the model its spec names ("openai:gpt-5-mini"). Bots spend
    nothing and get no `cost_usd`.
    """
    out: dict[int, dict[str, Any]] = {}
    for seat, u in usage.items():
        row: dict[str, Any] = u.to_json()
        cost = seat_cost_usd(str(seats.get(str(seat), {}).get("player", "")), u)
        if cost is not None:
            row["cost_usd"] = round(cost, 6)
        out[seat] = row
    return out
