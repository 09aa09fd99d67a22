"""`run_tournament(workers=N)`: N forked processes, one results folder, the same games as
one process (transcripts equal but for wall-clock fields, the same index), and a resume
after them plays nothing again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from stille_post.core.errors import ConfigError
from stille_post.core.transcript import canonical_text
from stille_post.tournament import TournamentConfig, run_tournament
from stille_post.tournament.index import GameIndex

CONFIG = TournamentConfig(game="stille-post", games=24, seed=4)


def _rows(folder: Path) -> list[tuple[object, ...]]:
    with GameIndex.open(folder) as index:
        return [r.values() for r in index.rows()]


def test_two_processes_play_the_same_games_as_one(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    asyncio.run(run_tournament(CONFIG, one, concurrency=4, durable=False))
    stats = asyncio.run(run_tournament(CONFIG, two, concurrency=4, durable=False, workers=2))
    assert stats.played == CONFIG.games and stats.skipped == 0
    assert sorted(stats.game_ids) == sorted(g.id for g in CONFIG.shard_plan())
    assert _rows(one) == _rows(two)
    names = sorted(p.name for p in (one / "games").iterdir())
    assert names == sorted(p.name for p in (two / "games").iterdir())
    assert all(n.endswith(".jsonl") for n in names)
    for n in names:
        assert canonical_text(one / "games" / n) == canonical_text(two / "games" / n)
    again = asyncio.run(run_tournament(CONFIG, two, resume=True, durable=False, workers=2))
    assert again.played == 0 and again.skipped == CONFIG.games


def test_workers_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        asyncio.run(run_tournament(CONFIG, tmp_path / "t", workers=0))
