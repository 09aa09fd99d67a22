"""Engine throughput: games per second of 4 `random` bots over 10 rounds, per-turn
overhead, and the same for `detective` (the most expensive bot), in memory (no I/O) and
with the transcript streamed to disk."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from stille_post.core.rng import make_rng
from stille_post.games.kit.setup import prepare
from stille_post.games.stille_post import GAME
from stille_post.session import play_game


def _in_memory(players: list[str], games: int, max_rounds: int) -> tuple[float, int, int]:
    """Games one after another in one event loop, as a tournament worker plays them."""

    async def run() -> tuple[int, int]:
        turns = events = 0
        for seed in range(games):
            prepared = prepare(GAME, seed=seed, rng=make_rng(seed), players=players,
                               options={"max_rounds": max_rounds})
            seen: list[object] = []
            outcome = await prepared.play(seen.append)
            turns += outcome.summary["turns"]
            events += len(seen)
        return turns, events

    t0 = time.perf_counter()
    turns, events = asyncio.run(run())
    return time.perf_counter() - t0, turns, events


def _to_disk(players: list[str], games: int, max_rounds: int) -> float:
    async def run(tmp: str) -> None:
        for seed in range(games):
            await play_game("stille-post", seed=seed, out=Path(tmp) / f"{seed}.jsonl",
                            players=players, options={"max_rounds": max_rounds})

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        asyncio.run(run(tmp))
        return time.perf_counter() - t0


def main(games: int = 500) -> None:
    for players in (["random"] * 4, ["detective"] * 4):
        label = f"4 x {players[0]}, 10 rounds"
        dt, turns, events = _in_memory(players, games, 10)
        disk = _to_disk(players, games // 5, 10) * 5
        print(f"{label}: {games / dt:8.1f} games/s in memory, {games / disk:8.1f} games/s "
              f"with transcripts (disk/memory time ratio {disk / dt:.2f})")
        print(f"{'':{len(label)}}  {turns / games:.1f} turns/game, {events / games:.0f} "
              f"events/game, {dt / turns * 1e6:.0f} µs per turn, {dt / events * 1e6:.1f} µs "
              "per event")


if __name__ == "__main__":
    main()
