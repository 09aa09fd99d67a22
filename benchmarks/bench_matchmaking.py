"""Adaptive matchmaking against balanced and sampled seating, simulated.

`python -m benchmarks matchmaking [--json] [--pools N] [--seed S]`

A pool of M = 48 players with latent skills and 8-seat games whose outcomes come from
TrueSkill's own generative model: each seat performs skill + N(0, β²), and the seats
rank by performance. Ratings start fresh (μ = 5, σ = 8.3333, β = 4.1667: the
package's environment) and are updated game by game (one TrueSkill pass, the
tournament's FastRater). A run stops when the ranking by μ has Spearman ≥ 0.95 against
the true order and the mean σ ≤ 1.0; it reports the games that took, per seating mode,
over `--pools` pools (default 20), each pool's skills and outcomes drawn from
`--seed` (default 0), as a median and the 10th-90th percentile interval.

Skills: spread like the Elimination Game's published table (`PUBLISHED_MU`: the 27
models' μ of lechmazur/elimination_game's README leaderboard, 3.10 to 6.66 on the same
μ = 5 scale): 48 evenly spaced quantiles of those μ (linear interpolation), shuffled
per pool.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
from collections.abc import Sequence

from scipy.stats import spearmanr

from stille_post.tournament.ratings import BETA, MU, SIGMA, FastRater
from stille_post.tournament.seating import adaptive_seats, seat_schedule

M, SEATS = 48, 8
SPEARMAN, MEAN_SIGMA = 0.95, 1.0
MAX_GAMES = 50_000
MODES = ("adaptive", "balanced", "sampled")


PUBLISHED_MU = (6.659, 6.639, 6.369, 6.254, 5.966, 5.943, 5.633, 5.354, 5.339, 5.265,
                4.966, 4.923, 4.853, 4.784, 4.716, 4.713, 4.710, 4.700, 4.532, 4.412,
                4.331, 4.302, 4.273, 4.089, 3.649, 3.350, 3.099)


def skills(rng: random.Random) -> list[float]:
    table = sorted(PUBLISHED_MU)
    out = []
    for i in range(M):
        x = (i + 0.5) / M * (len(table) - 1)
        lo = int(x)
        hi = min(lo + 1, len(table) - 1)
        out.append(table[lo] + (x - lo) * (table[hi] - table[lo]))
    rng.shuffle(out)
    return out


def games_to_converge(mode: str, truth: Sequence[float], seed: int) -> int:
    names = [f"p{i:02d}" for i in range(M)]
    skill = dict(zip(names, truth, strict=True))
    ratings = {n: (MU, SIGMA) for n in names}
    rater = FastRater()
    outcome_rng = random.Random(f"{seed}:outcomes")
    seat_rng = random.Random(f"{seed}:adaptive")
    schedule = None if mode == "adaptive" else \
        seat_schedule(names, SEATS, MAX_GAMES, seed=seed, mode=mode)
    for game in range(1, MAX_GAMES + 1):
        table = adaptive_seats(ratings, SEATS, seat_rng) if schedule is None \
            else next(schedule)
        perf = [skill[n] + outcome_rng.gauss(0, BETA) for n in table]
        order = sorted(range(SEATS), key=lambda i: -perf[i])
        ranks = [0] * SEATS
        for rank, i in enumerate(order):
            ranks[i] = rank
        new = rater.rate([ratings[n] for n in table], ranks)
        for n, r in zip(table, new, strict=True):
            ratings[n] = r
        if game % 8 == 0 and _converged(names, ratings, skill):
            return game
    return MAX_GAMES


def _converged(names: Sequence[str], ratings: dict[str, tuple[float, float]],
               skill: dict[str, float]) -> bool:
    if statistics.fmean(ratings[n][1] for n in names) > MEAN_SIGMA:
        return False
    rho = spearmanr([ratings[n][0] for n in names], [skill[n] for n in names]).statistic
    return bool(rho >= SPEARMAN)


def _interval(values: Sequence[int]) -> dict[str, float]:
    q = statistics.quantiles(values, n=10, method="inclusive")
    return {"median": statistics.median(values), "p10": q[0], "p90": q[-1]}


def run(pools: int, seed: int) -> dict[str, object]:
    per_mode: dict[str, list[int]] = {m: [] for m in MODES}
    for pool in range(pools):
        truth = skills(random.Random(f"{seed}:skills:{pool}"))
        for mode in MODES:
            per_mode[mode].append(games_to_converge(mode, truth, seed * 1000 + pool))
    out: dict[str, object] = {
        "players": M, "seats": SEATS, "pools": pools, "seed": seed,
        "stop": {"spearman": SPEARMAN, "mean_sigma": MEAN_SIGMA},
        "games": {m: _interval(v) for m, v in per_mode.items()},
        "per_pool": per_mode,
    }
    ratios = [a / b for a, b in zip(per_mode["adaptive"], per_mode["balanced"], strict=True)]
    out["games_ratio_adaptive_vs_balanced"] = round(
        statistics.median(per_mode["adaptive"]) / statistics.median(per_mode["balanced"]), 3)
    out["ratio_per_pool"] = _interval([round(r, 3) for r in ratios])  # type: ignore[arg-type]
    return out


def main(argv: list[str]) -> int:
    def value(flag: str, default: int) -> int:
        for a in argv:
            if a.startswith(flag + "="):
                return int(a.split("=", 1)[1])
        return default

    result = run(value("--pools", 20), value("--seed", 0))
    if "--json" in argv:
        print(json.dumps(result))
    else:
        for mode, g in result["games"].items():  # type: ignore[attr-defined]
            print(f"{mode:9s} median {g['median']:.0f} games (p10 {g['p10']:.0f}, "
                  f"p90 {g['p90']:.0f})")
        print(f"games_ratio_adaptive_vs_balanced {result['games_ratio_adaptive_vs_balanced']}")
    return 0


__all__ = ["MODES", "games_to_converge", "run", "skills"]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
