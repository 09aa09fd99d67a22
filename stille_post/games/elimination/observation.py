"""What one seat knows when it is asked: built only from that seat's view.

`Observation` carries the moment of the ask (round, subround, who is still in, the
partner, the tied seats, the finalists, the word limit: all public or the seat's own
facts) and the seat's events. `PublicRecord` reads the facts a bot may use out of those
events: the pairs announced, the public vote counts, who named whom in public, and the
seat's own partners. A bot therefore cannot know more than an LLM seat would.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from stille_post.core.events import Event
from stille_post.games.kit.incremental import continues

_NAMED = re.compile(r"\bPlayer\s+(\d+)\b")

MESSAGE_TYPES = ("public_message", "private_message", "tie_break_message", "final_message")


@dataclass(frozen=True)
class Facts:
    """The game's fixed facts, the same for every ask (they go into the system prompt)."""

    num_players: int
    private_subrounds: int
    public_words: int
    private_words: tuple[int, ...]
    tie_break_words: int
    final_words: int
    limit_policy: str
    jury_tie: str


@dataclass(frozen=True)
class Moment:
    """Where the game stands when a seat is asked (all public knowledge)."""

    round: int = 0
    active: tuple[int, ...] = ()
    eliminated: tuple[int, ...] = ()  # in elimination order
    tied: tuple[int, ...] = ()
    finalists: tuple[int, ...] = ()


@dataclass(frozen=True)
class Observation:
    seat: int
    facts: Facts
    moment: Moment
    events: Sequence[Event]
    limit_words: int = 0  # for a message
    subround: int = 0  # private subround 1..k
    partner: int | None = None  # in a private chat
    allowed: tuple[int, ...] = ()  # valid targets of a vote or seats to rank

    @property
    def others(self) -> tuple[int, ...]:
        return tuple(s for s in self.moment.active if s != self.seat)


@dataclass
class PublicRecord:
    """Facts read from one seat's view, for bots."""

    seat: int
    round: int = 0
    times_paired: dict[int, int] = field(default_factory=dict)
    votes_received: dict[int, int] = field(default_factory=dict)  # public counts, summed
    partner_by_round: dict[int, int] = field(default_factory=dict)  # this seat's partners
    named_this_round: dict[int, int] = field(default_factory=dict)  # "Player N" in speech
    chats_with: dict[int, int] = field(default_factory=dict)  # rounds paired with each seat

    @classmethod
    def read(cls, seat: int, events: Sequence[Event]) -> PublicRecord:
        rec = cls(seat)
        rec.consume(events)
        return rec

    def copy(self) -> PublicRecord:
        return PublicRecord(self.seat, self.round, dict(self.times_paired),
                            dict(self.votes_received), dict(self.partner_by_round),
                            dict(self.named_this_round), dict(self.chats_with))

    def consume(self, events: Sequence[Event]) -> None:
        """Read `events` as the continuation of what this record has read."""
        rec, seat = self, self.seat
        for e in events:
            t, d = e.type, e.data
            if t == "round_start":
                rec.round = int(d.get("round", e.round))
                rec.named_this_round = {}
            elif t == "pairing":
                for a, b in d.get("pairs", ()):
                    rec.times_paired[a] = rec.times_paired.get(a, 0) + 1
                    rec.times_paired[b] = rec.times_paired.get(b, 0) + 1
                    if seat in (a, b):
                        other = b if a == seat else a
                        rec.partner_by_round[e.round] = other
                        rec.chats_with[other] = rec.chats_with.get(other, 0) + 1
            elif (t == "vote_result" and d.get("stage") == "vote") or \
                    (t == "tie_break" and d.get("step") == "revote"):
                for s, n in (d.get("counts") or {}).items():
                    rec.votes_received[int(s)] = rec.votes_received.get(int(s), 0) + int(n)
            elif t in ("public_message", "tie_break_message", "final_message") \
                    and e.actor != seat:
                for m in _NAMED.findall(str(d.get("text", ""))):
                    n = int(m)
                    if n != e.actor:
                        rec.named_this_round[n] = rec.named_this_round.get(n, 0) + 1

    def partner(self, round: int) -> int | None:
        return self.partner_by_round.get(round)

    def threat(self, s: int) -> int:
        """A public proxy for "strongest threat": well connected (paired often) and rarely
        voted against. Higher is more dangerous."""
        return 2 * self.times_paired.get(s, 0) - self.votes_received.get(s, 0)


class RecordReader:
    """`PublicRecord.read` for one seat's successive decisions, reading each event once.

    A decision's events are a committed view (the main log's, or a channel's: the main
    view and the channel's own lines after it), which only grows at its end, plus notices
    previewed for this ask (seq 0) after it. The record is kept and continued while the
    view continues what it read (kit's `continues`, the incremental renderer's rule),
    else read afresh; previews are read into a copy. Equal to `PublicRecord.read`
    (tested): reading the whole view on every decision made an Elimination game's bots
    quadratic in its length."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self._record = PublicRecord(seat)
        self._first: Event | None = None  # the first event of the view it has read
        self._read = 0  # how many events of that view
        self._last: Event | None = None  # the last of them

    def read(self, events: Sequence[Event]) -> PublicRecord:
        committed = len(events)
        while committed and events[committed - 1].seq == 0:
            committed -= 1
        if not committed:
            return PublicRecord.read(self.seat, events)
        if not continues(events, self._first, self._read, self._last):
            self._record, self._read = PublicRecord(self.seat), 0
        rec = self._record
        rec.consume(events[self._read:committed])
        self._first, self._read, self._last = events[0], committed, events[committed - 1]
        if committed < len(events):
            rec = rec.copy()
            rec.consume(events[committed:])
        return rec
