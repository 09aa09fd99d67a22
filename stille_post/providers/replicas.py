"""Many servers behind one alias, and a server that dies during a run.

    [models.qwen]
    provider = "openai-compatible"
    model = "qwen2.5-7b"
    base_url = ["http://gpu1:8000/v1", "http://gpu2:8000/v1"]

Every seat of the alias gets a `Watched` provider: one adapter per replica, and a
`ReplicaSet` shared by all the alias's seats on the event loop, which knows each
replica's calls in flight and health.

- Routing: each call goes to the live replica with the fewest calls in flight (ties: the
  fewest calls so far, then the order of the list), so calls spread evenly.
- A replica whose connection fails (refused, reset, cut off, timed out) is taken out at
  once and the call is sent again to another replica, without waiting: the call's own
  deadline (the game's decision deadline) is the bound. A taken-out replica is probed
  again (providers/preflight.py, a models list) after a back-off of 1 s, doubling to
  30 s, and comes back when it answers.
- A throttled or failing answer (429, 5xx) is retried with the retry loop's backoff
  (providers/retry.py), on whichever replica is least busy then; the adapters' own loop
  is off for replicated seats (one attempt each), so a dead replica costs no backoff.
- Calls and failed connections are counted per replica (`counts()`), across worker
  processes too (`share_counts`, called by inflight.count_across_processes): the
  tournament's progress line and summary show them.

A seat with one URL gets a `Watched` provider too, which only watches: its adapter keeps
its own retry loop. For both, an endpoint whose calls fail on the connection (after the
retries) is one warning line (`watching(notice, strict)` says where it goes), not one
per turn; with `strict` the game is aborted instead (`GameAborted`).

Record and replay use the first replica only: a cassette matches requests by host, and
which replica answers a call depends on timing.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from stille_post.core.errors import GameAborted, ProviderError
from stille_post.providers.base import ChatRequest, Completion, MalformedReply, Provider, ReplayMiss
from stille_post.providers.preflight import display_url, probe
from stille_post.providers.retry import DEFAULT_MAX_RETRIES, RetryPolicy, classify

FIRST_BACKOFF_S = 1.0
MAX_BACKOFF_S = 30.0


def short_url(url: str) -> str:
    """host:port of a URL, for the progress line."""
    shown = display_url(url)
    return shown.split("://", 1)[-1].split("/", 1)[0]


def _reason(exc: ProviderError) -> str:
    """What went wrong, without the label the retry loop puts first."""
    return str(exc).split(": ", 1)[-1][:160]


def _connection_failure(exc: ProviderError) -> bool:
    """A failure of the connection itself (no HTTP status): refused, reset, cut off, no
    answer in time. An HTTP error means the server is there."""
    return exc.status is None and exc.retryable and not isinstance(
        exc, (MalformedReply, ReplayMiss))


# --- counts, for the progress line and the summary -----------------------------------------

class _Counts:
    """Calls and failed connections per replica URL, counted per process: slot 0 is this
    process's own; `share_counts` puts them in shared memory before a tournament forks
    its workers, one slot per worker (one writer per slot: no lock)."""

    def __init__(self) -> None:
        self.urls: dict[str, int] = {}  # url -> its row
        self.values: Any = []  # [slot][row][0 calls | 1 failed], flattened
        self.local: dict[str, list[int]] = {}
        self.mine = 0
        self.width = 0  # rows per slot in `values` (0: not shared)

    def add(self, url: str, what: int, n: int = 1) -> None:
        row = self.urls.get(url)
        if self.width and row is not None:
            self.values[(self.mine * self.width + row) * 2 + what] += n
        else:
            self.local.setdefault(url, [0, 0])[what] += n

    def snapshot(self) -> dict[str, tuple[int, int]]:
        out = {u: (c[0], c[1]) for u, c in self.local.items()}
        if self.width:
            slots = len(self.values) // (self.width * 2)
            for url, row in self.urls.items():
                calls = sum(self.values[(s * self.width + row) * 2] for s in range(slots))
                failed = sum(self.values[(s * self.width + row) * 2 + 1] for s in range(slots))
                before = out.get(url, (0, 0))
                out[url] = (before[0] + calls, before[1] + failed)
        return out


_COUNTS = _Counts()


def counts() -> dict[str, dict[str, int]]:
    """{URL (shown safely): {"calls": n, "failed": m}} for every replica of a replicated
    alias that was called in this run (and its worker processes)."""
    return {display_url(u): {"calls": c, "failed": f}
            for u, (c, f) in sorted(_COUNTS.snapshot().items())}


def progress_text() -> str:
    """'gpu1:8000 412 · gpu2:8000 398' (calls per replica), or '' without replicas."""
    return " · ".join(f"{short_url(u)} {c}" for u, (c, _) in sorted(_COUNTS.snapshot().items()))


@contextlib.contextmanager
def share_counts(urls: Sequence[str], workers: int,
                 context: Any) -> Iterator[Callable[[int], None]]:
    """For the block, the counts of `urls` live in shared memory with a slot per worker
    process (slot 0 stays this one's). Yields `join(k)`, which worker k calls first
    thing after the fork."""
    saved = (_COUNTS.urls, _COUNTS.values, _COUNTS.mine, _COUNTS.width)
    rows = {u: i for i, u in enumerate(dict.fromkeys(urls))}
    if not rows:
        yield lambda k: None
        return
    _COUNTS.urls, _COUNTS.width, _COUNTS.mine = rows, len(rows), 0
    _COUNTS.values = context.Array("q", (workers + 1) * len(rows) * 2, lock=False)

    def join(k: int) -> None:
        _COUNTS.mine = k + 1

    try:
        yield join
    finally:
        totals = _COUNTS.snapshot()  # what every process counted, kept for the summary
        _COUNTS.urls, _COUNTS.values, _COUNTS.mine, _COUNTS.width = saved
        _COUNTS.local = {u: [c, f] for u, (c, f) in totals.items()}


def reset_counts() -> None:
    """Forget every count (a new run in the same process, tests)."""
    _COUNTS.local.clear()


# --- health, and the one warning line --------------------------------------------------

@dataclass
class _Watch:
    notice: Callable[[str], None] | None = None
    strict: bool = False
    down: set[str] = field(default_factory=set)  # URLs already reported down
    # Replicas the preflight found dead: their sets start with them taken out.
    start_down: set[str] = field(default_factory=set)
    told: set[Any] = field(default_factory=set)  # keys of the notices already given


_WATCH = _Watch()


@contextlib.contextmanager
def watching(notice: Callable[[str], None] | None, *, strict: bool = False) -> Iterator[None]:
    """For the block (a command's run): an endpoint that stops answering is told to
    `notice` once, as one line; with `strict` the game that met it is aborted."""
    saved = (_WATCH.notice, _WATCH.strict, _WATCH.down, _WATCH.told, _WATCH.start_down)
    _WATCH.notice, _WATCH.strict = notice, strict
    _WATCH.down, _WATCH.told, _WATCH.start_down = set(), set(), set()
    try:
        yield
    finally:
        (_WATCH.notice, _WATCH.strict, _WATCH.down, _WATCH.told,
         _WATCH.start_down) = saved


def found_dead(urls: Iterable[str]) -> None:
    """Replicas the preflight found dead (and said so): the run starts with them taken
    out, to be probed again after their back-off."""
    _WATCH.start_down.update(urls)
    _WATCH.down.update(urls)


def notice(key: Any, line: str) -> None:
    """One line for the run, once per `key` (a server that refuses a feature)."""
    if key in _WATCH.told:
        return
    _WATCH.told.add(key)
    if _WATCH.notice is not None:
        _WATCH.notice(line)


def _reported_down(url: str, what: str, why: str) -> None:
    if url in _WATCH.down:
        return
    _WATCH.down.add(url)
    if _WATCH.notice is not None:
        _WATCH.notice(f"{display_url(url)} stopped answering ({why}) during the run: "
                      f"{what}")


def _came_back(url: str) -> None:
    _WATCH.down.discard(url)


# --- one alias's replicas ----------------------------------------------------------------

@dataclass
class Replica:
    url: str
    index: int
    in_flight: int = 0
    calls: int = 0
    down_until: float | None = None  # None: live; else when to probe it again
    backoff: float = FIRST_BACKOFF_S
    probing: bool = False

    @property
    def live(self) -> bool:
        return self.down_until is None


class ReplicaSet:
    """The replicas of one alias on one event loop, shared by all its seats."""

    def __init__(self, kind: str, urls: Sequence[str], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.kind = kind
        self.replicas = [Replica(u, i) for i, u in enumerate(urls)]
        self.clock = clock
        self._probes: set[asyncio.Task[None]] = set()
        for r in self.replicas:
            if r.url in _WATCH.start_down:
                self.take_out(r)

    def pick(self) -> Replica | None:
        """The live replica with the fewest calls in flight, or None if none is live."""
        self._probe_due()
        live = [r for r in self.replicas if r.live]
        if not live:
            return None
        return min(live, key=lambda r: (r.in_flight, r.calls, r.index))

    def take_out(self, replica: Replica) -> None:
        now = self.clock()
        if replica.live:
            replica.down_until = now + replica.backoff
        else:
            replica.down_until = max(replica.down_until or now, now + replica.backoff)

    def bring_back(self, replica: Replica) -> None:
        replica.down_until = None
        replica.backoff = FIRST_BACKOFF_S

    def next_probe_in(self) -> float:
        due = [r.down_until for r in self.replicas if r.down_until is not None]
        return max(0.0, min(due) - self.clock()) if due else 0.0

    def _probe_due(self) -> None:
        now = self.clock()
        for r in self.replicas:
            if r.down_until is not None and not r.probing and r.down_until <= now:
                r.probing = True
                task = asyncio.get_running_loop().create_task(self._probe(r))
                self._probes.add(task)
                task.add_done_callback(self._probes.discard)

    async def _probe(self, replica: Replica) -> None:
        try:
            found = await asyncio.to_thread(probe, self.kind, replica.url)
        finally:
            replica.probing = False
        if found.alive:
            self.bring_back(replica)
            _came_back(replica.url)
        else:
            replica.backoff = min(MAX_BACKOFF_S, replica.backoff * 2)
            self.take_out(replica)


_SETS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, ...], ReplicaSet]] = (
    weakref.WeakKeyDictionary())


def replica_set(kind: str, urls: Sequence[str]) -> ReplicaSet:
    """The running loop's set for these URLs (every seat of an alias shares it)."""
    per_loop = _SETS.setdefault(asyncio.get_running_loop(), {})
    key = (kind, *urls)
    found = per_loop.get(key)
    if found is None:
        found = per_loop[key] = ReplicaSet(kind, urls)
    return found


class Watched:
    """A seat's provider: its adapter per replica (one, for a single URL), routed and
    watched as the module docstring says. `label` names the seat in warnings."""

    def __init__(self, kind: str, urls: Sequence[str], providers: Sequence[Provider], *,
                 label: str, policy: RetryPolicy | None = None) -> None:
        if len(urls) != len(providers) or not urls:
            raise ValueError("one provider per replica URL")
        self.kind = kind
        self.urls = tuple(urls)
        self.providers = tuple(providers)
        self.label = label
        self.policy = policy or RetryPolicy()
        self.routed = len(urls) > 1

    async def aclose(self) -> None:
        for p in self.providers:
            close = getattr(p, "aclose", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    await close()

    async def complete(self, request: ChatRequest) -> Completion:
        if not self.routed:
            return await self._single(request)
        return await self._route(request)

    async def _single(self, request: ChatRequest) -> Completion:
        url = self.urls[0]
        if url in _WATCH.down:
            # Known dead: a quick probe first, so that each later turn of the seat costs
            # a second, not the retry loop's backoff, while the server stays down.
            found = await asyncio.to_thread(probe, self.kind, url)
            if not found.alive:
                raise ProviderError(f"{self.label}: {display_url(url)} still does not "
                                    f"answer ({found.problem})", retryable=True)
        try:
            completion = await self.providers[0].complete(request)
        except ProviderError as exc:
            if _connection_failure(exc):
                self._dead(url, _reason(exc), f"{self.label} forfeits its turns")
            raise
        _came_back(url)
        return completion

    def _dead(self, url: str, why: str, what: str) -> None:
        if _WATCH.strict:
            raise GameAborted(f"{display_url(url)} stopped answering during the run "
                              f"({why}); --strict stops the run")
        _reported_down(url, what, why)

    async def _route(self, request: ChatRequest) -> Completion:
        replicas = replica_set(self.kind, self.urls)
        attempt = 0
        while True:
            replica = replicas.pick()
            if replica is None:
                # Every replica is out: wait for the first probe that is due, a few times.
                if attempt >= self.policy.max_retries:
                    url = self.urls[0]
                    self._dead(url, "every replica is out", f"{self.label} forfeits its turns")
                    raise ProviderError(f"{self.label}: none of its {len(self.urls)} "
                                        "replicas answers", retryable=True)
                await self.policy.sleep(max(0.05, replicas.next_probe_in()))
                attempt += 1
                continue
            replica.in_flight += 1
            replica.calls += 1
            _COUNTS.add(replica.url, 0)
            try:
                completion = await self.providers[replica.index].complete(request)
            except ProviderError as exc:
                if not _connection_failure(exc):
                    if not exc.retryable or attempt >= self.policy.max_retries:
                        raise
                    failure = classify(exc)
                    await self.policy.sleep(self.policy.delay(attempt, failure))
                    attempt += 1
                    continue
                _COUNTS.add(replica.url, 1)
                replicas.take_out(replica)
                others = any(r.live for r in replicas.replicas)
                _reported_down(replica.url, "its calls go to the other replicas" if others
                               else f"{self.label} waits for a replica to come back",
                               _reason(exc))
                continue  # at once, on another replica: the call's deadline bounds this
            finally:
                replica.in_flight -= 1
            return completion


def one_attempt(policy: RetryPolicy | None) -> RetryPolicy:
    """`policy` with one attempt: a replica's adapter gets it (the router retries), and
    so does a call that must learn at once whether a server refuses a feature."""
    base = policy or RetryPolicy()
    return RetryPolicy(max_retries=0, base_delay=base.base_delay, max_delay=base.max_delay,
                       jitter=base.jitter, sleep=base.sleep,
                       attempt_timeout_s=base.attempt_timeout_s)


__all__ = [
    "DEFAULT_MAX_RETRIES",
    "ReplicaSet",
    "Watched",
    "counts",
    "notice",
    "one_attempt",
    "progress_text",
    "replica_set",
    "reset_counts",
    "share_counts",
    "short_url",
    "watching",
]
