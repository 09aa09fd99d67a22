"""Incremental prompts: a seat's conversation is kept between its decisions and extended
with only the events it has not rendered yet.

Rendering a seat's whole view on every decision costs O(history) per decision, O(n²)
per game, and rebuilds every frozen `Message` each time. RULES.md §1 already makes the
history append-only ("an event renders the same way whenever it is rendered"), so the
conversation rendered for one decision is a prefix of the next one's. This module keeps
it, per seat, and renders only the new events: O(new events) per decision plus one
pointer copy of the message list the request owns.

A game adopts it with one per-event function, the body of its old render loop:

    def render_event(conv: Conversation, event: Event, seat: int) -> None: ...

    RENDER = IncrementalRenderer(render_event)
    messages = RENDER.messages(obs.events, obs.seat, closing=f"{GM_TO_YOU}: {question}")

and the result is exactly what `render_full` (a fresh `Conversation` fed every event,
then `user(closing)` and `done()`) returns. That equality is what makes it safe; it
holds when `render_event` depends only on the event, the seat and the conversation
(the kit's `Conversation` and its `open_calls`), never on anything that changes between
decisions. Volatile state (a turn counter, scores) belongs in `closing`, which is never
kept.

Which kept conversation belongs to a view:
- a seat's view is a list the log only appends to, so the key is the identity of the
  view's first event (the game's own `game_start` object) and the seat; before reusing a
  kept conversation the renderer checks that the last event it rendered is still, by
  identity, at the same place in the view. Anything else (another game, a replay built
  from a transcript, a hand-made list in a test) starts a fresh conversation, so a wrong
  reuse is impossible, only a missed one;
- events with `seq == 0` are not final: a repair notice previewed to the seat being
  re-asked, or a channel's buffered events (kit/channels.py), which reach the log later
  as new objects. They are rendered on a throwaway fork and never kept;
- a kept conversation holds its view's first event weakly, and is dropped when that
  event is freed: it lives as long as its game's events, so a process keeps none of a
  game that is over (kept ones had also been inherited by forked tournament workers);
- conversations unused for many times the usual gap between two asks of a seat are
  swept too, so memory stays flat over any number of games even when something keeps
  every game's events alive.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from stille_post.core.events import Event
from stille_post.games.kit.framing import Conversation
from stille_post.providers.base import Message

RenderEvent = Callable[[Conversation, Event, int], None]

# Every SWEEP_EVERY renders, conversations not used for HORIZON_FACTOR times the usual
# gap between two asks of one seat (at least MIN_HORIZON renders) are dropped: a seat
# still playing is asked about every "usual gap", so only finished games go, and memory
# stays bounded by the games in flight. Dropping a live one (a seat left idle for much
# longer than usual) costs one rebuild, never a wrong prompt.
SWEEP_EVERY = 256
MIN_HORIZON = 1024
HORIZON_FACTOR = 8


@dataclass(slots=True)
class _Kept:
    conv: Conversation
    # The view's first event, weakly: when the game's events are gone, a callback drops
    # the entry, before the event's id can be reused by another object.
    first: weakref.ref[Event]
    last: Event | None  # the last event rendered into `conv`
    n: int  # how many events of the view `conv` holds
    last_use: int = 0  # the renderer's render count when it was last used


def continues(events: Sequence[Event], first: Event | None, read: int,
              last: Event | None) -> bool:
    """True when `events` is the view of which `read` events, the last of them `last`,
    were already read: the same first event, and `last` still at its place (a view is
    only ever appended to, so what lies between is the same too). The rule every kept
    per-view state uses before it is continued (this renderer, the Elimination bots'
    records). `first` None (nothing read yet, or its event is gone) never continues."""
    return (bool(events) and events[0] is first and read <= len(events)
            and (read == 0 or events[read - 1] is last))


def render_full(render_event: RenderEvent, events: Sequence[Event], seat: int,
                closing: str | None = None) -> list[Message]:
    """The reference: every event into a fresh conversation (what games did before)."""
    conv = Conversation()
    for e in events:
        render_event(conv, e, seat)
    if closing is not None:
        conv.user(closing)
    return conv.done()


class IncrementalRenderer:
    """Renders seats' views into message lists, keeping each seat's conversation.

    One instance per game's prompt book (module level is fine: entries are keyed by
    game and seat, and rendering is synchronous, so concurrent games on one event loop
    never interleave inside a render)."""

    def __init__(self, render_event: RenderEvent) -> None:
        self.render_event = render_event
        self._kept: dict[tuple[int, int], _Kept] = {}
        self._now = 0  # renders so far
        self._gap = 0.0  # running mean of the renders between two uses of one seat
        # Counters for benchmarks and tests: how many events were rendered, and how
        # many renders had to start from scratch.
        self.events_rendered = 0
        self.rebuilds = 0

    def messages(self, events: Sequence[Event], seat: int,
                 closing: str | None = None) -> list[Message]:
        """Equal to `render_full(self.render_event, events, seat, closing)`."""
        if not events:
            return render_full(self.render_event, events, seat, closing)
        first = events[0]
        key = (id(first), seat)
        kept = self._kept.get(key)
        total = len(events)
        if kept is None or not continues(events, kept.first(), kept.n, kept.last):
            kept = _Kept(Conversation(), weakref.ref(first, self._dropper(key)), None, 0,
                         self._now)
            self._kept[key] = kept
            self.rebuilds += 1
        else:
            self._gap += (self._now - kept.last_use - self._gap) / 64
        self._now += 1
        kept.last_use = self._now
        conv = kept.conv
        render = self.render_event
        i = kept.n
        try:
            while i < total:
                e = events[i]
                if e.seq == 0:
                    break  # not final: from here on, only on a fork (below)
                render(conv, e, seat)
                i += 1
        except BaseException:
            # A half-rendered event would corrupt every later prompt of this seat.
            del self._kept[key]
            raise
        self.events_rendered += i - kept.n
        if i > kept.n:
            kept.n, kept.last = i, events[i - 1]
        if i < total:
            conv = conv.copy()
            for e in events[i:]:
                render(conv, e, seat)
            self.events_rendered += total - i
        if self._now % SWEEP_EVERY == 0:
            self._sweep()
        return conv.snapshot(closing)

    def _dropper(self, key: tuple[int, int]) -> Callable[[weakref.ref[Event]], None]:
        # Only the entry's own reference can call this: a replaced entry's reference
        # dies with the entry, and its callback with it.
        def drop(ref: weakref.ref[Event]) -> None:
            self._kept.pop(key, None)
        return drop

    def _sweep(self) -> None:
        oldest = self._now - max(MIN_HORIZON, HORIZON_FACTOR * self._gap)
        self._kept = {k: v for k, v in self._kept.items() if v.last_use >= oldest}

    def __len__(self) -> int:
        """Conversations kept right now."""
        return len(self._kept)

    def clear(self) -> None:
        self._kept.clear()


__all__ = ["IncrementalRenderer", "RenderEvent", "continues", "render_full"]
