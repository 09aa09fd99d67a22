"""The Chameleon's theory sweep (`python -m benchmarks chameleon-theory [--json]`):
Figure 2 of seed 003 played by the engine, through the tournament path.

Every point is a tournament of theory bots (stille_post/games/chameleon/theory/) written
to its own results folder under OUT/points/, so `stille-post report OUT/points/ID`
works on any of them; the sweep then reads each folder's transcripts with the game's
metrics and prints one row per point:

    {strategy, chameleon, N, K, alpha, l, games, measured, ci_low, ci_high, bound,
     holds, slack, ...}

and the π^amb ÷ trivial-concealing ratio per N (pooled over the consistent chameleons,
which the proof shows are alike; the trivial rate is its closed form (1/N)(K-1)/K at
the same K = l(N+1)), with a least-squares fit ratio = a + b·ln N. OUT/report.html is
the HTML report of the whole sweep with the Figure-2 chart, OUT/sweep.json the rows.

Options:
    --games G      games per point (default 2000; π^amb at l=3, whose bound is the
                   tightest, plays 2·G; a small revealing bound up to 10·G)
    --n 3..10      the N values (a range A..B or a list 3,5,8)
    --out DIR      keep the results here (default: a temporary folder, removed)
    --workers W    processes per tournament (default 1)
    --json         only the JSON on stdout
    --no-play      with --out: summarise the games already there, play none (points
                   not started are listed in `missing`, short ones in `partial`)
Exit status 0 when every row holds, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import json
import math
import shutil
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stille_post.games.chameleon.theory import model
from stille_post.games.chameleon.theory.figure import Points, bound_of
from stille_post.games.kit.stats import wilson
from stille_post.tournament import TournamentConfig, run_tournament
from stille_post.tournament.results import load_results

CONCEALING = (("concealing", 4, 0.0), ("concealing", 4, 0.5), ("concealing", 4, 2.0))
REVEALING = (("revealing", 4, 0.5), ("revealing", 4, 1.0), ("revealing", 4, 2.0))
AMB_LS = (1, 2, 3)
AMB_CHAMELEONS = ("theory", "theory-first", "theory-last")
NULL_CHAMELEON_L = 2  # the proof's inconsistent chameleon, played at this l
# Every chameleon is tried at this l; the others play the uniform consistent one only
# (the proof shows consistent chameleons are alike; CPU goes to the tight l = 3 instead).
ALL_CHAMELEONS_L = 2
RATIO_L = 3
SEED = 20260003
# A small upper bound needs enough games for zero-ish wins to sit under it: about this
# many wins' worth at the bound's rate, at most MAX_GAMES_FACTOR times the base count.
WINS_AT_BOUND = 20
MAX_GAMES_FACTOR = 10


@dataclass(frozen=True)
class Point:
    kind: str
    n: int
    k: int
    alpha: float | None
    chameleon: str
    games: int

    @property
    def id(self) -> str:
        a = f"-a{self.alpha:g}" if self.alpha is not None else f"-l{self.k // (self.n + 1)}"
        return f"{self.kind}-n{self.n}-k{self.k}{a}-{self.chameleon}"

    @property
    def seed(self) -> int:
        """A seed of the point itself (not its place in the plan), so a sweep over some
        N replays exactly the games of the full sweep's points and resumes into its
        folders."""
        return SEED + zlib.crc32(self.id.encode("ascii")) % 1_000_000 * 1000

    def config(self, seed: int) -> TournamentConfig:
        options: dict[str, Any] = {"num_players": self.n, "words": self.k,
                                   "theory": self.kind, "tie_rule": "random"}
        if self.alpha is not None:
            options["alpha"] = self.alpha
        return TournamentConfig(game="chameleon", games=self.games, seed=seed,
                                options=options,
                                roles={"others": "theory", "chameleon": self.chameleon})


def games_for(kind: str, n: int, k: int, alpha: float | None, games: int) -> int:
    """The base count, or more where an upper bound is small but resolvable with at most
    MAX_GAMES_FACTOR times as many (a bound of 0, or one too small even then, keeps the
    base count: its row can only say "not refuted")."""
    bound, bound_kind, _ = bound_of(model.theory_of(kind, n, k, alpha))
    if bound_kind != "upper" or bound <= 0:
        return games
    wanted = math.ceil(WINS_AT_BOUND / bound)
    if wanted <= games or wanted > games * MAX_GAMES_FACTOR:
        return games
    return wanted


def plan(ns: list[int], games: int) -> list[Point]:
    """Per N, the ratio's two points first (the trivial strategy at K = l(N+1), π^amb at
    l = RATIO_L), then π^amb's other l, then the stationary classes: an interrupted sweep
    (resumed with --out) has the ratio over every N it reached."""
    points = []
    for n in ns:
        # The trivial strategy (0-KL) at π^amb's K, the ratio's denominator, measured.
        points.append(Point("concealing", n, RATIO_L * (n + 1), 0.0, "theory", games))
        for l in sorted(AMB_LS, key=lambda x: x != RATIO_L):  # noqa: E741
            # l = 1 leaves one word: every consistent chameleon wins, whichever it is.
            chameleons = AMB_CHAMELEONS if l == ALL_CHAMELEONS_L else AMB_CHAMELEONS[:1]
            if l == NULL_CHAMELEON_L:
                chameleons = (*chameleons, "theory-null")
            for cham in chameleons:
                # l = 3's bound is within ~2 standard errors of its rate at 2,000
                # games for N near 10: twice the games there.
                points.append(Point("amb", n, l * (n + 1), None, cham,
                                    games * (2 if l == RATIO_L else 1)))
        for kind, k, alpha in (*CONCEALING, *REVEALING):
            points.append(Point(kind, n, k, alpha, "theory",
                                games_for(kind, n, k, alpha, games)))
    return points


def play_point(point: Point, out: Path, workers: int, play: bool = True
               ) -> list[dict[str, Any]]:
    """The point's rows, after playing (or resuming) its games; with play=False only
    the games already in its folder (none when it has no folder)."""
    folder = out / "points" / point.id
    if play:
        asyncio.run(run_tournament(point.config(point.seed), folder, durable=False,
                                   concurrency=16, workers=workers,
                                   resume=folder.exists()))
    elif not (folder / "index.sqlite").exists():
        return []
    # The index rows hold each game's summary (outcome, chameleon, theory mark): the
    # same counts as the report's metrics (a test checks it) without reparsing files.
    points = Points()
    for r in load_results(folder).rows:
        if r.status == "completed":
            points.add_summary(r.summary, r.players)
    rows = points.rows()
    for r in rows:
        r["folder"] = str(folder)
    return rows


def ratios(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Measured π^amb (l = RATIO_L, the consistent chameleons pooled: the proof shows
    they are alike) ÷ the measured trivial strategy (0-KL concealing at the same K =
    l(N+1)), per N, beside the ratio of the two closed forms. The interval is the
    quotient of the two Wilson intervals' ends (conservative)."""
    amb: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    triv: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        if (r["strategy"] == "pi_amb" and r["l"] == RATIO_L
                and r["chameleon"].removeprefix("bot:") in AMB_CHAMELEONS):
            amb[r["N"]][0] += r["wins"]
            amb[r["N"]][1] += r["games"]
        if (r["strategy"] == "concealing" and r["alpha"] == 0
                and r["K"] == RATIO_L * (r["N"] + 1)):
            triv[r["N"]][0] += r["wins"]
            triv[r["N"]][1] += r["games"]
    out = []
    for n in sorted(set(amb) & set(triv)):
        (aw, ag), (tw, tg) = amb[n], triv[n]
        a_lo, a_hi = wilson(aw, ag) or [0.0, 1.0]
        t_lo, t_hi = wilson(tw, tg) or [0.0, 1.0]
        k = RATIO_L * (n + 1)
        out.append({"N": n, "K": k, "l": RATIO_L, "games": ag, "trivial_games": tg,
                    "pi_amb": aw / ag, "trivial": tw / tg,
                    "ratio": (aw / ag) / (tw / tg) if tw else math.inf,
                    "ratio_ci": [a_lo / t_hi, a_hi / t_lo if t_lo else math.inf],
                    "expected_ratio": model.amb_exact(n, RATIO_L) / model.trivial(n, k)})
    return out, _fit([(math.log(r["N"]), r["ratio"]) for r in out])


