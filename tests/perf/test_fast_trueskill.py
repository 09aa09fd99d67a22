"""The fast TrueSkill path equals the `trueskill` package (the reference) to 1e-9 on every
update of a corpus of real games (bot tournaments of Stille Post and The Chameleon, with
their ties) and of synthetic ones (2 to 8 seats, ties anywhere, self-play)."""

from __future__ import annotations

import asyncio
import random

import pytest

from stille_post.tournament import TournamentConfig, ratings, run_tournament
from stille_post.tournament.report import _rated
from stille_post.tournament.results import load_results


@pytest.fixture(scope="module")
def real_games(tmp_path_factory: pytest.TempPathFactory) -> list[ratings.RatedGame]:
    games: list[ratings.RatedGame] = []
    for game, n in (("stille-post", 40), ("chameleon", 40)):
        out = tmp_path_factory.mktemp(game) / "t"
        asyncio.run(run_tournament(TournamentConfig(game=game, games=n, seed=3), out,
                                   durable=False))
        for t in load_results(out).transcripts():
            g = _rated(t)
            if g is not None:
                games.append(g)
    return games


def synthetic(count: int, seed: int) -> list[ratings.RatedGame]:
    rng = random.Random(seed)
    names = [f"m{i}" for i in range(7)]
    out = []
    for g in range(count):
        n = rng.choice([2, 3, 4, 5, 8])
        seats = [rng.choice(names) for _ in range(n)]  # self-play included
        ranks = [rng.choice([1, 1, 2, 3, n]) for _ in range(n)]
        out.append(ratings.RatedGame(str(g), tuple(zip(seats, ranks, strict=True))))
    return out


def every_update_agrees(games: list[ratings.RatedGame]) -> int:
    """Both get the same inputs for every game (Ratings built from the same (mu, sigma)),
    and every player's update is compared."""
    import trueskill

    env = ratings.environment()
    fast = ratings.FastRater(env)
    current: dict[str, tuple[float, float]] = {}
    checked = 0
    for g in games:
        if g.n < 2:
            continue
        inputs = [current.get(label, (env.mu, env.sigma)) for label, _ in g.seats]
        ranks = [rank for _, rank in g.seats]
        ref = env.rate([(trueskill.Rating(*r),) for r in inputs], ranks=ranks)
        got = fast.rate(inputs, ranks)
        for (r,), args in zip(ref, got, strict=True):
            mu, sigma = ratings._as_rating(*args)
            assert abs(r.mu - mu) <= 1e-9 and abs(r.sigma - sigma) <= 1e-9
            checked += 1
        for (label, _), args in zip(g.seats, got, strict=True):
            current[label] = args
    return checked


def test_every_update_of_real_games(real_games: list[ratings.RatedGame]) -> None:
    assert len(real_games) > 40
    assert every_update_agrees(real_games) > 100


def test_every_update_of_synthetic_games() -> None:
    assert every_update_agrees(synthetic(500, 1)) > 1000


def test_whole_passes_are_bit_equal(real_games: list[ratings.RatedGame]) -> None:
    for games in (real_games, synthetic(300, 2)):
        ref = {k: (r.mu, r.sigma) for k, r in ratings.rate_once(games).items()}
        assert ratings.rate_once_fast(games) == ref


def test_the_package_can_be_put_back(monkeypatch: pytest.MonkeyPatch,
                                     real_games: list[ratings.RatedGame]) -> None:
    fast = ratings.trueskill_passes(real_games, passes=3, seed=1)
    monkeypatch.setattr(ratings, "FAST", False)
    assert ratings.trueskill_passes(real_games, passes=3, seed=1) == fast
