"""Efficiency at every latency, CPU per critical step, and per game with LLM prompts the
input tokens, the stable prompt prefix and the billable-equivalent input.

    python -m benchmarks efficiency                   # a table
    python -m benchmarks efficiency --json            # JSON alone on stdout
    python -m benchmarks efficiency --tokens [--json] # only the token figures (3 s)
    python -m benchmarks efficiency --real [--json]   # the grid through the real SDKs

`--real`: the same efficiency and CPU per step, but every call goes through a real SDK
adapter (openai, anthropic, google, openai-compatible) over loopback HTTP to a server
that answers after the latency, transcripts on the real disk (benchmarks/realpath.py).

1. Efficiency = wall time / ideal, where ideal = (sum over games of the calls on the
   game's critical path) x latency / concurrency (bench_tournament.efficiency): Stille
   Post, LLM seats on the simulated provider, through the tournament runner. One row per
   latency and concurrency: {"latency_ms", "concurrency", "workers", "efficiency"}.
2. `cpu_ms_per_step`: process CPU of a zero-latency tournament divided by its critical
   steps (the CPU-bound ceiling of the runner), per game with LLM prompts that can be
   simulated here (Stille Post, The Chameleon).
3. Per game ("games" -> stille-post, chameleon, elimination, connections), every seat an
   LLM answered in-process by a deterministic policy (Stille Post and the Elimination
   Game: the emulators' policies, as bench_providers and bench_elimination; The
   Chameleon: benchmarks/simchameleon.py; Connections: its cassettes' policy), several
   games in a row, every request serialised in the order the APIs cache it (tools,
   system, messages) and counted at ~4 characters per token:
   - `calls_per_game`, `input_tokens_per_game`;
   - `stable_prefix_share`: the share of input in the prefix each request shares with
     the same seat's previous request;
   - `stable_prefix_share_any`: ... with any earlier request in the order sent, other
     seats and earlier games included, which is how a provider's cache matches within
     its lifetime (minutes; the whole run takes seconds);
   - `stable_prefix_bound`: the most that share could be under any prompt layout that
     keeps a seat's own answers as assistant turns (RULES.md §1): what follows each
     request's newest own answer is new whatever the layout (benchmarks/prefix.py
     `own_answer_tail`). The deterministic policies repeat themselves across games,
     which can lift a measured share above it; real models' answers do not;
   - `billable_input_per_game` {model: input-token equivalents}: what each priced model
     would bill under its provider's caching rules (benchmarks/prefix.py `CacheRule`:
     OpenAI and Gemini implicit, Anthropic at our adapter's breakpoints, its cached
     messages lost when `tool_choice` changes), cached tokens
     weighted by the cached/uncached price ratio of providers/data/prices.toml (and
     Anthropic's cache writes at 1.25x), with one cache for all seats (one model plays
     every seat); `_mixed`: each seat's model its own cache (a mixed line-up);
     `_anthropic_breakpoint_last_only`: Anthropic under the adapter's placement before
     issue 15 (the system prompt and the last block only, see CacheRule), one cache.
   For Stille Post the shares are also given with the hints moved out of the system
   prompt (`..._hints_last`, and `..._seat_and_hints_last`): RULES.md §1 puts them in
   the system prompt and the recorded cassettes hold that, so it is a measured what-if,
   not a change.

Sizes: BENCH_EFF_GAMES (256), BENCH_EFF_LATENCIES_MS ("500,100,50,10"),
BENCH_EFF_CONCURRENCIES ("16,64,256"), BENCH_EFF_WORKERS ("1,2": processes),
BENCH_EFF_CPU_GAMES (300),
BENCH_EFF_PREFIX_GAMES (3 games per game with LLM prompts, 8x that for The Chameleon's
short games; bench_providers has three distinct Stille Post line-ups).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.prefix import (
    CacheRule,
    PrefixIndex,
    bill,
    billed,
    common_prefix,
    serialise,
    serialise_request,
    stable_prefix_bound,
    tokens,
)
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


# --- stable prefix, tokens and billable input, per game -------------------------------------
#
# Each game is played by LLM seats on an in-process policy (no network); every request is
# recorded in the order it was sent, with the seat's model: (model, seat key, request).
# Several games are played in a row, so "any earlier request" includes earlier games, as
# a provider's cache does within its lifetime (minutes; these runs take seconds).

Record = tuple[str, str, Any]


class _Log(list[Any]):
    """A seat's request log that also appends to the run's sequence, in sending order."""

    def __init__(self, sequence: list[Record], model: str, key: str) -> None:
        super().__init__()
        self.sequence, self.model, self.key = sequence, model, key

    def append(self, request: Any) -> None:
        super().append(request)
        self.sequence.append((self.model, self.key, request))


def _play(game: str, games: int, seed0: int, seats: Any, options: Any,
          provider: Any) -> list[Record]:
    """`games` games of `game` (game g: seed seed0 + g, line-up seats(g), options(g));
    `provider(model, log)` answers a seat and appends every request to `log`."""
    from stille_post.players.llm import LLMPlayer
    from stille_post.session import play_game

    sequence: list[Record] = []
    with tempfile.TemporaryDirectory() as tmp:
        for g in range(games):
            lineup = seats(g)

            def factory(spec: str, prompts: Any, g: int = g, lineup: Any = lineup) -> Any:
                log = _Log(sequence, spec, f"{g}:{lineup.index(spec) + 1}")
                return LLMPlayer(provider(spec.split(":", 1)[1], log), prompts, name=spec)

            asyncio.run(play_game(game, seed=seed0 + g, out=Path(tmp) / f"{g}.jsonl",
                                  players=list(lineup), options=options(g),
                                  llm_factory=factory))
    return sequence


def stille_post_requests(games: int) -> list[Record]:
    """The standard configuration, the emulators' policy, bench_providers' line-ups."""
    from benchmarks.bench_providers import LINEUPS, PolicyProvider

    return _play("stille-post", games, 2026, lambda g: LINEUPS[g % len(LINEUPS)],
                 lambda g: {}, PolicyProvider)


def chameleon_requests(games: int) -> list[Record]:
    """The default configuration (4 seats, 16 words), benchmarks/simchameleon.py."""

    def provider(model: str, log: list[Any]) -> Any:
        class Logging(ChameleonSimProvider):
            async def complete(self, request: Any) -> Any:
                log.append(request)
                return await super().complete(request)

        return Logging(0.0, Meter())

    return _play("chameleon", games, 0, lambda g: [f"openai:sim-{i}" for i in range(4)],
                 lambda g: {}, provider)


def elimination_requests(games: int) -> list[Record]:
    """8 LLM seats on the emulators' Elimination policy (as bench_elimination)."""
    from benchmarks.bench_elimination import PolicyProvider

    return _play("elimination", games, 1,
                 lambda g: [f"openai:policy-{i}" for i in range(1, 9)], lambda g: {},
                 PolicyProvider)


