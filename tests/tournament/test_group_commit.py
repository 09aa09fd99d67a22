"""Group commit (tournament/groupcommit.py): finished games are renamed into place, synced
and indexed in groups; a row never precedes its transcript, and kill -9 inside a group
still resumes to the games of an uninterrupted run, byte for byte."""

from __future__ import annotations

import asyncio
import ctypes
import errno
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import Transcript, TranscriptWriter
from stille_post.tournament import TournamentConfig, groupcommit, run_tournament
from stille_post.tournament.index import GameIndex, IndexRow

ROOT = Path(__file__).resolve().parents[2]
_TIMING = re.compile(rb',"timing":\{[^}]*\}')


def _bytes_without_timing(folder: Path) -> dict[str, bytes]:
    return {p.name: _TIMING.sub(b"", p.read_bytes()) for p in (folder / "games").iterdir()}


def _rows(folder: Path) -> list[str]:
    con = sqlite3.connect(folder / "index.sqlite")
    try:
        return [r[0] for r in con.execute("SELECT id FROM games")]
    finally:
        con.close()


@pytest.mark.parametrize("syncfs", [True, False], ids=["syncfs", "fsync-each"])
def test_every_row_is_written_after_its_transcript_is_in_place_and_synced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, syncfs: bool) -> None:
    if syncfs and groupcommit._syncfs() is None:
        pytest.skip("no syncfs on this system")
    real_syncfs = groupcommit._syncfs()
    syncfs_calls: list[int] = []

    def counted_syncfs(fd: int) -> int:
        syncfs_calls.append(fd)
        assert real_syncfs is not None
        return real_syncfs(fd)

    monkeypatch.setattr(groupcommit, "_syncfs", (lambda: counted_syncfs) if syncfs
                        else (lambda: None))
    groups: list[int] = []
    synced: set[Path] = set()
    fsynced: list[Path] = []
    real_place, real_add, real_fsync = (groupcommit._GroupSync.place, GameIndex.add_many,
                                        groupcommit._fsync)

    def place(self: Any, moves: list[tuple[Path, Path]]) -> None:
        real_place(self, moves)
        groups.append(len(moves))
        synced.update(final for _, final in moves)  # renamed and synced, both

    def fsync(path: Path) -> None:
        fsynced.append(path)
        real_fsync(path)

    out = tmp_path / "t"
    checked: list[str] = []

    def add_many(self: GameIndex, rows: list[IndexRow]) -> None:
        for row in rows:
            final = out / row.transcript
            assert final in synced, f"{row.id} indexed before its group was synced"
            assert Transcript.load(final).complete
            assert not final.with_name(final.name + ".part").exists()
            checked.append(row.id)
        real_add(self, rows)

    monkeypatch.setattr(groupcommit._GroupSync, "place", place)
    monkeypatch.setattr(groupcommit, "_fsync", fsync)
    monkeypatch.setattr(GameIndex, "add_many", add_many)
    config = TournamentConfig(game="stille-post", games=40, seed=3)
    asyncio.run(run_tournament(config, out, concurrency=4, durable=True))
    assert sorted(checked) == sorted(_rows(out)) and len(set(checked)) == 40
    # One syncfs per group; without it each transcript is fsynced (the folder too, not
    # counted here).
    assert len(syncfs_calls) == (len(groups) if syncfs else 0)
    assert sorted(fsynced) == ([] if syncfs else sorted(synced))


