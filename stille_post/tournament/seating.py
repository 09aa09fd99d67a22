"""Who sits where in each game of a pool tournament.

- `sampled`: each game draws its seats uniformly from the pool (the seed rules' way of
  choosing models), from an rng derived from the tournament seed and the game index.
- `balanced`: a greedy rotation. Each game starts from the least-played model and adds
  the models that have met the ones already chosen least often, so play counts stay
  within one of each other and pair counts stay close to even. The seat order inside a
  game is then shuffled so that no model always speaks first.

Both are pure functions of (pool, seats, N, seed): every shard of a tournament computes
the same schedule and keeps its own games.

Role balance: a game whose roles sit at fixed seats (a setter at seat 1, say) names those
seats, and `balanced` then gives each fixed seat, game after game, to the chosen model
that has held it least, so every model plays every role about as often.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import combinations


def seat_schedule(pool: Sequence[str], seats: int, games: int, *, seed: int,
                  mode: str, role_seats: Sequence[int] = ()) -> Iterator[tuple[str, ...]]:
    if mode == "sampled":
        for i in range(games):
            yield tuple(random.Random(f"{seed}:seating:{i}").sample(list(pool), seats))
        return
    if mode != "balanced":
        raise ValueError(f"unknown seating mode {mode!r}")
    rng = random.Random(f"{seed}:seating")
    plays = dict.fromkeys(pool, 0)
    met: dict[frozenset[str], int] = {frozenset(p): 0 for p in combinations(pool, 2)}
    held: Counter[tuple[int, str]] = Counter()
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
        for seat in role_seats:
            if 1 <= seat <= len(chosen):
                # Fewest turns at this seat first; the shuffle above breaks ties.
                i = min(range(seat - 1, len(chosen)), key=lambda j: held[(seat, chosen[j])])
                chosen[seat - 1], chosen[i] = chosen[i], chosen[seat - 1]
                held[(seat, chosen[seat - 1])] += 1
        yield tuple(chosen)
