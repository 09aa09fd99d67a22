"""Ratings from placements: TrueSkill passes (seed 001's method), partial points, win
rates with bootstrap confidence intervals. Pure functions of the games and a seed.

TrueSkill comes from the `trueskill` package with seed 001's settings. Each game is one
`rate` call with one-player teams ranked by placement (equal placements are ties). The
result depends on the order games are rated in, so P passes each rate all games in a
freshly shuffled order from fresh ratings, and the leaderboard shows the mean μ and σ.

Competitors are player labels ("bot:detective", "openai:gpt-5"). When one label holds
several seats of a game (self-play), each seat is its own team, starting from the
label's rating, and the label's new rating is the mean of its seats' new μ and σ.
"""

from __future__ import annotations

import os
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import trueskill

MU, SIGMA, BETA, TAU, DRAW_PROBABILITY = 5.0, 8.3333, 4.1667, 0.0, 0.0
DEFAULT_PASSES = 100
DEFAULT_BOOTSTRAP = 2000


def environment() -> trueskill.TrueSkill:
    return trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=BETA, tau=TAU,
                               draw_probability=DRAW_PROBABILITY)


@dataclass(frozen=True)
class RatedGame:
    """What ratings need from one game: each seat's label and rank, and who won."""

    id: str
    seats: tuple[tuple[str, int], ...]  # (player label, rank), one per seat
    won: tuple[bool, ...] = ()  # per seat, in the order of `seats`

    @property
    def n(self) -> int:
        return len(self.seats)


def rate_once(games: Sequence[RatedGame], env: trueskill.TrueSkill | None = None
              ) -> dict[str, trueskill.Rating]:
    """One pass in the given order, from fresh ratings."""
    env = env or environment()
    ratings: dict[str, trueskill.Rating] = {}
    for g in games:
        if g.n < 2:
            continue  # nothing to compare
        groups = [(ratings.get(label) or env.create_rating(),) for label, _ in g.seats]
        ranks = [rank for _, rank in g.seats]
        new = env.rate(groups, ranks=ranks)
        by_label: dict[str, list[trueskill.Rating]] = defaultdict(list)
        for (label, _), (r,) in zip(g.seats, new, strict=True):
            by_label[label].append(r)
        for label, rs in by_label.items():
            ratings[label] = rs[0] if len(rs) == 1 else env.create_rating(
                mu=sum(r.mu for r in rs) / len(rs), sigma=sum(r.sigma for r in rs) / len(rs))
    return ratings


def _pass(args: tuple[Sequence[RatedGame], int, int]) -> dict[str, tuple[float, float]]:
    games, seed, p = args
    order = list(games)
    random.Random(f"{seed}:pass:{p}").shuffle(order)
    return {k: (r.mu, r.sigma) for k, r in rate_once(order).items()}


# A worker process gets the games once (initializer), not once per pass: pickling 10,000
# games for each of 100 passes cost more than the passes saved.
_WORKER_GAMES: Sequence[RatedGame] = ()


def _init_worker(games: Sequence[RatedGame]) -> None:
    global _WORKER_GAMES
    _WORKER_GAMES = games


def _passes_in_worker(seed: int, numbers: Sequence[int]
                      ) -> list[tuple[int, dict[str, tuple[float, float]]]]:
    return [(p, _pass((_WORKER_GAMES, seed, p))) for p in numbers]


# Below this many rate calls (games x passes) one process is faster: starting a pool and
# shipping the games costs about a second.
PARALLEL_MIN_CALLS = 5_000


def auto_workers(games: int, passes: int) -> int:
    """The default `--workers`: every core when the passes are long enough to pay."""
    if games * passes < PARALLEL_MIN_CALLS or passes < 2:
        return 1
    return max(1, min(os.cpu_count() or 1, passes))


