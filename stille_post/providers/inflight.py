"""How many calls may be in flight at once: per provider endpoint, and per model alias.

By default nothing is capped: a tournament's `--concurrency` (games at once) is the
only bound, and a provider's quota is respected with `--rate-limit` (RPM/TPM). A cap can
be set per provider kind (`--max-in-flight openai=32`, the tournament file's
`[max_in_flight]`), per model alias (`max_in_flight = 4` in models.toml, or
`--max-in-flight ALIAS=4`) and per endpoint (an adapter's `max_concurrency` option).

Each endpoint's limit adapts to throttling, as TCP does (AIMD): a 429 (or 529
"overloaded", or any answer carrying Retry-After) halves the limit, at most once per
round of calls (calls that started before the last decrease do not decrease it again);
every success then raises it by 1/limit, about one more call per round trip, back up to
the configured cap (none by default). A limit never drops below 1.

A limiter belongs to one event loop (tests and the CLI each run their own), so limiters
are kept per loop; the settings are process-wide, like the model registry's.
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from stille_post.core.errors import ConfigError

# Statuses that mean "slow down": the provider's quota or capacity, not a broken call.
THROTTLE_STATUS = frozenset({429, 529})

_ENDPOINT_CAPS: dict[tuple[str, str], int] = {}
_PROVIDER_CAPS: dict[str, int] = {}
_ALIAS_CAPS: dict[str, int] = {}


class _Calls:
    """Calls in flight, counted per process: slot 0 is this process's own; a tournament
    with worker processes puts the slots in shared memory before it forks
    (`count_across_processes`) and each worker counts in its own slot, so the parent's
    progress line shows every process's calls. One writer per slot: no lock."""

    def __init__(self) -> None:
        self.slots: Any = [0]
        self.mine = 0

    def total(self) -> int:
        return sum(self.slots)


_CALLS = _Calls()


class AdaptiveLimiter:
    """A semaphore whose size moves: halved on throttling, grown by 1/limit per success.

    Waiters are served first come, first served."""

    def __init__(self, cap: int | None = None) -> None:
        if cap is not None and cap < 1:
            raise ConfigError("a limit of calls in flight must be at least 1")
        self.cap = cap
        self.limit: float = float(cap) if cap is not None else math.inf
        self.in_flight = 0
        self.peak = 0
        self.decreases = 0
        self._epoch = 0  # bumped by every decrease
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> int:
        """Wait for room; returns the epoch the call started in."""
        if self.in_flight < self.limit and not self._waiters:
            self._take()
            return self._epoch
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # room was given to us as we were cancelled: pass it on
            elif waiter in self._waiters:  # (a wake-up may have dropped it already)
                self._waiters.remove(waiter)
            raise
        return self._epoch

    def _take(self) -> None:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._take()
                waiter.set_result(None)

    def throttled(self, epoch: int) -> None:
        """Multiplicative decrease, once per round: a burst of 429s answering calls
        that all started before the last decrease counts as one signal."""
        if epoch != self._epoch:
            return
        base = min(self.limit, self.in_flight + 1)  # +1: the throttled call has left
        self.limit = max(1.0, math.floor(base / 2))
        self._epoch += 1
        self.decreases += 1

    def succeeded(self) -> None:
        """Additive increase: about +1 per round trip's worth of successes."""
        ceiling = math.inf if self.cap is None else float(self.cap)
        if self.limit < ceiling:
            self.limit = min(ceiling, self.limit + 1.0 / self.limit)
            self._wake()


class CallSlot:
    """One call's room in every limiter that applies to it (taken in a fixed order,
    alias before endpoint, so two calls can never hold each other's)."""

    def __init__(self, limiters: tuple[AdaptiveLimiter, ...]) -> None:
        self.limiters = limiters
        self.epochs: list[int] = []

    async def __aenter__(self) -> CallSlot:
        try:
            for limiter in self.limiters:
                self.epochs.append(await limiter.acquire())
        except BaseException:
            self._release()
            raise
        _CALLS.slots[_CALLS.mine] += 1
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        _CALLS.slots[_CALLS.mine] -= 1
        self._release()

    def _release(self) -> None:
        for limiter in self.limiters[:len(self.epochs)]:
            limiter.release()

    def throttled(self) -> None:
        for limiter, epoch in zip(self.limiters, self.epochs, strict=False):
            limiter.throttled(epoch)

    def succeeded(self) -> None:
        for limiter in self.limiters:
            limiter.succeeded()


