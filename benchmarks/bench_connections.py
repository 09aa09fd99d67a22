"""Connections: engine games/s and microseconds per decision for `frequency`, `oracle`
and `semantic` bots (in memory, 50 attempts), and the stable-prefix share of the LLM
requests: how much of each request repeats the same seat's previous request byte for
byte (what a provider's prompt cache can reuse)."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

from stille_post.core.rng import make_rng
from stille_post.games.connections import GAME
from stille_post.games.connections import prompts as P
from stille_post.games.kit import prepare
from stille_post.players.base import Action, Decision, Player


def _games(players: list[str], games: int, attempts: int) -> tuple[float, int]:
    async def run() -> int:
        decisions = 0
        for seed in range(games):
            g = prepare(GAME, seed=seed, rng=make_rng(seed), players=players,
                        options={"word": "xenophobia", "max_attempts": attempts})
            out = await g.play(None)
            decisions += sum(1 + len(h["guesses"]) for h in out.summary.details["history"])
        return decisions

    t0 = time.perf_counter()
    decisions = asyncio.run(run())
    return time.perf_counter() - t0, decisions


class _Recorder:
    def __init__(self, inner: Player, seen: dict[int, list[str]]) -> None:
        self.inner, self.seen, self.name = inner, seen, inner.name

    async def decide(self, decision: Decision[Any]) -> Action:
        req = P.PROMPTS.render(decision)
        text = json.dumps({"system": req.system,
                           "messages": [[m.role, m.content,
                                         [[c.name, c.arguments, c.id] for c in m.tool_calls],
                                         m.tool_call_id] for m in req.messages]})
        self.seen.setdefault(decision.seat, []).append(text)
        return await self.inner.decide(decision)


def stable_prefix_share(games: int = 3, attempts: int = 30) -> float:
    shares: list[float] = []
    for seed in range(games):
        g = prepare(GAME, seed=seed, rng=make_rng(seed), players=["frequency"] * 3,
                    options={"word": "xenophobia", "max_attempts": attempts})
        seen: dict[int, list[str]] = {}
        table = g.engine.table
        table.players = {s: _Recorder(p, seen) for s, p in table.players.items()}
        asyncio.run(g.play(None))
        for texts in seen.values():
            for a, b in itertools.pairwise(texts):
                # The new request's last user turn (the question) always differs: measure
                # the common prefix against everything before it.
                n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                         min(len(a), len(b)))
                shares.append(n / len(b))
    return sum(shares) / len(shares)


def main() -> None:
    for players, games in ((["frequency"] * 3, 40), (["oracle:p=0.4"] * 3, 40),
                           (["frequency", "semantic", "semantic"], 3)):
        _games(players, 1, 5)  # warm: dictionary and embeddings load once per process
        dt, decisions = _games(players, games, 50)
        print(f"   {','.join(players)}: {games / dt:.1f} games/s, "
              f"{1e6 * dt / decisions:.0f} µs per decision ({decisions} decisions)")
    print(f"   stable prefix of LLM requests: {stable_prefix_share():.1%} of each request "
          "repeats the seat's previous one")


if __name__ == "__main__":
    main()
