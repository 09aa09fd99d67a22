"""The Chameleon's configuration: validated at the boundary, immutable after."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from stille_post.games.kit.config import GameConfig, repair_field, seats_field, timeout_field

TieRule = Literal["random", "dealer", "chameleon_wins"]
TheoryKind = Literal["concealing", "revealing", "amb"]


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
    # A theory variant (theory/): abstract responses played by the strategy bots only.
    theory: TheoryKind | None = Field(
        None, description="a theory game of the paper's §4: concealing, revealing or amb")
    alpha: float | None = Field(
        None, description="the pairwise KL (concealing) or L1 (revealing) of a theory game")

    @model_serializer(mode="wrap")
    def _drop_unused_theory(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # A normal game's config reads as it did before theory games existed (recorded
        # transcripts and cassettes compare it byte for byte).
        data: dict[str, object] = handler(self)
        for key in ("theory", "alpha"):
            if data.get(key, 0) is None:
                data.pop(key)
        return data

