"""Who sits where in each game of a pool tournament.

- `sampled`: each game draws its seats uniformly from the pool (the seed rules' way of
  choosing models), from an rng derived from the tournament seed and the game index.
- `balanced`: a greedy rotation. Each game starts from the least-played model and adds
  the models that have met the ones already chosen least often, so play counts stay
  within one of each other and pair counts stay close to even. The seat order inside a
  game is then shuffled so that no model always speaks first.

Both are pure functions of (pool, seats, N, seed): every shard of a tournament computes
the same schedule and keeps its own games.

- `adaptive` (`adaptive_seats`): each game seats the player whose rating is least
  certain (largest σ) and others drawn by σ² times their match quality with it: close
  games of uncertain players, whose outcomes TrueSkill learns most from. It depends on
  the ratings so far, so it is not a schedule: benchmarks/bench_matchmaking.py
  simulates it (docs/campaigns.md).

Role balance: a game whose roles sit at fixed seats (a setter at seat 1, say) names those
seats, and `balanced` then gives each fixed seat, game after game, to the chosen model
that has held it least, so every model plays every role about as often.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations

from stille_post.tournament.ratings import BETA


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


def adaptive_seats(ratings: Mapping[str, tuple[float, float]], seats: int,
                   rng: random.Random, *, beta: float = BETA) -> tuple[str, ...]:
    """The next game's players from `ratings` (label -> (μ, σ)): the most uncertain
    player (largest σ; ties to `rng`), then `seats - 1` others drawn one at a time with
    weight σ² · exp(-(μ - μ_anchor)² / (2 (2β² + σ_anchor² + σ²))): how much there is to
    learn about a player, times how likely its game with the anchor is a close one
    (TrueSkill's two-player match quality, without its constant factor). Drawing, rather
    than taking the nearest, keeps every game linking distant parts of the ranking now
    and then: the nearest alone left clusters whose order against each other was never
    tested (docs/campaigns.md). The seat order is shuffled."""
    if seats > len(ratings):
        raise ValueError(f"{seats} seats but {len(ratings)} players")
    names = sorted(ratings)
    anchor = max(names, key=lambda m: (ratings[m][1], rng.random()))
    mu0, s0 = ratings[anchor]
    rest = [m for m in names if m != anchor]
    chosen = [anchor]
    while len(chosen) < seats:
        weights = [ratings[m][1] ** 2 * math.exp(
            -(ratings[m][0] - mu0) ** 2 / (2 * (2 * beta ** 2 + s0 ** 2 + ratings[m][1] ** 2)))
            for m in rest]
        pick = rng.choices(rest, weights=weights)[0] if sum(weights) > 0 else rest[0]
        rest.remove(pick)
        chosen.append(pick)
    rng.shuffle(chosen)
    return tuple(chosen)
