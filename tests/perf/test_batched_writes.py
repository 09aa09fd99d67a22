"""Batched, still durable writes: the transcript writer buffers events and fsyncs the
result line; the index commits many games in one transaction. What the files say must
not change, and a crash must still leave a record that resume can handle."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from stille_post.core import transcript as T
from stille_post.core.events import Event, Visibility
from stille_post.core.transcript import Transcript, TranscriptWriter
from stille_post.tournament import index as I
from stille_post.tournament.index import GameIndex, IndexRow


def _events(n: int) -> list[Event]:
    return [Event(i, "message", 1, i, 1 + i % 3, Visibility.public(),
                  {"text": f"ünïcode {i} \"quoted\"\n[GAME MASTER]: x"}) for i in range(1, n + 1)]


def test_lines_are_what_json_dumps_wrote_before(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    with TranscriptWriter(path, fsync=False) as w:
        w.header(game="g", config={"a": 1}, seed=3, seats={"1": {"player": "bot:x"}})
        for e in _events(600):  # more than one batch
            w.event(e)
        w.result(status="completed", placements={1: 1}, usage={1: {"input_tokens": 2}},
                 summary={"winners": [1]})
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 602
    for line, e in zip(lines[1:-1], _events(600), strict=True):
        assert line == json.dumps({"kind": "event", **e.to_json()}, ensure_ascii=False,
                                  separators=(",", ":"))
    assert Transcript.load(path).complete


def test_events_are_buffered_and_the_result_is_fsynced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr(T.os, "fsync", lambda fd: synced.append(fd))
    monkeypatch.setattr(T, "BATCH_SECONDS", 3600.0)
    path = tmp_path / "g.jsonl"
    w = TranscriptWriter(path)
    w.header(game="g", config={}, seed=1, seats={})
    for e in _events(10):
        w.event(e)
    assert path.read_text() == ""  # still in the buffer: no write per event
    w.result(status="completed")
    assert len(synced) == 1
    assert Transcript.load(path).complete and len(Transcript.load(path).events) == 10


def test_fsync_can_be_turned_off_for_a_context(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr(T.os, "fsync", lambda fd: synced.append(fd))
    token = T.FSYNC_RESULTS.set(False)
    try:
        with TranscriptWriter(tmp_path / "g.jsonl") as w:
            w.result(status="completed")
    finally:
        T.FSYNC_RESULTS.reset(token)
    assert synced == []


def test_an_exception_still_writes_the_buffer_and_an_aborted_result(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    with pytest.raises(ZeroDivisionError), TranscriptWriter(path, fsync=False) as w:
        w.header(game="g", config={}, seed=1, seats={})
        for e in _events(5):
            w.event(e)
        _ = 1 / 0
    t = Transcript.load(path)
    assert len(t.events) == 5 and t.result is not None and t.result["status"] == "aborted"


def test_sigkill_mid_game_leaves_an_incomplete_transcript(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    script = textwrap.dedent(f"""
        import time
        from stille_post.core.events import Event, Visibility
        from stille_post.core.transcript import TranscriptWriter
        w = TranscriptWriter({str(path)!r})
        w.header(game="g", config={{}}, seed=1, seats={{}})
        for i in range(1, 2000):
            w.event(Event(i, "message", 1, i, 1, Visibility.public(), {{"text": "x" * 50}}))
        print("ready", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    t = Transcript.load(path)
    assert not t.complete and t.result is None
    assert 0 < len(t.events) < 1999  # whole batches reached the disk, the rest was lost


def _row(i: int) -> IndexRow:
    return IndexRow(id=f"g{i}", idx=i, seed=i, status="completed", reason=None,
                    transcript=f"games/g{i}.jsonl", players={"1": "bot:a"},
                    placements={"1": 1}, summary={})


def _committed(folder: Path) -> int:
    con = sqlite3.connect(folder / I.INDEX_FILE)
    try:
        return int(con.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    finally:
        con.close()


def test_fast_games_share_one_transaction(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(I, "COMMIT_SECONDS", 3600.0)
    index = GameIndex.open(tmp_path)
    index.add(_row(0))  # the first commits at once (no recent commit)
    for i in range(1, 6):
        index.add(_row(i))
    assert _committed(tmp_path) == 1 and index.uncommitted == 5
    assert index.count() == 6  # this connection sees its own rows
    with pytest.raises(sqlite3.IntegrityError):
        index.add(_row(3))  # a duplicate still fails at once ...
    assert index.uncommitted == 5  # ... and undoes nothing else
    index.close()
    assert _committed(tmp_path) == 6


def test_a_full_batch_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(I, "COMMIT_SECONDS", 3600.0)
    monkeypatch.setattr(I, "COMMIT_ROWS", 4)
    with GameIndex.open(tmp_path) as index:
        for i in range(9):
            index.add(_row(i))
        assert _committed(tmp_path) == 9 - index.uncommitted
        assert index.uncommitted < 4


def test_sigkill_loses_only_uncommitted_rows(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from stille_post.tournament import index as I
        I.COMMIT_SECONDS = 3600.0
        index = I.GameIndex.open(Path({str(tmp_path)!r}))
        for i in range(10):
            index.add(I.IndexRow(id=f"g{{i}}", idx=i, seed=i, status="completed", reason=None,
                                 transcript="t", players={{}}, placements={{}}, summary={{}}))
        index.flush()
        for i in range(10, 15):
            index.add(I.IndexRow(id=f"g{{i}}", idx=i, seed=i, status="completed", reason=None,
                                 transcript="t", players={{}}, placements={{}}, summary={{}}))
        print("ready", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    con = sqlite3.connect(tmp_path / I.INDEX_FILE)
    rows: list[Any] = con.execute("SELECT idx FROM games ORDER BY idx").fetchall()
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    assert [r[0] for r in rows] == list(range(10))


def test_the_runner_fsyncs_off_the_loop_and_places_every_transcript(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    import threading

    from stille_post.tournament import TournamentConfig, run_tournament
    from stille_post.tournament import groupcommit as G

    on_main_thread: list[bool] = []
    synced: list[str] = []
    writers_fsync: list[bool] = []
    real_place, real_result = G._GroupSync.place, T.TranscriptWriter.result

    def place(self: Any, moves: list[tuple[Path, Path]]) -> None:
        on_main_thread.append(threading.current_thread() is threading.main_thread())
        synced.extend(part.name for part, _ in moves)
        real_place(self, moves)

    def result(self: TranscriptWriter, **kwargs: Any) -> None:
        writers_fsync.append(self.fsync)
        real_result(self, **kwargs)

    monkeypatch.setattr(G._GroupSync, "place", place)
    monkeypatch.setattr(T.TranscriptWriter, "result", result)
    out = tmp_path / "t"
    asyncio.run(run_tournament(TournamentConfig(game="stille-post", games=8, seed=2), out,
                               concurrency=4, durable=True))
    assert sorted(synced) == sorted(f.name + ".part" for f in (out / "games").iterdir())
    assert len(synced) == 8 and on_main_thread and not any(on_main_thread)
    assert writers_fsync == [False] * 8  # the writers inside the runner did not fsync
    assert T.FSYNC_RESULTS.get() is True  # and the switch is back for everyone else
    files = sorted((out / "games").iterdir())
    assert len(files) == 8 and all(f.suffix == ".jsonl" for f in files)
    assert _committed(out) == 8
