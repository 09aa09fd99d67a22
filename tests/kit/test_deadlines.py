"""kit/deadlines.py: `with deadline(s)` must behave as `asyncio.timeout(s)` (a TimeoutError
when the block outlives it, a cancellation from elsewhere stays one), without a loop
timer per block."""

from __future__ import annotations

import asyncio
import gc

import pytest

from stille_post.games.kit import deadlines
from stille_post.games.kit.deadlines import deadline
from tests.looptimers import count_timers


def test_a_block_that_outlives_its_deadline_raises_timeout_error() -> None:
    async def main() -> float:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(TimeoutError), deadline(0.02):
            await asyncio.sleep(10)
        return loop.time() - t0

    # Not a timing assert: only that it did not wait for the sleep (10 s).
    assert asyncio.run(main()) < 5


def test_a_block_that_ends_in_time_returns_its_value_and_leaves_nothing_behind() -> None:
    async def main() -> tuple[int, int]:
        with deadline(5):
            await asyncio.sleep(0)
            value = 42
        dog = deadlines._watchdog(asyncio.get_running_loop())
        return value, len(dog.live)

    assert asyncio.run(main()) == (42, 0)


def test_an_outside_cancellation_stays_a_cancellation_even_when_the_deadline_also_passed(
        ) -> None:
    """Both cancel the task before it runs again: asyncio.timeout's rule says the outside
    request wins (the deadline's own request is taken back, the task is still cancelled)."""

    async def victim(started: asyncio.Event) -> None:
        with deadline(60):
            started.set()
            await asyncio.sleep(10)

    async def main() -> None:
        started = asyncio.Event()
        task = asyncio.create_task(victim(started))
        await started.wait()
        dog = deadlines._watchdog(asyncio.get_running_loop())
        for w in dog.live:
            w.when = 0.0  # its time is up...
        dog._fire()  # ...the watchdog cancels the task...
        task.cancel()  # ...and somebody else does too, before the task runs again
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_a_deadline_alone_is_a_timeout_and_leaves_the_task_uncancelled() -> None:
    async def main() -> int:
        with pytest.raises(TimeoutError), deadline(0.01):
            await asyncio.sleep(10)
        task = asyncio.current_task()
        assert task is not None
        await asyncio.sleep(0)  # no cancel request is left pending for the next await
        return task.cancelling()

    assert asyncio.run(main()) == 0


def test_a_cancellation_before_the_deadline_is_a_cancellation() -> None:
    async def main() -> None:
        async def victim() -> None:
            with deadline(10):
                await asyncio.sleep(10)

        task = asyncio.create_task(victim())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not deadlines._watchdog(asyncio.get_running_loop()).live

    asyncio.run(main())


def test_no_timer_is_scheduled_per_block_when_every_deadline_has_one_length() -> None:
    """The point of the module: one loop timer for 1,000 blocks, where asyncio.timeout
    would schedule (and cancel) 1,000."""

    async def main() -> int:
        scheduled = count_timers(asyncio.get_running_loop())
        for _ in range(1000):
            with deadline(60):
                await asyncio.sleep(0)
        return scheduled()

    assert asyncio.run(main()) == 1


def test_the_timer_re_arms_for_a_later_deadline_when_the_earliest_is_gone() -> None:
    """The timer is armed for the first block's deadline; that block ends in time, so
    when the timer fires it must re-arm for the second block's (later) deadline."""

    async def main() -> None:
        with deadline(0.01):
            pass
        with pytest.raises(TimeoutError), deadline(0.05):
            await asyncio.sleep(2)

    asyncio.run(main())


def test_a_shorter_deadline_after_longer_ones_still_fires_on_time() -> None:
    async def main() -> None:
        async def long() -> None:
            with deadline(60):
                await asyncio.sleep(30)

        keep = asyncio.create_task(long())
        await asyncio.sleep(0)
        with pytest.raises(TimeoutError), deadline(0.01):
            await asyncio.sleep(5)
        assert not keep.done()  # the long deadline is untouched
        keep.cancel()
        with pytest.raises(asyncio.CancelledError):
            await keep

    asyncio.run(main())


def test_a_deadline_outside_a_task_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError), deadline(1):
        pass


def test_a_finished_loop_is_not_kept_alive() -> None:
    async def main() -> None:
        with deadline(1):
            await asyncio.sleep(0)

    before = len(deadlines._dogs)
    for _ in range(3):
        asyncio.run(main())
    gc.collect()
    assert len(deadlines._dogs) <= before + 1  # at most the last loop, via `_last`
