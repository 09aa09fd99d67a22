"""`run_tournament(workers=N)`: N forked processes, one results folder, the same games as
one process (transcripts equal but for wall-clock fields, the same index), and a resume
after them plays nothing again."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

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


def test_a_run_tunes_the_garbage_collector_and_restores_it(tmp_path: Path) -> None:
    """During a run the heap is frozen and young objects are collected every
    GC_YOUNG_THRESHOLD allocations (core/quietgc.py); after it, finished or failed,
    the process is as it was."""
    import gc

    from stille_post.core.quietgc import GC_YOUNG_THRESHOLD
    from stille_post.tournament import runner

    seen: list[tuple[int, int]] = []
    real = runner._play_share

    async def spy(*args: object, **kwargs: object) -> None:
        seen.append((gc.get_threshold()[0], gc.get_freeze_count()))
        await real(*args, **kwargs)  # type: ignore[arg-type]

    before = (gc.get_threshold(), gc.get_freeze_count())
    small = TournamentConfig(game="stille-post", games=2, seed=4)
    try:
        runner._play_share = spy  # type: ignore[assignment]
        asyncio.run(run_tournament(small, tmp_path / "t", concurrency=2, durable=False))
    finally:
        runner._play_share = real  # type: ignore[assignment]
    assert seen and seen[0][0] == GC_YOUNG_THRESHOLD and seen[0][1] > 0
    assert (gc.get_threshold(), gc.get_freeze_count()) == before

    async def failing(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the disk is gone")

    try:
        runner._play_share = failing  # type: ignore[assignment]
        with pytest.raises(RuntimeError):  # a run that fails restores it too
            asyncio.run(run_tournament(small, tmp_path / "u", concurrency=2, durable=False))
    finally:
        runner._play_share = real  # type: ignore[assignment]
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_a_process_that_froze_objects_itself_keeps_them_frozen(tmp_path: Path) -> None:
    import gc

    small = TournamentConfig(game="stille-post", games=2, seed=4)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        asyncio.run(run_tournament(small, tmp_path / "t", concurrency=2, durable=False))
        assert gc.get_freeze_count() >= frozen  # not unfrozen behind the caller's back
    finally:
        gc.unfreeze()


def test_workers_report_finished_games_in_batches_and_all_of_them(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    """The parent's progress bar hears of every game, in far fewer messages than games
    (a message per game woke the parent for each; runner._Finished)."""
    from stille_post.tournament import progress, runner

    batches: list[tuple[int, int]] = []
    real = progress.TournamentProgress.games_finished

    def spy(self: Any, games: int, *, failed: int, tokens: int, dollars: float) -> None:
        batches.append((games, failed))
        real(self, games, failed=failed, tokens=tokens, dollars=dollars)

    monkeypatch.setattr(progress.TournamentProgress, "games_finished", spy)
    monkeypatch.setattr(runner, "REPORT_SECONDS", 3600.0)  # only the final send
    stats = asyncio.run(run_tournament(CONFIG, tmp_path / "t", concurrency=4, durable=False,
                                       workers=2))
    assert sum(g for g, _ in batches) == stats.played == CONFIG.games
    assert len(batches) == 2  # one per worker


def test_a_batch_is_sent_when_it_is_old_enough_and_at_the_end() -> None:
    from stille_post.tournament import runner

    sent: list[tuple[Any, ...]] = []

    class Queue:
        def put(self, msg: tuple[Any, ...]) -> None:
            sent.append(msg)

    finished = runner._Finished(Queue())
    finished(False, 10, 0.5)
    finished(True, 5, 0.25)
    assert sent == []  # younger than REPORT_SECONDS
    finished.sent_at -= runner.REPORT_SECONDS  # ...now it is old enough
    finished(False, 1, 0.0)
    assert sent == [("finished", 3, 1, 16, 0.75)]
    finished(False, 2, 0.0)
    finished.send()  # the worker's end
    finished.send()  # nothing left: no empty message
    assert sent == [("finished", 3, 1, 16, 0.75), ("finished", 1, 0, 2, 0.0)]
