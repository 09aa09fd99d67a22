"""What one seat knows when it is asked to decide. Built only from that seat's view."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stille_post.core.events import Event
from stille_post.games.stille_post.roster import Roster
from stille_post.games.stille_post.rules import MatchMode


@dataclass(frozen=True)
class StillePostObservation:
    seat: int
    num_players: int
    guess_every: int
    max_rounds: int
    match: MatchMode
    max_message_chars: int
    roster: Roster
    active: tuple[int, ...]
    round: int
    turn: int
    hints: tuple[tuple[str, str], ...]  # (kind, value), in the order received
    events: Sequence[Event]  # this seat's view, oldest first

    @property
    def others(self) -> tuple[int, ...]:
        return tuple(s for s in self.active if s != self.seat)
