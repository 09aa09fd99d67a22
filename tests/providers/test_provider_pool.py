"""A tournament's LLM seats borrow their providers from a pool (providers/pool.py): a seat
whose game is over gives its provider, and its open connection, to a seat of a later game
of the same kind, model and options, on the same event loop. The games are the same as
with a provider per seat of every game."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import stille_post.providers as providers_module
from stille_post.cli import llm_seats
from stille_post.cli.llm_seats import llm_session
from stille_post.core.transcript import canonical_text
from stille_post.providers.pool import ProviderPool, pool_key
from stille_post.tournament import TournamentConfig, run_tournament
from tests.emulators.server import Emulator, running

KEY = pool_key("openai", "gpt-4.1", {"base_url": "http://127.0.0.1:1/v1"})


class Holder:
    """Stands for a seat's player: the provider goes back when it is freed."""


class FakeProvider:
    closed = False

    async def aclose(self) -> None:
        self.closed = True


def test_a_freed_seat_gives_its_provider_to_the_next_seat_of_its_kind() -> None:
    async def run() -> tuple[Any, ...]:
        pool = ProviderPool()
        first = pool.lend(KEY, FakeProvider)
        holder = Holder()
        pool.take_back_when_freed(holder, KEY, first)
        busy = pool.lend(KEY, FakeProvider)  # the first is still lent: a new one
        del holder
        gc.collect()
        again = pool.lend(KEY, FakeProvider)
        other = pool.lend(pool_key("openai", "gpt-5-mini", {}), FakeProvider)
        return first, busy, again, other, pool.made

    first, busy, again, other, made = asyncio.run(run())
    assert again is first and busy is not first and other is not first and made == 3


def test_what_is_not_pooled() -> None:
    """No key (options that are not plain values), no running loop, or another loop."""
    assert pool_key("openai", "m", {"retry_policy": object()}) is None
    pool = ProviderPool()
    outside = pool.lend(KEY, FakeProvider)
    pool.take_back_when_freed(Holder(), KEY, outside)  # outside a loop: not taken back
    assert pool.lend(KEY, FakeProvider) is not outside

    async def lend_and_free(key: Any) -> Any:
        provider = pool.lend(key, FakeProvider)
        holder = Holder()
        pool.take_back_when_freed(holder, key, provider)
        del holder
        gc.collect()
        return provider, pool.lend(key, FakeProvider)

    unkeyed, next_unkeyed = asyncio.run(lend_and_free(None))
    assert next_unkeyed is not unkeyed
    on_one_loop, _ = asyncio.run(lend_and_free(KEY))

    async def on_another() -> Any:
        return pool.lend(KEY, FakeProvider)

    assert asyncio.run(on_another()) is not on_one_loop  # its connections are that loop's


def test_the_idle_providers_are_closed_when_the_run_is_over() -> None:
    async def run() -> tuple[FakeProvider, int, int]:
        pool = ProviderPool()
        provider = pool.lend(KEY, FakeProvider)
        holder = Holder()
        pool.take_back_when_freed(holder, KEY, provider)
        del holder
        gc.collect()
        idle = pool.idle()
        await pool.aclose()
        return provider, idle, pool.idle()

    provider, before, after = asyncio.run(run())
    assert provider.closed and (before, after) == (1, 0)


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with running("openai") as e:
        yield e


def _tournament(emu: Emulator, out: Path, monkeypatch: pytest.MonkeyPatch,
                pooled: bool) -> int:
    """Six games, two LLM seats each, one at a time (so the emulator, which caches what it
    has seen, bills both runs alike), in this process; the number of providers made."""
    made = [0]
    real = providers_module.create_provider

    def counting(*args: Any, **kwargs: Any) -> Any:
        made[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(providers_module, "create_provider", counting)
    if not pooled:
        monkeypatch.setattr(llm_seats, "pool_key", lambda *a: None)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test")
    emu.state.seen_prompts.clear()  # billed alike: the emulator caches what it has seen
    seats = [f"openai-compatible:tiny-a@{emu.base_url}", f"openai-compatible:tiny-b@{emu.base_url}",
             "detective", "random"]
    config = TournamentConfig(game="stille-post", games=6, seed=3, players=seats,
                              options={"max_rounds": 1})
    with llm_session(online=True, record=None, replay=None, keep_providers=False) as factory:
        stats = asyncio.run(run_tournament(config, out, concurrency=1, workers=1,
                                           llm_factory=factory, progress=False,
                                           durable=False))
    monkeypatch.undo()
    assert stats.played == 6 and stats.aborted == 0
    return made[0]


@pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])
def test_a_tournament_reuses_providers_and_plays_the_same_games(
        emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    each = _tournament(emu, tmp_path / "each", monkeypatch, pooled=False)
    pooled = _tournament(emu, tmp_path / "pooled", monkeypatch, pooled=True)
    # a provider per LLM seat of every game (and of the check before the run) against
    # one per LLM seat of the game at a time, the check's own given on to the games
    assert each == 2 * 6 + 2 and pooled == 2

    def texts(folder: Path) -> dict[str, str]:
        return {p.name: canonical_text(p) for p in sorted((folder / "games").glob("*.jsonl"))}

    assert texts(tmp_path / "pooled") == texts(tmp_path / "each")
