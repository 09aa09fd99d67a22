"""The real path: a tournament whose LLM seats go through the real SDK adapters, over
loopback HTTP, to a server answering after a set latency (benchmarks/loopback.py), with
transcripts on the real disk (a temporary folder under BENCH_REAL_DIR, default the
working directory's `.bench-real/`, never /dev/shm; its path is in every result).

`real_tournament(kind, games, concurrency, latency_s)` plays Stille Post with four seats
of one provider kind, exactly as `stille-post tournament --online` builds them
(cli/llm_seats.py: the session, the SeatFactory, the adapters' defaults; the CLI's
number of processes unless `workers` is given), and returns wall time, the ideal
(bench_tournament.ideal_wall: the least wall time in which `concurrency` slots can play
the games' critical paths at the latency), the CPU of this process and its workers (the
server's is its own process) and the peak of calls in flight. `real_grid()` runs it for
every kind at every latency and width (`python -m benchmarks efficiency --real`).

Sizes of the grid (short by default; the machine is shared): BENCH_REAL_GAMES (32),
BENCH_REAL_LATENCIES_MS ("100,50"), BENCH_REAL_CONCURRENCIES ("64"), BENCH_REAL_KINDS
(all four). BENCH_REAL_TLS=1 serves HTTPS, as the cloud APIs do (loopback.py `tls`).
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.bench_tournament import critical_paths, ideal_wall
from benchmarks.loopback import loopback_server

KINDS = ("openai", "anthropic", "google", "openai-compatible")
# Four seats per kind (roster ids: the game's identities); openai-compatible seats are
# not reasoning models, which refuse its `max_tokens`.
LINEUPS: dict[str, tuple[str, ...]] = {
    "openai": ("gpt-5-mini", "gpt-4.1", "gpt-5-nano", "gpt-4.1-mini"),
    "anthropic": ("claude-opus-4-6", "claude-sonnet-4-5-20250929",
                  "claude-haiku-4-5-20241022", "claude-3-5-haiku-latest"),
    "google": ("gemini-2.5-flash", "gemini-3-flash-preview", "gemini-3-pro-preview",
               "gemini-2.5-pro"),
    "openai-compatible": ("gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4o"),
}
API_OF = {"openai": "openai", "openai-compatible": "openai", "anthropic": "anthropic",
          "google": "google"}
DUMMY_KEYS = {"OPENAI_API_KEY": "loopback-key", "ANTHROPIC_API_KEY": "loopback-key",
              "GEMINI_API_KEY": "loopback-key", "OPENAI_COMPATIBLE_API_KEY": "loopback-key"}


def cpu_self() -> float:
    """CPU of this process and of the worker processes it has joined. The loopback
    server is a child too, but still running (not waited for), so the kernel has not
    added its time to RUSAGE_CHILDREN: it is never counted."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


