"""The peer on the real path: ChatArena 0.1.18's Chameleon beside ours, each through its own
OpenAI client, over loopback HTTP, to one server that answers after a set latency.

    python -m benchmarks peer --real            # a table
    python -m benchmarks peer --real --json     # JSON alone on stdout

The server is benchmarks/loopback.py with the simulated Chameleon player of
benchmarks/simchameleon.py as its model (`answer_for`: the same policy as `peer`, read
off the request, whichever harness sent it) and the emulator's OpenAI wire format.

- **ChatArena** runs its `OpenAIChat` backend as shipped: the module's one sync
  `openai.OpenAI` client, pointed at the server (what `OPENAI_BASE_URL` does), a thread
  pool of `width` threads, one game per thread, nothing written.
- **Ours** runs as `stille-post tournament --online` runs four `openai-compatible` seats
  at the server: the SDK adapter, transcripts and index fsynced on the real disk
  (realpath.bench_folder), the CLI's default number of processes.

Both play 4-player games on an 8-word card. Figures, per width: wall time of GAMES games
(the best of BENCH_PEER_REPEATS runs on each side, alternating), CPU per call (CPU of this
process and its workers ÷ the requests the server answered), and the ratios ours ÷
ChatArena's; ours twice, with the CLI's default processes and in one process as ChatArena
runs. The server's CPU is its own process and counted on neither side.

Sizes: BENCH_PEER_GAMES (200), BENCH_PEER_LATENCY (0.1 s), BENCH_PEER_REPEATS (2),
BENCH_PEER_WIDTHS ("16,64,200").
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from benchmarks.bench_peer import OPTIONS, WIDTHS, _chatarena, chatarena_games
from benchmarks.loopback import Loopback, loopback_server
from benchmarks.realpath import DUMMY_KEYS, _dummy_keys, bench_folder, cpu_self, play_real

SEATS = ("sim-a", "sim-b", "sim-c", "sim-d")


@dataclass
class Side:
    wall_s: float
    cpu_s: float
    calls: int

    @property
    def cpu_ms_per_call(self) -> float:
        return self.cpu_s * 1000 / max(1, self.calls)


def chatarena_real(url: Loopback, games: int, width: int) -> Side:
    """ChatArena's games, its backend's own client aimed at the server."""
    import openai

    ca_openai = _chatarena()[3]
    # ChatArena builds this client when it is imported, from the environment; a user
    # points it at a server with OPENAI_BASE_URL before that. Same client, same options;
    # the module's own is put back after.
    shipped = ca_openai.client
    ca_openai.client = openai.OpenAI(api_key=DUMMY_KEYS["OPENAI_API_KEY"], base_url=url)
    try:
        play_one = chatarena_games(lambda: ca_openai.OpenAIChat(max_tokens=50))
        calls0, t0, cpu0 = url.calls(), time.perf_counter(), cpu_self()
        with ThreadPoolExecutor(width) as pool:
            list(pool.map(play_one, range(games)))
        wall, cpu = time.perf_counter() - t0, cpu_self() - cpu0
        return Side(wall, cpu, url.calls() - calls0)
    finally:
        ca_openai.client.close()
        ca_openai.client = shipped


def ours_real(url: Loopback, games: int, width: int,
              workers: int | None = None) -> tuple[Side, int]:
    """Our games through the SDK adapter (and the number of processes they ran on: the
    CLI's default unless `workers` is given)."""
    seats = tuple(f"openai-compatible:{m}@{url}" for m in SEATS)
    with bench_folder() as folder:
        calls0 = url.calls()
        run = play_real(folder / "t", seats, {}, game="chameleon", games=games,
                        concurrency=width, options=OPTIONS, workers=workers)
        return Side(run.wall_s, run.cpu_s, url.calls() - calls0), run.workers


def measure() -> dict[str, Any]:
    games = int(os.environ.get("BENCH_PEER_GAMES", 200))
    latency = float(os.environ.get("BENCH_PEER_LATENCY", 0.1))
    repeats = max(1, int(os.environ.get("BENCH_PEER_REPEATS", 2)))
    widths = [int(w) for w in os.environ.get("BENCH_PEER_WIDTHS", ",".join(map(str, WIDTHS)))
              .split(",") if w.strip()]
    out: dict[str, Any] = {"games": games, "latency_ms": latency * 1000, "repeats": repeats,
                           "rows": []}
    with loopback_server("openai", latency, model="chameleon") as url, _dummy_keys():
        # Warm both sides (imports, first-game caches, the server's first answers).
        ours_real(url, 4, 4)
        chatarena_real(url, 4, 4)
        server0 = url.cpu_s()
        for width in widths:
            best: dict[str, Side] = {}
            workers = 1
            for _ in range(repeats):
                ours, workers = ours_real(url, games, width)
                runs = {"ours": ours, "ours_one_process": ours_real(url, games, width, 1)[0],
                        "chatarena": chatarena_real(url, games, width)}
                for side, run in runs.items():
                    if side not in best or run.wall_s < best[side].wall_s:
                        best[side] = run
            row: dict[str, Any] = {"width": width, "ours_workers": workers}
            for side, run in best.items():
                row[side] = asdict(run)
                row[f"{side}_cpu_ms_per_call"] = run.cpu_ms_per_call
            theirs = best["chatarena"]
            for side in ("ours", "ours_one_process"):
                prefix = "" if side == "ours" else "one_process_"
                row[f"{prefix}wall_ratio"] = best[side].wall_s / theirs.wall_s
                row[f"{prefix}cpu_per_call_ratio"] = (best[side].cpu_ms_per_call
                                                      / theirs.cpu_ms_per_call)
            out["rows"].append(row)
        server1 = url.cpu_s()
    out["server_cpu_s"] = None if server0 is None or server1 is None else server1 - server0
    out["load"] = os.getloadavg()[0]
    return out


def main(argv: list[str]) -> int:
    try:
        import chatarena  # noqa: F401
    except ImportError:
        print("bench_peer --real: chatarena is not installed here; run `nox -s bench -- peer "
              "--real` (it installs chatarena==0.1.18 in the bench session only)",
              file=sys.stderr)
        return 0 if "--json" not in argv else 2
    r = measure()
    if "--json" in argv:
        print(json.dumps(r))
        return 0
    print(f"   real path: ChatArena 0.1.18 Chameleon vs ours, 4 players, 8-word card, each "
          f"through its OpenAI client to a loopback server at {r['latency_ms']:.0f} ms; "
          f"{r['games']} games, best of {r['repeats']} (ratio = ours / ChatArena)")
    for row in r["rows"]:
        o, one, t = row["ours"], row["ours_one_process"], row["chatarena"]
        print(f"   {row['width']:3d} wide: wall ours {o['wall_s']:6.2f} s "
              f"({row['ours_workers']} processes; {one['wall_s']:.2f} s in one), ChatArena "
              f"{t['wall_s']:6.2f} s (threads), ratio {row['wall_ratio']:.2f} "
              f"({row['one_process_wall_ratio']:.2f}); CPU per call ours "
              f"{row['ours_cpu_ms_per_call']:.2f} ms "
              f"({row['ours_one_process_cpu_ms_per_call']:.2f}), ChatArena "
              f"{row['chatarena_cpu_ms_per_call']:.2f} ms, ratio "
              f"{row['cpu_per_call_ratio']:.2f} ({row['one_process_cpu_per_call_ratio']:.2f}); "
              f"calls {o['calls']} / {t['calls']}")
    server = "unknown" if r["server_cpu_s"] is None else f"{r['server_cpu_s']:.2f} s"
    print(f"   (the server's CPU, on neither side: {server}; load {r['load']:.1f}; our "
          "transcripts fsynced on the real disk)")
    return 0
