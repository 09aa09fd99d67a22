"""The data export at scale (`python -m benchmarks export [--json]`, issue 38): CPU seconds
and peak RSS of `stille-post export` on bot tournaments of 1k, 10k and 100k games
(target: 10k games in at most 30 s of CPU, peak memory flat in the number of games).

The games are real: one bot tournament of the largest size (`--game`, its default seats,
seed 1, no fsync) is played once into `--dir` and kept there for later runs (100k Stille
Post games take some minutes to play and ~1.7 GB of disk). A smaller size is the first N
of its transcripts, hard-linked into a folder of their own. Each export runs in a fresh
child process, `stille-post export FOLDER --out OUT` exactly as a user runs it; its peak
RSS is the kernel's (`os.wait4` -> `ru_maxrss`), its CPU the child's user + system time
(the interpreter's start and imports included).

The peer, measured in the same run on the same folders: `--what games`, which reads
every transcript and writes its table but re-plays nothing. `decisions / games` is the
share of the re-play, the prompts and the bigger rows.

Options: --sizes 1000,10000,100000 (or $BENCH_EXPORT_SIZES)  --game stille-post
--dir PATH (default stille-post-bench-export in the system's temporary folder)  --json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from stille_post.tournament import TournamentConfig, run_tournament

SEED = 1
_CLI = "from stille_post.cli import main; main()"


def _child(*args: str) -> dict[str, float]:
    """`stille-post ARGS` in a fresh interpreter: its peak RSS (MiB), CPU and wall."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _CLI, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"stille-post {' '.join(args)} failed ({code}): "
                         f"{err.decode(errors='replace')[-2000:]}")
    return {"cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
            "wall_s": round(time.perf_counter() - t0, 2)}


def _games(folder: Path) -> list[Path]:
    return sorted((folder / "games").glob("*.jsonl"))


def played(where: Path, game: str, n: int, say: Any) -> Path:
    """A complete bot tournament of `n` games in `where` (played unless it is there)."""
    folder = where / f"{game}-{n}"
    if len(_games(folder)) == n and (folder / "tournament.json").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    say(f"   playing {n:,} bot games of {game} into {folder} (kept for later runs)")
    config = TournamentConfig(game=game, games=n, seed=SEED)
    asyncio.run(run_tournament(config, folder, durable=False,
                               workers=min(2, os.cpu_count() or 1), concurrency=16))
    return folder


def subset(folder: Path, n: int) -> Path:
    """The first `n` games of `folder`, hard-linked into a folder of their own."""
    games = _games(folder)
    if n == len(games):
        return folder
    sub = folder.parent / f"{folder.name}-first-{n}"
    if len(_games(sub)) != n:
        shutil.rmtree(sub, ignore_errors=True)
        (sub / "games").mkdir(parents=True)
        for path in games[:n]:
            try:
                os.link(path, sub / "games" / path.name)
            except OSError:
                shutil.copy2(path, sub / "games" / path.name)
    return sub


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def run(sizes: list[int], game: str, where: Path, say: Any) -> dict[str, Any]:
    source = played(where, game, max(sizes), say)
    out: dict[str, Any] = {"game": game, "load": [round(x, 2) for x in os.getloadavg()],
                           "sizes": {}}
    for n in sorted(sizes):
        folder = subset(source, n)
        row: dict[str, Any] = {"transcript_bytes": _bytes(folder / "games")}
        for what in ("decisions", "games"):
            target = where / f"out-{what}-{n}"
            shutil.rmtree(target, ignore_errors=True)
            measured = _child("export", str(folder), "--out", str(target), "--what", what)
            manifest = [json.loads(x) for x in (target / ".export.jsonl").read_text(
                encoding="utf-8").splitlines()]
            measured["rows"] = sum(g["rows"] for g in manifest if "game" in g)
            measured["bytes"] = _bytes(target / "data")
            row[what] = measured
            shutil.rmtree(target, ignore_errors=True)
        d = row["decisions"]
        row["cpu_s"], row["peak_rss_mib"] = d["cpu_s"], d["peak_rss_mib"]
        row["ms_per_game"] = round(1000 * d["cpu_s"] / n, 2)
        row["decisions_over_games"] = round(d["cpu_s"] / max(row["games"]["cpu_s"], 0.01), 2)
        out["sizes"][str(n)] = row
        say(f"   {n:>7,} games: decisions {d['cpu_s']:.1f} s CPU, {d['peak_rss_mib']} MiB "
            f"peak, {d['rows']:,} rows, {d['bytes'] / 2**20:.1f} MiB "
            f"({row['ms_per_game']} ms/game); games table {row['games']['cpu_s']:.1f} s, "
            f"{row['games']['peak_rss_mib']} MiB; ratio {row['decisions_over_games']}")
    rss = [r["peak_rss_mib"] for r in out["sizes"].values()]
    out["peak_rss_growth_mib"] = round(max(rss) - min(rss), 1)
    if "10000" in out["sizes"]:
        out["cpu_s_10k"] = out["sizes"]["10000"]["cpu_s"]
        out["target_cpu_s_10k"] = 30
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks export")
    ap.add_argument("--sizes", default=os.environ.get("BENCH_EXPORT_SIZES",
                                                      "1000,10000,100000"))
    ap.add_argument("--game", default="stille-post")
    ap.add_argument("--dir", type=Path,
                    default=Path(tempfile.gettempdir()) / "stille-post-bench-export")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv or [])
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s]
    except ValueError:
        print("--sizes: comma-separated game counts", file=sys.stderr)
        return 2
    if not sizes or min(sizes) < 1:
        print("--sizes must be positive", file=sys.stderr)
        return 2

    def say(line: str) -> None:
        if not args.json:
            print(line, flush=True)

    args.dir.mkdir(parents=True, exist_ok=True)
    out = run(sizes, args.game, args.dir, say)
    if args.json:
        print(json.dumps(out))
    else:
        print(f"   peak RSS growth over the sizes: {out['peak_rss_growth_mib']} MiB; "
              f"10k games: {out.get('cpu_s_10k')} s CPU (target <= 30)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