def trueskill_passes(games: Sequence[RatedGame], *, passes: int = DEFAULT_PASSES,
                     seed: int = 0, workers: int | None = 1,
                     on_pass: Callable[[int], None] | None = None
                     ) -> dict[str, dict[str, float]]:
    """Mean μ and σ over `passes` shuffled passes (and the spread of μ across passes).

    Each pass has its own seed and the passes are averaged in pass order, so the result
    is the same, to the bit, for any `workers` (None: `auto_workers`). `on_pass(n)` is
    called as passes finish (for a progress bar)."""
    if workers is None:
        workers = auto_workers(len(games), passes)
    per_pass: list[dict[str, tuple[float, float]]]
    if workers > 1 and passes > 1:
        # Small chunks keep the progress bar moving and the cores evenly loaded.
        size = max(1, min(8, passes // (4 * workers)))
        chunks = [list(range(i, min(i + size, passes))) for i in range(0, passes, size)]
        by_number: dict[int, dict[str, tuple[float, float]]] = {}
        with ProcessPoolExecutor(workers, initializer=_init_worker,
                                 initargs=(list(games),)) as pool:
            futures = [pool.submit(_passes_in_worker, seed, c) for c in chunks]
            for future in as_completed(futures):
                done = future.result()
                by_number.update(done)
                if on_pass is not None:
                    on_pass(len(done))
        per_pass = [by_number[p] for p in range(passes)]
    else:
        per_pass = []
        for p in range(passes):
            per_pass.append(_pass((games, seed, p)))
            if on_pass is not None:
                on_pass(1)
    out: dict[str, dict[str, float]] = {}
    for label in sorted({k for r in per_pass for k in r}):
        mus = [r[label][0] for r in per_pass if label in r]
        sigmas = [r[label][1] for r in per_pass if label in r]
        mean_mu = sum(mus) / len(mus)
        out[label] = {"mu": mean_mu, "sigma": sum(sigmas) / len(sigmas),
                      "mu_spread": (sum((m - mean_mu) ** 2 for m in mus) / len(mus)) ** 0.5}
    return out


def partial_points(rank: int, n: int) -> float:
    """Seed 001's partial points: 1 for first place, 0 for last, linear in between."""
    return (n - rank) / (n - 1) if n > 1 else 1.0


def bootstrap_ci(wins: int, games: int, *, seed: int, resamples: int = DEFAULT_BOOTSTRAP,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap of a win rate over resampled games.

    Resampling a player's games with replacement makes its win count Binomial(games,
    wins/games), so the bootstrap distribution is drawn directly from that binomial.
    """
    import numpy as np

    if games == 0:
        return (0.0, 0.0)
    rng = np.random.default_rng(seed)
    rates = rng.binomial(games, wins / games, size=resamples) / games
    lo, hi = np.quantile(rates, [(1 - level) / 2, 1 - (1 - level) / 2])
    return (float(lo), float(hi))


def leaderboard(games: Iterable[RatedGame], *, passes: int = DEFAULT_PASSES, seed: int = 0,
                workers: int | None = 1, resamples: int = DEFAULT_BOOTSTRAP,
                on_pass: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """One row per player, sorted by mean μ (best first), then by name."""
    games = list(games)
    ts = trueskill_passes(games, passes=passes, seed=seed, workers=workers, on_pass=on_pass)
    played: Counter[str] = Counter()
    wins: Counter[str] = Counter()
    points: defaultdict[str, float] = defaultdict(float)
    ranks: defaultdict[str, Counter[int]] = defaultdict(Counter)
    for g in games:
        for (label, rank), won in zip(g.seats, g.won or (False,) * g.n, strict=True):
            played[label] += 1
            wins[label] += won
            points[label] += partial_points(rank, g.n)
            ranks[label][rank] += 1
    rows: list[dict[str, Any]] = []
    for label in sorted(played):
        r = ts.get(label, {"mu": MU, "sigma": SIGMA, "mu_spread": 0.0})
        n = played[label]
        # Per-player bootstrap seeds derive from the run seed and the name, not from the
        # row order, so adding a player does not move the others' intervals.
        lo, hi = bootstrap_ci(wins[label], n, resamples=resamples,
                              seed=random.Random(f"{seed}:ci:{label}").randrange(2**32))
        rows.append({
            "player": label, "games": n, "mu": r["mu"], "sigma": r["sigma"],
            "mu_spread": r["mu_spread"], "wins": wins[label], "win_rate": wins[label] / n,
            "win_rate_ci": [lo, hi], "partial_points": points[label] / n,
            "mean_rank": sum(k * v for k, v in ranks[label].items()) / n,
            "ranks": {str(k): v for k, v in sorted(ranks[label].items())},
        })
    rows.sort(key=lambda row: (-row["mu"], row["player"]))
    return rows


def rated_game(game_id: str, players: Mapping[str, str], placements: Mapping[str, int],
               winner_seats: Iterable[str] | None) -> RatedGame:
    """From a transcript's seats and result. Without a winners list, rank 1 wins."""
    seats = sorted(placements, key=int)
    winners = ({str(s) for s in winner_seats} if winner_seats is not None
               else {s for s in seats if placements[s] == 1})
    return RatedGame(game_id, tuple((players[s], int(placements[s])) for s in seats),
                     tuple(s in winners for s in seats))