class _ConnectionsPolicy:
    """The Connections cassettes' deterministic policy, in-process."""

    def __init__(self, model: str, log: list[Any]) -> None:
        self.model, self.log = model, log

    async def complete(self, request: Any) -> Any:
        from stille_post.providers import Completion, ToolCall, Usage
        from tests.connections.record_cassettes import connections_policy

        self.log.append(request)
        last = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
        reply = connections_policy(self.model, request.system, last,
                                   request.tool_choice or "auto",
                                   [t.name for t in request.tools])
        calls = [ToolCall(n, a, f"c{len(self.log)}_{i}")
                 for i, (n, a) in enumerate(reply.tool_calls)]
        return Completion(reply.text, calls, Usage(0, 0, 0), self.model, "stop")


def connections_requests(games: int) -> list[Record]:
    """A setter and two guessers, all LLM seats, default options (50 attempts). The
    policy's setter would pick the same word every game, so each game is given its own
    (the `word` option): repeated identical games would inflate the any-request share."""
    from tests.connections.record_cassettes import SECRETS

    return _play("connections", games, 1,
                 lambda g: ["openai:gpt-5-mini", "openai:gpt-4.1-mini", "openai:gpt-5"],
                 lambda g: {"word": SECRETS[g % len(SECRETS)]}, _ConnectionsPolicy)


