"""The summary, the report and the folder's spend stream from the index (issue 28, item 4):
the same output as before the change, without the plan, the set of ids or a list of
rows. Peak memory itself is measured by `python -m benchmarks memory`
(docs/performance.md), not here."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stille_post.tournament import TournamentConfig, run_tournament
from stille_post.tournament.config import Shard
from stille_post.tournament.index import GameIndex
from stille_post.tournament.results import aggregate, load_results, planned_games
from stille_post.tournament.spend import _sorted_transcripts

DATA = Path(__file__).parent / "data"


def test_summary_and_report_equal_mains_output() -> None:
    """tests/perf/data/make_streamed_golden.py, run against main before the change,
    wrote streamed_golden.json: two small bot folders (one with self-play), their
    summary and their report. The streamed code must print the same, to the bit."""
    out = subprocess.run([sys.executable, str(DATA / "make_streamed_golden.py")],
                         capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "0"}).stdout
    got, want = json.loads(out), json.loads((DATA / "streamed_golden.json").read_text())
    assert got == want


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("streamed") / "t"
    asyncio.run(run_tournament(TournamentConfig(game="stille-post", games=12, seed=3), out,
                               durable=False))
    return out


def _old_missing(folder: Path) -> list[str]:
    """The definition before streaming: planned ids without a row, in plan order."""
    with GameIndex.open(folder) as index:
        have = index.ids()
    return [g.id for g in TournamentConfig.load(folder).shard_plan() if g.id not in have]


def test_missing_and_broken_games_are_found_in_one_pass(played: Path, tmp_path: Path
                                                         ) -> None:
    import shutil

    folder = tmp_path / "t"
    shutil.copytree(played, folder)
    with GameIndex.open(folder) as index:
        rows = list(index.rows())
        # Forget games at the start, in the middle and at the end (their transcripts go
        # too, or ensure_index would index them again), and cut one transcript short.
        gone = [rows[0], rows[5], rows[6], rows[-1]]
        index.drop([r.id for r in gone])
    for r in gone:
        (folder / r.transcript).unlink()
    cut = folder / rows[3].transcript
    cut.write_bytes(cut.read_bytes()[:-20])
    res = load_results(folder)
    assert res.missing == _old_missing(folder) == [r.id for r in gone]
    assert res.broken == [rows[3].id]
    assert res.status_counts == {"completed": 7, "aborted": 0, "missing": 5}
    assert res.planned == 12
    assert [r.id for r in res.rows] == [r.id for r in rows if r not in gone]


def test_the_summary_never_builds_the_plan(played: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    """A million `GameSpec`s (the plan) or ids (a set) is what grew with the run."""
    want = aggregate(load_results(played))

    def refuse(*_: Any) -> None:
        raise AssertionError("the whole plan was built")

    monkeypatch.setattr(TournamentConfig, "plan", refuse)
    monkeypatch.setattr(GameIndex, "ids", refuse)
    assert aggregate(load_results(played)) == want


@pytest.mark.parametrize("config", [
    TournamentConfig(game="stille-post", games=7, seed=11),
    TournamentConfig(game="stille-post", games=9, seed=2, shard=Shard(2, 3)),
    TournamentConfig(game="stille-post", games=8, seed=4, seating="balanced",
                     pool=("bot:random", "bot:detective", "bot:cautious", "bot:gambler"),
                     seats=3),
])
def test_planned_games_are_the_plans(config: TournamentConfig) -> None:
    plan = config.shard_plan()
    assert list(planned_games(config)) == [(g.index, g.id, g.seed) for g in plan]


def test_spend_reads_transcripts_in_the_old_sorted_order(tmp_path: Path) -> None:
    names = ["g000010-s11.jsonl", "g000002-s3.jsonl", "b.jsonl.cut-2", "a.jsonl.cut-10",
             "é.jsonl", "z.jsonl", "x.jsonl.part", ".hidden.jsonl", "g1.jsonl.cut-1.jsonl"]
    for n in names:
        (tmp_path / n).write_text("")
    old = sorted(tmp_path.glob("*.jsonl")) + sorted(tmp_path.glob("*.jsonl.cut-*"))
    assert list(_sorted_transcripts(tmp_path)) == old
    assert list(_sorted_transcripts(tmp_path / "none")) == []
