"""Shared helpers for The Chameleon's tests: many seeded games in one event loop, and
in-memory transcripts (the same header/result shape that session.play_game writes)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from stille_post.core.events import Event
from stille_post.core.outcome import GameOutcome
from stille_post.core.rng import make_rng
from stille_post.core.transcript import Transcript
from stille_post.games.chameleon import GAME
from stille_post.games.kit import PreparedGame
from stille_post.games.kit.setup import LLMFactory
from stille_post.games.kit.setup import prepare as kit_prepare

ROLE_KEYS = ("chameleon", "others")


def prepare(seed: int, options: Mapping[str, Any], players: Sequence[str] | None = None,
            llm_factory: LLMFactory | None = None) -> PreparedGame:
    """The tests name the roles' seats beside the options (`chameleon`, `others`), as
    `--role chameleon=... --role others=...` does on the command line."""
    opts = {k: v for k, v in options.items() if k not in ROLE_KEYS}
    roles = {k: str(v) for k, v in options.items() if k in ROLE_KEYS}
    return kit_prepare(GAME, seed=seed, rng=make_rng(seed), players=players, options=opts,
                       roles=roles, llm_factory=llm_factory)


def transcript(prepared: PreparedGame, events: list[Event],
               outcome: GameOutcome, seed: int = 0) -> Transcript:
    header = {"kind": "header", "game": GAME.name, "seed": seed,
              "config": prepared.config_json(), "seats": prepared.seats_json(),
              **prepared.header_extra()}
    result = {"kind": "result", "status": outcome.status, "reason": outcome.reason,
              "placements": {str(k): v for k, v in outcome.placements.items()},
              "usage": {str(s): u.to_json() for s, u in outcome.usage.items()},
              "summary": outcome.summary.to_json()}
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
