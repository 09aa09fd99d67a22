"""Efficiency at every latency, CPU per critical step and the stable prompt prefix, per
game.

    python -m benchmarks efficiency          # a table
    python -m benchmarks efficiency --json   # JSON alone on stdout

1. Efficiency = wall time / ideal, where ideal = (sum over games of the calls on the
   game's critical path) x latency / concurrency (bench_tournament.efficiency): Stille
   Post, LLM seats on the simulated provider, through the tournament runner. One row per
   latency and concurrency: {"latency_ms", "concurrency", "workers", "efficiency"}.
2. `cpu_ms_per_step`: process CPU of a zero-latency tournament divided by its critical
   steps (the CPU-bound ceiling of the runner), per game with LLM prompts that can be
   simulated here (Stille Post, The Chameleon).
3. `stable_prefix_share`: the share of input tokens in the prefix each request shares
   with the same seat's previous request (what provider caching can serve). Stille Post
   is played by the emulators' policy (correct guesses and hints happen, as in
   bench_providers); The Chameleon by benchmarks/simchameleon.py. For Stille Post the
   share is also given with the hints moved out of the system prompt
   (`stable_prefix_share_hints_last`): RULES.md §1 puts them in the system prompt and the
   recorded cassettes hold that, so it is a measured what-if, not a change.

Sizes: BENCH_EFF_GAMES (256), BENCH_EFF_LATENCIES_MS ("500,100,50,10"),
BENCH_EFF_CONCURRENCIES ("16,64,256"), BENCH_EFF_WORKERS ("1,2": processes),
BENCH_EFF_CPU_GAMES (300),
BENCH_EFF_PREFIX_GAMES (3: bench_providers has three distinct line-ups).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.prefix import common_prefix, serialise
from benchmarks.simchameleon import ChameleonSimProvider, Meter

ROOT = Path(__file__).resolve().parents[1]
CHAMELEON_STEPS = ("turn_start", "vote_start", "tie_break_request", "second_chance",
                   "repair_request")


def _ints(name: str, default: str) -> list[int]:
    return [int(x) for x in os.environ.get(name, default).split(",") if x.strip()]


def efficiency_rows(games: int) -> list[dict[str, Any]]:
    from benchmarks.bench_tournament import efficiency

    rows = []
    for workers in _ints("BENCH_EFF_WORKERS", "1,2"):
        for latency_ms in _ints("BENCH_EFF_LATENCIES_MS", "500,100,50,10"):
            for conc in _ints("BENCH_EFF_CONCURRENCIES", "16,64,256"):
                r = efficiency(games, conc, latency_ms / 1000, workers=workers)
                rows.append({"latency_ms": latency_ms, "concurrency": conc,
                             "workers": workers, "efficiency": r["ratio"], "games": games,
                             "wall_s": r["wall_s"], "ideal_s": r["ideal_s"],
                             "cpu_s": r["cpu_s"]})
    return rows


def _cpu_per_step(game: str, players: tuple[str, ...], factory: Any,
                  step_types: tuple[str, ...], games: int) -> float:
    from stille_post.tournament import TournamentConfig, run_tournament
    from stille_post.tournament.results import load_results

    cfg = TournamentConfig(game=game, games=games, seed=1, players=players)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "t"
        t0 = time.process_time()
        asyncio.run(run_tournament(cfg, out, concurrency=64, llm_factory=factory,
                                   durable=False))
        cpu = time.process_time() - t0
        steps = sum(sum(e.type in step_types for e in t.events)
                    for t in load_results(out).transcripts())
    return cpu / steps * 1000


def cpu_per_step_stille_post(games: int) -> float:
    from benchmarks.bench_tournament import SEQUENTIAL_EVENTS, SIM_SEATS
    from stille_post.players.llm import LLMPlayer
    from stille_post.providers.simulated import SimulatedProvider

    def factory(spec: str, prompts: Any) -> Any:
        return LLMPlayer(SimulatedProvider(spec.partition(":")[2], latency_s=0.0), prompts,
                         name=spec)

    return _cpu_per_step("stille-post", SIM_SEATS, factory, SEQUENTIAL_EVENTS, games)


def cpu_per_step_chameleon(games: int) -> float:
    from stille_post.players.llm import LLMPlayer

    def factory(spec: str, prompts: Any) -> Any:
        return LLMPlayer(ChameleonSimProvider(0.0, Meter()), prompts, name=spec)

    return _cpu_per_step("chameleon", tuple(f"openai:sim-{i}" for i in range(4)), factory,
                         CHAMELEON_STEPS, games)


# --- stable prefix --------------------------------------------------------------------------


def prefix_share(per_seat: dict[int, list[str]]) -> float:
    """Against the same seat's previous request (the issue's 75.3% figure)."""
    total = shared = 0
    for texts in per_seat.values():
        prev = ""
        for text in texts:
            total += len(text)
            shared += common_prefix(prev, text)
            prev = text
    return shared / total if total else 0.0


def prefix_share_any(sequence: list[str]) -> float:
    """Against the longest prefix of any earlier request (in the order sent), which is
    how provider prompt caches match: other seats and earlier games count too."""
    total = shared = 0
    seen: list[str] = []
    for text in sequence:
        total += len(text)
        shared += max((common_prefix(p, text) for p in seen), default=0)
        seen.append(text)
    return shared / total if total else 0.0


def _round_robin(per_seat: dict[int, list[str]]) -> list[str]:
    """One game's requests in about the order they were sent (seats take turns)."""
    out: list[str] = []
    queues = [list(v) for _, v in sorted(per_seat.items())]
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def stille_post_prefix(games: int) -> dict[str, float]:
    """Per-seat and any-request shares, as rendered and in two what-ifs: the hints at the
    end of the request, and also "You are Player X" moved from the first sentence of the
    system prompt to its end (so every seat and game shares the rules and tools)."""
    from benchmarks.bench_providers import LINEUPS, play_logged
    from stille_post.games.stille_post.prompts import HINTS_HEADER

    variants = ("as_rendered", "hints_last", "seat_and_hints_last")
    per_seat: dict[str, dict[int, list[str]]] = {v: defaultdict(list) for v in variants}
    sequence: dict[str, list[str]] = {v: [] for v in variants}
    for g in range(games):
        logs, _, _ = play_logged(LINEUPS[g % len(LINEUPS)], 2026 + g)
        game: dict[str, dict[int, list[str]]] = {v: defaultdict(list) for v in variants}
        for seat, requests in logs.items():
            for r in requests:
                rules, sep, hints = r.system.partition(f"\n\n{HINTS_HEADER}\n")
                late = json.dumps(sep + hints) if sep else ""
                asis = serialise(r.system, r.messages, r.tools)
                text = serialise(rules, r.messages, r.tools)
                hl = text[:-1] + "," + late + "]" if late else text
                anon = rules.replace(f"You are Player {seat} in", "You are a player in", 1)
                text = serialise(anon, r.messages, r.tools)
                shl = text[:-1] + "," + json.dumps(f"You are Player {seat}." + sep + hints) + "]"
                for v, t in zip(variants, (asis, hl, shl), strict=True):
                    game[v][seat].append(t)
        for v in variants:
            for seat, texts in game[v].items():
                per_seat[v][g * 100 + seat] = texts
            sequence[v].extend(_round_robin(game[v]))
    out: dict[str, float] = {}
    for v in variants:
        key = "" if v == "as_rendered" else "_" + v
        out["stable_prefix_share" + key] = prefix_share(per_seat[v])
        out["stable_prefix_share_any" + key] = prefix_share_any(sequence[v])
    return out


