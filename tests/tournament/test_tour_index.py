"""The index of finished games survives crashes and never double-counts."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from stille_post.core.transcript import Transcript
from stille_post.tournament import RunStats, TournamentConfig, groupcommit
from stille_post.tournament.index import GameIndex, IndexRow

Play = Callable[..., RunStats]


def _row(i: int) -> IndexRow:
    return IndexRow(id=f"g{i:06d}-s{i}", idx=i, seed=i, status="completed", reason=None,
                    transcript=f"games/g{i:06d}-s{i}.jsonl", players={"1": "bot:a"},
                    placements={"1": 1}, summary={"winners": [1]})


def test_rows_round_trip_and_duplicates_are_refused(tmp_path: Path) -> None:
    with GameIndex.open(tmp_path) as index:
        index.add(_row(1))
        index.add_many([_row(2), _row(3)])
        with pytest.raises(sqlite3.IntegrityError):
            index.add(_row(2))
        with pytest.raises(sqlite3.IntegrityError):  # one bad row: the whole batch is undone
            index.add_many([_row(4), _row(1)])
        assert [r.id for r in index.rows()] == [_row(i).id for i in (1, 2, 3)]
        assert next(index.rows()) == _row(1)


def test_sigkill_while_writing_leaves_a_consistent_index(tmp_path: Path) -> None:
    writer = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from stille_post.tournament.index import GameIndex, IndexRow
        index = GameIndex.open(Path({str(tmp_path)!r}))
        i = 0
        while True:
            batch = [IndexRow(id=f"g{{j}}", idx=j, seed=j, status="completed", reason=None,
                              transcript="t", players={{"1": "x" * 500}},
                              placements={{"1": 1}}, summary={{"big": "y" * 2000}})
                     for j in range(i, i + 25)]
            index.add_many(batch)
            i += 25
            if i == 250:
                print("ready", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", writer], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.05)  # let it get well into further transactions
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    con = sqlite3.connect(tmp_path / "index.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    idx = sorted(r[0] for r in con.execute("SELECT idx FROM games"))
    con.close()
    # Whole transactions only: a multiple of the batch size, with no gaps.
    assert len(idx) >= 250 and len(idx) % 25 == 0 and idx == list(range(len(idx)))


def test_a_crash_between_transcript_and_index_replays_that_game(
        tmp_path: Path, bots4: TournamentConfig, play: Play,
        monkeypatch: pytest.MonkeyPatch) -> None:
    real_add = GameIndex.add_many
    calls = {"n": 0}

    def crashing_add(self: GameIndex, rows: list[IndexRow]) -> None:
        calls["n"] += 1
        if calls["n"] == 6:
            raise KeyboardInterrupt  # the process dies before this row is committed
        real_add(self, rows)

    # Every game its own group (no batching window), so the sixth group is the sixth game.
    monkeypatch.setattr(groupcommit, "COMMIT_SECONDS", 0.0)
    monkeypatch.setattr(GameIndex, "add_many", crashing_add)
    with pytest.raises(KeyboardInterrupt):
        play(bots4, tmp_path, concurrency=1)
    monkeypatch.setattr(GameIndex, "add_many", real_add)
    with GameIndex.open(tmp_path) as index:
        assert index.count() == 5
    # The sixth game's transcript is complete on disk but unindexed: the transcripts are
    # the truth, so it is indexed from disk, never played (or overwritten) again.
    sixth = sorted((tmp_path / "games").glob("*.jsonl"))
    assert len(sixth) == 6
    before = {p.name: p.read_bytes() for p in sixth}
    stats = play(bots4, tmp_path, resume=True)
    assert stats.skipped == 6 and stats.played == bots4.games - 6
    assert all((tmp_path / "games" / n).read_bytes() == b for n, b in before.items())
    with GameIndex.open(tmp_path) as index:
        rows = list(index.rows())
    assert len({r.id for r in rows}) == len(rows) == bots4.games
    assert all(Transcript.load(tmp_path / r.transcript).complete for r in rows)
