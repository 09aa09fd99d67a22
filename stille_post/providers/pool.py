"""Providers lent to the LLM seats of a tournament's games, and taken back when a seat's
player is freed, so that the next game's seat reuses the provider and its open
connection.

Without it a tournament made a provider (an SDK client, with a connection of its own) for
each LLM seat of every game, and each game's first call of each seat opened a new
connection: against an HTTPS API that is a TCP and a TLS handshake, 2.4 ms of client CPU
(against 0.1 ms over plain HTTP) and one or two more round trips before the model starts
(docs/performance-real-path.md). Lent providers are the seats' own while their games last,
one per seat, as before.

A provider is lent again only to a seat of the same kind, model and options, on the event
loop it was made on: its connections belong to that loop (a forked worker process runs its
own loop, so never touches its parent's). The pool holds at most as many providers as
were lent at once; `aclose()` closes the idle ones when the run is over. Seats whose
options are not plain values (a replayed cassette's retry policy) are not pooled.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Hashable, Mapping
from contextlib import suppress
from typing import Any

PoolKey = Hashable


def pool_key(kind: str, model: str, options: Mapping[str, Any]) -> PoolKey | None:
    """What makes two seats' providers interchangeable, or None: not to be pooled."""
    if not all(isinstance(v, str | int | float | bool | type(None)) for v in options.values()):
        return None
    return (kind, model, tuple(sorted(options.items())))


_POOLS: weakref.WeakSet[ProviderPool] = weakref.WeakSet()


async def close_idle() -> None:
    """Close every pool's idle providers on the running loop: a tournament's loop (in
    this process or a worker) calls it when its games are done."""
    for pool in list(_POOLS):
        await pool.aclose()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class ProviderPool:
    def __init__(self) -> None:
        _POOLS.add(self)
        # Per loop, so a closed loop's providers go with it.
        self._idle: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop,
                                              dict[PoolKey, list[Any]]] = (
            weakref.WeakKeyDictionary())
        self.made = 0  # providers made through the pool (for tests and benchmarks)

    def lend(self, key: PoolKey | None, make: Callable[[], Any]) -> Any:
        """An idle provider for `key` on the running loop, else a new one from `make`."""
        loop = _running_loop()
        if key is not None and loop is not None:
            idle = self._idle.get(loop, {}).get(key)
            if idle:
                return idle.pop()
        self.made += 1
        return make()

    def take_back_when_freed(self, holder: object, key: PoolKey | None,
                             provider: Any) -> None:
        """Take `provider` back once `holder` (the seat's player) is freed."""
        loop = _running_loop()
        if key is None or loop is None:
            return
        done = weakref.finalize(holder, self._take_back, weakref.ref(loop), key, provider)
        done.atexit = False  # at exit there is no next game to lend it to

    def _take_back(self, loop_ref: weakref.ref[asyncio.AbstractEventLoop], key: PoolKey,
                   provider: Any) -> None:
        loop = loop_ref()
        if loop is not None and not loop.is_closed():
            self._idle.setdefault(loop, {}).setdefault(key, []).append(provider)

    def idle(self) -> int:
        loop = _running_loop()
        return sum(map(len, self._idle.get(loop, {}).values())) if loop is not None else 0

    async def aclose(self) -> None:
        """Close the running loop's idle providers (best effort: the games are written)."""
        loop = _running_loop()
        pools = self._idle.pop(loop, {}) if loop is not None else {}
        for providers in pools.values():
            for provider in providers:
                close = getattr(provider, "aclose", None)
                if close is not None:
                    with suppress(Exception):
                        await close()