def prefix_share(per_seat: dict[str, list[str]]) -> float:
    """Against the same seat's previous request."""
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
    index = PrefixIndex()
    for text in sequence:
        total += len(text)
        shared += index.longest(text)
        index.add(text)
    return shared / total if total else 0.0


def cache_rules() -> list[CacheRule]:
    """Every priced roster model's caching rule (minimums and multipliers from the
    providers' documentation, see docs/llm-seats.md; the cached/uncached price ratio from
    providers/data/prices.toml)."""
    from stille_post.providers.pricing import load_prices

    prices = load_prices()
    mins = {"gpt-": 1024, "claude-opus-4-6": 4096, "claude-sonnet-4-5": 1024,
            "claude-haiku-4-5": 4096, "gemini-3-": 4096, "gemini-2.5-": 2048}
    rules = []
    for model in ("gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1", "gpt-4.1-mini",
                  "gpt-4.1-nano", "claude-opus-4-6", "claude-sonnet-4-5-20250929",
                  "claude-haiku-4-5-20241022", "gemini-3-pro-preview",
                  "gemini-3-flash-preview", "gemini-2.5-flash"):
        price = prices.price(model)
        ratio = price.cached_input / price.input
        least = next(v for k, v in mins.items() if model.startswith(k))
        if model.startswith("gpt-"):
            rules.append(CacheRule(model, "openai", least, ratio, increment=128))
        elif model.startswith("claude-"):
            rules.append(CacheRule(model, "anthropic", least, ratio, write=1.25,
                                   explicit=True))
        else:
            rules.append(CacheRule(model, "google", least, ratio))
    return rules


def figures(records: list[Record], games: int,
            text: Any = serialise_request) -> dict[str, Any]:
    """Per game: calls, input tokens, the stable-prefix shares, and the billable-equivalent
    input of every priced model, (a) one model playing every seat, so all requests share
    one cache, and (b) each seat's model its own cache (a mixed line-up)."""
    per_seat: dict[str, list[str]] = defaultdict(list)
    texts = []
    for _, key, request in records:
        t = text(request)
        per_seat[key].append(t)
        texts.append(t)
    out: dict[str, Any] = {
        "calls_per_game": len(records) / games,
        "input_tokens_per_game": sum(tokens(t) for t in texts) / games,
        "stable_prefix_share": prefix_share(per_seat),
        "stable_prefix_share_any": prefix_share_any(texts),
    }
    if text is not serialise_request:
        return out
    out["stable_prefix_bound"] = stable_prefix_bound([r for _, _, r in records])
    shared = [billed("all", r) for _, _, r in records]
    mixed = [billed(model, r) for model, _, r in records]
    out["billable_input_per_game"] = {}
    out["billable_input_per_game_mixed"] = {}
    # The Anthropic adapter's placement before issue 15 (one cache for all seats, as the
    # first figure): no breakpoint on the block before a closing user turn.
    what_ifs = {"last": "billable_input_per_game_anthropic_breakpoint_last_only"}
    for key in what_ifs.values():
        out[key] = {}
    for rule in cache_rules():
        out["billable_input_per_game"][rule.model] = bill(shared, rule).billable / games
        out["billable_input_per_game_mixed"][rule.model] = bill(mixed, rule).billable / games
        for where, key in what_ifs.items():
            if rule.explicit:
                what_if = dataclasses.replace(rule, breakpoint=where)
                out[key][rule.model] = bill(shared, what_if).billable / games
    return out


def stille_post_figures(games: int) -> dict[str, Any]:
    """As rendered, and two what-ifs (RULES.md §1 puts the hints in the system prompt and
    the recorded cassettes hold that, so they are measured, not changed): the hints at
    the end of the request, and also "You are Player X" moved from the first sentence of
    the system prompt to its end (so every seat and game shares the rules and tools)."""
    from stille_post.games.stille_post.prompts import HINTS_HEADER

    records = stille_post_requests(games)

    def hints_last(r: Any, anonymous: bool = False) -> str:
        rules, sep, hints = r.system.partition(f"\n\n{HINTS_HEADER}\n")
        if anonymous:
            m = re.search(r"You are Player (\d+) in", rules)
            seat = m.group(1) if m else "?"
            rules = rules.replace(f"You are Player {seat} in", "You are a player in", 1)
            late = f"You are Player {seat}." + sep + hints
        else:
            late = sep + hints if sep else ""
        text = serialise(rules, r.messages, r.tools)
        return text[:-1] + "," + json.dumps(late) + "]" if late else text

    out = figures(records, games)
    for name, how in (("hints_last", hints_last),
                      ("seat_and_hints_last", lambda r: hints_last(r, anonymous=True))):
        f = figures(records, games, how)
        out["stable_prefix_share_" + name] = f["stable_prefix_share"]
        out["stable_prefix_share_any_" + name] = f["stable_prefix_share_any"]
    return out


