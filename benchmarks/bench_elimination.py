"""The Elimination Game engine: games per second of the 8 default bots (two of each),
µs per decision, in memory and with the transcript streamed to disk; and the stable
prompt-prefix share of LLM seats (8 LLM seats answered in-process by the emulators'
deterministic Elimination policy, each request serialised in the order the APIs cache
it: tools, system, messages; ~4 characters per token), against the common harness design
that puts the volatile state first in the system prompt."""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.prefix import common_prefix, serialise_request, tokens
from stille_post.core.rng import make_rng
from stille_post.games.elimination import GAME
from stille_post.games.kit.setup import prepare
from stille_post.session import play_game

ROOT = Path(__file__).resolve().parents[1]


class _Counting:
    """Wraps a player to count its decisions."""

    def __init__(self, inner: Any, counter: list[int]) -> None:
        self.inner, self.counter, self.name = inner, counter, inner.name

    async def decide(self, decision: Any) -> Any:
        self.counter[0] += 1
        return await self.inner.decide(decision)


def in_memory(games: int, options: dict[str, Any]) -> tuple[float, int, int]:
    async def run() -> tuple[int, int]:
        decisions, events = [0], 0
        for seed in range(games):
            prepared = prepare(GAME, seed=seed, rng=make_rng(seed), options=options)
            table = prepared.engine.table
            table.players = {s: _Counting(p, decisions) for s, p in table.players.items()}
            seen: list[object] = []
            await prepared.play(seen.append)
            events += len(seen)
        return decisions[0], events

    t0 = time.perf_counter()
    decisions, events = asyncio.run(run())
    return time.perf_counter() - t0, decisions, events


def to_disk(games: int, options: dict[str, Any]) -> float:
    async def run(tmp: str) -> None:
        for seed in range(games):
            await play_game("elimination", seed=seed, out=Path(tmp) / f"{seed}.jsonl",
                            options=options)

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        asyncio.run(run(tmp))
        return time.perf_counter() - t0


# --- stable prefix --------------------------------------------------------------------------

class PolicyProvider:
    def __init__(self, model: str, log: list[Any]) -> None:
        self.model, self.log = model, log

    async def complete(self, request: Any) -> Any:
        from stille_post.providers import Completion, ToolCall, Usage
        from tests.elimination.record_cassettes import elimination_policy

        self.log.append(request)
        last = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
        choice = "none" if request.tool_choice == "none" else "required"
        reply = elimination_policy(self.model, request.system, last, choice,
                                   [t.name for t in request.tools])
        calls = [ToolCall(n, a, f"c{len(self.log)}_{i}") for i, (n, a) in
                 enumerate(reply.tool_calls)]
        return Completion(reply.text, calls, Usage(0, 0, 0), self.model, "stop")


def prefix_share(seed: int, options: dict[str, Any]) -> tuple[float, float, int]:
    from stille_post.players.llm import LLMPlayer

    logs: dict[int, list[Any]] = defaultdict(list)
    seats = [f"openai:policy-{i}" for i in range(1, 9)]

    def factory(spec: str, prompts: Any) -> Any:
        seat = int(spec.rsplit("-", 1)[1])
        return LLMPlayer(PolicyProvider(spec, logs[seat]), prompts, name=spec)

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(play_game("elimination", seed=seed, out=Path(tmp) / "g.jsonl",
                              players=seats, options=options, llm_factory=factory))
    tot = {"stable": [0, 0], "volatile": [0, 0]}
    calls = 0
    for seat, requests in logs.items():
        prev = {"stable": "", "volatile": ""}
        for i, req in enumerate(requests):
            calls += 1
            vol = replace(req, system=f"[state] call {i} of seat {seat}; round, subround and "
                                      f"seats still in as of now.\n{req.system}")
            for mode, r in (("stable", req), ("volatile", vol)):
                text = serialise_request(r)
                tot[mode][0] += tokens(text)
                tot[mode][1] += tokens(text[:common_prefix(prev[mode], text)])
                prev[mode] = text
    return tot["stable"][1] / tot["stable"][0], tot["volatile"][1] / tot["volatile"][0], calls


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks elimination [--games=N]` (default 200 games per figure)."""
    games = next((int(a.split("=", 1)[1]) for a in argv or [] if a.startswith("--games=")),
                 200)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    for label, opts in (("8 default bots, 3 private subrounds", {}),
                        ("8 default bots, public-only (0 subrounds)", {"private_subrounds": 0})):
        dt, decisions, events = in_memory(games, opts)
        disk = to_disk(games // 5, opts) * 5
        print(f"{label}: {games / dt:7.1f} games/s in memory, {games / disk:7.1f} games/s with "
              f"transcripts; {decisions / games:.0f} decisions/game, "
              f"{dt / decisions * 1e6:.0f} µs per decision, {events / games:.0f} events/game")
    for seed in (1, 2):
        stable, volatile, calls = prefix_share(seed, {})
        print(f"8 LLM seats (policy), seed {seed}: {calls} calls; input tokens in a stable "
              f"prefix {stable:.1%} (append-only) vs {volatile:.1%} (volatile state first)")
    return 0


if __name__ == "__main__":
    main()