def chameleon_prefix(games: int) -> dict[str, float]:
    from stille_post.core.rng import make_rng
    from stille_post.games import get_game
    from stille_post.games.kit.setup import prepare
    from stille_post.players.llm import LLMPlayer

    per_seat: dict[int, list[str]] = defaultdict(list)
    game = get_game("chameleon")

    class Logging(ChameleonSimProvider):
        def __init__(self, key: int) -> None:
            super().__init__(0.0, Meter())
            self.key = key

        async def complete(self, request: Any) -> Any:
            per_seat[self.key].append(serialise(request.system, request.messages,
                                                 request.tools))
            return await super().complete(request)

    async def run() -> None:
        for g in range(games):
            seats = iter(range(1, 5))

            def factory(spec: str, prompts: Any, g: int = g, seats: Any = seats) -> Any:
                return LLMPlayer(Logging(g * 100 + next(seats)), prompts, name=spec)

            prepared = prepare(game, seed=g, rng=make_rng(g),
                               players=[f"openai:sim-{i}" for i in range(4)], options={},
                               llm_factory=factory)
            await prepared.play(None)

    asyncio.run(run())
    games_of: dict[int, dict[int, list[str]]] = defaultdict(dict)
    for key, texts in per_seat.items():
        games_of[key // 100][key % 100] = texts
    sequence = [t for g in sorted(games_of) for t in _round_robin(games_of[g])]
    return {"stable_prefix_share": prefix_share(per_seat),
            "stable_prefix_share_any": prefix_share_any(sequence)}


def measure() -> dict[str, Any]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)
    games = int(os.environ.get("BENCH_EFF_GAMES", 256))
    cpu_games = int(os.environ.get("BENCH_EFF_CPU_GAMES", 300))
    prefix_games = int(os.environ.get("BENCH_EFF_PREFIX_GAMES", 3))
    per_game = {
        "stille-post": {"cpu_ms_per_step": cpu_per_step_stille_post(cpu_games),
                        **stille_post_prefix(prefix_games)},
        "chameleon": {"cpu_ms_per_step": cpu_per_step_chameleon(cpu_games),
                      **chameleon_prefix(prefix_games * 8)},
    }
    return {"rows": efficiency_rows(games), "games": per_game,
            "load": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    argv = list(argv or [])
    r = measure()
    if "--json" in argv:
        print(json.dumps(r))
        return 0
    print(f"   efficiency = wall / ideal (Stille Post, {r['rows'][0]['games']} games, full "
          "LLM-player path, simulated provider):")
    for row in r["rows"]:
        print(f"   W={row['workers']} {row['latency_ms']:4d} ms x {row['concurrency']:3d}: "
              f"{row['efficiency']:6.3f}  (wall {row['wall_s']:.2f} s, ideal "
              f"{row['ideal_s']:.2f} s, CPU {row['cpu_s']:.1f} s)")
    for game, g in r["games"].items():
        print(f"   {game}: {g['cpu_ms_per_step']:.3f} ms CPU per critical step")
        for k, v in g.items():
            if k.startswith("stable_prefix"):
                print(f"      {k}: {v:.1%}")
    print(f"   (load average {r['load']:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