def per_game_figures(prefix_games: int) -> dict[str, dict[str, Any]]:
    return {
        "stille-post": stille_post_figures(prefix_games),
        "chameleon": figures(chameleon_requests(prefix_games * 8), prefix_games * 8),
        "elimination": figures(elimination_requests(prefix_games), prefix_games),
        "connections": figures(connections_requests(prefix_games), prefix_games),
    }


def measure(timing: bool = True) -> dict[str, Any]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)
    games = int(os.environ.get("BENCH_EFF_GAMES", 256))
    cpu_games = int(os.environ.get("BENCH_EFF_CPU_GAMES", 300))
    prefix_games = int(os.environ.get("BENCH_EFF_PREFIX_GAMES", 3))
    per_game = per_game_figures(prefix_games)
    if timing:
        per_game["stille-post"]["cpu_ms_per_step"] = cpu_per_step_stille_post(cpu_games)
        per_game["chameleon"]["cpu_ms_per_step"] = cpu_per_step_chameleon(cpu_games)
    return {"rows": efficiency_rows(games) if timing else [], "games": per_game,
            "load": os.getloadavg()[0]}


def _print_games(games: dict[str, dict[str, Any]]) -> None:
    rules = {r.model: r for r in cache_rules()}
    for game, g in games.items():
        cpu = (f"; {g['cpu_ms_per_step']:.3f} ms CPU per critical step"
               if "cpu_ms_per_step" in g else "")
        print(f"   {game}: {g['calls_per_game']:.1f} calls, {g['input_tokens_per_game']:,.0f} "
              f"input tokens per game{cpu}")
        for k, v in g.items():
            if k.startswith("stable_prefix"):
                print(f"      {k}: {v:.1%}")
        print("      billable-equivalent input per game (one model at every seat / each "
              "seat its own model's cache):")
        for model, v in g["billable_input_per_game"].items():
            mixed = g["billable_input_per_game_mixed"][model]
            r = rules[model]
            last = g.get("billable_input_per_game_anthropic_breakpoint_last_only", {})
            was = (f"; last block only, before issue 15: {last[model]:,.0f}"
                   if model in last else "")
            print(f"        {r.provider:9s} {model:28s} {v:9,.0f} / {mixed:9,.0f}  "
                  f"({v / g['input_tokens_per_game']:.0%} / "
                  f"{mixed / g['input_tokens_per_game']:.0%} of the input{was})")


def main(argv: list[str] | None = None) -> int:
    """`--tokens`: only the per-game token figures (deterministic, seconds), without the
    timed efficiency rows and CPU per step."""
    argv = list(argv or [])
    if "--real" in argv:
        from benchmarks.realpath import print_grid, real_grid

        grid = real_grid()
        print(json.dumps(grid)) if "--json" in argv else print_grid(grid)
        return 0
    r = measure(timing="--tokens" not in argv)
    if "--json" in argv:
        print(json.dumps(r))
        return 0
    if r["rows"]:
        print(f"   efficiency = wall / ideal (Stille Post, {r['rows'][0]['games']} games, "
              "full LLM-player path, simulated provider):")
    for row in r["rows"]:
        print(f"   W={row['workers']} {row['latency_ms']:4d} ms x {row['concurrency']:3d}: "
              f"{row['efficiency']:6.3f}  (wall {row['wall_s']:.2f} s, ideal "
              f"{row['ideal_s']:.2f} s, CPU {row['cpu_s']:.1f} s)")
    _print_games(r["games"])
    print(f"   (load average {r['load']:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
