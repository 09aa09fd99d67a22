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

import math
import os
import random
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import trueskill

from stille_post.core.rewards import partial_points

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
    """One pass in the given order, from fresh ratings (the `trueskill` package: the
    reference that `rate_once_fast` is tested against)."""
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


def _as_rating(mu: float, sigma: float) -> tuple[float, float]:
    """(mu, sigma) as `trueskill.Rating(mu, sigma).mu/.sigma` read them back (through
    precision and precision-adjusted mean, which can move the last bit)."""
    pi = sigma ** -2
    tau = pi * mu
    return (pi and tau / pi), (math.sqrt(1 / pi) if pi else float("inf"))


def rate_once_fast(games: Sequence[RatedGame], rater: FastRater | None = None
                   ) -> dict[str, tuple[float, float]]:
    """`rate_once` with `FastRater`: {label: (mu, sigma)} as the package's Ratings read."""
    rater = rater or FastRater()
    env = rater.env
    ratings: dict[str, tuple[float, float]] = {}  # Rating(mu, sigma) constructor args
    fresh = (env.mu, env.sigma)
    for g in games:
        if g.n < 2:
            continue
        new = rater.rate([ratings.get(label, fresh) for label, _ in g.seats],
                         [rank for _, rank in g.seats])
        by_label: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for (label, _), r in zip(g.seats, new, strict=True):
            by_label[label].append(r)
        for label, rs in by_label.items():
            if len(rs) == 1:
                ratings[label] = rs[0]
            else:
                read = [_as_rating(*r) for r in rs]
                ratings[label] = (sum(m for m, _ in read) / len(read),
                                  sum(s for _, s in read) / len(read))
    return {k: _as_rating(*v) for k, v in ratings.items()}


# Passes use the fast paths; False puts the package itself back in every pass.
FAST = True
# From this many rate calls (games x passes) on, passes run compiled (tournament/passes.py,
# bit-equal to `FastRater`): loading the compiled code costs ~1 s of CPU and ~130 MiB
# (numba and LLVM), which a small report would not win back. 0: always compiled.
COMPILED_MIN_CALLS = 20_000


def _pass(args: tuple[Sequence[RatedGame], int, int]) -> dict[str, tuple[float, float]]:
    games, seed, p = args
    order = list(games)
    random.Random(f"{seed}:pass:{p}").shuffle(order)
    if FAST:
        return rate_once_fast(order)
    return {k: (r.mu, r.sigma) for k, r in rate_once(order).items()}


# A worker process gets the games once (initializer), not once per batch of passes.
_WORKER_TABLE: GameTable | None = None
_WORKER_POSITIONS: array[int] | None = None


def _init_worker(table: GameTable, positions: array[int] | None) -> None:
    global _WORKER_TABLE, _WORKER_POSITIONS
    _WORKER_TABLE, _WORKER_POSITIONS = table, positions


def _batch_in_worker(seed: int, numbers: Sequence[int]
                     ) -> list[tuple[int, dict[str, tuple[float, float]]]]:
    assert _WORKER_TABLE is not None
    return run_batch(_WORKER_TABLE, _WORKER_POSITIONS, seed, numbers)


# Below this many rate calls (games x passes) one process is faster: starting a pool and
# shipping the games costs more than the passes it would share out.
PARALLEL_MIN_CALLS = 5_000


def auto_workers(games: int, passes: int) -> int:
    """The default `--workers`: every core when the passes are long enough to pay."""
    if games * passes < PARALLEL_MIN_CALLS or passes < 2:
        return 1
    return max(1, min(os.cpu_count() or 1, passes))


