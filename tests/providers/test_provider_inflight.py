"""Calls in flight (providers/inflight.py): no hidden cap, caps per provider and per alias,
AIMD on 429 / Retry-After, and the settings' parsing. Nothing here times anything."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from stille_post.core.errors import ConfigError
from stille_post.players.specs import LLM_KINDS
from stille_post.providers import create_provider
from stille_post.providers.base import ChatRequest, Message
from stille_post.providers.inflight import (
    AdaptiveLimiter,
    CallLimiter,
    in_flight,
    in_flight_caps,
    limiter_for,
    parse_max_in_flight,
)
from stille_post.providers.retry import RetryPolicy

KINDS = ("openai", "anthropic", "google", "openai-compatible")


class Status(Exception):
    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.response = type("R", (), {"status_code": status, "headers": headers or {}})()


async def _no_sleep(_s: float) -> None:
    return None


def _peak_through_adapter(n: int, *, caps: dict[str, int] | None = None,
                          alias: str | None = None, aliases: dict[str, int] | None = None
                          ) -> int:
    """`n` calls at once through the openai-compatible adapter's own `complete`; the
    HTTP post is replaced by one that waits until every call has started (or until no
    new one can start), so the count is the adapter's limit, not a race."""
    peak = {"now": 0, "max": 0}

    async def main() -> None:
        provider: Any = create_provider("openai-compatible", "m",
                                        base_url="http://inflight.test/v1", alias=alias)
        release = asyncio.Event()

        async def post(*_a: Any, **_k: Any) -> Any:
            peak["now"] += 1
            peak["max"] = max(peak["max"], peak["now"])
            assert in_flight() == peak["now"]
            if peak["now"] == n:
                release.set()
            await release.wait()
            peak["now"] -= 1
            raise Status(400)  # ends the call at once (not retried)

        provider.client.post = post
        request = ChatRequest("sys", [Message("user", "hi")])
        tasks = [asyncio.create_task(provider.complete(request)) for _ in range(n)]
        for _ in range(50):
            await asyncio.sleep(0)
        release.set()  # whoever is still queued behind a cap goes through now
        await asyncio.gather(*tasks, return_exceptions=True)

    with in_flight_caps(caps or {}, aliases or {}):
        asyncio.run(main())
    return peak["max"]


def test_default_does_not_cap_calls_in_flight() -> None:
    # Before issue 28 a hidden cap held every endpoint at 8.
    assert _peak_through_adapter(64) == 64
    assert in_flight() == 0


def test_a_provider_cap_and_an_alias_cap_hold() -> None:
    assert _peak_through_adapter(64, caps={"openai-compatible": 5}) == 5
    assert _peak_through_adapter(64, alias="small", aliases={"small": 3}) == 3
    # an alias without a cap is under its provider's only
    assert _peak_through_adapter(64, alias="other", aliases={"small": 3}) == 64


def test_throttling_halves_the_limit_once_per_round_then_it_grows_back() -> None:
    limiter = AdaptiveLimiter()

    async def main() -> None:
        epochs = [await limiter.acquire() for _ in range(64)]
        limiter.release()
        limiter.throttled(epochs[0])  # 63 still in flight + the throttled one
        assert limiter.limit == 32
        limiter.release()
        limiter.throttled(epochs[1])  # the same round: no second halving
        assert limiter.limit == 32
        for _ in range(62):
            limiter.release()
        for _ in range(32):
            limiter.succeeded()
        assert 32.9 < limiter.limit < 34  # about +1 per limit's worth of successes

    asyncio.run(main())


def test_the_limit_never_drops_below_one_nor_grows_past_its_cap() -> None:
    limiter = AdaptiveLimiter(cap=4)

    async def main() -> None:
        for _ in range(10):
            epoch = await limiter.acquire()
            limiter.release()
            limiter.throttled(epoch)
        assert limiter.limit == 1
        for _ in range(100):
            limiter.succeeded()
        assert limiter.limit == 4

    asyncio.run(main())


@pytest.mark.parametrize(("status", "headers", "halves"), [
    (429, {}, True), (529, {}, True), (503, {"retry-after": "1"}, True), (503, {}, False)])
def test_the_retry_loop_backs_off_on_429_and_retry_after(status: int, headers: dict[str, str],
                                                         halves: bool) -> None:
    async def main() -> float:
        limiter = CallLimiter(AdaptiveLimiter(cap=16))
        policy = RetryPolicy(max_retries=1, sleep=_no_sleep, jitter=lambda: 0.0)
        tries = {"n": 0}

        async def call() -> str:
            tries["n"] += 1
            if tries["n"] == 1:
                raise Status(status, headers)
            return "ok"

        assert await policy.run(call, label="x", limiter=limiter) == "ok"
        return limiter.endpoint.limit

    limit = asyncio.run(main())
    # halved to max(1, (0 + 1) // 2) = 1 then one success: 2; untouched: the cap
    assert limit == (2 if halves else 16)


def test_waiters_are_served_in_order_and_a_cancelled_waiter_frees_its_place() -> None:
    async def main() -> list[int]:
        limiter = AdaptiveLimiter(cap=1)
        await limiter.acquire()
        order: list[int] = []

        async def waiter(i: int) -> None:
            await limiter.acquire()
            order.append(i)
            limiter.release()

        tasks = [asyncio.create_task(waiter(i)) for i in range(4)]
        await asyncio.sleep(0)
        tasks[1].cancel()  # still waiting: it leaves the queue
        limiter.release()  # room goes to waiter 0 ...
        tasks[0].cancel()  # ... cancelled before it could run: it passes the room on
        # a room lost with waiter 0 would leave 2 and 3 waiting forever: fail, not hang
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 10)
        assert limiter.in_flight == 0
        return order

    assert asyncio.run(main()) == [2, 3]


