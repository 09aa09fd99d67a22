"""Connections' configuration: validated at the boundary, immutable after.

Seats: the setter is seat 1, the guessers are seats 2..n+1. The kit counts seats
(`num_players`); the paper counts guessers (n). Both are accepted and must agree:
`--guessers 3` gives 4 seats, `--players a,b,c,d` gives 3 guessers, and giving both
with different numbers is a one-line error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from stille_post.games.kit.config import GameConfig, repair_field, seats_field, timeout_field

MIN_GUESSERS, MAX_GUESSERS = 2, 5
Persona = str | dict[str, str]


class ConnectionsConfig(GameConfig):
    num_players: int = seats_field(3, ge=MIN_GUESSERS + 1, le=MAX_GUESSERS + 1,
                                   description="seats: the setter plus the guessers")
    guessers: int = Field(2, ge=MIN_GUESSERS, le=MAX_GUESSERS,
                          description="guessers (n); the seats are n + 1")
    word: str | None = Field(None, description="the setter's secret word (else the setter "
                                               "picks one)")
    max_attempts: int = Field(50, ge=1, le=10_000,
                              description="attempts before the setter wins")
    dictionary: Path | None = Field(None, description="a word list of your own "
                                                      "(one word per line, optional frequency)")
    min_word_length: int = Field(3, ge=1, le=20, description="the shortest valid word")
    min_zipf: float = Field(0.0, ge=0.0, le=8.0,
                            description="drop rarer dictionary words (Zipf scale; 0 keeps all)")
    personas: dict[int, Persona] = Field(
        default_factory=dict,
        description='per-seat priming, e.g. {"2": "a retired chemist from Osaka, 70"} or '
                    '{"2": {"profession": "chemist", "culture": "Japanese", "age": "70"}}')
    share_personas: bool = Field(False, description="tell every player the others' personas")
    repair_attempts: int = repair_field("corrective re-asks per decision")
    max_clue_chars: int = Field(200, ge=10, le=2000, description="longest clue kept")
    max_clue_words: int = Field(25, ge=1, le=400, description="most words in a clue")
    decision_timeout_s: float = timeout_field()

    @model_validator(mode="before")
    @classmethod
    def _seats_and_guessers(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        # A value that is not a whole number is left to its field, whose error names it.
        seats, guessers = _whole(data.get("num_players")), _whole(data.get("guessers"))
        if seats is not None and guessers is not None:
            if seats != guessers + 1:
                raise ValueError(f"{guessers} guessers need {guessers + 1} seats "
                                 f"(the setter first), not {seats}")
        elif guessers is not None and data.get("num_players") is None:
            if MIN_GUESSERS <= guessers <= MAX_GUESSERS:  # else `guessers` names the error
                data["num_players"] = guessers + 1
        elif (seats is not None and data.get("guessers") is None
              and MIN_GUESSERS + 1 <= seats <= MAX_GUESSERS + 1):
            data["guessers"] = seats - 1
        return data

    @property
    def setter(self) -> int:
        return 1

    @property
    def guesser_seats(self) -> list[int]:
        return list(range(2, self.num_players + 1))

    def persona_of(self, seat: int) -> str | None:
        p = self.personas.get(seat)
        if p is None:
            return None
        if isinstance(p, dict):
            return "; ".join(f"{k}: {v}" for k, v in p.items()) or None
        return p.strip() or None


def _whole(value: Any) -> int | None:
    """`value` as a whole number if it reads as one (an int, or its text), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e9:
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit() and len(value) < 20:
        return int(value)
    return None
