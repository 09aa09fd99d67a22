"""`--seating adaptive` (tournament/seating.py, runner.py): the rule's choice on hand-built
ratings, rounds that cover the pool, a tournament of bots that is reproducible and that a
resume after an interruption finishes with the very games of an uninterrupted run, and
the bad-input lines."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from stille_post.core.errors import ConfigError
from stille_post.tournament import RunStats, TournamentConfig
from stille_post.tournament.ratings import MU, SIGMA
from stille_post.tournament.seating import (
    SEATING_FILE,
    AdaptiveSeating,
    adaptive_seats,
    read_rounds,
    seat_value,
)
from stille_post.tournament.settings import Layer, resolve
from tests import clirun

Play = Callable[..., RunStats]

# A crowded, uncertain middle; two players as uncertain but far from everyone (their
# rank is already certain); two settled players in the middle; one settled extreme.
TABLE = {"mid1": (5.0, 1.0), "mid2": (5.1, 1.0), "mid3": (4.9, 1.0), "mid4": (5.05, 1.0),
         "lonely_hi": (15.0, 1.0), "lonely_lo": (-5.0, 1.0),
         "settled1": (5.0, 0.2), "settled2": (5.02, 0.2), "top": (25.0, 0.2)}


def test_the_rule_seats_the_crowded_uncertain_middle_first() -> None:
    value = {m: seat_value(TABLE, m) for m in TABLE}
    mids = ("mid1", "mid2", "mid3", "mid4")
    # Equal μ: the uncertain beat the settled (σ⁴: 625 times).
    assert min(value[m] for m in mids) > 100 * max(value["settled1"], value["settled2"])
    # Equal σ: a player in the crowd beats one whose order against all is already sure.
    assert min(value["settled1"], value["settled2"]) > 1e6 * max(
        value["lonely_hi"], value["lonely_lo"], value["top"])
    for seed in range(5):
        assert sorted(adaptive_seats(TABLE, 4, random.Random(seed))) == sorted(mids)
    # Two seats more: the settled pair in the crowd, whose order is still open.
    assert set(adaptive_seats(TABLE, 6, random.Random(0))) == {*mids, "settled1", "settled2"}
    with pytest.raises(ValueError, match="seats"):
        adaptive_seats(TABLE, 10, random.Random(0))


def test_a_round_from_fresh_ratings_seats_everyone_once_and_is_reproducible() -> None:
    pool = [f"m{i:02d}" for i in range(48)]
    a = AdaptiveSeating(pool, 8, seed=3)
    first = a.next_round(6)
    assert Counter(m for t in first for m in t) == Counter(pool)  # 6 x 8 = 48, once each
    assert all(len(set(t)) == 8 for t in first)
    assert AdaptiveSeating(pool, 8, seed=3).next_round(6) == first
    assert AdaptiveSeating(pool, 8, seed=4).next_round(6) != first
    # Results move the next round to the players they left uncertain.
    for t in first:
        a.record(t, list(range(1, 9)))
    assert a.ratings[first[0][0]] != (MU, SIGMA)
    blind = AdaptiveSeating(pool, 8, seed=3)
    blind.next_round(6)
    assert a.next_round(3) != blind.next_round(3)  # round 1 of both, same rng


def _config(games: int = 12, **kw: object) -> TournamentConfig:
    return TournamentConfig(game="stille-post", games=games, seed=21, seating="adaptive",
                            pool=("random", "gambler", "cautious", "detective", "enumerator"),
                            seats=3, options={"num_players": 3, "max_rounds": 2},
                            round_games=4, **kw)  # type: ignore[arg-type]


def _games(out: Path) -> dict[str, list[dict[str, object]]]:
    """Each transcript without its timing lines (wall-clock times differ run to run)."""
    return {p.name: [line for line in map(json.loads, p.read_text("utf-8").splitlines())
                     if "timing" not in line and line.pop("elapsed", True)]
            for p in sorted((out / "games").glob("*.jsonl"))}


def test_an_adaptive_tournament_is_reproducible_and_resumes_to_the_same_games(
        tmp_path: Path, play: Play, monkeypatch: pytest.MonkeyPatch) -> None:
    from stille_post.tournament import runner

    config = _config()
    one, two, cut = tmp_path / "one", tmp_path / "two", tmp_path / "cut"
    play(config, one, concurrency=3)
    play(config, two, concurrency=2, workers=2)  # rounds over two processes
    rounds = (one / SEATING_FILE).read_bytes()
    assert rounds == (two / SEATING_FILE).read_bytes()
    assert len(rounds.splitlines()) == 3  # 12 games in rounds of 4
    assert _games(one) == _games(two) and len(_games(one)) == 12

    # Interrupted in round 1 (the 6th game to start), then resumed: the same games.
    real, started = runner._play_one, {"n": 0}

    async def interrupted(*args: object, **kwargs: object) -> object:
        started["n"] += 1
        if started["n"] == 6:
            raise KeyboardInterrupt
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "_play_one", interrupted)
    with pytest.raises(KeyboardInterrupt):
        play(config, cut, concurrency=1)
    monkeypatch.setattr(runner, "_play_one", real)
    assert len(read_rounds(cut, config.pool or ())) == 2  # round 1 chosen, not finished
    with (cut / SEATING_FILE).open("a") as fh:
        fh.write('{"round": 2, "ga')  # a line cut short by the crash: dropped
    again = play(config, cut, resume=True, concurrency=2)
    assert again.skipped == 5 and again.played == 7
    assert (cut / SEATING_FILE).read_bytes() == rounds
    assert _games(cut) == _games(one)
    # Seats really follow the results: rounds chosen with no results are others.
    blind = AdaptiveSeating(config.pool or (), 3, seed=21, role_seats=config.role_seats())
    assert [blind.next_round(4) for _ in range(3)] != read_rounds(one, config.pool or ())
    # and the seed: another seed chooses other rounds.
    other = TournamentConfig.from_json({**config.to_json(), "seed": 22})
    play(other, tmp_path / "other")
    assert (tmp_path / "other" / SEATING_FILE).read_bytes() != rounds


@pytest.mark.parametrize("seats", ["[0, 7, 1]", "[0, -1, 1]", "[true, 0, 2]", "[0, 1.0, 2]"])
def test_a_seating_file_that_does_not_fit_is_one_error(tmp_path: Path, seats: str) -> None:
    """Out of the pool, negative (Python would index from the end), a boolean or a float
    (`pool[True]` is a player too): each refused, never a player seated by accident."""
    pool = ("a", "b", "c")
    (tmp_path / SEATING_FILE).write_text(f'{{"round": 0, "games": [{seats}]}}\n'
                                         '{"round": 1, "games": [[0, 1, 2]]}\n')
    with pytest.raises(ConfigError, match="not a round of this tournament"):
        read_rounds(tmp_path, pool)


def test_config_rules() -> None:
    with pytest.raises(ConfigError, match="--shard"):
        _config(shard=__import__("stille_post.tournament.config", fromlist=["Shard"])
                .Shard(1, 2))
    with pytest.raises(ConfigError, match="--round-games"):
        TournamentConfig(game="stille-post", games=4, seed=1, seating="balanced",
                         pool=("random", "gambler"), seats=2, round_games=3)
    # Only an adaptive tournament's file names its rounds: the others' stay as they were.
    assert "round_games" not in TournamentConfig(game="stille-post", games=4, seed=1
                                                 ).to_json()
    assert _config().to_json()["round_games"] == 4


BAD = [
    (["--seating", "adaptive", "--players", "random,gambler,cautious"], "adaptive needs a pool"),
    (["--seating", "adaptive", "--pool", "random,gambler,cautious", "--shard", "1/2"],
     "cannot be split with --shard"),
    (["--pool", "random,gambler,cautious", "--round-games", "4"], "adaptive only"),
]


def test_bad_adaptive_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = clirun.run_many([["tournament", "stille-post", "--games", "4", "--seats", "3",
                             "--out", str(tmp_path / f"x{i}"), *args]
                            for i, (args, _) in enumerate(BAD)], cwd=tmp_path)
    for (args, words), d in zip(BAD, done, strict=True):
        assert d.returncode == 2, (args, d.stderr)
        assert d.stderr.startswith("error: ") and d.stderr.count("\n") == 1, d.stderr
        assert words in d.stderr, (args, d.stderr)
    assert not any((tmp_path / f"x{i}").exists() for i in range(len(BAD)))


@pytest.mark.parametrize(("values", "words"), [
    ({"seating": "adaptive", "pool": ["random", "gambler"], "round_games": 0}, "round_games"),
    ({"seating": "adaptive-ish", "pool": ["random", "gambler"]}, "seating"),
    ({"seating": "adaptive"}, "adaptive needs a pool"),
])
def test_bad_adaptive_settings_from_a_file_are_one_line(values: dict[str, object],
                                                        words: str) -> None:
    layer = Layer({"game": "stille-post", **values},
                  lambda loc, problem: f"t.toml: {'.'.join(map(str, loc))}: {problem}")
    with pytest.raises(ConfigError, match=words) as caught:
        resolve([layer], fresh_seed=lambda: 1)
    assert "\n" not in str(caught.value)
    ok = resolve([Layer({"game": "stille-post", "seating": "adaptive", "pool": [
        "random", "gambler", "cautious"], "seats": 3, "round_games": 5}, layer.where)],
        fresh_seed=lambda: 1)
    assert ok.config().round_games == 5 and ok.config().seating == "adaptive"
