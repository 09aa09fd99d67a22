"""The Chameleon's configuration: validated at the boundary, immutable after."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from stille_post.games.kit.config import GameConfig, repair_field, seats_field, timeout_field

TieRule = Literal["random", "dealer", "chameleon_wins"]


class ChameleonConfig(GameConfig):
    num_players: int = seats_field(4, ge=3, le=20,
                                   description="seats (N); the paper needs N >= 3")
    words: int = Field(16, ge=2, le=64, description="possible secret words per card (K)")
    tie_rule: TieRule = Field("random", description="how a tied vote is settled")
    repair_attempts: int = repair_field("re-asks before the game Fails")
    max_word_chars: int = Field(40, ge=5, le=200, description="longest accepted one-word reply")
    decision_timeout_s: float = timeout_field()
    cards: Path | None = Field(None, description="a card file of your own (TOML)")
    category: str | None = Field(None, description="play only this card's category")
