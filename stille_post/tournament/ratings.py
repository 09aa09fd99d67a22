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

import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
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


def trueskill_passes(games: Sequence[RatedGame], *, passes: int = DEFAULT_PASSES,
                     seed: int = 0, workers: int = 1) -> dict[str, dict[str, float]]:
    """Mean μ and σ over `passes` shuffled passes (and the spread of μ across passes).

    Each pass has its own seed, so the result is the same for any `workers`.
    """
    jobs = [(games, seed, p) for p in range(passes)]
    if workers > 1 and passes > 1:
        with ProcessPoolExecutor(workers) as pool:
            per_pass = list(pool.map(_pass, jobs, chunksize=max(1, passes // (4 * workers))))
    else:
        per_pass = [_pass(j) for j in jobs]
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
                workers: int = 1, resamples: int = DEFAULT_BOOTSTRAP) -> list[dict[str, Any]]:
    """One row per player, sorted by mean μ (best first), then by name."""
    games = list(games)
    ts = trueskill_passes(games, passes=passes, seed=seed, workers=workers)
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
