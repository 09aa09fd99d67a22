"""Shared helpers for the Connections tests: play games through the kit's `prepare`."""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stille_post.core.events import Event
from stille_post.core.outcome import GameOutcome
from stille_post.games.connections import GAME
from stille_post.games.kit import PreparedGame, prepare


def prepared(players: Sequence[str], seed: int = 0, **options: Any) -> PreparedGame:
    return prepare(GAME, seed=seed, rng=random.Random(seed), players=list(players),
                   options=options)


def play(players: Sequence[str], seed: int = 0, **options: Any
         ) -> tuple[list[Event], GameOutcome, PreparedGame]:
    game = prepared(players, seed, **options)
    events: list[Event] = []
    outcome = asyncio.run(game.play(events.append))
    return events, outcome, game


def oracle_rate(p: float, n: int, games: int, *, max_attempts: int = 60, seed0: int = 0,
                word: str = "xylophone", setter_p: float | None = None,
                dictionary: Path | None = None) -> tuple[int, int]:
    """(connections, attempts) over `games` games of oracle seats, n guessers."""
    sp = p if setter_p is None else setter_p
    seats = [f"oracle:p={sp}"] + [f"oracle:p={p}"] * n
    conn = att = 0

    async def run_all() -> None:
        nonlocal conn, att
        for i in range(games):
            opts: dict[str, Any] = {"word": word, "max_attempts": max_attempts}
            if dictionary is not None:
                opts["dictionary"] = dictionary
            g = prepared(seats, seed0 + i, **opts)
            out = await g.play(None)
            d = out.summary.details
            conn += int(d["connections"])
            att += int(d["attempts"])

    asyncio.run(run_all())
    return conn, att


def closed_form(p: float, n: int) -> float:
    return (1 - p) * (1 - (1 - p) ** (n - 1))


def p_star(n: int) -> float:
    return 1 - n ** (-1 / (n - 1))


def wilson(k: int, n: int, z: float) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    phat = k / n
    denom = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return centre - half, centre + half


def branching_dictionary(path: Path, *, secret_len: int = 40, branch: int = 200,
                         seed: int = 0) -> str:
    """A synthetic word list in which every prefix of the secret word has at least
    `branch` other completions, so an oracle clue-giver never runs out of words and
    almost never picks the secret word: each attempt is the paper's idealised attempt.
    Returns the secret word."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    secret = "".join(rng.choice(letters) for _ in range(secret_len))
    words = {secret}
    for k in range(1, secret_len):
        while len(words) < 1 + k * branch:
            words.add(secret[:k] + "".join(rng.choice(letters) for _ in range(4)))
    path.write_text("\n".join(sorted(words)) + "\n", encoding="utf-8")
    return secret
