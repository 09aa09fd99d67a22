"""Stille Post configuration: validated at the boundary, immutable after."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator

from stille_post.games.kit.config import GameConfig, repair_field, seats_field, timeout_field
from stille_post.games.stille_post.rules import MatchMode


class StillePostConfig(GameConfig):
    num_players: int = seats_field(4, ge=2, le=12, description="seats in the game")
    guess_every: int = Field(3, ge=1, description="turns between identity-guess phases (N)")
    max_rounds: int = Field(4, ge=1, le=1000, description="rounds before the game ends")
    match: MatchMode = Field("fuzzy", description="identity matching: fuzzy (the seed's rule) "
                                                  "or exact")
    max_message_chars: int = Field(2000, ge=20, description="message cap in characters")
    repair_attempts: int = repair_field("corrective re-asks before a forfeit")
    max_forfeits: int = Field(3, ge=1, description="consecutive forfeits before removal (K)")
    decision_timeout_s: float = timeout_field()
    roster: Path | None = Field(None, description="a roster TOML of your own")
    pinned: dict[int, str] = Field(default_factory=dict, description="seat -> model id")

    @field_validator("pinned")
    @classmethod
    def _pins_distinct(cls, v: dict[int, str]) -> dict[int, str]:
        if len(set(v.values())) != len(v):
            raise ValueError("two seats are pinned to the same model")
        return v
