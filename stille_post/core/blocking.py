"""Running a coroutine to the end from synchronous code, also where another event loop
is running in this thread (a notebook's cell): that loop is blocked by the call anyway,
so its running-loop mark is set aside for the call and put back after. The Python API
(`stille_post.play`, `stille_post.tournament`) and the environments' steps use it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


@contextlib.contextmanager
def outside_running_loop() -> Iterator[None]:
    outer = asyncio._get_running_loop()
    if outer is None:
        yield
        return
    asyncio._set_running_loop(None)
    try:
        yield
    finally:
        asyncio._set_running_loop(outer)


def run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, callable where another loop is running in this thread."""
    with outside_running_loop():
        return asyncio.run(coro)


__all__ = ["outside_running_loop", "run_blocking"]
