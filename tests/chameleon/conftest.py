"""Shared helpers for The Chameleon's tests: many seeded games in one event loop, and
in-memory transcripts (the same header/result shape that session.play_game writes)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from stille_post.core.events import Event
from stille_post.core.rng import make_rng
from stille_post.core.transcript import Transcript
from stille_post.games.base import GameOutcome, LLMFactory
from stille_post.games.chameleon import GAME, PreparedChameleon


def prepare(seed: int, options: Mapping[str, Any], players: Sequence[str] | None = None,
            llm_factory: LLMFactory | None = None) -> PreparedChameleon:
    return GAME.prepare(seed=seed, rng=make_rng(seed), players=players, options=options,
                        llm_factory=llm_factory)


def transcript(prepared: PreparedChameleon, events: list[Event],
               outcome: GameOutcome, seed: int = 0) -> Transcript:
    header = {"kind": "header", "game": GAME.name, "seed": seed,
              "config": prepared.config_json(), "seats": prepared.seats_json(),
              **prepared.header_extra()}
    result = {"kind": "result", "status": outcome.status, "reason": outcome.reason,
              "placements": {str(k): v for k, v in outcome.placements.items()},
              "usage": {str(s): u.to_json() for s, u in outcome.usage.items()},
              "summary": outcome.summary}
    return Transcript(header=header, events=events, result=result)


def play_many(seeds: Sequence[int], options: Mapping[str, Any],
              players: Sequence[str] | None = None) -> list[Transcript]:
    """Plays one game per seed, sequentially in one event loop (cheap for bots)."""

    async def run() -> list[Transcript]:
        out = []
        for seed in seeds:
            prepared = prepare(seed, options, players)
            events: list[Event] = []
            outcome = await prepared.play(events.append)
            out.append(transcript(prepared, events, outcome, seed))
        return out

    return asyncio.run(run())
