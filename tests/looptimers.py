"""Counting the timers an event loop is asked to schedule, for tests that check a path
arms none (providers/wire.py) or one for many (games/kit/deadlines.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


def count_timers(loop: asyncio.AbstractEventLoop) -> Callable[[], int]:
    """From now on, count `loop.call_at` (which `call_later` goes through too); returns a
    function that reads the count."""
    scheduled = 0
    real = loop.call_at

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal scheduled
        scheduled += 1
        return real(*args, **kwargs)

    loop.call_at = counting  # type: ignore[method-assign]
    return lambda: scheduled
