"""Rewards from placements (core/rewards.py), worked out by hand."""

from __future__ import annotations

import pytest

from stille_post.core.rewards import partial_points, reward, rewards


def test_win_scheme_rewards_every_seat_ranked_first() -> None:
    # Two winners tied at rank 1 (a Stille Post guess phase), two behind.
    assert rewards({1: 1, 2: 3, 3: 1, 4: 4}, "win") == {1: 1.0, 2: 0.0, 3: 1.0, 4: 0.0}


def test_partial_scheme_is_linear_from_first_to_last() -> None:
    # n = 5: ranks 1..5 give 4/4, 3/4, 2/4, 1/4, 0/4.
    got = rewards({1: 1, 2: 2, 3: 3, 4: 4, 5: 5}, "partial")
    assert got == {1: 1.0, 2: 0.75, 3: 0.5, 4: 0.25, 5: 0.0}
    assert partial_points(1, 1) == 1.0


def test_a_void_game_rewards_nobody() -> None:
    assert rewards({1: 1, 2: 2}, "win", valid=False) == {1: 0.0, 2: 0.0}


def test_an_unknown_scheme_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="win, partial"):
        reward(1, 4, "elo")  # type: ignore[arg-type]