@contextmanager
def bench_folder() -> Iterator[Path]:
    """A temporary folder on the real disk."""
    parent = Path(os.environ.get("BENCH_REAL_DIR", ".bench-real")).resolve()
    parent.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix="real-", dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def _dummy_keys() -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in DUMMY_KEYS}
    os.environ.update(DUMMY_KEYS)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def seats_for(kind: str, url: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """Seat specs, and the base URLs the factory points each kind at."""
    if kind == "openai-compatible":
        return tuple(f"{kind}:{m}@{url}" for m in LINEUPS[kind]), {}
    return tuple(f"{kind}:{m}" for m in LINEUPS[kind]), {kind: url}


def real_tournament(kind: str, games: int, concurrency: int, latency_s: float, *,
                    max_in_flight: Mapping[str, int] | None = None, durable: bool = True,
                    game: str = "stille-post", workers: int | None = None,
                    tls: bool = False) -> dict[str, Any]:
    from stille_post.providers import create_provider

    with loopback_server(API_OF[kind], latency_s, tls=tls) as url, _dummy_keys(), \
            bench_folder() as folder:
        seats, base_urls = seats_for(kind, url)
        # The SDK is imported before the clock starts, as a process's start-up (about
        # 0.5 s for openai, in `sdk_import_s`), not as part of the games' wall time.
        i0 = time.perf_counter()
        create_provider(kind, LINEUPS[kind][0], base_url=url)
        sdk_import = time.perf_counter() - i0
        server0 = url.cpu_s()
        run = play_real(folder / "t", seats, base_urls, game=game, games=games,
                        concurrency=concurrency, max_in_flight=max_in_flight,
                        durable=durable, workers=workers)
        server1 = url.cpu_s()
        server_cpu = None if server0 is None or server1 is None else server1 - server0
        paths = critical_paths(folder / "t")
        steps = sum(paths)
        ideal = ideal_wall(paths, latency_s, concurrency)
        return {"kind": kind, "games": games, "concurrency": concurrency,
                "latency_ms": round(latency_s * 1000), "critical_path_calls": steps,
                "wall_s": run.wall_s, "ideal_s": ideal, "efficiency": run.wall_s / ideal,
                "cpu_s": run.cpu_s, "cpu_ms_per_step": run.cpu_s * 1000 / steps,
                "peak_in_flight": run.peak_in_flight, "folder": str(folder),
                "durable": durable, "load": os.getloadavg()[0], "sdk_import_s": sdk_import,
                "workers": run.workers, "server_cpu_s": server_cpu, "tls": tls}


@dataclass
class RealRun:
    wall_s: float
    cpu_s: float  # this process and its worker processes
    peak_in_flight: int
    workers: int


def play_real(folder: Path, seats: tuple[str, ...], base_urls: Mapping[str, str], *,
              game: str, games: int, concurrency: int, options: Mapping[str, Any] | None = None,
              max_in_flight: Mapping[str, int] | None = None, durable: bool = True,
              workers: int | None = None) -> RealRun:
    """A tournament of LLM seats built as `stille-post tournament --online` builds them
    (the session, the SeatFactory, the adapters' defaults; the CLI's number of processes
    unless `workers` is given), timed. The keys and the server are the caller's."""
    from stille_post.cli.llm_seats import llm_session
    from stille_post.cli.tournament import workers_for
    from stille_post.providers import inflight
    from stille_post.tournament import TournamentConfig, run_tournament
    from stille_post.tournament.caps import Caps
    from stille_post.tournament.settings import TournamentSettings

    peak = [0]

    async def play(processes: int) -> None:
        async def watch() -> None:
            while True:
                peak[0] = max(peak[0], inflight.in_flight())
                await asyncio.sleep(0.02)

        watcher = asyncio.create_task(watch())
        try:
            cfg = TournamentConfig(game=game, games=games, seed=1, players=seats,
                                   options=dict(options or {}))
            await run_tournament(cfg, folder, concurrency=concurrency, llm_factory=factory,
                                 durable=durable, workers=processes)
        finally:
            watcher.cancel()

    with llm_session(online=True, record=None, replay=None, base_urls=base_urls,
                     keep_providers=False, max_in_flight=max_in_flight) as factory:
        # Unless given: what `stille-post tournament` would choose, in the same session.
        processes = workers or workers_for(TournamentSettings(
            game=game, players=list(seats), concurrency=concurrency), True, Caps())
        t0, cpu0 = time.perf_counter(), cpu_self()
        asyncio.run(play(processes))
        return RealRun(time.perf_counter() - t0, cpu_self() - cpu0, peak[0], processes)


def _ints(name: str, default: str) -> list[int]:
    return [int(x) for x in os.environ.get(name, default).split(",") if x.strip()]


def real_grid() -> dict[str, Any]:
    """Efficiency and CPU per step of every kind at every latency x width."""
    games = int(os.environ.get("BENCH_REAL_GAMES", 32))
    kinds = [k for k in os.environ.get("BENCH_REAL_KINDS", ",".join(KINDS)).split(",") if k]
    tls = os.environ.get("BENCH_REAL_TLS", "") not in ("", "0")
    rows = [real_tournament(kind, games, conc, ms / 1000, tls=tls)
            for kind in kinds
            for ms in _ints("BENCH_REAL_LATENCIES_MS", "100,50")
            for conc in _ints("BENCH_REAL_CONCURRENCIES", "64")]
    return {"rows": rows, "folder_parent": str(Path(os.environ.get(
        "BENCH_REAL_DIR", ".bench-real")).resolve()), "load": os.getloadavg()[0]}


def print_grid(r: dict[str, Any]) -> None:
    print("   real path: Stille Post, 4 seats of one kind through its SDK adapter, loopback "
          "HTTP, transcripts fsynced on the real disk")
    for row in r["rows"]:
        print(f"   {row['kind']:17s} {row['latency_ms']:4d} ms x {row['concurrency']:3d}: "
              f"{row['efficiency']:6.3f}  (wall {row['wall_s']:.2f} s, ideal "
              f"{row['ideal_s']:.2f} s, CPU {row['cpu_ms_per_step']:.2f} ms per step, peak "
              f"{row['peak_in_flight']} in flight, load {row['load']:.1f})")
    print(f"   (transcripts under {r['folder_parent']}, removed after each run)")
