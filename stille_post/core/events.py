"""Events and their audience.

Every event says who may see it. A player's observation is built only from the events
its seat may see, so private information cannot leak into a prompt by accident: the
isolation tests check exactly this rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Visibility:
    """Who may see an event: everyone (`seats is None`), or exactly these seats.

    An empty set means "the log only": recorded for analysis, shown to no player
    (the Elimination Game's vote reasons, for example).
    """

    seats: frozenset[int] | None = None

    @classmethod
    def public(cls) -> Visibility:
        return _PUBLIC

    @classmethod
    def only(cls, *seats: int) -> Visibility:
        return cls(frozenset(seats))

    @classmethod
    def log_only(cls) -> Visibility:
        return cls(frozenset())

    @property
    def is_public(self) -> bool:
        return self.seats is None

    def allows(self, seat: int) -> bool:
        return self.seats is None or seat in self.seats

    def to_json(self) -> str | list[int]:
        return "public" if self.seats is None else sorted(self.seats)

    @classmethod
    def from_json(cls, value: Any) -> Visibility:
        if value == "public":
            return _PUBLIC
        if isinstance(value, list) and all(isinstance(x, int) for x in value):
            return cls(frozenset(value))
        raise ValueError(f"bad visibility {value!r}: expected 'public' or a list of seat ids")


_PUBLIC = Visibility(None)


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Event:
    """One thing that happened. `actor` is a seat id, or None for the Game Master.

    Weakly referenceable: kept per-view state (kit/incremental.py) lives exactly as long
    as its game's events."""

    seq: int
    type: str
    round: int
    turn: int
    actor: int | None
    visibility: Visibility
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "type": self.type,
            "round": self.round,
            "turn": self.turn,
            "actor": self.actor,
            "visibility": self.visibility.to_json(),
            "data": dict(self.data),
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Event:
        return cls(
            seq=int(obj["seq"]),
            type=str(obj["type"]),
            round=int(obj["round"]),
            turn=int(obj["turn"]),
            actor=obj.get("actor"),
            visibility=Visibility.from_json(obj["visibility"]),
            data=dict(obj.get("data") or {}),
        )


def visible_to(events: Iterable[Event], seat: int) -> list[Event]:
    """The events a seat may see, in order: the one definition of a player's view."""
    return [e for e in events if e.visibility.allows(seat)]


EventSink = Callable[[Event], None]


class EventLog:
    """The engine's append-only event log, with one incremental view per seat.

    Views are kept incrementally so that building an observation costs nothing per
    decision; `visible_to` over the full log gives the same lists (tested).
    """

    def __init__(self, seats: Iterable[int], sink: EventSink | None = None) -> None:
        self.events: list[Event] = []
        self.views: dict[int, list[Event]] = {s: [] for s in seats}
        self._sink = sink
        self.round = 0
        self.turn = 0

    def emit(
        self,
        type: str,
        *,
        actor: int | None = None,
        visibility: Visibility | None = None,
        **data: Any,
    ) -> Event:
        vis = visibility if visibility is not None else Visibility.public()
        event = Event(len(self.events) + 1, type, self.round, self.turn, actor, vis, data)
        self.events.append(event)
        views = self.views
        if vis.seats is None:  # public: every view (the common case, no test per seat)
            for view in views.values():
                view.append(event)
        else:
            for seat in vis.seats:
                seen = views.get(seat)
                if seen is not None:
                    seen.append(event)
        if self._sink is not None:
            self._sink(event)
        return event