def trueskill_passes(games: Iterable[RatedGame] | GameTable, *, passes: int = DEFAULT_PASSES,
                     seed: int = 0, workers: int | None = 1,
                     on_pass: Callable[[int], None] | None = None,
                     clean_only: bool = False) -> dict[str, dict[str, float]]:
    """Mean μ and σ over `passes` shuffled passes (and the spread of μ across passes).
    `clean_only` rates only a `GameTable`'s clean games.

    Each pass has its own seed and the passes are averaged in pass order, so the result
    is the same, to the bit, for any `workers` (None: `auto_workers`). Many passes run
    compiled (tournament/passes.py), few with `FastRater`: the same numbers to the bit.
    `FAST = False` runs the `trueskill` package instead.
    `on_pass(n)` is called as passes finish (for a progress bar)."""
    table = as_table(games)
    positions = table.positions(clean_only=True) if clean_only else None
    count = len(table) if positions is None else len(positions)
    if workers is None:
        workers = auto_workers(count, passes)
    per_pass: list[dict[str, tuple[float, float]]]
    if not FAST or count * passes < COMPILED_MIN_CALLS:
        chosen = list(table) if positions is None else [table.game(g) for g in positions]
        per_pass = []
        for p in range(passes):
            per_pass.append(_pass((chosen, seed, p)))
            if on_pass is not None:
                on_pass(1)
    else:
        # Small batches keep the progress bar moving and the cores evenly loaded.
        size = max(1, min(8, passes // (4 * workers)))
        batches = [list(range(i, min(i + size, passes))) for i in range(0, passes, size)]
        by_number: dict[int, dict[str, tuple[float, float]]] = {}
        if workers > 1 and len(batches) > 1:
            with ProcessPoolExecutor(min(workers, len(batches)), initializer=_init_worker,
                                     initargs=(table, positions)) as pool:
                futures = [pool.submit(_batch_in_worker, seed, b) for b in batches]
                for future in as_completed(futures):
                    done = future.result()
                    by_number.update(done)
                    if on_pass is not None:
                        on_pass(len(done))
        else:
            for b in batches:
                by_number.update(run_batch(table, positions, seed, b, on_pass))
        per_pass = [by_number[p] for p in range(passes)]
    out: dict[str, dict[str, float]] = {}
    for label in sorted({k for r in per_pass for k in r}):
        mus = [r[label][0] for r in per_pass if label in r]
        sigmas = [r[label][1] for r in per_pass if label in r]
        mean_mu = sum(mus) / len(mus)
        out[label] = {"mu": mean_mu, "sigma": sum(sigmas) / len(sigmas),
                      "mu_spread": (sum((m - mean_mu) ** 2 for m in mus) / len(mus)) ** 0.5}
    return out


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


def leaderboard(games: Iterable[RatedGame] | GameTable, *, passes: int = DEFAULT_PASSES,
                seed: int = 0, workers: int | None = 1, resamples: int = DEFAULT_BOOTSTRAP,
                on_pass: Callable[[int], None] | None = None,
                clean_only: bool = False) -> list[dict[str, Any]]:
    """One row per player, sorted by mean μ (best first), then by name. `clean_only`
    rates only a `GameTable`'s clean games."""
    table = as_table(games)
    ts = trueskill_passes(table, passes=passes, seed=seed, workers=workers, on_pass=on_pass,
                          clean_only=clean_only)
    games = table.games(clean_only=clean_only)
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


# --- compact storage of rated games ---------------------------------------------------------


def _append(arr: array[int], value: int, wider: str) -> array[int]:
    """Append `value`, widening the array's type the first time a value does not fit."""
    try:
        arr.append(value)
    except OverflowError:
        arr = array(wider, arr)
        arr.append(value)
    return arr


class GameTable:
    """Rated games in flat typed arrays (a few bytes per seat instead of a `RatedGame`
    object per game), so a report over a million games stays small in memory. Each game
    also carries a `clean` flag (no seat forfeited a decision; tournament/adherence.py).
    Iterating gives `RatedGame`s back, in the order they were added."""

    def __init__(self, games: Iterable[RatedGame] = ()) -> None:
        self.labels: list[str] = []
        self._label_id: dict[str, int] = {}
        self._seat_label: array[int] = array("H")
        self._seat_rank: array[int] = array("h")
        self._seat_won = bytearray()
        self._start: array[int] = array("I", [0])  # game g's seats: start[g]:start[g + 1]
        self._clean = bytearray()
        self._selfplay = bytearray()  # 1 when a label holds several seats of the game
        for g in games:
            self.append(g)

    def append(self, game: RatedGame, clean: bool = True) -> None:
        ids = []
        for label, rank in game.seats:
            i = self._label_id.get(label)
            if i is None:
                i = self._label_id[label] = len(self.labels)
                self.labels.append(label)
            self._seat_label = _append(self._seat_label, i, "I")
            self._seat_rank = _append(self._seat_rank, rank, "q")
            ids.append(i)
        self._seat_won.extend(bool(w) for w in (game.won or (False,) * game.n))
        self._start = _append(self._start, len(self._seat_label), "Q")
        self._clean.append(bool(clean))
        self._selfplay.append(len(set(ids)) != len(ids))

    def __len__(self) -> int:
        return len(self._clean)

    def game(self, g: int) -> RatedGame:
        lo, hi = self._start[g], self._start[g + 1]
        return RatedGame(str(g), tuple((self.labels[self._seat_label[i]], self._seat_rank[i])
                                       for i in range(lo, hi)),
                         tuple(bool(self._seat_won[i]) for i in range(lo, hi)))

    def __iter__(self) -> Iterator[RatedGame]:
        return (self.game(g) for g in range(len(self)))

    def positions(self, *, clean_only: bool = False) -> array[int]:
        """The positions of the games to rate: all of them, or only the clean ones."""
        if not clean_only:
            return array("I", range(len(self)))
        return array("I", (g for g in range(len(self)) if self._clean[g]))

    def games(self, *, clean_only: bool = False) -> Iterator[RatedGame]:
        return (self.game(g) for g in range(len(self)) if not clean_only or self._clean[g])


def as_table(games: Iterable[RatedGame] | GameTable) -> GameTable:
    return games if isinstance(games, GameTable) else GameTable(games)


_DTYPES = {"H": "uint16", "h": "int16", "I": "uint32", "q": "int64", "Q": "uint64"}


def _view(arr: array[int]) -> Any:
    """The array's memory as a numpy array (no copy)."""
    import numpy as np

    return np.frombuffer(arr, dtype=_DTYPES[arr.typecode]) if len(arr) else \
        np.zeros(0, _DTYPES[arr.typecode])


class CompiledPasses:
    """Passes over one `GameTable` in compiled code (tournament/passes.py), its arrays
    viewed, not copied."""

    def __init__(self, table: GameTable, env: trueskill.TrueSkill | None = None) -> None:
        import numpy as np

        self.env = env or environment()
        FastRater(self.env)  # the same checks of the environment
        self.table = table
        self.labels = _view(table._seat_label)
        self.ranks = _view(table._seat_rank)
        self.start = _view(table._start)
        self.selfplay = np.frombuffer(table._selfplay, dtype=np.bool_) if len(table) \
            else np.zeros(0, np.bool_)
        sizes = np.diff(self.start.astype(np.int64)) if len(table) else np.zeros(0)
        self.slots = int(max(2, sizes.max())) if len(sizes) else 2

    def order(self, positions: array[int] | None, seed: int, p: int) -> Any:
        """Pass p's order, as `_pass` shuffles the list of games: `positions` (None:
        every game) shuffled by the same generator (the permutation depends only on the
        length). 4 bytes per game, swapped in place: no list of a million ints."""
        import numpy as np

        m = len(self.table) if positions is None else len(positions)
        row = np.arange(m, dtype=np.uint32) if positions is None else _view(positions).copy()
        random.Random(f"{seed}:pass:{p}").shuffle(memoryview(row))  # type: ignore[arg-type]
        return row

    def rate(self, order: Any) -> dict[str, tuple[float, float]]:
        """`rate_once_fast` of the table's games in this order."""
        import numpy as np

        from stille_post.tournament.passes import OK, rate_pass

        status, mu_tab, sg_tab, seen = rate_pass(
            order, self.start, self.labels, self.ranks, self.selfplay,
            len(self.table.labels), self.env, self.slots)
        if status != OK:
            # Where Python raises (a degenerate game): the scalar path raises it.
            rate_once_fast([self.table.game(int(g)) for g in order], FastRater(self.env))
            raise FloatingPointError("TrueSkill failed on a degenerate game")
        mus, sgs = mu_tab.tolist(), sg_tab.tolist()
        return {self.table.labels[i]: _as_rating(mus[i], sgs[i])
                for i in np.flatnonzero(seen).tolist()}


def run_batch(table: GameTable, positions: array[int] | None, seed: int,
              numbers: Sequence[int], on_pass: Callable[[int], None] | None = None
              ) -> list[tuple[int, dict[str, tuple[float, float]]]]:
    """Passes `numbers` over the games at `positions` (None: every game of the table)."""
    passes = CompiledPasses(table)
    out = []
    for p in numbers:
        out.append((p, passes.rate(passes.order(positions, seed, p))))
        if on_pass is not None:
            on_pass(1)
    return out


# --- a faster TrueSkill for one-player teams ------------------------------------------------
#
# `trueskill.TrueSkill.rate` builds a factor graph of Variable/Factor objects and Gaussian
# messages for every game; most of its time is that object traffic. For one-player teams
# with weight 1 (every game here), `FastRater.rate` runs the same schedule with the same
# floating-point operations in the same order on plain floats (precision `pi`, precision
# times mean `tau`), calling the environment's own v/w functions and draw margin. It
# matches the package to 1e-9 on every update of the test corpus
# (tests/perf/test_fast_trueskill.py); the package stays the reference (`rate_once`
# with `fast=False`).

_INF = float("inf")


def _delta(old_pi: float, old_tau: float, pi: float, tau: float) -> float:
    pi_delta = abs(old_pi - pi)
    if pi_delta == _INF:
        return 0.0
    return max(abs(old_tau - tau), math.sqrt(pi_delta))


class FastRater:
    def __init__(self, env: trueskill.TrueSkill | None = None) -> None:
        self.env = env or environment()
        if self.env.tau != 0 and not isinstance(self.env.tau, int | float):
            raise ValueError("FastRater needs a numeric tau")
        if callable(self.env.draw_probability):
            raise ValueError("FastRater needs a static draw probability")
        self._margin = trueskill.calc_draw_margin(self.env.draw_probability, 2, self.env)

    def rate(self, ratings: Sequence[tuple[float, float]], ranks: Sequence[int],
             min_delta: float = trueskill.DELTA) -> list[tuple[float, float]]:
        """New (mu, sigma) per player, in the order given, as `env.rate` of one-player
        teams `[(Rating(mu, sigma),), ...]` with these ranks would return them."""
        env = self.env
        n = len(ratings)
        order = sorted(range(n), key=lambda i: ranks[i])  # stable, as the package sorts
        beta2 = env.beta ** 2
        dyn = env.tau
        # Variables: value (pi, tau) per node, and each factor's message into it.
        r_pi = [0.0] * n
        r_tau = [0.0] * n
        p_pi = [0.0] * n
        p_tau = [0.0] * n
        t_pi = [0.0] * n
        t_tau = [0.0] * n
        # Messages: prior->r, lik->r, lik->p, sum->p, sum->t, diff_j->t (left/right), ...
        m_rl_pi = [0.0] * n
        m_rl_tau = [0.0] * n
        m_pl_pi = [0.0] * n
        m_pl_tau = [0.0] * n
        m_ps_pi = [0.0] * n
        m_ps_tau = [0.0] * n
        m_ts_pi = [0.0] * n
        m_ts_tau = [0.0] * n
        k = n - 1
        m_tl_pi = [0.0] * k  # diff_j -> t_j (left)
        m_tl_tau = [0.0] * k
        m_tr_pi = [0.0] * k  # diff_j -> t_{j+1} (right)
        m_tr_tau = [0.0] * k
        d_pi = [0.0] * k
        d_tau = [0.0] * k
        m_dd_pi = [0.0] * k  # diff factor -> d_j
        m_dd_tau = [0.0] * k
        m_dt_pi = [0.0] * k  # trunc factor -> d_j
        m_dt_tau = [0.0] * k
        for slot, i in enumerate(order):
            mu, sigma = ratings[i]
            pi0 = sigma ** -2  # Rating(mu, sigma)
            tau0 = pi0 * mu
            val_mu = pi0 and tau0 / pi0
            val_sigma = math.sqrt(1 / pi0) if pi0 else _INF
            # PriorFactor.down: update_value with Gaussian(mu, sqrt(sigma^2 + tau^2)).
            s = math.sqrt(val_sigma ** 2 + dyn ** 2)
            vpi = s ** -2
            vtau = vpi * val_mu
            r_pi[slot], r_tau[slot] = vpi, vtau
        for j in range(n):
            # LikelihoodFactor.down: msg = r / r[lik]; p[lik] = a * msg.
            mpi = r_pi[j] - m_rl_pi[j]
            mtau = r_tau[j] - m_rl_tau[j]
            a = 1.0 / (1.0 + beta2 * mpi)
            npi, ntau = a * mpi, a * mtau
            p_pi[j] = (p_pi[j] - m_pl_pi[j]) + npi
            p_tau[j] = (p_tau[j] - m_pl_tau[j]) + ntau
            m_pl_pi[j], m_pl_tau[j] = npi, ntau
        for j in range(n):
            # SumFactor.down (team perf = the player's perf, coefficient 1).
            dpi = p_pi[j] - m_ps_pi[j]
            dtau = p_tau[j] - m_ps_tau[j]
            mu = 1 * (dpi and dtau / dpi)
            pi_inv = 1 ** 2 / float(dpi)
            pi = 1.0 / pi_inv
            tau = pi * mu
            t_pi[j] = (t_pi[j] - m_ts_pi[j]) + pi
            t_tau[j] = (t_tau[j] - m_ts_tau[j]) + tau
            m_ts_pi[j], m_ts_tau[j] = pi, tau
        tie = [ranks[order[j]] == ranks[order[j + 1]] for j in range(k)]
        margin = self._margin
        cdf, pdf = env.cdf, env.pdf

        def vw(draw: bool, diff: float, draw_margin: float) -> tuple[float, float]:
            """The package's (v, w) with each cdf/pdf evaluated once: w_win and w_draw
            call v again on the same arguments, which gives the same value."""
            if not draw:
                x = diff - draw_margin
                denom = cdf(x)
                v = (pdf(x) / denom) if denom else -x
                w = v * (v + x)
                if 0 < w < 1:
                    return v, w
                return v, env.w_win(diff, draw_margin)  # raises the package's error
            abs_diff = abs(diff)
            a, b = draw_margin - abs_diff, -draw_margin - abs_diff
            denom = cdf(a) - cdf(b)
            pdf_a, pdf_b = pdf(a), pdf(b)
            v_abs = ((pdf_b - pdf_a) / denom) if denom else a
            v = v_abs * (-1 if diff < 0 else +1)
            if not denom:
                return v, env.w_draw(diff, draw_margin)  # raises the package's error
            return v, (v_abs ** 2) + (a * pdf_a - b * pdf_b) / denom

        def sum_update(vals: list[tuple[float, float, float, float]],
                       coeffs: tuple[float, float]) -> tuple[float, float]:
            pi_inv = 0.0
            mu = 0.0
            for (vpi, vtau, mpi, mtau), c in zip(vals, coeffs, strict=True):
                dpi = vpi - mpi
                dtau = vtau - mtau
                mu += c * (dpi and dtau / dpi)
                if pi_inv == _INF:
                    continue
                try:
                    pi_inv += c ** 2 / float(dpi)
                except ZeroDivisionError:
                    pi_inv = _INF
            pi = 1.0 / pi_inv
            return pi, pi * mu

        def diff_down(j: int) -> None:
            pi, tau = sum_update([(t_pi[j], t_tau[j], m_tl_pi[j], m_tl_tau[j]),
                                  (t_pi[j + 1], t_tau[j + 1], m_tr_pi[j], m_tr_tau[j])],
                                 (1, -1))
            d_pi[j] = (d_pi[j] - m_dd_pi[j]) + pi
            d_tau[j] = (d_tau[j] - m_dd_tau[j]) + tau
            m_dd_pi[j], m_dd_tau[j] = pi, tau

        def diff_up(j: int, index: int) -> None:
            if index == 1:  # to the right variable t_{j+1}
                pi, tau = sum_update([(t_pi[j], t_tau[j], m_tl_pi[j], m_tl_tau[j]),
                                      (d_pi[j], d_tau[j], m_dd_pi[j], m_dd_tau[j])],
                                     (1.0, -1.0))
                t = j + 1
                t_pi[t] = (t_pi[t] - m_tr_pi[j]) + pi
                t_tau[t] = (t_tau[t] - m_tr_tau[j]) + tau
                m_tr_pi[j], m_tr_tau[j] = pi, tau
            else:  # to the left variable t_j
                pi, tau = sum_update([(d_pi[j], d_tau[j], m_dd_pi[j], m_dd_tau[j]),
                                      (t_pi[j + 1], t_tau[j + 1], m_tr_pi[j], m_tr_tau[j])],
                                     (1.0, 1.0))
                t_pi[j] = (t_pi[j] - m_tl_pi[j]) + pi
                t_tau[j] = (t_tau[j] - m_tl_tau[j]) + tau
                m_tl_pi[j], m_tl_tau[j] = pi, tau

        def trunc_up(j: int) -> float:
            dpi = d_pi[j] - m_dt_pi[j]
            dtau = d_tau[j] - m_dt_tau[j]
            sqrt_pi = math.sqrt(dpi)
            args = (dtau / sqrt_pi, margin * sqrt_pi)
            v, w = vw(tie[j], *args)
            denom = 1.0 - w
            pi, tau = dpi / denom, (dtau + sqrt_pi * v) / denom
            # Variable.update_value: message = value * old / self, then set(value).
            m_dt_pi[j] = (pi + m_dt_pi[j]) - d_pi[j]
            m_dt_tau[j] = (tau + m_dt_tau[j]) - d_tau[j]
            delta = _delta(d_pi[j], d_tau[j], pi, tau)
            d_pi[j], d_tau[j] = pi, tau
            return delta

        for _ in range(10):
            if k == 1:
                diff_down(0)
                delta = trunc_up(0)
            else:
                delta = 0.0
                for j in range(k - 1):
                    diff_down(j)
                    delta = max(delta, trunc_up(j))
                    diff_up(j, 1)
                for j in range(k - 1, 0, -1):
                    diff_down(j)
                    delta = max(delta, trunc_up(j))
                    diff_up(j, 0)
            if delta <= min_delta:
                break
        diff_up(0, 0)
        diff_up(k - 1, 1)
        out: list[tuple[float, float]] = [(0.0, 0.0)] * n
        for j in range(n):
            # SumFactor.up(0) of the team perf: the player's perf from the team's.
            pi, tau = _single(t_pi[j], t_tau[j], m_ts_pi[j], m_ts_tau[j])
            p_pi[j] = (p_pi[j] - m_ps_pi[j]) + pi
            p_tau[j] = (p_tau[j] - m_ps_tau[j]) + tau
            m_ps_pi[j], m_ps_tau[j] = pi, tau
        for j in range(n):
            # LikelihoodFactor.up: r[lik] = a * (p / p[lik]).
            mpi = p_pi[j] - m_pl_pi[j]
            mtau = p_tau[j] - m_pl_tau[j]
            a = 1.0 / (1.0 + beta2 * mpi)
            npi, ntau = a * mpi, a * mtau
            rpi = (r_pi[j] - m_rl_pi[j]) + npi
            rtau = (r_tau[j] - m_rl_tau[j]) + ntau
            mu = rpi and rtau / rpi
            sigma = math.sqrt(1 / rpi) if rpi else _INF
            out[order[j]] = (float(mu), float(sigma))
        return out


def _single(vpi: float, vtau: float, mpi: float, mtau: float) -> tuple[float, float]:
    """SumFactor.update with one term and coefficient 1.0."""
    dpi = vpi - mpi
    dtau = vtau - mtau
    mu = 0.0
    mu += 1.0 * (dpi and dtau / dpi)
    pi_inv = 0.0
    try:
        pi_inv += 1.0 ** 2 / float(dpi)
    except ZeroDivisionError:
        pi_inv = _INF
    pi = 1.0 / pi_inv
    return pi, pi * mu