def _fit(pts: list[tuple[float, float]]) -> dict[str, Any]:
    """Least squares y = a + b x with b's standard error (None with under 3 points)."""
    if len(pts) < 3:
        return {"slope_per_ln_n": None, "slope_se": None, "grows": None}
    n = len(pts)
    mx = sum(x for x, _ in pts) / n
    my = sum(y for _, y in pts) / n
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    b = sum((x - mx) * (y - my) for x, y in pts) / sxx
    a = my - b * mx
    resid = sum((y - a - b * x) ** 2 for x, y in pts)
    se = math.sqrt(resid / (n - 2) / sxx) if n > 2 else 0.0
    return {"intercept": a, "slope_per_ln_n": b, "slope_se": se, "grows": b - 2 * se > 0}


def mark_worst(rows: list[dict[str, Any]]) -> None:
    """Flag the worst chameleon (lowest non-chameleon rate) per π^amb point."""
    best: dict[tuple[int, int], dict[str, Any]] = {}
    for r in rows:
        r["worst"] = None
        if r["strategy"] == "pi_amb":
            key = (r["N"], r["l"])
            if key not in best or r["measured"] < best[key]["measured"]:
                best[key] = r
    for r in rows:
        if r["strategy"] == "pi_amb":
            r["worst"] = r is best[(r["N"], r["l"])]


