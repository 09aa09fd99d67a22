"""Per-decision deadlines: `with deadline(s):` behaves as `async with asyncio.timeout(s):`
but costs a dict insert and delete instead of a loop timer per decision.

Every ask of a seat that is not instant runs under a deadline (minutes), and nearly every
ask ends long before it. `asyncio.timeout` schedules a timer (a heap push and a handle)
on entry and cancels it on exit, a visible share of a decision's CPU for a timer that
almost never fires. Here one watchdog per event loop keeps the live deadlines and a single loop
timer armed for the earliest of them. A deadline that ends first is just forgotten; the
timer fires at most once per earliest deadline, cancels the tasks whose time is up and
re-arms for the next. With one deadline length for every ask (the usual case) a new
deadline is never the earliest, so no timer is touched per decision.

Cancellation follows `asyncio.timeout` exactly: the task is cancelled, and on leaving
the block a `CancelledError` becomes `TimeoutError` unless somebody else also cancelled
the task (then it stays a cancellation).
"""

from __future__ import annotations

import asyncio
import math
import weakref
from types import TracebackType


class _Watch:
    __slots__ = ("cancelling", "expired", "task", "when")

    def __init__(self, task: asyncio.Task[object], when: float) -> None:
        self.task = task
        self.when = when
        self.cancelling = task.cancelling()
        self.expired = False


class _Watchdog:
    """The live deadlines of one loop and the one timer armed for the earliest."""

    __slots__ = ("__weakref__", "armed", "handle", "live", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        # Weak: the mapping below is keyed weakly by the loop, so its value must not
        # hold the loop (the entry would never go).
        self.loop = weakref.ref(loop)
        self.live: dict[_Watch, None] = {}
        # Weak too: a timer handle holds its loop. The loop's own timer heap keeps it.
        self.handle: weakref.ref[asyncio.TimerHandle] | None = None
        self.armed = math.inf

    def _arm(self, when: float) -> None:
        old = self.handle() if self.handle is not None else None
        if old is not None:
            old.cancel()
        loop = self.loop()
        if loop is not None:
            self.handle = weakref.ref(loop.call_at(when, self._fire))
            self.armed = when

    def _fire(self) -> None:
        self.handle = None
        self.armed = math.inf
        loop = self.loop()
        if loop is None:
            return
        now = loop.time()
        nearest = math.inf
        for w in list(self.live):
            if w.when <= now:
                del self.live[w]
                w.expired = True
                w.task.cancel()
            elif w.when < nearest:
                nearest = w.when
        if nearest < math.inf:
            self._arm(nearest)


_dogs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Watchdog] = \
    weakref.WeakKeyDictionary()
# The watchdog of the loop that asked last: one identity check per decision instead of
# a mapping lookup.
_last: _Watchdog | None = None


def _watchdog(loop: asyncio.AbstractEventLoop) -> _Watchdog:
    global _last
    dog = _last
    if dog is None or dog.loop() is not loop:
        dog = _dogs.get(loop)
        if dog is None:
            dog = _dogs[loop] = _Watchdog(loop)
        _last = dog
    return dog


class deadline:
    """`with deadline(seconds):` inside a task: `TimeoutError` when the block outlives it."""

    __slots__ = ("_dog", "_watch", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __enter__(self) -> deadline:
        task = asyncio.current_task()  # RuntimeError without a running loop
        if task is None:
            raise RuntimeError("deadline() must be used inside a task")
        loop = task.get_loop()
        self._dog = dog = _watchdog(loop)
        self._watch = w = _Watch(task, loop.time() + self.seconds)
        dog.live[w] = None
        if w.when < dog.armed:
            dog._arm(w.when)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        w = self._watch
        if not w.expired:
            self._dog.live.pop(w, None)
            return
        # Ours was a cancel request: take it back, and answer for it when nobody else
        # asked the task to stop (asyncio.timeout's rule).
        if w.task.uncancel() <= w.cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc


__all__ = ["deadline"]
