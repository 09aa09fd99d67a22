"""The Elimination Game's options (docs/rules.md §2), validated at the boundary.

Field names become CLI flags (`--private-subrounds`, `--limit-policy`, `--jury-tie`, ...),
so they are named for the command line.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from stille_post.games.kit.config import GameConfig, repair_field, seats_field, timeout_field

LimitPolicy = Literal["truncate", "reask"]
JuryTie = Literal["cumulative", "random"]


class EliminationConfig(GameConfig):
    num_players: int = seats_field(8, ge=3, le=20, description="seats, P1..Pn (3 or more)")
    private_subrounds: int = Field(
        3, ge=0, le=3,
        description="private chat subrounds per round; 0 is the anchor's public-only "
                    "version (no ranking, no pairing)")
    public_words: int = Field(80, ge=1, le=1000, description="word limit of a public statement")
    # A string, so that it is a flag of its own (--private-words 70,50,30); the engine reads
    # it as `private_limits`.
    private_words: str = Field(
        "70,50,30", description="word limits of the private subrounds, in order, "
                                "comma-separated")
    tie_break_words: int = Field(50, ge=1, le=1000,
                                 description="word limit of a tie-break statement")
    final_words: int = Field(80, ge=1, le=1000,
                             description="word limit of a finalist's statement")
    limit_policy: LimitPolicy = Field(
        "truncate", description="over-limit text: truncate (cut on a word boundary, marked) "
                                "or reask (one corrective re-ask, then cut)")
    jury_tie: JuryTie = Field(
        "cumulative", description="a tied jury: cumulative (most votes received this game "
                                  "is eliminated, then rng) or random (rng at once)")
    repair_attempts: int = repair_field("corrective re-asks for an unusable reply")
    decision_timeout_s: float = timeout_field()
    max_message_chars: int = Field(2000, ge=10, le=100_000,
                                   description="character cap on any message (after words)")
    reason_words: int = Field(60, ge=1, le=1000,
                              description="word cap of a (log-only) vote reason")

    @field_validator("private_words", mode="before")
    @classmethod
    def _limits(cls, value: Any) -> str:
        # "70,50,30" from a flag; a list from --set [70,50,30], a config file or Python.
        parts = [str(p).strip() for p in value] if isinstance(value, list | tuple) \
            else str(value).replace(";", ",").split(",")
        parts = [p for p in parts if p]
        if not 1 <= len(parts) <= 3 or not all(p.isdigit() and int(p) >= 1 for p in parts):
            raise ValueError("give one to three positive word limits, e.g. 70,50,30")
        return ",".join(str(int(p)) for p in parts)

    @property
    def private_limits(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.private_words.split(","))

    @model_validator(mode="after")
    def _enough_limits(self) -> EliminationConfig:
        if self.private_subrounds > len(self.private_limits):
            raise ValueError(f"private_subrounds {self.private_subrounds} needs that many "
                             f"private_words limits, got {len(self.private_limits)}")
        return self

    def private_limit(self, subround: int) -> int:
        """The word limit of private subround 1..private_subrounds."""
        return self.private_limits[subround - 1]
