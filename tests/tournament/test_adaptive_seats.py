"""Adaptive seating (tournament/seating.py): the most uncertain player always sits, the
others are drawn by uncertainty times closeness in μ, reproducibly from the rng."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from stille_post.tournament.seating import adaptive_seats

RATINGS = {"anchor": (5.0, 3.0), "near": (5.0, 1.0), "far": (30.0, 1.0),
           "settled": (5.0, 0.1), **{f"p{i}": (6.0, 1.0) for i in range(6)}}


def test_the_most_uncertain_player_always_sits_and_seats_are_distinct() -> None:
    rng = random.Random(1)
    for _ in range(50):
        table = adaptive_seats(RATINGS, 4, rng)
        assert "anchor" in table and len(set(table)) == 4


def test_close_and_uncertain_players_are_drawn_more_often() -> None:
    rng = random.Random(7)
    counts = Counter(p for _ in range(400) for p in adaptive_seats(RATINGS, 3, rng))
    # Seeded, 400 draws: "near" (same μ, σ 1) against "far" (25 away: 6 performance
    # sds) and "settled" (same μ, σ 0.1: weight σ² 100 times smaller). Bound: at least
    # 3 times as often.
    assert counts["near"] >= 3 * max(1, counts["far"])
    assert counts["near"] >= 3 * max(1, counts["settled"])


def test_adaptive_seats_are_reproducible_from_the_rng() -> None:
    a = [adaptive_seats(RATINGS, 5, r) for r in [random.Random(3)] for _ in range(10)]
    b = [adaptive_seats(RATINGS, 5, r) for r in [random.Random(3)] for _ in range(10)]
    assert a == b
    with pytest.raises(ValueError, match="seats"):
        adaptive_seats(RATINGS, 11, random.Random(0))
