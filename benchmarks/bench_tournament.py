"""Tournament benchmarks (`python -m benchmarks tournament`):

1. Latency-bound efficiency: games whose seats call a simulated provider with a fixed
   latency, at concurrency C. Ideal = `ideal_wall`: the least time any scheduler needs to
   play games whose critical paths take (sequential calls x latency), C at a time. The
   figure is wall time / ideal; 1.0 is perfect.
2. Memory across many bot games: RSS sampled every 0.25 s by a thread while the games
   stream to disk (not tracemalloc: it slows the games about 3x); also games per second.
3. Rating time: synthetic 4-seat placements (12 models, 30 % with a tie for first),
   TrueSkill passes (compiled once the games x passes are many: tournament/passes.py);
   wall and CPU (worker processes included). Run it alone, e.g.
   `python -c "from benchmarks.bench_tournament import rating; print(rating(10000, 100, 1))"`.

Sizes come from the environment so CI can run it smaller:
    BENCH_EFF_GAMES=500 BENCH_EFF_CONCURRENCY=64 BENCH_EFF_LATENCY=0.2
    BENCH_EFF_LEAN_LATENCY=0.05
    BENCH_MEM_GAMES=10000 BENCH_RATE_GAMES=10000 BENCH_RATE_PASSES=100 BENCH_RATE_WORKERS=2
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from stille_post.games.stille_post.prompts import PROMPTS
from stille_post.players.base import Action, Decision, Player, PromptBook
from stille_post.players.llm import LLMPlayer
from stille_post.providers.base import ChatRequest, Message
from stille_post.providers.simulated import IDENTITY_PROMPT, SimulatedProvider
from stille_post.tournament import TournamentConfig, run_tournament
from stille_post.tournament.ratings import RatedGame, trueskill_passes
from stille_post.tournament.results import load_results

SIM_SEATS = ("openai:gpt-5-mini", "anthropic:claude-opus-4-6", "google:gemini-2.5-flash",
             "openai:gpt-4.1")
# Decisions that each wait for one call; an identity-guess phase asks everyone at once,
# so it costs one latency however many seats answer.
SEQUENTIAL_EVENTS = ("intro_prompt", "turn_start", "identity_guess_start", "repair_request")


def critical_paths(folder: Path) -> list[int]:
    """Each game's sequential calls (its critical path), from its transcript."""
    return [sum(e.type in SEQUENTIAL_EVENTS for e in t.events)
            for t in load_results(folder).transcripts()]


