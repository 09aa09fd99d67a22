"""A simulated network: a reply that arrives after a fixed delay, delivered the way a real
one is, by a file descriptor that becomes readable.

Why not `asyncio.sleep`: the loop waits in `epoll_wait`, whose timeout has millisecond
resolution and is rounded up, so a loop timer fires on average half a millisecond late,
whatever the load. A real reply is a readable socket, and epoll returns for it at once.
At a short simulated latency the timer's lateness becomes a visible part of every call:
the simulator measuring itself, not the engine.

So on Linux each event loop gets one `timerfd` (a kernel timer with nanosecond
resolution that is a file descriptor), armed for the earliest pending reply. When it
fires, every reply due by then is resolved and the timer is armed for the next. With a
fixed latency a new reply is never the earliest, so a call costs a heap push; the kernel
is told once per wake-up. No thread, so no GIL hand-offs. Elsewhere (no timerfd) it falls
back to `asyncio.sleep`.

A delay of zero still yields once (`asyncio.sleep(0)`), as before: the CPU benchmarks run
there and never arm a timer.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import heapq
import itertools
import os
import time
import weakref
from collections.abc import Callable

_CLOCK_MONOTONIC = 1  # time.monotonic() reads this clock on Linux
_TFD_CLOEXEC = 0o2000000
_TFD_NONBLOCK = 0o4000
_TFD_TIMER_ABSTIME = 1


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


def _load_timerfd() -> tuple[Callable[..., int], Callable[..., int]] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        create, settime = libc.timerfd_create, libc.timerfd_settime
    except (OSError, AttributeError):
        return None
    fd = create(_CLOCK_MONOTONIC, _TFD_CLOEXEC | _TFD_NONBLOCK)
    if fd < 0:
        return None
    os.close(fd)
    return create, settime


# Linux's timerfd; and fork hooks, so that a forked child never arms its parent's timers.
_TIMERFD = _load_timerfd() if hasattr(os, "register_at_fork") else None


class _LoopTimer:
    """One loop's pending replies and the timerfd armed for the earliest of them."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        assert _TIMERFD is not None
        create, self._settime = _TIMERFD
        self.fd = create(_CLOCK_MONOTONIC, _TFD_CLOEXEC | _TFD_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "timerfd_create failed")
        self._due: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._armed = float("inf")
        self._spec = _Itimerspec()
        loop.add_reader(self.fd, self._fire)
        # The fd is closed when the loop is gone (or, in a forked child, at once).
        self.closer = weakref.finalize(loop, os.close, self.fd)

    def send(self, loop: asyncio.AbstractEventLoop, delay_s: float) -> asyncio.Future[None]:
        reply: asyncio.Future[None] = loop.create_future()
        due = time.monotonic() + delay_s
        heapq.heappush(self._due, (due, next(self._order), reply))
        if due < self._armed:
            self._arm(due)
        return reply

    def _arm(self, due: float) -> None:
        self._armed = due
        whole = int(due)
        self._spec.it_value.tv_sec = whole
        self._spec.it_value.tv_nsec = max(1, int((due - whole) * 1e9))  # 0 would disarm
        if self._settime(self.fd, _TFD_TIMER_ABSTIME, ctypes.byref(self._spec), None) < 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime failed")

    def _fire(self) -> None:
        with contextlib.suppress(BlockingIOError):
            os.read(self.fd, 8)  # the expiry count; reading clears the fd's readiness
        self._armed = float("inf")
        now = time.monotonic()
        due = self._due
        while due and due[0][0] <= now:
            reply = heapq.heappop(due)[2]
            if not reply.done():  # a cancelled wait (a deadline, a stopped run) stays so
                reply.set_result(None)
        if due:
            self._arm(due[0][0])


_timers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopTimer] = \
    weakref.WeakKeyDictionary()


def _timer(loop: asyncio.AbstractEventLoop) -> _LoopTimer:
    timer = _timers.get(loop)
    if timer is None:
        timer = _timers[loop] = _LoopTimer(loop)
    return timer


def _after_fork() -> None:
    # A forked child plays on loops of its own; the parent's timers are not its to arm.
    for timer in list(_timers.values()):
        timer.closer()  # closes the child's copy of the fd, once: the finalizer is spent
    _timers.clear()


if _TIMERFD is not None:
    os.register_at_fork(after_in_child=_after_fork)


async def network_delay(seconds: float) -> None:
    """Wait `seconds` as a network round trip would: woken by I/O, not by a loop timer."""
    if seconds <= 0:
        await asyncio.sleep(0)
        return
    loop = asyncio.get_running_loop()
    if _TIMERFD is None or not hasattr(loop, "add_reader"):
        await asyncio.sleep(seconds)
        return
    await _timer(loop).send(loop, seconds)
