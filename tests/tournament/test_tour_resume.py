"""kill -9 in the middle of a tournament, then --resume: no game lost, none twice."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from stille_post.core.errors import ConfigError
from stille_post.core.transcript import Transcript
from stille_post.tournament import RunStats, TournamentConfig
from stille_post.tournament.report import leaderboard_of
from stille_post.tournament.results import load_results

Play = Callable[..., RunStats]
Cli = Callable[..., list[str]]
# The acceptance run uses 300 games: STILLE_POST_KILL_GAMES=300 pytest ...
GAMES = int(os.environ.get("STILLE_POST_KILL_GAMES", "120"))
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


def test_kill_9_midway_then_resume_equals_an_uninterrupted_run(
        tmp_path: Path, play: Play, cli: Cli, cli_env: dict[str, str]) -> None:
    out = tmp_path / "killed"
    args = ["tournament", "stille-post", "--games", str(GAMES), "--seed", str(SEED),
            "--out", str(out), "--concurrency", "4", "--json"]
    proc = subprocess.Popen(cli(*args), env=cli_env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _indexed(out) < GAMES // 3 and time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else b""
            raise AssertionError(f"the run ended before the kill: {err!r}")
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = _indexed(out)
    assert 0 < killed_at < GAMES, "the kill must land midway"

    done = subprocess.run(cli(*args, "--resume"), env=cli_env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["this_run"]["skipped"] == killed_at
    assert summary["this_run"]["played"] == GAMES - killed_at
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