def ideal_wall(paths: list[int], latency: float, width: int) -> float:
    """The least wall time in which `width` slots can play games whose critical paths are
    `paths` calls of `latency` each, with no CPU cost at all.

    max(total / width, (k + 1) x the (k*width + 1)-th longest path, for every k): the
    second term because among the k*width + 1 longest games some slot plays k + 1 of
    them one after another (k = 0: the longest game). Equal games, n of them, give
    ceil(n / width) x one game: 200 games of 1.8 s, 64 at a time, need 7.2 s, not the
    5.6 s of the total divided by the width (the ideal used before 2026-11-27)."""
    if not paths:
        return 0.0
    width = max(1, min(width, len(paths)))
    longest = sorted(paths, reverse=True)
    rounds = max((k + 1) * longest[k * width] for k in range(-(-len(longest) // width)))
    return max(sum(paths) / width, rounds) * latency


def _env(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


class LeanSeat:
    """An LLM seat without prompt rendering: one fixed request per decision kind. It
    takes the prompt renderer's CPU (each call re-renders the seat's whole history) out
    of the figure; the engine's own CPU per call (events, transcript lines) remains, and
    at 50 ms x concurrency 64 that alone keeps one core about 60% busy."""

    _REQUESTS: ClassVar[dict[str, ChatRequest]] = {
        "turn": ChatRequest("", [Message("user", "your turn")], tool_choice="auto"),
        "identity_guess": ChatRequest("", [Message("user", f"{IDENTITY_PROMPT}1")],
                                      tool_choice="none"),
    }
    _INTRO = ChatRequest("", [Message("user", "introduce yourself")], tool_choice="none")

    def __init__(self, provider: SimulatedProvider, name: str) -> None:
        self.provider = provider
        self.name = name

    async def decide(self, decision: Decision[Any]) -> Action:
        c = await self.provider.complete(self._REQUESTS.get(decision.kind, self._INTRO))
        return Action(text=c.text, tool_calls=tuple(c.tool_calls), usage=c.usage,
                      model=c.model)


def efficiency(games: int, concurrency: int, latency: float,
               lean: bool = False, workers: int = 1) -> dict[str, float]:
    def factory(spec: str, prompts: PromptBook) -> Player:
        provider = SimulatedProvider(spec.partition(":")[2], latency_s=latency)
        if lean:
            return LeanSeat(provider, spec)
        return LLMPlayer(provider, prompts or PROMPTS, name=spec)

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "eff"
        cfg = TournamentConfig(game="stille-post", games=games, seed=1, players=SIM_SEATS)
        t0, cpu0 = time.perf_counter(), _cpu()
        asyncio.run(run_tournament(cfg, out, concurrency=concurrency, llm_factory=factory,
                                   durable=False, workers=workers))
        wall = time.perf_counter() - t0
        cpu = _cpu() - cpu0
        paths = critical_paths(out)
    steps = sum(paths)
    ideal = ideal_wall(paths, latency, concurrency)
    return {"games": games, "concurrency": concurrency, "latency_s": latency,
            "critical_path_calls": steps, "wall_s": wall, "cpu_s": cpu, "ideal_s": ideal,
            "ratio": wall / ideal}


def _cpu() -> float:
    """CPU of this process and of its finished children (worker processes)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def memory(games: int, concurrency: int = 8) -> dict[str, object]:
    samples: list[tuple[float, int]] = []
    stop = threading.Event()

    def sample() -> None:
        t0 = time.perf_counter()
        while not stop.wait(0.25):
            samples.append((time.perf_counter() - t0, _rss_kib()))

    sampler = threading.Thread(target=sample, daemon=True)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = TournamentConfig(game="stille-post", games=games, seed=1)
        start_rss = _rss_kib()
        sampler.start()
        t0 = time.perf_counter()
        asyncio.run(run_tournament(cfg, Path(tmp) / "mem", concurrency=concurrency,
                                   durable=False))
        wall = time.perf_counter() - t0
        stop.set()
        sampler.join()
    rss = [kib for _, kib in samples] or [start_rss]
    n = len(rss)
    deciles = [max(rss[i * n // 10:(i + 1) * n // 10] or [rss[min(i * n // 10, n - 1)]])
               for i in range(10)]
    return {"games": games, "wall_s": wall, "games_per_s": games / wall,
            "rss_start_mib": start_rss / 1024, "rss_first_10pct_max_mib": deciles[0] / 1024,
            "rss_last_10pct_max_mib": deciles[-1] / 1024, "rss_peak_mib": max(rss) / 1024,
            "deciles_mib": [round(d / 1024, 1) for d in deciles]}


def rating(games: int, passes: int, workers: int) -> dict[str, float]:
    rng = random.Random(7)
    names = [f"model-{i}" for i in range(12)]
    synthetic = []
    for g in range(games):
        seats = rng.sample(names, 4)
        ranks = [1, 2, 3, 4]
        if rng.random() < 0.3:
            ranks = [1, 1, 3, 4]  # ties, as in simultaneous Stille Post winners
        synthetic.append(RatedGame(str(g), tuple(zip(seats, ranks, strict=True)),
                                   tuple(r == 1 for r in ranks)))
    t0, cpu0 = time.perf_counter(), _cpu()
    trueskill_passes(synthetic, passes=passes, seed=0, workers=workers)
    wall = time.perf_counter() - t0
    cpu = _cpu() - cpu0  # the worker processes' too (they have ended)
    return {"games": games, "passes": passes, "workers": workers, "wall_s": wall,
            "cpu_s": cpu, "ms_per_rate_call": cpu * 1000 / (games * passes)}


def main() -> None:
    games, conc = int(_env("BENCH_EFF_GAMES", 500)), int(_env("BENCH_EFF_CONCURRENCY", 64))
    runs = [(_env("BENCH_EFF_LATENCY", 0.2), False), (_env("BENCH_EFF_LEAN_LATENCY", 0.05), True)]
    for latency, lean in runs:
        eff = efficiency(games, conc, latency, lean=lean)
        path = "LeanSeat, no prompt rendering" if lean else "full LLMPlayer path"
        print(f"   efficiency ({path}): "
              f"{eff['games']} games, concurrency {eff['concurrency']}, latency "
              f"{eff['latency_s'] * 1000:.0f} ms: wall {eff['wall_s']:.2f} s, ideal "
              f"{eff['ideal_s']:.2f} s -> ratio {eff['ratio']:.3f}"
              f"{' (informative: engine CPU bound)' if lean else ' (target <= 1.10)'}; "
              f"CPU {eff['cpu_s']:.1f} s")
    mem = memory(int(_env("BENCH_MEM_GAMES", 10_000)))
    print(f"   memory: {mem['games']} bot games in {mem['wall_s']:.1f} s "
          f"({mem['games_per_s']:.0f} games/s); RSS max first 10% "
          f"{mem['rss_first_10pct_max_mib']:.1f} MiB, last 10% "
          f"{mem['rss_last_10pct_max_mib']:.1f} MiB, peak {mem['rss_peak_mib']:.1f} MiB")
    print(f"   memory deciles (MiB): {mem['deciles_mib']}")
    rate = rating(int(_env("BENCH_RATE_GAMES", 10_000)), int(_env("BENCH_RATE_PASSES", 100)),
                  int(_env("BENCH_RATE_WORKERS", 2)))
    print(f"   rating: {rate['games']} games x {rate['passes']} passes on {rate['workers']} "
          f"workers: {rate['wall_s']:.1f} s wall, {rate['cpu_s']:.1f} s CPU "
          f"({rate['ms_per_rate_call']:.3f} ms of CPU per rate call)")


if __name__ == "__main__":
    main()
