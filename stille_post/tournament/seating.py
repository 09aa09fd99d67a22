"""Who sits where in each game of a pool tournament.

- `sampled`: each game draws its seats uniformly from the pool (the seed rules' way of
  choosing models), from an rng derived from the tournament seed and the game index.
- `balanced`: a greedy rotation. Each game starts from the least-played model and adds
  the models that have met the ones already chosen least often, so play counts stay
  within one of each other and pair counts stay close to even. The seat order inside a
  game is then shuffled so that no model always speaks first.

Both are pure functions of (pool, seats, N, seed): every shard of a tournament computes
the same schedule and keeps its own games.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from itertools import combinations


def seat_schedule(pool: Sequence[str], seats: int, games: int, *, seed: int,
                  mode: str) -> Iterator[tuple[str, ...]]:
    if mode == "sampled":
        for i in range(games):
            yield tuple(random.Random(f"{seed}:seating:{i}").sample(list(pool), seats))
        return
    if mode != "balanced":
        raise ValueError(f"unknown seating mode {mode!r}")
    rng = random.Random(f"{seed}:seating")
    plays = dict.fromkeys(pool, 0)
    met: dict[frozenset[str], int] = {frozenset(p): 0 for p in combinations(pool, 2)}
    for _ in range(games):
        chosen: list[str] = []
        rest = list(pool)
        rng.shuffle(rest)  # random tie-breaks, so equal counts do not favour pool order
        while len(chosen) < seats:
            best = min(rest, key=lambda m: (plays[m],
                                            sum(met[frozenset((m, c))] for c in chosen)))
            rest.remove(best)
            chosen.append(best)
        for a, b in combinations(chosen, 2):
            met[frozenset((a, b))] += 1
        for m in chosen:
            plays[m] += 1
        rng.shuffle(chosen)
        yield tuple(chosen)
