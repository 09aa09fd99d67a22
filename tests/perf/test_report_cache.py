"""The report cache: a second report of the same games and settings is read back, and
anything that could change the report (a game added or removed, a transcript rewritten,
other settings) is a miss. Parallel passes give the same ratings to the bit."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from stille_post.tournament import TournamentConfig, ratings, run_tournament
from stille_post.tournament import report as R
from stille_post.tournament.index import GameIndex
from stille_post.tournament.report import build_report


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cache") / "t"
    asyncio.run(run_tournament(TournamentConfig(game="stille-post", games=6, seed=5), out,
                               durable=False))
    return out


@pytest.fixture
def folder(played: Path, tmp_path: Path) -> Path:
    out = tmp_path / "t"
    shutil.copytree(played, out)
    return out


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the reports that were really computed (not read from the cache)."""
    calls: list[int] = []
    real = R._compute

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(R, "_compute", counting)
    return calls


def test_a_second_report_is_read_back(folder: Path, computed: list[int]) -> None:
    first = build_report(folder, passes=3)
    second = build_report(folder, passes=3)
    assert len(computed) == 1
    assert json.dumps(first) == json.dumps(second)
    fresh = build_report(folder, passes=3, cache=False)
    assert json.dumps(fresh) == json.dumps(first) and len(computed) == 2


def test_other_settings_are_misses(folder: Path, computed: list[int]) -> None:
    build_report(folder, passes=3)
    build_report(folder, passes=4)
    build_report(folder, passes=3, seed=1)
    build_report(folder, passes=3, labels={"bot:random": "Random"})
    assert len(computed) == 4
    build_report(folder, passes=3, workers=2)  # workers never change the result
    assert len(computed) == 4


def test_a_rewritten_transcript_is_a_miss_even_with_its_old_mtime(
        folder: Path, computed: list[int]) -> None:
    before = build_report(folder, passes=3)
    path = sorted((folder / "games").glob("*.jsonl"))[0]
    st = path.stat()
    lines = path.read_text(encoding="utf-8").splitlines()
    result = json.loads(lines[-1])
    swapped = {k: 1 + (v % 4) for k, v in result["placements"].items()}  # same size
    result["placements"] = swapped
    lines[-1] = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = build_report(folder, passes=3)
    assert len(computed) == 2
    assert after["leaderboard"] != before["leaderboard"]


def test_a_removed_then_replayed_game_is_a_miss(folder: Path, computed: list[int]) -> None:
    build_report(folder, passes=3)
    with GameIndex.open(folder) as index:
        victim = next(index.rows())
        index._db.execute("DELETE FROM games WHERE id = ?", (victim.id,))
    (folder / victim.transcript).unlink()
    short = build_report(folder, passes=3)
    assert short["missing"] == [victim.id] and len(computed) == 2
    asyncio.run(run_tournament(TournamentConfig(game="stille-post", games=6, seed=5), folder,
                               resume=True, durable=False))
    full = build_report(folder, passes=3)
    assert full["missing"] == [] and len(computed) == 3


def test_a_copied_folder_with_another_game_does_not_use_the_cache(
        folder: Path, tmp_path: Path, computed: list[int]) -> None:
    build_report(folder, passes=3)
    other = tmp_path / "other"
    shutil.copytree(folder, other)  # the cache comes along
    build_report(other, passes=3)
    assert len(computed) == 2  # new inodes: a miss, never someone else's games
    assert (other / R.CACHE_DIR).is_dir()


def test_parallel_passes_equal_sequential_to_the_bit() -> None:
    import random

    rng = random.Random(3)
    names = [f"m{i}" for i in range(6)]
    games = [ratings.RatedGame(str(g), tuple(zip(rng.sample(names, 4), [1, 2, 2, 4],
                                                 strict=True)))
             for g in range(40)]
    ticks: list[int] = []
    par = ratings.trueskill_passes(games, passes=9, seed=2, workers=2, on_pass=ticks.append)
    assert par == ratings.trueskill_passes(games, passes=9, seed=2, workers=1)
    assert sum(ticks) == 9


def test_auto_workers_only_when_it_pays() -> None:
    assert ratings.auto_workers(10, 100) == 1
    assert ratings.auto_workers(10_000, 100) == max(1, min(os.cpu_count() or 1, 100))
