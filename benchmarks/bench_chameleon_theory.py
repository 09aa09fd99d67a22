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
                   tightest, plays 3·G)
    --n 3..10      the N values (a range A..B or a list 3,5,8)
    --out DIR      keep the results here (default: a temporary folder, removed)
    --workers W    processes per tournament (default 1)
    --json         only the JSON on stdout
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
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stille_post.games.chameleon.theory import model
from stille_post.games.chameleon.theory.figure import Points
from stille_post.games.kit.stats import wilson
from stille_post.tournament import TournamentConfig, run_tournament
from stille_post.tournament.results import load_results

CONCEALING = (("concealing", 4, 0.0), ("concealing", 4, 0.5))
REVEALING = (("revealing", 4, 1.0), ("revealing", 4, 2.0))
AMB_LS = (1, 2, 3)
AMB_CHAMELEONS = ("theory", "theory-first", "theory-last")
RATIO_L = 3
SEED = 20260003


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

    def config(self, seed: int) -> TournamentConfig:
        options: dict[str, Any] = {"num_players": self.n, "words": self.k,
                                   "theory": self.kind, "tie_rule": "random"}
        if self.alpha is not None:
            options["alpha"] = self.alpha
        return TournamentConfig(game="chameleon", games=self.games, seed=seed,
                                options=options,
                                roles={"others": "theory", "chameleon": self.chameleon})


def plan(ns: list[int], games: int) -> list[Point]:
    points = []
    for n in ns:
        for kind, k, alpha in (*CONCEALING, *REVEALING):
            points.append(Point(kind, n, k, alpha, "theory", games))
        for l in AMB_LS:  # noqa: E741
            # l = 1 leaves one word: every consistent chameleon wins, whichever it is.
            for cham in AMB_CHAMELEONS if l > 1 else AMB_CHAMELEONS[:1]:
                points.append(Point("amb", n, l * (n + 1), None, cham,
                                    games * (3 if l == RATIO_L else 1)))
    return points


def play_point(point: Point, out: Path, seed: int, workers: int) -> list[dict[str, Any]]:
    folder = out / "points" / point.id
    asyncio.run(run_tournament(point.config(seed), folder, durable=False,
                               concurrency=16, workers=workers, resume=folder.exists()))
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
    """π^amb (l = RATIO_L, pooled chameleons) ÷ the trivial closed form, per N."""
    pooled: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        if r["strategy"] == "pi_amb" and r["l"] == RATIO_L:
            pooled[r["N"]][0] += r["wins"]
            pooled[r["N"]][1] += r["games"]
    out = []
    for n in sorted(pooled):
        wins, games = pooled[n]
        k = RATIO_L * (n + 1)
        triv = model.trivial(n, k)
        lo, hi = wilson(wins, games) or [0.0, 0.0]
        out.append({"N": n, "K": k, "l": RATIO_L, "games": games, "pi_amb": wins / games,
                    "trivial": triv, "ratio": wins / games / triv,
                    "ratio_ci": [lo / triv, hi / triv],
                    "expected_ratio": model.amb_exact(n, RATIO_L) / triv})
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


def write_report(rows: list[dict[str, Any]], out: Path) -> Path:
    """OUT/report.html: the kit's one-file report of the sweep (no leaderboard: theory
    games never rank models), with the game's Figure-2 chart and the rows as a table."""
    from stille_post.games.chameleon.theory.figure import table
    from stille_post.tournament.report import write_html

    games = sum(r["games"] for r in rows)
    report: dict[str, Any] = {
        "game": "chameleon", "folder": str(out),
        "config": {"sweep": "chameleon-theory", "points": len(rows)},
        "games": {"planned": games, "completed": games, "rated": 0},
        "missing": [], "broken": [], "aborted": [],
        "ratings": {"passes": 0, "seed": 0, "models": []},
        "leaderboard": [],
        "metrics": {"overall": {"theory_games": games, "points": len(rows),
                                "holding": sum(r["holds"] for r in rows)},
                    "per_player": {}, "per_game": [],
                    "tables": {"theory": table(rows)}},
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
    out = Path(given) if given else Path(tempfile.mkdtemp(prefix="chameleon-theory-"))
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    try:
        points = plan(ns, games)
        for i, point in enumerate(points):
            rows += play_point(point, out, SEED + 100_000 * i, workers)
            if not quiet:
                r = rows[-1]
                print(f"  {point.id:40s} {r['measured']:.4f} "
                      f"[{r['ci_low']:.4f}, {r['ci_high']:.4f}] bound {r['bound']:.4f} "
                      f"holds={r['holds']}", flush=True)
        mark_worst(rows)
        ratio_rows, fit = ratios(rows)
        report = write_report(rows, out) if given else None
        result = {
            "games_per_point": games, "N": ns, "points": len(rows),
            "all_hold": all(r["holds"] for r in rows), "rows": rows,
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
        print(f"  all rows hold: {result['all_hold']} ({len(rows)} rows, "
              f"{result['wall_s']} s)")
    return 0 if result["all_hold"] else 1
