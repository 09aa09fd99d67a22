"""Persistence (issue 28, item 3): CPU per game (user + sys) of a bot tournament whose
transcripts go to the real disk, with the default fsync and with --no-fsync, for Stille
Post and the Chameleon. One process, concurrency 8, played in this process, so the CPU
is the run's alone (no import, no summary).

    python -m benchmarks persist [--json]

Sizes: BENCH_PERSIST_GAMES (2000). Folder: BENCH_PERSIST_DIR, else `.bench-persist/` in
the working directory: never /dev/shm, and its filesystem is printed. Each run writes a
fresh folder; all are removed at the end (kept with BENCH_PERSIST_KEEP=1), not between
runs, because on ext4 without a journal a file created within ~30 s of many deletions
costs up to ~0.8 ms more kernel CPU (the inode allocator skips recently deleted inodes):
run it twice in a row without BENCH_PERSIST_KEEP and the second run measures that, not
the tournament. docs/performance-real-path.md has the figures.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from stille_post.tournament import TournamentConfig, run_tournament


def _cpu() -> tuple[float, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def filesystem(path: Path) -> str:
    """The type of the filesystem holding `path` (from /proc/mounts; '?' elsewhere)."""
    best, kind = "", "?"
    try:
        with open("/proc/mounts", encoding="utf-8") as fh:
            for line in fh:
                _, mount, fstype, *_ = line.split()
                if str(path.resolve()).startswith(mount) and len(mount) > len(best):
                    best, kind = mount, fstype
    except OSError:
        pass
    return kind


def one(game: str, games: int, durable: bool, folder: Path) -> dict[str, Any]:
    config = TournamentConfig(game=game, games=games, seed=1)
    (u0, s0), t0 = _cpu(), time.perf_counter()
    asyncio.run(run_tournament(config, folder, concurrency=8, durable=durable))
    (u1, s1), t1 = _cpu(), time.perf_counter()
    return {"game": game, "games": games, "fsync": durable,
            "user_ms": round((u1 - u0) / games * 1e3, 3),
            "sys_ms": round((s1 - s0) / games * 1e3, 3),
            "cpu_ms": round((u1 - u0 + s1 - s0) / games * 1e3, 3),
            "wall_s": round(t1 - t0, 2)}


def measure() -> dict[str, Any]:
    games = int(os.environ.get("BENCH_PERSIST_GAMES", 2000))
    root = Path(os.environ.get("BENCH_PERSIST_DIR") or ".bench-persist") / f"run-{os.getpid()}"
    root.mkdir(parents=True)
    load0 = os.getloadavg()[0]
    rows = []
    try:
        one("stille-post", 50, True, root / "warm-up")  # imports and first-use caches
        for game in ("stille-post", "chameleon"):
            for durable in (True, False):
                rows.append(one(game, games, durable, root / f"{game}-{durable}"))
    finally:
        if not os.environ.get("BENCH_PERSIST_KEEP"):
            shutil.rmtree(root, ignore_errors=True)
    return {"rows": rows, "folder": str(root), "filesystem": filesystem(root.parent),
            "load_before": load0, "load_after": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    r = measure()
    if "--json" in (argv or []):
        print(json.dumps(r))
        return 0
    for row in r["rows"]:
        print(f"   {row['game']:12s} {'fsync' if row['fsync'] else 'no fsync':8s} "
              f"{row['cpu_ms']:.2f} ms of CPU per game (user {row['user_ms']:.2f}, sys "
              f"{row['sys_ms']:.2f}); {row['games']} games in {row['wall_s']:.1f} s")
    print(f"   (folder {r['folder']}, {r['filesystem']}; load average {r['load_before']:.1f}"
          f" -> {r['load_after']:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
