"""Ratings: TrueSkill as the `trueskill` package computes it, passes, points, CIs."""

from __future__ import annotations

import random

import pytest
import trueskill

from stille_post.core.rewards import partial_points
from stille_post.tournament import ratings
from stille_post.tournament.ratings import RatedGame


def _games(n: int, seed: int = 3) -> list[RatedGame]:
    rng = random.Random(seed)
    names = ["a", "b", "c", "d", "e", "f"]
    out = []
    for i in range(n):
        seats = rng.sample(names, 4)
        ranks = rng.choice([[1, 2, 3, 4], [1, 1, 3, 4], [1, 2, 2, 2], [2, 1, 4, 3]])
        out.append(RatedGame(str(i), tuple(zip(seats, ranks, strict=True)),
                             tuple(r == 1 for r in ranks)))
    return out


def test_one_pass_in_fixed_order_equals_trueskill_computed_independently() -> None:
    games = _games(40)
    # Independently: the package's own global API with seed 001's settings.
    trueskill.setup(mu=5.0, sigma=8.3333, beta=4.1667, tau=0.0, draw_probability=0.0)
    try:
        expected: dict[str, trueskill.Rating] = {}
        for g in games:
            teams = [(expected.get(p, trueskill.Rating()),) for p, _ in g.seats]
            new = trueskill.rate(teams, ranks=[r for _, r in g.seats])
            for (p, _), (r,) in zip(g.seats, new, strict=True):
                expected[p] = r
    finally:
        trueskill.setup()  # the global environment back to the package defaults
    got = ratings.rate_once(games)
    assert set(got) == set(expected)
    for p in expected:
        assert got[p].mu == pytest.approx(expected[p].mu, abs=1e-12)
        assert got[p].sigma == pytest.approx(expected[p].sigma, abs=1e-12)


def test_ties_are_draws_and_rank_order_matters() -> None:
    tied = ratings.rate_once([RatedGame("1", (("a", 1), ("b", 1), ("c", 3)))])
    assert tied["a"].mu == pytest.approx(tied["b"].mu)
    assert tied["a"].mu > tied["c"].mu
    ordered = ratings.rate_once([RatedGame("1", (("a", 1), ("b", 2), ("c", 3)))])
    assert ordered["a"].mu > ordered["b"].mu > ordered["c"].mu


def test_passes_are_deterministic_for_a_seed_and_order_dependent() -> None:
    games = _games(60)
    one = ratings.trueskill_passes(games, passes=5, seed=1)
    assert one == ratings.trueskill_passes(games, passes=5, seed=1)
    assert one != ratings.trueskill_passes(games, passes=5, seed=2)
    # A single pass over a shuffled order differs from the mean of five.
    assert one != ratings.trueskill_passes(games, passes=1, seed=1)


def test_parallel_passes_give_the_same_numbers() -> None:
    games = _games(30)
    assert ratings.trueskill_passes(games, passes=4, seed=9, workers=2) == \
        ratings.trueskill_passes(games, passes=4, seed=9, workers=1)


def test_leaderboard_fixed_seed_same_board_and_sorted_by_mu() -> None:
    games = _games(80)
    board = ratings.leaderboard(games, passes=3, seed=4)
    assert board == ratings.leaderboard(games, passes=3, seed=4)
    mus = [r["mu"] for r in board]
    assert mus == sorted(mus, reverse=True)
    for r in board:
        lo, hi = r["win_rate_ci"]
        assert 0.0 <= lo <= r["win_rate"] <= hi <= 1.0
        assert sum(r["ranks"].values()) == r["games"]


@pytest.mark.parametrize(("rank", "n", "points"), [(1, 4, 1.0), (4, 4, 0.0), (2, 4, 2 / 3),
                                                   (1, 8, 1.0), (5, 8, 3 / 7)])
def test_partial_points(rank: int, n: int, points: float) -> None:
    assert partial_points(rank, n) == pytest.approx(points)


def test_bootstrap_ci_narrows_with_more_games_and_is_seeded() -> None:
    small = ratings.bootstrap_ci(5, 10, seed=1)
    large = ratings.bootstrap_ci(500, 1000, seed=1)
    assert small == ratings.bootstrap_ci(5, 10, seed=1)
    assert (large[1] - large[0]) < (small[1] - small[0])
    # 95% percentile interval of p=0.5, n=1000: about ±0.031 (normal approximation).
    assert large[0] == pytest.approx(0.469, abs=0.01)
    assert large[1] == pytest.approx(0.531, abs=0.01)
    assert ratings.bootstrap_ci(0, 10, seed=1) == (0.0, 0.0)


def test_self_play_seats_share_one_rating() -> None:
    got = ratings.rate_once([RatedGame("1", (("g", 1), ("g", 2), ("x", 3)))])
    assert set(got) == {"g", "x"}
    assert got["g"].mu > got["x"].mu


def test_void_games_are_not_rated() -> None:
    from stille_post.core.transcript import Transcript
    from stille_post.tournament.report import _rated

    seats = {"1": {"player": "bot:a"}, "2": {"player": "bot:b"}}
    header = {"kind": "header", "seed": 3, "seats": seats}
    played = Transcript(header=header, result={"placements": {"1": 1, "2": 2},
                                               "summary": {"winners": [1]}})
    void = Transcript(header=header, result={"placements": {"1": 1, "2": 1},
                                             "summary": {"winners": [], "valid": False}})
    assert _rated(played) is not None
    assert _rated(void) is None
