"""What one seat knows when it is asked to decide: built only from that seat's view.

The role and the secret word come from the private `role` event in the seat's own view,
never from the engine's state, so a chameleon's observation cannot hold the secret word
unless an event leaked it (which the isolation tests look for).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stille_post.core.events import Event


@dataclass(frozen=True)
class ChameleonObservation:
    seat: int
    num_players: int
    category: str
    words: tuple[str, ...]
    tie_rule: str
    max_word_chars: int
    role: str  # "chameleon" | "non-chameleon"
    secret: str | None  # None for the chameleon
    order: tuple[int, ...]
    dealer: int | None  # announced only under tie_rule "dealer"
    responses: tuple[tuple[int, str], ...]  # (seat, word) in speaking order so far
    votes: tuple[tuple[int, int], ...]  # (voter, accused), once the votes are public
    tied: tuple[int, ...]  # the seats a dealer must choose between
    events: Sequence[Event]  # this seat's view, oldest first

    @property
    def is_chameleon(self) -> bool:
        return self.role == "chameleon"

    @property
    def others(self) -> tuple[int, ...]:
        return tuple(s for s in range(1, self.num_players + 1) if s != self.seat)

    def other_responses(self) -> list[tuple[int, str]]:
        return [(s, w) for s, w in self.responses if s != self.seat]


def observe(seat: int, max_word_chars: int, events: Sequence[Event]) -> ChameleonObservation:
    num_players, category, tie_rule = 0, "", "random"
    words: tuple[str, ...] = ()
    role, secret = "non-chameleon", None
    order: tuple[int, ...] = ()
    dealer: int | None = None
    responses: list[tuple[int, str]] = []
    votes: list[tuple[int, int]] = []
    tied: tuple[int, ...] = ()
    for e in events:
        d = e.data
        if e.type == "game_start":
            num_players, category = int(d["num_players"]), str(d["category"])
            words, tie_rule = tuple(d["words"]), str(d["tie_rule"])
        elif e.type == "role" and d.get("seat") == seat:
            role, secret = str(d["role"]), d.get("secret")
        elif e.type == "speaking_order":
            order = tuple(d["order"])
        elif e.type == "dealer":
            dealer = int(d["seat"])
        elif e.type == "word" and e.actor is not None:
            responses.append((e.actor, str(d["word"])))
        elif e.type == "vote" and e.actor is not None:
            votes.append((e.actor, int(d["target"])))
        elif e.type == "tie_break_request":
            tied = tuple(d["tied"])
    return ChameleonObservation(
        seat=seat, num_players=num_players, category=category, words=words,
        tie_rule=tie_rule, max_word_chars=max_word_chars, role=role, secret=secret,
        order=order, dealer=dealer, responses=tuple(responses), votes=tuple(votes),
        tied=tied, events=tuple(events),
    )
