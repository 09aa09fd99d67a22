"""The kit's GameConfig: the conventions every game's options share."""

from __future__ import annotations

import pytest
from pydantic import Field, ValidationError

from stille_post.games.kit.config import GameConfig, repair_field, seats_field, timeout_field


class Demo(GameConfig):
    num_players: int = seats_field(3, ge=2, le=5)
    rounds: int = Field(2, ge=1)
    repair_attempts: int = repair_field()
    decision_timeout_s: float = timeout_field()


def test_the_game_keeps_its_field_order() -> None:
    # the order is the header's `config` order, so a game's transcripts keep their bytes
    assert list(Demo().model_dump()) == ["num_players", "rounds", "repair_attempts",
                                         "decision_timeout_s"]


def test_the_shared_defaults_and_bounds() -> None:
    assert Demo().model_dump() == {"num_players": 3, "rounds": 2, "repair_attempts": 1,
                                   "decision_timeout_s": 300.0}
    for bad in ({"num_players": 6}, {"repair_attempts": -1}, {"repair_attempts": 6},
                {"decision_timeout_s": 0}):
        with pytest.raises(ValidationError):
            Demo(**bad)  # type: ignore[arg-type]


def test_unknown_options_are_refused_and_options_are_frozen() -> None:
    with pytest.raises(ValidationError, match="roundz"):
        Demo(roundz=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Demo().rounds = 5  # type: ignore[misc]


def test_a_config_without_the_shared_options_is_refused() -> None:
    with pytest.raises(TypeError, match=r"\['repair_attempts', 'decision_timeout_s'\]"):
        class Bare(GameConfig):
            num_players: int = 2
