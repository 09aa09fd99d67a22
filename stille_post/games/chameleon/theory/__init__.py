"""The paper's theory (seed 003, §4 and appendix A) played by the engine: abstract
response spaces, the strategy bots of Figure 2's three classes, and their bounds.

A theory game is marked in its transcript (`game_start.theory`, the header's `theory`
and the summary's `theory`), seats only theory bots, and is never seated with a model;
see the Chameleon README ("Theory games") and docs/chameleon-theory.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from stille_post.core.errors import ConfigError
from stille_post.games.chameleon.theory.bots import AMB_ONLY, CHAMELEON_VARIANTS, TheoryBot
from stille_post.games.chameleon.theory.model import Theory, theory_of
from stille_post.games.chameleon.theory.space import ResponseSpace, space_of
from stille_post.players.specs import SeatSpec

THEORY_BOTS = CHAMELEON_VARIANTS


def check_seats(theory: Theory | None, specs: Sequence[SeatSpec]) -> None:
    """A theory bot only in a theory game, and only theory bots in one (so a model's
    leaderboard never mixes with the strategies), each in one clear line."""
    for seat, spec in enumerate(specs, start=1):
        is_theory = spec.bot in THEORY_BOTS
        if theory is None and is_theory:
            raise ConfigError(f"seat {seat}: bot {spec.bot} plays only in a theory game "
                              "(add --set theory=concealing|revealing|amb)")
        if theory is not None and not is_theory:
            raise ConfigError(f"seat {seat}: a theory game seats only the theory bots "
                              f"({', '.join(THEORY_BOTS)}), not {spec.raw}")
        if theory is not None and theory.kind != "amb" and spec.bot in AMB_ONLY:
            raise ConfigError(f"seat {seat}: bot {spec.bot} is a π^amb chameleon; "
                              f"this is a {theory.kind} game")


__all__ = ["THEORY_BOTS", "ResponseSpace", "Theory", "TheoryBot", "check_seats",
           "space_of", "theory_of"]
