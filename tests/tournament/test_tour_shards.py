"""`--shard i/n` + `merge` give the same results as one run."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from stille_post.core.errors import ConfigError
from stille_post.core.transcript import canonical_text
from stille_post.tournament import RunStats, TournamentConfig
from stille_post.tournament.config import Shard
from stille_post.tournament.report import leaderboard_of
from stille_post.tournament.results import aggregate, load_results, merge

Play = Callable[..., RunStats]


def _comparable(folder: Path) -> dict[str, object]:
    agg = aggregate(load_results(folder))
    agg.pop("out")
    return agg


def test_two_shards_merged_equal_one_run(tmp_path: Path, play: Play) -> None:
    # A pool with balanced seating: the shards must agree on who sits where.
    whole = TournamentConfig(game="stille-post", games=30, seed=3, seating="balanced",
                             pool=("random", "gambler", "cautious", "detective", "enumerator"),
                             seats=4)
    play(whole, tmp_path / "one", concurrency=3)
    for i in (1, 2):
        shard = dataclasses.replace(whole, shard=Shard(i, 2))
        stats = play(shard, tmp_path / f"shard{i}", concurrency=2)
        assert stats.planned == 15
    assert merge(tmp_path / "merged", [tmp_path / "shard1", tmp_path / "shard2"]) == 30
    assert _comparable(tmp_path / "merged") == _comparable(tmp_path / "one")
    assert leaderboard_of(tmp_path / "merged", passes=2) == \
        leaderboard_of(tmp_path / "one", passes=2)
    one = sorted((tmp_path / "one" / "games").iterdir())
    merged = sorted((tmp_path / "merged" / "games").iterdir())
    assert [p.name for p in one] == [p.name for p in merged]
    assert all(canonical_text(a) == canonical_text(b) for a, b in zip(one, merged, strict=True))
    # Merging again adds nothing: a game is never counted twice.
    assert merge(tmp_path / "merged", [tmp_path / "shard1"]) == 0
    assert load_results(tmp_path / "merged").status_counts["completed"] == 30


def test_a_lone_shard_reports_the_other_games_missing_when_merged(
        tmp_path: Path, bots4: TournamentConfig, play: Play) -> None:
    play(dataclasses.replace(bots4, shard=Shard(1, 3)), tmp_path / "s1")
    merge(tmp_path / "m", [tmp_path / "s1"])
    counts = load_results(tmp_path / "m").status_counts
    assert counts["completed"] == 8 and counts["missing"] == 16


def test_merge_refuses_shards_of_different_tournaments(
        tmp_path: Path, bots4: TournamentConfig, play: Play) -> None:
    play(dataclasses.replace(bots4, shard=Shard(1, 2)), tmp_path / "a")
    play(dataclasses.replace(bots4, seed=99, shard=Shard(2, 2)), tmp_path / "b")
    with pytest.raises(ConfigError, match="different tournament"):
        merge(tmp_path / "m", [tmp_path / "a", tmp_path / "b"])


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0"])
def test_bad_shard_specs_are_usage_errors(text: str) -> None:
    with pytest.raises(ConfigError):
        Shard.parse(text)
