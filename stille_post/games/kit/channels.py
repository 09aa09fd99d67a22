"""Channels: private sub-conversations that run at the same time and still replay
byte-identically.

The Elimination Game's pairs chat in parallel: one after another they would cost
3 × 2 × (pairs) sequential model calls a round; as channels, only 3 × 2. A channel
buffers its own events (with provisional seq 0), and a seat in it sees its main view
followed by the channel's events. When every channel is done, the table merges their
buffers into the log in ascending key order. The transcript's order therefore depends
on the keys, never on which model answered first.

A seat must be in at most one channel of a batch: its view is its main view plus its
one channel, which is exactly what it may see.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from stille_post.core.events import Event, Visibility
from stille_post.games.kit.table import Table
from stille_post.players.base import is_instant

K = TypeVar("K")


class Channel:
    def __init__(self, table: Table, key: Any, seats: Sequence[int]) -> None:
        self.table = table
        self.key = key
        self.seats = tuple(sorted(seats))
        self.events: list[Event] = []

    def emit(self, type: str, *, actor: int | None = None,
             visibility: Visibility | None = None, **data: Any) -> Event:
        """Buffered: the event gets its real seq when the channel is merged. A channel's
        events default to its own seats, not to the public."""
        log = self.table.log
        vis = visibility if visibility is not None else Visibility.only(*self.seats)
        event = Event(0, type, log.round, log.turn, actor, vis, data)
        self.events.append(event)
        return event

    def view(self, seat: int) -> Sequence[Event]:
        own = [e for e in self.events if e.visibility.allows(seat)]
        main = self.table.log.views[seat]
        return (*main, *own) if own else main


async def run_channels(
    table: Table,
    groups: Mapping[K, Sequence[int]],
    body: Callable[[Channel], Awaitable[None]],
) -> dict[K, Channel]:
    """Run `body` once per group, concurrently; then merge every channel's events into
    the log in ascending key order. A body that raises still raises here (the engine
    base turns a bug into an aborted game), and nothing of any channel is merged."""
    seen: set[int] = set()
    for seats in groups.values():
        overlap = seen.intersection(seats)
        if overlap:
            raise ValueError(f"seats {sorted(overlap)} are in two channels at once")
        seen.update(seats)
    channels = {key: Channel(table, key, seats) for key, seats in groups.items()}
    if all(is_instant(table.players[s]) for s in seen):
        # Players that never suspend: each body runs to its end where gather's task would,
        # in the same order, without a task per channel (bot games). As with gather, every
        # body runs even after one has raised, and the first error is the one raised.
        error: Exception | None = None
        for ch in channels.values():
            try:
                await body(ch)
            except Exception as exc:
                error = error or exc
        if error is not None:
            raise error
    else:
        await asyncio.gather(*(body(ch) for ch in channels.values()))
    for key in sorted(channels):  # type: ignore[type-var]
        for e in channels[key].events:
            table.log.emit(e.type, actor=e.actor, visibility=e.visibility, **e.data)
    return channels
