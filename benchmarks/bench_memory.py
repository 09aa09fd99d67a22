"""Memory flat in the number of games (`python -m benchmarks memory [--json]`): peak RSS
of the end-of-run tournament summary and of `stille-post report` on results folders of
1k, 10k, 100k and 1M games (issue 28, item 4; target: at most 50 MiB more at 1M than at
10k).

The folders are synthetic but in the runner's exact format. A real bot tournament of
`--template` games (Stille Post, seed 1, no fsync) is played once; a folder of N games is
that tournament's config with `games = N`, and its game i is the template's game
i mod T: the transcript's bytes with the header's `seed` set to 1 + i, under the name
the plan gives game i (`g{i:06d}-s{1+i}.jsonl`), and the template's index row with the
new id, index, seed and transcript path. So every file and row is one the runner could
have written (the games' moves repeat every T games; nothing here reads them for their
own sake). Playing a million bot games on this 2-core machine would take hours; writing
them takes minutes. The folder grows in place from one size to the next.

A first report (`warm_up`, not compared) compiles the rating passes into numba's cache,
as any install's first large report does. Each measurement runs in a fresh child
process; its peak RSS is the kernel's
(`os.wait4` -> `ru_maxrss`), its CPU the child's user + system time:
- summary: `cli.tournament._print_summary` (what `stille-post tournament` prints at the
  end of a run, as JSON) in a child that has imported the CLI;
- report: `stille-post report FOLDER --json --no-cache --workers 1 --passes P`.
A baseline child (imports only) gives the interpreter's own RSS.

Options: --sizes 1000,10000,100000,1000000 (or $BENCH_MEMORY_SIZES)  --report-max 100000
(larger folders: summary only)  --passes 100  --template 50  --dir PATH (where to build;
default a temporary folder, removed at the end)  --json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from stille_post.tournament import TournamentConfig, ratings, run_tournament
from stille_post.tournament.config import GameSpec
from stille_post.tournament.index import GameIndex
from stille_post.tournament.results import GAMES_DIR

SEED = 1
CHUNK = 10_000  # rows per index transaction while building

_SUMMARY = """
import sys
from pathlib import Path
from stille_post.cli.tournament import _print_summary
from stille_post.tournament.runner import RunStats
_print_summary(Path(sys.argv[1]), RunStats(planned=0, skipped=int(sys.argv[2])), True)
"""
_REPORT = """
import sys
from stille_post.cli import main
main(["report", sys.argv[1], "--json", "--no-cache", "--workers", "1",
      "--passes", sys.argv[2]])
"""
_BASELINE = """
import stille_post.cli, stille_post.cli.tournament, stille_post.tournament.report
"""


class Template:
    """The played tournament whose games are replicated."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.config = TournamentConfig.load(folder)
        with GameIndex.open(folder) as index:
            self.rows = list(index.rows())
        self.heads: list[dict[str, Any]] = []
        self.bodies: list[bytes] = []
        for row in self.rows:
            data = (folder / row.transcript).read_bytes()
            first, _, rest = data.partition(b"\n")
            head = json.loads(first)
            if _header(head) != first:
                raise SystemExit("the transcript header does not re-serialise byte for "
                                 "byte; the replication would not be faithful")
            self.heads.append(head)
            self.bodies.append(rest)

    @classmethod
    def play(cls, folder: Path, games: int) -> Template:
        cfg = TournamentConfig(game="stille-post", games=games, seed=SEED)
        asyncio.run(run_tournament(cfg, folder, durable=False))
        return cls(folder)

    def grow(self, folder: Path, have: int, want: int) -> None:
        """Add games have..want-1 to `folder` (the first call also writes the config)."""
        replace(self.config, games=want).save(folder)
        games = folder / GAMES_DIR
        games.mkdir(parents=True, exist_ok=True)
        with GameIndex.open(folder) as index:
            for lo in range(have, want, CHUNK):
                rows = []
                for i in range(lo, min(want, lo + CHUNK)):
                    k = i % len(self.rows)
                    spec = GameSpec(i, SEED + i, None)
                    name = f"{spec.id}.jsonl"
                    head = {**self.heads[k], "seed": spec.seed}
                    (games / name).write_bytes(_header(head) + b"\n" + self.bodies[k])
                    rows.append(replace(self.rows[k], id=spec.id, idx=i, seed=spec.seed,
                                        transcript=f"{GAMES_DIR}/{name}"))
                index.add_many(rows)


