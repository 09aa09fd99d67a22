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


# --- the compiled passes (tournament/passes.py) and the compact table ----------------------

@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pass compiled, however few games (by default small reports use FastRater)."""
    monkeypatch.setattr(ratings, "COMPILED_MIN_CALLS", 0)


def _package(games: list[ratings.RatedGame], passes: int, seed: int,
             monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, float]]:
    with monkeypatch.context() as m:
        m.setattr(ratings, "FAST", False)
        return ratings.trueskill_passes(games, passes=passes, seed=seed)


def test_compiled_passes_equal_the_package(compiled: None, monkeypatch: pytest.MonkeyPatch,
                                           real_games: list[ratings.RatedGame]) -> None:
    """Synthetic games with a fixed seed (2 to 8 seats, ties anywhere, self-play) and real
    ones: every player's mean mu, sigma and mu spread within 1e-9 of the `trueskill`
    package's (in practice equal to the bit, which is also asserted: a tie's update
    magnifies one ulp to 1e-8, so 'close' would hide a real difference)."""
    for games in (synthetic(150, 4), real_games):
        ref = _package(games, 2, 7, monkeypatch)
        got = ratings.trueskill_passes(games, passes=2, seed=7)
        assert got.keys() == ref.keys()
        for label, row in ref.items():
            for field in ("mu", "sigma", "mu_spread"):
                assert abs(got[label][field] - row[field]) <= 1e-9
        assert got == ref


def test_compiled_passes_same_for_any_workers(compiled: None) -> None:
    games = synthetic(120, 5)
    ticks: list[int] = []
    par = ratings.trueskill_passes(games, passes=9, seed=2, workers=2, on_pass=ticks.append)
    assert par == ratings.trueskill_passes(games, passes=9, seed=2, workers=1)
    assert sum(ticks) == 9


def test_clean_only_rates_the_clean_games_of_the_table(compiled: None) -> None:
    games = synthetic(60, 6)
    table = ratings.GameTable()
    for i, g in enumerate(games):
        table.append(g, clean=i % 3 != 0)
    clean = [g for i, g in enumerate(games) if i % 3 != 0]
    assert ratings.trueskill_passes(table, passes=4, seed=1, clean_only=True) == \
        ratings.trueskill_passes(clean, passes=4, seed=1)


def test_game_table_gives_the_games_back() -> None:
    games = [ratings.RatedGame("x", (("a", 1), ("b", 40_000), ("a", 2)), (True, False, False))]
    games += [ratings.RatedGame("y", tuple((f"m{i}", i + 1) for i in range(70_000)))]
    table = ratings.GameTable(games)
    back = list(table)
    assert [g.seats for g in back] == [g.seats for g in games]  # wide ranks, many labels
    assert back[0].won == (True, False, False) and back[1].won == (False,) * 70_000
