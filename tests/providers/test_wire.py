"""providers/wire.py: the simulated network delay. It must wait at least its delay,
deliver in due order, survive cancellation, fork and closed loops, and be woken by a file
descriptor (a timerfd), not by a loop timer whose epoll wait is rounded up to a
millisecond."""

from __future__ import annotations

import asyncio
import gc
import os
import time

import pytest

from stille_post.providers import wire
from stille_post.providers.wire import network_delay
from tests.looptimers import count_timers

needs_timerfd = pytest.mark.skipif(wire._TIMERFD is None, reason="no timerfd here")


def test_a_delay_lasts_at_least_its_length() -> None:
    async def main() -> list[float]:
        out = []
        for delay in (0.001, 0.004, 0.02):
            t0 = time.monotonic()
            await network_delay(delay)
            out.append(time.monotonic() - t0 - delay)
        return out

    assert all(early >= 0 for early in asyncio.run(main()))


def test_replies_arrive_in_due_order_whatever_order_they_were_sent() -> None:
    async def main() -> list[int]:
        done: list[int] = []

        async def one(i: int, delay: float) -> None:
            await network_delay(delay)
            done.append(i)

        # 40 ms apart: a preemption between two sends cannot reorder them.
        await asyncio.gather(one(1, 0.121), one(2, 0.041), one(3, 0.081), one(4, 0.001))
        return done

    assert asyncio.run(main()) == [4, 2, 3, 1]


def test_a_cancelled_wait_stays_cancelled_and_the_others_still_arrive() -> None:
    async def main() -> None:
        slow = asyncio.create_task(network_delay(0.02))
        fast = asyncio.create_task(network_delay(0.03))
        await asyncio.sleep(0)
        slow.cancel()
        await fast
        with pytest.raises(asyncio.CancelledError):
            await slow

    asyncio.run(main())


def test_zero_delay_yields_once_and_returns() -> None:
    async def main() -> list[str]:
        order: list[str] = []

        async def other() -> None:
            order.append("other")

        task = asyncio.create_task(other())
        await network_delay(0)
        order.append("after")
        await task
        return order

    assert asyncio.run(main()) == ["other", "after"]


@needs_timerfd
def test_it_schedules_no_loop_timer() -> None:
    async def main() -> int:
        timers = count_timers(asyncio.get_running_loop())
        await asyncio.gather(*(network_delay(0.002) for _ in range(50)))
        return timers()

    assert asyncio.run(main()) == 0


@needs_timerfd
def test_closed_loops_leave_no_descriptor_open() -> None:
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    asyncio.run(network_delay(0.001))
    gc.collect()
    before = open_fds()
    for _ in range(20):
        asyncio.run(network_delay(0.001))
    gc.collect()
    assert open_fds() <= before


@needs_timerfd
def test_a_forked_child_has_its_own_wire() -> None:
    """Tournament workers are forked from inside the parent's running loop, which holds a
    timer of its own: the child must not arm (or close) the parent's."""

    async def parent() -> int:
        await network_delay(0.001)  # this loop now has a timer
        pid = os.fork()
        if pid == 0:  # the child: any failure is its exit code
            try:
                ok = not wire._timers
                asyncio.events._set_running_loop(None)  # as the runner's workers do
                asyncio.run(network_delay(0.005))
                os._exit(0 if ok else 3)
            except BaseException:
                os._exit(4)
        await network_delay(0.001)  # the parent's timer still works
        _, status = await asyncio.to_thread(os.waitpid, pid, 0)
        return os.waitstatus_to_exitcode(status)

    assert asyncio.run(parent()) == 0
