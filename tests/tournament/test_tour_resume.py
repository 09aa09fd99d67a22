"""kill -9 in the middle of a tournament, then --resume: no game lost, none twice."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from stille_post.core.errors import ConfigError
from stille_post.core.transcript import Transcript
from stille_post.tournament import RunStats, TournamentConfig
from stille_post.tournament.report import leaderboard_of
from stille_post.tournament.results import load_results
from tests.slowparams import fast_only

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

Play = Callable[..., RunStats]
Cli = Callable[..., list[str]]
# The acceptance run uses 300 games: STILLE_POST_KILL_GAMES=300 pytest ...
GAMES = int(os.environ.get("STILLE_POST_KILL_GAMES", "60"))
SEED = 5


def _indexed(out: Path) -> int:
    db = out / "index.sqlite"
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db, timeout=1)
        try:
            return int(con.execute("SELECT COUNT(*) FROM games").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0  # the table is not created yet


# The killed run: after its first group of rows, every later group waits forever between
# its placed transcripts and its rows. Grouped fsyncs made bot games quicker than this
# test's poll: in CI all of them once ended between two polls, and "kill it midway" became
# a race. The run has a worker process per core, each committing its own groups, so the
# first group is marked by a file: whichever worker commits first goes on, and every
# other group in any worker is renamed into place (tournament/groupcommit.py, steps 1 and
# 2) and then stalls. The kill always lands between transcripts and their rows, the
# hardest point to resume from.
_STALLED_CLI = """
import os, sys, threading
from stille_post.tournament.index import GameIndex
real_add_many = GameIndex.add_many
first_group_mark = sys.argv.pop(1)
def add_many(self, rows):
    if rows:
        try:
            os.close(os.open(first_group_mark, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            threading.Event().wait()
    real_add_many(self, rows)
GameIndex.add_many = add_many
from stille_post.cli import main
main()
"""


def test_kill_9_midway_then_resume_equals_an_uninterrupted_run(
        tmp_path: Path, play: Play, cli: Cli, cli_env: dict[str, str]) -> None:
    out = tmp_path / "killed"
    args = ["tournament", "stille-post", "--games", str(GAMES), "--seed", str(SEED),
            "--out", str(out), "--concurrency", "4", "--json"]
    stalled = [sys.executable, "-c", _STALLED_CLI, str(tmp_path / "first-group"), *args]
    proc = subprocess.Popen(stalled, env=cli_env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    def stalled_midway() -> bool:  # the first group indexed, the second placed, rowless
        return 0 < _indexed(out) < len(list((out / "games").glob("*.jsonl")))

    while not stalled_midway() and time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else b""
            raise AssertionError(f"the run ended before the kill: {err!r}")
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = _indexed(out)
    assert 0 < killed_at < GAMES, "the kill must land midway"
    # Finished transcripts are put in place (and synced) just before their group's rows
    # commit, and the kill landed between the two: such a game is indexed from its
    # transcript on resume, never played again. Every complete transcript in place counts
    # as done.
    placed = sum(1 for f in (out / "games").glob("*.jsonl") if Transcript.load(f).complete)
    assert killed_at < placed

    done = subprocess.run(cli(*args, "--resume"), env=cli_env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["this_run"]["skipped"] == placed
    assert summary["this_run"]["played"] == GAMES - placed
    assert summary["status"] == {"completed": GAMES, "aborted": 0, "missing": 0}

    con = sqlite3.connect(out / "index.sqlite")
    ids = [r[0] for r in con.execute("SELECT id FROM games")]
    con.close()
    assert len(ids) == GAMES and len(set(ids)) == GAMES
    files = sorted((out / "games").iterdir())
    assert len(files) == GAMES and all(f.suffix == ".jsonl" for f in files)  # no .part left
    assert all(Transcript.load(f).complete for f in files)

    fresh = tmp_path / "fresh"
    play(TournamentConfig(game="stille-post", games=GAMES, seed=SEED), fresh, concurrency=4)
    assert load_results(fresh).status_counts == load_results(out).status_counts
    assert leaderboard_of(out, passes=3) == leaderboard_of(fresh, passes=3)


def test_resume_redoes_partial_games_and_refuses_another_tournament(
        tmp_path: Path, bots4: TournamentConfig, play: Play) -> None:
    out = tmp_path / "r"
    first = play(bots4, out, concurrency=2)
    assert first.played == bots4.games
    # Simulate a crash: one game's row disappears (as if killed before the commit) and
    # a torn .part file is left behind.
    con = sqlite3.connect(out / "index.sqlite")
    con.execute("DELETE FROM games WHERE idx = 3")
    con.commit()
    con.close()
    # Killed before the rename: only the torn .part exists (a complete transcript on disk
    # would be indexed from disk instead of replayed).
    (out / "games" / "g000003-s14.jsonl").unlink()
    (out / "games" / "g000003-s14.jsonl.part").write_text('{"kind":"header"', encoding="utf-8")
    again = play(bots4, out, resume=True)
    assert (again.skipped, again.played, again.game_ids) == (bots4.games - 1, 1,
                                                              ["g000003-s14"])
    assert not list((out / "games").glob("*.part"))
    with pytest.raises(ConfigError, match="--resume"):
        play(bots4, out)
    other = TournamentConfig(game="stille-post", games=24, seed=12)
    with pytest.raises(ConfigError, match="different tournament"):
        play(other, out, resume=True)


def test_aborted_games_count_as_finished_unless_retried(
        tmp_path: Path, bots4: TournamentConfig, play: Play) -> None:
    play(bots4, tmp_path)
    con = sqlite3.connect(tmp_path / "index.sqlite")
    con.execute("UPDATE games SET status = 'aborted', reason = 'provider outage' "
                "WHERE idx IN (2, 7)")
    con.commit()
    con.close()
    for name in ("g000002-s13", "g000007-s18"):  # the transcripts say so too
        path = tmp_path / "games" / f"{name}.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines()
        result = json.loads(lines[-1])
        result.update(status="aborted", reason="provider outage")
        path.write_text("\n".join([*lines[:-1], json.dumps(result)]) + "\n", encoding="utf-8")
    assert load_results(tmp_path).status_counts["aborted"] == 2
    assert play(bots4, tmp_path, resume=True).played == 0
    again = play(bots4, tmp_path, resume=True, retry_aborted=True)
    assert sorted(again.game_ids) == ["g000002-s13", "g000007-s18"]
    assert load_results(tmp_path).status_counts == {"completed": 24, "aborted": 0,
                                                   "missing": 0}


# --- issue 11: the transcripts are the truth ----------------------------------------------


def _snapshot(out: Path) -> dict[str, tuple[int, bytes]]:
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted((out / "games").glob("*.jsonl"))}


@pytest.mark.parametrize("damage", fast_only(["deleted", "emptied", "garbage"], {"garbage"}))
def test_a_lost_index_is_rebuilt_and_resume_plays_and_rewrites_nothing(
        tmp_path: Path, bots4: TournamentConfig, play: Play, damage: str) -> None:
    out = tmp_path / "done"
    first = play(bots4, out)
    assert first.played == bots4.games
    before = _snapshot(out)
    board = leaderboard_of(out, passes=3)
    db = out / "index.sqlite"
    if damage == "deleted":
        for extra in ("", "-wal", "-shm"):
            Path(str(db) + extra).unlink(missing_ok=True)
    elif damage == "emptied":
        con = sqlite3.connect(db)
        con.execute("DELETE FROM games")
        con.commit()
        con.close()
    else:
        for extra in ("-wal", "-shm"):
            Path(str(db) + extra).unlink(missing_ok=True)
        db.write_bytes(b"this is not an SQLite database " * 64)
    again = play(bots4, out, resume=True)
    assert (again.played, again.skipped) == (0, bots4.games)
    assert _snapshot(out) == before  # not one transcript rewritten, or even touched
    assert load_results(out).status_counts == {"completed": bots4.games, "aborted": 0,
                                              "missing": 0}
    assert leaderboard_of(out, passes=3) == board  # the rebuilt rows are the same rows
    if damage == "garbage":
        assert (out / "index.sqlite.damaged-1").is_file()  # moved aside, never deleted


def test_report_rebuilds_a_deleted_index_instead_of_calling_games_missing(
        tmp_path: Path, bots4: TournamentConfig, play: Play) -> None:
    out = tmp_path / "done"
    play(bots4, out)
    (out / "index.sqlite").unlink()
    for extra in ("-wal", "-shm"):
        Path(str(out / "index.sqlite") + extra).unlink(missing_ok=True)
    assert load_results(out).status_counts["missing"] == 0


def test_a_game_that_cannot_be_written_is_aborted_and_the_tournament_goes_on(
        tmp_path: Path, bots4: TournamentConfig, play: Play,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from stille_post.tournament import runner

    real = runner._play_one
    calls = {"n": 0}

    async def flaky(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] in (3, 7):  # e.g. a full disk, or text the writer cannot encode
            raise OSError(28, "No space left on device")
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "_play_one", flaky)
    stats = play(bots4, tmp_path, concurrency=1)
    assert stats.played == bots4.games and stats.aborted == 2
    results = load_results(tmp_path)
    assert results.status_counts["aborted"] == 2 and results.status_counts["missing"] == 0
    reasons = [r.reason or "" for r in results.rows if r.status == "aborted"]
    assert all("No space left on device" in r for r in reasons)
    # The aborted games have a (small) transcript saying so. An I/O failure is not the
    # game's fault (issue 27, M4): a resume replays them without --retry-aborted.
    again = play(bots4, tmp_path, resume=True)
    assert sorted(again.game_ids) == ["g000002-s13", "g000006-s17"]
    assert load_results(tmp_path).status_counts == {"completed": 24, "aborted": 0,
                                                   "missing": 0}
    assert play(bots4, tmp_path, resume=True).played == 0


def test_an_io_failure_whose_row_was_lost_is_replayed_not_indexed(
        tmp_path: Path, bots4: TournamentConfig, play: Play,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed after the placeholder transcript of a full-disk game was written but before
    its row committed: resume must not index the placeholder as a finished game."""
    from stille_post.tournament import runner

    real = runner._play_one

    async def full_disk(config: TournamentConfig, out: Path, spec: object,
                        *args: object) -> object:
        if getattr(spec, "index", None) == 4:
            raise OSError(28, "No space left on device")
        return await real(config, out, spec, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "_play_one", full_disk)
    play(bots4, tmp_path, concurrency=1)
    monkeypatch.setattr(runner, "_play_one", real)
    con = sqlite3.connect(tmp_path / "index.sqlite")
    con.execute("DELETE FROM games WHERE idx = 4")
    con.commit()
    con.close()
    again = play(bots4, tmp_path, resume=True)
    assert again.game_ids == ["g000004-s15"]
    assert load_results(tmp_path).status_counts["completed"] == 24


def _untimed(path: Path) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line.pop("timing", None)
    return lines


@pytest.mark.parametrize("damage", fast_only(
    ["cut", "no-result", "emptied", "deleted", "other-status"], {"cut", "other-status"}))
def test_resume_replays_a_completed_game_whose_transcript_is_damaged(
        tmp_path: Path, bots4: TournamentConfig, play: Play, damage: str) -> None:
    """Issue 27, M3: the index lists the game as completed, its transcript is not; the
    resume replays it (the damaged file is kept aside) instead of calling it missing."""
    out, fresh = tmp_path / "damaged", tmp_path / "fresh"
    play(bots4, out)
    play(bots4, fresh)
    path = out / "games" / "g000005-s16.jsonl"
    data = path.read_bytes()
    if damage == "cut":
        path.write_bytes(data[: len(data) - 40])
    elif damage == "no-result":
        path.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1])
    elif damage == "emptied":
        path.write_bytes(b"")
    elif damage == "deleted":
        path.unlink()
    else:  # a complete line, but not the game the index holds
        lines = data.decode().splitlines()
        result = json.loads(lines[-1])
        result.update(status="aborted", reason="edited")
        path.write_text("\n".join([*lines[:-1], json.dumps(result)]) + "\n", encoding="utf-8")
    if damage != "other-status":
        assert load_results(out).status_counts["missing"] == 1  # the report sees it
    again = play(bots4, out, resume=True)
    assert again.game_ids == ["g000005-s16"]
    assert _untimed(path) == _untimed(fresh / "games" / path.name)  # the same game again
    assert load_results(out).status_counts == {"completed": 24, "aborted": 0, "missing": 0}
    if damage != "deleted":
        assert (out / "games" / "g000005-s16.jsonl.damaged-1").is_file()  # kept aside
