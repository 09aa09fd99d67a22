"""What one seat knows when it is asked to decide.

Public facts (the prefix, the blocked and used lists, past attempts, the current clue)
come from the engine's public state, which is exactly what the public events said. A
seat's private facts come only from events in its own view: the setter's secret word
from its private `secret` event, a clue-giver's word from its private `clue_word` event.
So a guesser's observation cannot hold the secret word, and nobody else's can hold a
clue word before the attempt is scored, unless an event leaked it (the isolation tests
look for that in the rendered requests).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stille_post.core.events import Event
from stille_post.games.connections.dictionary import Dictionary


@dataclass(frozen=True)
class AttemptRecord:
    """One scored attempt, as everyone saw it announced."""

    attempt: int
    giver: int
    prefix: str
    word: str | None  # None: the clue-giver forfeited
    clue: str | None
    guesses: Mapping[int, str | None]  # seat -> guess (None: forfeited); setter included
    outcome: str
    connectors: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"attempt": self.attempt, "giver": self.giver, "prefix": self.prefix,
                "word": self.word, "clue": self.clue,
                "guesses": {str(s): g for s, g in sorted(self.guesses.items())},
                "outcome": self.outcome, "connectors": list(self.connectors)}


@dataclass(frozen=True)
class ConnectionsObservation:
    seat: int
    role: str  # "setter" | "guesser"
    setter: int
    guessers: tuple[int, ...]
    max_attempts: int
    min_length: int
    attempt: int  # the attempt being played (0 before the first)
    prefix: str  # "" before the secret word is set
    blocked: tuple[str, ...]
    used: tuple[str, ...]
    history: tuple[AttemptRecord, ...]
    # The Game Master announced that no letter is left to reveal: the prefix is the secret.
    # Public, and only after a Connection that revealed nothing; a guesser is never told
    # the secret's length, so it cannot know this earlier.
    nothing_left: bool = False
    clue_giver: int | None = None
    clue: str | None = None  # the clue being guessed (for a guess decision)
    secret: str | None = None  # the setter's own word (setter only)
    own_word: str | None = None  # the word behind the clue this seat gave (giver only)
    persona: str | None = None  # this seat's own priming
    others_personas: Mapping[int, str] = field(default_factory=dict)  # when shared
    events: Sequence[Event] = ()
    # The game's dictionary (public: every player may look words up), for the legal
    # words of a structured seat (prompts.legal_moves).
    dictionary: Dictionary | None = field(default=None, compare=False, repr=False)

    @property
    def is_setter(self) -> bool:
        return self.role == "setter"

    @property
    def excluded(self) -> frozenset[str]:
        return frozenset(self.blocked) | frozenset(self.used)


@dataclass
class PrivateFacts:
    """A seat's private facts, read from its own view incrementally: a view only grows at
    its end, so each event is read once (bots play thousands of decisions a second)."""

    seat: int
    scanned: int = 0
    secret: str | None = None
    persona: str | None = None
    own_words: dict[int, str] = field(default_factory=dict)  # attempt -> own clue word

    def update(self, view: Sequence[Event]) -> PrivateFacts:
        for e in view[self.scanned:]:
            if e.visibility.is_public:
                continue
            d = e.data
            if e.type == "secret" and d.get("seat") == self.seat:
                self.secret = str(d["word"])
            elif e.type == "clue_word" and e.actor == self.seat:
                self.own_words[int(d["attempt"])] = str(d["word"])
            elif e.type == "persona" and d.get("seat") == self.seat:
                self.persona = str(d["persona"])
        self.scanned = len(view)
        return self