def test_limiters_are_per_endpoint_and_per_loop() -> None:
    seen: list[AdaptiveLimiter] = []

    async def main() -> None:
        a = limiter_for("k", "http://a.test").endpoint
        assert a is limiter_for("k", "http://a.test").endpoint
        assert a is not limiter_for("k", "http://b.test").endpoint
        seen.append(a)

    asyncio.run(main())
    asyncio.run(main())
    assert seen[0] is not seen[1]


def test_parse_max_in_flight() -> None:
    assert parse_max_in_flight(["16"], KINDS) == dict.fromkeys(KINDS, 16)
    assert parse_max_in_flight(["32", "openai=4", "small=2"], KINDS) == {
        **dict.fromkeys(KINDS, 32), "openai": 4, "small": 2}
    for bad in ("0", "openai=", "=3", "openai=x", "-1"):
        with pytest.raises(ConfigError) as info:
            parse_max_in_flight([bad], KINDS)
        assert "\n" not in str(info.value)


def test_models_toml_and_tournament_file_take_max_in_flight(tmp_path: Path) -> None:
    from stille_post.configfiles import load_tournament_file
    from stille_post.providers.models import load_models

    models = tmp_path / "models.toml"
    models.write_text('[models.small]\nprovider = "openai"\nmodel = "gpt-5-nano"\n'
                      "max_in_flight = 3\n")
    assert load_models(models).in_flight_caps() == {"small": 3}
    models.write_text('[models.small]\nprovider = "openai"\nmodel = "m"\nmax_in_flight = 0\n')
    with pytest.raises(ConfigError):
        load_models(models)
    for body, expected in (("max_in_flight = 8\n", dict.fromkeys(LLM_KINDS, 8)),
                           ("[max_in_flight]\nopenai = 4\n", {"openai": 4})):
        f = tmp_path / "t.toml"
        f.write_text('game = "stille-post"\n' + body)
        assert load_tournament_file(f).max_in_flight == expected
    f.write_text('game = "stille-post"\nmax_in_flight = "lots"\n')
    with pytest.raises(ConfigError):
        load_tournament_file(f)


def test_the_progress_line_shows_calls_in_flight() -> None:
    from stille_post.tournament.progress import TournamentProgress

    console = Console(record=True, width=200, force_terminal=False)
    with TournamentProgress(3, console=console) as progress:
        progress.game_finished(failed=False, tokens=10, dollars=0.0)
    assert "0 in flight" in console.export_text()


def test_calls_in_flight_in_worker_processes_are_counted_by_the_parent() -> None:
    """A tournament's worker processes count their calls in shared slots, one each, so
    the parent's progress line (`in_flight()`) shows every process's calls."""
    import multiprocessing

    from stille_post.providers import inflight

    ctx = multiprocessing.get_context("fork")
    started = ctx.Semaphore(0)
    release = ctx.Event()

    def worker(join: Any, k: int) -> None:
        join(k)

        async def call() -> None:
            async with inflight.CallSlot(()):  # one call in flight, in this process
                started.release()
                await asyncio.to_thread(release.wait, 10)

        asyncio.run(call())

    with inflight.count_across_processes(2, ctx) as join:
        procs = [ctx.Process(target=worker, args=(join, k), daemon=True) for k in range(2)]
        for p in procs:
            p.start()
        for _ in procs:
            assert started.acquire(timeout=10)
        seen = in_flight()
        slots = list(inflight._CALLS.slots)
        release.set()
        for p in procs:
            p.join(10)
        after = in_flight()
    assert seen == 2
    assert slots == [0, 1, 1]  # each worker in its own slot, the parent's slot 0 untouched
    assert after == 0 and in_flight() == 0


def test_a_tournament_in_two_processes_shows_their_calls_in_flight(tmp_path: Path) -> None:
    """The runner hands each worker its slot: the parent sees the calls of both."""
    from benchmarks.bench_tournament import SIM_SEATS
    from stille_post.games.stille_post.prompts import PROMPTS
    from stille_post.players.llm import LLMPlayer
    from stille_post.providers import inflight
    from stille_post.providers.simulated import SimulatedProvider
    from stille_post.tournament import TournamentConfig, run_tournament

    class Counted:
        """A simulated model whose calls count as in flight, as a real adapter's do."""

        def __init__(self, model: str) -> None:
            self.inner = SimulatedProvider(model, latency_s=0.05)

        async def complete(self, request: ChatRequest) -> Any:
            async with inflight.CallSlot(()):
                return await self.inner.complete(request)

    def factory(spec: str, prompts: Any) -> Any:
        return LLMPlayer(Counted(spec.partition(":")[2]), prompts or PROMPTS, name=spec)

    peak = [0]

    async def main() -> None:
        async def watch() -> None:
            while True:
                peak[0] = max(peak[0], in_flight())
                await asyncio.sleep(0.01)

        watcher = asyncio.create_task(watch())
        try:
            config = TournamentConfig(game="stille-post", games=4, seed=1, players=SIM_SEATS)
            await run_tournament(config, tmp_path / "t", concurrency=4, llm_factory=factory,
                                 durable=False, workers=2, progress=False)
        finally:
            watcher.cancel()

    asyncio.run(main())
    # 2 games at once in each process, every seat of an identity-guess phase at once
    assert peak[0] > 2
    assert in_flight() == 0