def test_fast_games_share_one_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of grouping: one sync (and one index transaction) for many games."""
    monkeypatch.setattr(groupcommit, "COMMIT_SECONDS", 3600.0)
    monkeypatch.setattr(groupcommit, "COMMIT_ROWS", 16)
    groups: list[int] = []
    real_place = groupcommit._GroupSync.place

    def place(self: Any, moves: list[tuple[Path, Path]]) -> None:
        groups.append(len(moves))
        real_place(self, moves)

    monkeypatch.setattr(groupcommit._GroupSync, "place", place)
    asyncio.run(run_tournament(TournamentConfig(game="stille-post", games=64, seed=4),
                               tmp_path / "t", concurrency=4, durable=True))
    assert sum(groups) == 64
    # A group is committed once 16 games wait (the first game may go alone: no commit
    # yet), the rest at the end: at most 1 + 64 // 16 + 1 syncs, against 64 before.
    assert len(groups) <= 6 and max(groups) >= 16


def test_kill_9_inside_a_group_then_resume_equals_an_uninterrupted_run(
        tmp_path: Path) -> None:
    """Killed while a group is half renamed into place (before its sync and its rows):
    the renamed games are indexed from their files, the others replayed; nothing lost,
    nothing twice, and every transcript equals the uninterrupted run's."""
    games, seed = 60, 8
    killed = tmp_path / "killed"
    script = textwrap.dedent(f"""
        import asyncio, time
        from pathlib import Path
        from stille_post.tournament import TournamentConfig, groupcommit as G, run_tournament
        G.COMMIT_SECONDS, G.COMMIT_ROWS = 3600.0, 10
        real, calls = G._place, [0]
        def place(moves):
            calls[0] += 1
            if calls[0] == 3:  # the third group: half of it renamed, then the kill
                real(moves[: len(moves) // 2])
                print("ready", flush=True)
                time.sleep(60)
            real(moves)
        G._place = place
        asyncio.run(run_tournament(TournamentConfig(game="stille-post", games={games},
                                                    seed={seed}),
                                   Path({str(killed)!r}), concurrency=4, durable=True))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            text=True, cwd=ROOT)
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    indexed = _rows(killed)
    placed = sorted(p.name.removesuffix(".jsonl") for p in (killed / "games").glob("*.jsonl"))
    parts = list((killed / "games").glob("*.part"))
    assert len(indexed) >= 1 + 10  # groups 1 and 2 committed (the second of >= 10 games)
    assert set(indexed) < set(placed)  # the kill fell between renames and rows
    assert parts  # and the group's other half was never renamed
    assert all(Transcript.load(killed / "games" / f"{i}.jsonl").complete for i in placed)

    config = TournamentConfig(game="stille-post", games=games, seed=seed)
    stats = asyncio.run(run_tournament(config, killed, resume=True, durable=True))
    assert stats.skipped == len(placed) and stats.played == games - len(placed)
    rows = _rows(killed)
    assert len(rows) == len(set(rows)) == games
    assert not list((killed / "games").glob("*.part"))

    fresh = tmp_path / "fresh"
    asyncio.run(run_tournament(config, fresh, concurrency=3, durable=False))
    assert _bytes_without_timing(killed) == _bytes_without_timing(fresh)


def test_a_failed_sync_stops_the_run_and_resume_finishes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sync that fails (an I/O error on the disk) indexes nothing of its group and
    ends the run with the error; --resume then completes every game once."""
    calls = [0]

    def failing_syncfs(fd: int) -> int:
        calls[0] += 1
        if calls[0] == 2:
            ctypes.set_errno(errno.EIO)
            return -1
        return 0

    groups: list[list[str]] = []
    real_place = groupcommit._place

    def place(moves: list[tuple[Path, Path]]) -> None:
        groups.append([final.name.removesuffix(".jsonl") for _, final in moves])
        real_place(moves)

    monkeypatch.setattr(groupcommit, "_place", place)
    monkeypatch.setattr(groupcommit, "_syncfs", lambda: failing_syncfs)
    monkeypatch.setattr(groupcommit, "COMMIT_SECONDS", 3600.0)
    monkeypatch.setattr(groupcommit, "COMMIT_ROWS", 8)
    out = tmp_path / "t"
    config = TournamentConfig(game="stille-post", games=40, seed=9)
    with pytest.raises(OSError, match="syncfs"):
        asyncio.run(run_tournament(config, out, concurrency=2, durable=True))
    assert sorted(_rows(out)) == sorted(groups[0])  # the failed second group: no row
    monkeypatch.setattr(groupcommit, "_syncfs", lambda: None)
    stats = asyncio.run(run_tournament(config, out, resume=True, durable=True))
    rows = _rows(out)
    assert stats.skipped + stats.played == 40 and len(rows) == len(set(rows)) == 40
    assert all(Transcript.load(p).complete for p in (out / "games").iterdir())


def test_the_writer_makes_a_missing_folder_and_writes_lf_lines(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "g.jsonl"
    with TranscriptWriter(path, fsync=False) as w:
        w.header(game="g", config={"word": "Grüße"}, seed=1, seats={})
        w.result(status="completed")
    data = path.read_bytes()
    assert data.count(b"\n") == 2 and b"\r" not in data and "Grüße".encode() in data
    assert Transcript.load(path).complete


def test_a_cancel_that_meets_the_due_group_is_not_swallowed(tmp_path: Path) -> None:
    """The committer waits for its group to be due with a timeout. Python 3.11's
    `asyncio.wait_for` returns the inner result when a cancel arrives in the same loop
    turn as the inner wait's wake-up, and the cancel is lost: a Ctrl-C then left the
    committer running for ever. Cancelled exactly so, it must end cancelled, with the
    waiting game committed."""
    from types import SimpleNamespace

    class Index:
        def __init__(self) -> None:
            self.rows: list[object] = []

        def check_new(self, row: object) -> None:
            pass

        def add_many(self, rows: list[object]) -> None:
            self.rows.extend(rows)

    async def scenario() -> tuple[bool, list[object]]:
        index = Index()
        commit = groupcommit.GroupCommit(index, tmp_path, durable=False)  # type: ignore[arg-type]
        commit._committed_at = groupcommit.time.monotonic()  # not due at once: it waits
        commit.start()
        await commit.add(SimpleNamespace(id="g1", idx=1), None, tmp_path / "g1.jsonl")  # type: ignore[arg-type]
        for _ in range(3):
            await asyncio.sleep(0)  # the committer is in its timed wait for the group
        assert commit._task is not None and index.rows == []
        commit._due.set()  # the wait wakes up...
        commit._task.cancel()  # ...in the turn the cancel arrives
        done, _ = await asyncio.wait({commit._task}, timeout=2)
        return bool(done) and commit._task.cancelled(), index.rows

    cancelled, rows = asyncio.run(scenario())
    assert cancelled, "the committer swallowed the cancel and kept running"
    assert [r.id for r in rows] == ["g1"]  # type: ignore[attr-defined]
