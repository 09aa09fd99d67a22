"""Ctrl-C during a tournament with worker processes (issue 40, item 7): the first stops
the run within seconds and prints one line (games saved, the exact `--resume` command),
which completes the run; a second exits at once, without a traceback. And a worker that
dies without a word fails the run instead of hanging it.

The runs are real `stille-post tournament` processes in a pseudo-terminal, Ctrl-C typed
as a person types it (the terminal sends SIGINT to the whole process group: the parent
and its workers)."""

from __future__ import annotations

import os
import re
import shlex
import time
from pathlib import Path

import pytest

from stille_post.core.transcript import Transcript
from stille_post.tournament.config import TournamentConfig
from stille_post.tournament.index import GameIndex
from tests import clirun
from tests.seats.ptyplay import Pty

pytestmark = pytest.mark.heavy  # seconds: handed out first (conftest.py)

ROOT = Path(__file__).resolve().parents[2]
AGENTS = "python:tests.seats.bad_agents"
# 24 Chameleon games of an agent that answers in 0.15 s, two workers, two games each at
# once: a few seconds, so that Ctrl-C lands mid-run with games saved and games in flight.
RUN = ["tournament", "chameleon", "--games", "24", "--seed", "5", "--workers", "2",
       "--concurrency", "4", "--players", f"{AGENTS}:Quick,bot,bot,bot"]
LINE = re.compile(r"interrupted \(Ctrl-C\): (\d+) of 24 games saved in (\S+); "
                  r"continue with: (stille-post tournament --resume --out \S+)\r?\n")


def _games_done(screen: str) -> int:
    found = re.findall(r"(\d+)/24", screen)
    return int(found[-1]) if found else 0


def _stop_after(session: Pty, games: int) -> float:
    """Type Ctrl-C once the bar shows `games` finished; returns when it was typed."""
    deadline = time.monotonic() + 60
    while _games_done(session.screen) < games:
        assert time.monotonic() < deadline, session.screen[-2000:]
        session.read(time.monotonic() + 0.05)
    os.write(session.fd, b"\x03")
    return time.monotonic()


def test_ctrl_c_with_two_workers_stops_within_5_s_and_the_resume_completes(
        tmp_path: Path) -> None:
    run = tmp_path / "run"
    session = Pty([*RUN, "--out", str(run)], cwd=ROOT)
    pressed = _stop_after(session, 4)
    code = session.exit_code(timeout_s=5.0)  # fails past 5 s
    took = time.monotonic() - pressed
    assert took < 5.0 and code == 130, session.screen[-2000:]
    assert "Traceback" not in session.screen and "Exception" not in session.screen
    lines = LINE.findall(session.screen)
    assert len(lines) == 1, session.screen[-2000:]
    saved, folder, resume = lines[0]
    assert folder == str(run) and resume == f"stille-post tournament --resume --out {run}"
    # The line tells the truth: that many games are indexed, each with its transcript.
    index = GameIndex.open(run)
    try:
        rows = list(index.rows())
    finally:
        index.close()
    assert 4 <= len(rows) == int(saved) < 24
    for row in rows:
        assert Transcript.load(run / row.transcript).complete
    # The exact command continues the run to its end.
    done = clirun.run_cli(*shlex.split(resume)[1:], "--json", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    config = TournamentConfig.load(run)
    games = sorted((run / "games").glob("*.jsonl"))
    assert len(games) == config.games == 24
    assert all(Transcript.load(p).result["status"] == "completed"  # type: ignore[index]
               for p in games)
    assert not list((run / "games").glob("*.part"))


def test_a_second_ctrl_c_exits_at_once_without_a_traceback(tmp_path: Path) -> None:
    """The stubborn agent ignores every cancellation, so the first Ctrl-C waits for its
    worker (up to the grace period); the second does not wait."""
    session = Pty(["tournament", "chameleon", "--games", "8", "--workers", "2",
                   "--concurrency", "2", "--players", f"{AGENTS}:Stubborn,bot,bot,bot",
                   "--out", str(tmp_path / "run")], cwd=ROOT)
    deadline = time.monotonic() + 60
    while not re.search(r"\d+/8", session.screen):  # the bar is up: the run has started
        assert time.monotonic() < deadline, session.screen[-2000:]
        session.read(time.monotonic() + 0.05)
    session.read(time.monotonic() + 1.0)  # the workers are in their games, stuck
    os.write(session.fd, b"\x03")
    session.read(time.monotonic() + 0.3)
    os.write(session.fd, b"\x03")
    pressed = time.monotonic()
    assert session.exit_code(timeout_s=2.0) == 130, session.screen[-2000:]
    assert time.monotonic() - pressed < 2.0
    assert "Traceback" not in session.screen and "Exception" not in session.screen
    assert re.search(r"interrupted \(Ctrl-C\) again: stopped at once; the games saved so "
                     r"far are kept; continue with: stille-post tournament --resume "
                     r"--out \S+run\b", session.screen), session.screen[-2000:]


def test_a_worker_that_dies_without_a_word_fails_the_run(tmp_path: Path) -> None:
    """Killed by the OOM killer, say: before, the parent waited for its message for ever."""
    result = clirun.run_cli("tournament", "chameleon", "--games", "4", "--workers", "2",
                            "--concurrency", "2", "--players",
                            f"{AGENTS}:KillsItsProcess,bot,bot,bot", "--out",
                            str(tmp_path / "run"), cwd=ROOT, timeout=60)
    assert result.returncode == 1, result.stderr
    assert re.search(r"worker \d ended without reporting \(exit code -9\)", result.stderr)


def test_ctrl_c_as_the_workers_start_is_one_ctrl_c(tmp_path: Path) -> None:
    """A worker forked with the parent's signal wake-up pipe, taking the terminal's
    Ctrl-C before it resets it, made the parent see two, and stop "at once"."""
    session = Pty([*RUN, "--out", str(tmp_path / "run")], cwd=ROOT)
    deadline = time.monotonic() + 60
    while not re.search(r"\d+/24", session.screen):  # the bar: the workers are forked next
        assert time.monotonic() < deadline, session.screen[-2000:]
        session.read(time.monotonic() + 0.01)
    os.write(session.fd, b"\x03")
    assert session.exit_code(timeout_s=5.0) == 130, session.screen[-2000:]
    assert "again" not in session.screen and len(LINE.findall(session.screen)) == 1, \
        session.screen[-2000:]


def test_a_cancel_that_meets_a_message_is_not_swallowed() -> None:
    """The run waits for its workers' messages; a Ctrl-C (a cancel of that wait) that
    comes in the same turn of the loop as a message must still stop it. Python 3.11's
    `asyncio.wait_for` returned the message instead, and the Ctrl-C was lost: a busy
    run (a message every 0.1 s per worker) ignored it now and then."""
    import asyncio
    import queue

    from stille_post.tournament.runner import _QueueReader

    async def main() -> object:
        reader = _QueueReader(queue.SimpleQueue())
        waiting = asyncio.create_task(reader.get(timeout=5))
        await asyncio.sleep(0.01)
        reader._inbox.put_nowait(("finished", 1, 0, 0, 0.0))  # a message arrives...
        waiting.cancel()  # ...and Ctrl-C, in the same turn
        return (await asyncio.gather(waiting, return_exceptions=True))[0]

    assert isinstance(asyncio.run(main()), asyncio.CancelledError)