class CallLimiter:
    """The limiters of one provider's calls: its endpoint's, and its alias's if capped."""

    def __init__(self, *limiters: AdaptiveLimiter) -> None:
        self.limiters = limiters

    def slot(self) -> CallSlot:
        return CallSlot(self.limiters)

    @property
    def endpoint(self) -> AdaptiveLimiter:
        return self.limiters[-1]


_Limiters = dict[tuple[str, ...], AdaptiveLimiter]
_LIMITERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Limiters] = (
    weakref.WeakKeyDictionary()
)


def set_concurrency(kind: str, base_url: str, limit: int) -> None:
    """Cap calls in flight to one provider endpoint (applies to loops started later)."""
    if limit < 1:
        raise ValueError("a concurrency limit must be at least 1")
    _ENDPOINT_CAPS[(kind, base_url)] = limit


def endpoint_cap(kind: str, base_url: str) -> int | None:
    return _ENDPOINT_CAPS.get((kind, base_url), _PROVIDER_CAPS.get(kind))


def limiter_for(kind: str, base_url: str, alias: str | None = None) -> CallLimiter:
    per_loop = _LIMITERS.setdefault(asyncio.get_running_loop(), {})
    key = ("endpoint", kind, base_url)
    if key not in per_loop:
        per_loop[key] = AdaptiveLimiter(endpoint_cap(kind, base_url))
    chain = [per_loop[key]]
    if alias is not None and alias in _ALIAS_CAPS:
        akey = ("alias", alias)
        if akey not in per_loop:
            per_loop[akey] = AdaptiveLimiter(_ALIAS_CAPS[alias])
        chain.insert(0, per_loop[akey])
    return CallLimiter(*chain)


def in_flight() -> int:
    """Provider calls in flight right now: this process's, and its worker processes' when
    `count_across_processes` has set them up."""
    return _CALLS.total()


@contextmanager
def count_across_processes(workers: int, context: Any) -> Iterator[Callable[[int], None]]:
    """For the block, calls are counted in shared memory with one slot per worker (slot
    0 stays this process's). Yields `join(k)`, which worker k (0-based) calls first
    thing after the fork to count in its own slot."""
    from stille_post.providers.models import active_models
    from stille_post.providers.replicas import share_counts

    saved = _CALLS.slots, _CALLS.mine
    shared = context.Array("q", workers + 1, lock=False)
    shared[0] = saved[0][saved[1]]
    _CALLS.slots, _CALLS.mine = shared, 0

    # The calls per replica of a replicated alias are counted the same way.
    with share_counts(active_models().replica_urls(), workers, context) as join_replicas:
        def join(k: int) -> None:
            _CALLS.mine = k + 1
            join_replicas(k)

        try:
            yield join
        finally:
            saved[0][saved[1]] = shared[0]  # this process's own calls, if it made any
            _CALLS.slots, _CALLS.mine = saved


def caps_set() -> bool:
    """Whether any cap on calls in flight is set (by provider kind or by alias)."""
    return bool(_PROVIDER_CAPS or _ALIAS_CAPS)


def parse_max_in_flight(texts: list[str] | tuple[str, ...],
                        kinds: tuple[str, ...]) -> dict[str, int]:
    """`--max-in-flight` values: `N` (every provider kind), `PROVIDER=N` or `ALIAS=N`.
    Whether a name that is not a kind is an alias is checked against the model registry
    by the caller (tournament/settings.py), which knows which registry is in use."""
    caps: dict[str, int] = {}
    for text in texts:
        name, sep, value = text.rpartition("=")
        name = name.strip()
        try:
            n = int(value)
        except ValueError:
            n = 0
        if n < 1 or (sep and not name):
            raise ConfigError(f"--max-in-flight {text!r}: write N, PROVIDER=N or ALIAS=N "
                              "with N ≥ 1, e.g. openai=32")
        if sep:
            caps[name] = n
        else:
            caps.update(dict.fromkeys(kinds, n))
    return caps


@contextmanager
def in_flight_caps(providers: Mapping[str, int], aliases: Mapping[str, int]) -> Iterator[None]:
    """Caps for the block (a command's run): per provider kind and per model alias."""
    saved = dict(_PROVIDER_CAPS), dict(_ALIAS_CAPS)
    _PROVIDER_CAPS.update(providers)
    _ALIAS_CAPS.update(aliases)
    try:
        yield
    finally:
        _PROVIDER_CAPS.clear()
        _PROVIDER_CAPS.update(saved[0])
        _ALIAS_CAPS.clear()
        _ALIAS_CAPS.update(saved[1])