def write_report(rows: list[dict[str, Any]], ratio_rows: list[dict[str, Any]],
                 out: Path) -> Path:
    """OUT/report.html: the kit's one-file report of the whole sweep, with the game's
    Figure-2 chart, the rows and the ratios as tables. It has no leaderboard: theory
    games never rank players (each point's folder still has its own full report)."""
    from stille_post.games.chameleon.theory.figure import table
    from stille_post.tournament import ratings
    from stille_post.tournament.report import write_html

    games = sum(r["games"] for r in rows)
    ratio_cols = ["N", "K", "l", "games", "trivial_games", "pi_amb", "trivial", "ratio",
                  "expected_ratio"]
    report: dict[str, Any] = {
        "game": "chameleon", "folder": str(out),
        "config": {"sweep": "chameleon-theory", "seed": SEED, "games": games,
                   "shard": None, "points": len(rows)},
        "games": {"planned": games, "completed": games, "missing": 0, "aborted": 0,
                  "rated": 0},
        "missing": [], "broken": [], "aborted": [],
        "ratings": {"passes": 0, "seed": 0, "mu": ratings.MU, "sigma": ratings.SIGMA,
                    "beta": ratings.BETA, "tau": ratings.TAU,
                    "draw_probability": ratings.DRAW_PROBABILITY, "models": []},
        "leaderboard": [], "error_survival": None,
        "metrics": {"overall": {"theory_games": games, "points": len(rows),
                                "holding": sum(r["holds"] for r in rows)},
                    "per_player": {},
                    "tables": {"theory": table(rows),
                               "pi_amb / trivial": {
                                   "columns": ratio_cols,
                                   "rows": [[r[c] for c in ratio_cols] for r in ratio_rows]}}},
    }
    return write_html(report, out / "report.html")


def parse_ns(text: str) -> list[int]:
    if ".." in text:
        a, b = text.split("..", 1)
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",") if x.strip()]


def _opt(args: list[str], name: str, default: str) -> str:
    for a in args:
        if a.startswith(f"{name}="):
            return a.split("=", 1)[1]
    if name in args:
        i = args.index(name)
        if i + 1 < len(args):
            return args[i + 1]
    return default


def main(args: list[str] | None = None) -> int:
    args = list(args if args is not None else sys.argv[1:])
    quiet = "--json" in args
    try:
        games = int(_opt(args, "--games", "2000"))
        ns = parse_ns(_opt(args, "--n", "3..10"))
        workers = int(_opt(args, "--workers", "1"))
    except ValueError as exc:
        print(f"chameleon-theory: bad option ({exc})", file=sys.stderr)
        return 2
    if games < 1 or not ns or min(ns) < 3 or max(ns) > 20 or workers < 1:
        print("chameleon-theory: --games >= 1, --workers >= 1, N from 3 to 20",
              file=sys.stderr)
        return 2
    given = _opt(args, "--out", "")
    play = "--no-play" not in args
    if not play and not given:
        print("chameleon-theory: --no-play needs --out", file=sys.stderr)
        return 2
    out = Path(given) if given else Path(tempfile.mkdtemp(prefix="chameleon-theory-"))
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    missing: list[str] = []
    partial: list[str] = []
    try:
        points = plan(ns, games)
        for point in points:
            got = play_point(point, out, workers, play)
            rows += got
            if not got:
                missing.append(point.id)
                continue
            if sum(r["games"] for r in got) < point.games:
                partial.append(point.id)
            if not quiet:
                r = rows[-1]
                print(f"  {point.id:40s} {r['measured']:.4f} "
                      f"[{r['ci_low']:.4f}, {r['ci_high']:.4f}] bound {r['bound']:.4f} "
                      f"holds={r['holds']}", flush=True)
        mark_worst(rows)
        ratio_rows, fit = ratios(rows)
        report = write_report(rows, ratio_rows, out) if given else None
        result = {
            "games_per_point": games, "N": ns, "points": len(rows),
            "all_hold": all(r["holds"] for r in rows), "rows": rows,
            "missing": missing, "partial": partial,
            "ratio": ratio_rows, "ratio_fit": fit,
            "wall_s": round(time.perf_counter() - t0, 1),
            "out": str(out) if given else None,
            "report": str(report) if report else None,
        }
        if given:
            (out / "sweep.json").write_text(json.dumps(result, indent=1) + "\n",
                                            encoding="utf-8")
    finally:
        if not given:
            shutil.rmtree(out, ignore_errors=True)
    if quiet:
        print(json.dumps(result))
    else:
        for r in ratio_rows:
            print(f"  ratio N={r['N']}: π^amb {r['pi_amb']:.4f} ÷ trivial "
                  f"{r['trivial']:.4f} = {r['ratio']:.3f} (expected {r['expected_ratio']:.3f})")
        print(f"  fit: ratio = a + b ln N, b = {fit['slope_per_ln_n']}, se {fit['slope_se']}")
        if missing or partial:
            print(f"  not played: {', '.join(missing) or '-'}; short of their games: "
                  f"{', '.join(partial) or '-'}")
        print(f"  all rows hold: {result['all_hold']} ({len(rows)} rows, "
              f"{result['wall_s']} s)")
    return 0 if result["all_hold"] else 1