def _header(head: dict[str, Any]) -> bytes:
    # The transcript writer's own serialisation (core/transcript.py): compact, UTF-8.
    return json.dumps(head, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _child(code: str, *args: str) -> dict[str, float]:
    """Run `code` in a fresh interpreter; its peak RSS (MiB), CPU and wall seconds."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"child failed ({proc.returncode}): {err.decode()[-2000:]}")
    return {"peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 2), "wall_s": round(wall, 2)}


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class NotEnoughDisk(Exception):
    """The folders would not fit: said before a byte of them is written."""


def _bytes_needed(template: Path, games: int, largest: int) -> int:
    """What the largest folder takes: the template's bytes per game (files rounded up to
    4 KiB blocks, as the disk stores them) times the games, plus a tenth."""
    used = sum(-(-p.stat().st_size // 4096) * 4096 for p in template.rglob("*") if p.is_file())
    return int(used / games * largest * 1.1)


def run(sizes: list[int], report_max: int, passes: int, template_games: int,
        where: Path, say: Any) -> dict[str, Any]:
    template = Template.play(where / "template", template_games)
    folder = where / "folder"
    need = _bytes_needed(where / "template", template_games, max(sizes))
    free = shutil.disk_usage(where).free
    if need > free:
        raise NotEnoughDisk(f"{max(sizes):,} games need about {need / 2**30:.1f} GiB in "
                            f"{where.parent}, which has {free / 2**30:.1f} GiB free: pass "
                            "smaller --sizes or a --dir on a larger disk")
    out: dict[str, Any] = {"template_games": template_games, "passes": passes,
                           "folder": str(folder), "python": sys.version.split()[0],
                           "baseline": _child(_BASELINE), "sizes": []}
    say(f"   baseline (imports only): {out['baseline']['peak_rss_mib']} MiB")
    have = 0
    for n in sorted(sizes):
        t0 = time.perf_counter()
        template.grow(folder, have, n)
        have = n
        row: dict[str, Any] = {"games": n, "build_s": round(time.perf_counter() - t0, 1),
                               "load_before": _load()}
        row["summary"] = _child(_SUMMARY, str(folder), str(n))
        if n <= report_max and "warm_up" not in out:
            # numba compiles the passes on the first report that needs them and caches
            # them beside passes.py. Compiled here, once, so no size measured below pays
            # the ~50 MiB of the compiler and the sizes compare alike.
            out["warm_up"] = _child(_REPORT, str(folder),
                                    str(ratings.COMPILED_MIN_CALLS // n + 1))
        if n <= report_max:
            row["report"] = _child(_REPORT, str(folder), str(passes))
        row["load_after"] = _load()
        out["sizes"].append(row)
        rep = row.get("report")
        say(f"   {n:>9,} games (built in {row['build_s']} s): summary "
            f"{row['summary']['peak_rss_mib']} MiB, {row['summary']['cpu_s']} s CPU; "
            + (f"report {rep['peak_rss_mib']} MiB, {rep['cpu_s']} s CPU"
               if rep else "report not run") + f"; load {row['load_before']}")
    by = {r["games"]: r for r in out["sizes"]}
    if 10_000 in by:
        top = max(by)
        out["growth_from_10k_mib"] = {
            what: round(by[top][what]["peak_rss_mib"] - by[10_000][what]["peak_rss_mib"], 1)
            for what in ("summary", "report") if what in by[top] and what in by[10_000]}
        out["growth_from_10k_to"] = top
        reported = [g for g in by if "report" in by[g]]
        if reported and max(reported) != top and max(reported) > 10_000:
            biggest = max(reported)
            out["report_growth_from_10k_mib"] = round(
                by[biggest]["report"]["peak_rss_mib"] - by[10_000]["report"]["peak_rss_mib"],
                1)
            out["report_growth_from_10k_to"] = biggest
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks memory")
    # BENCH_MEMORY_SIZES lets `nox -s bench` (every benchmark) run it smaller: the 1M
    # folder takes ~15 GB and ~20 minutes here.
    ap.add_argument("--sizes", default=os.environ.get("BENCH_MEMORY_SIZES",
                                                      "1000,10000,100000,1000000"))
    ap.add_argument("--report-max", type=int, default=100_000)
    ap.add_argument("--passes", type=int, default=100)
    ap.add_argument("--template", type=int, default=50)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv or [])
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s]
    except ValueError:
        print("--sizes: comma-separated game counts", file=sys.stderr)
        return 2
    if not sizes or min(sizes) < 1 or args.template < 1 or args.passes < 1:
        print("--sizes, --template and --passes must be positive", file=sys.stderr)
        return 2

    def say(line: str) -> None:
        if not args.json:
            print(line, flush=True)

    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        where = Path(tempfile.mkdtemp(prefix="bench-memory-", dir=args.dir))
    else:
        where = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    try:
        out = run(sizes, args.report_max, args.passes, args.template, where, say)
    except NotEnoughDisk as exc:
        print(f"memory: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(where, ignore_errors=True)
    out["children_max_rss_mib"] = round(
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    if args.json:
        print(json.dumps(out))
    elif "growth_from_10k_mib" in out:
        print(f"   growth from 10k to {out['growth_from_10k_to']:,} games (MiB): "
              f"{out['growth_from_10k_mib']} (target <= 50)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
