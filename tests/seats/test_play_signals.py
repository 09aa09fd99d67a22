"""Signals during `stille-post play` (issue 36, items 5 and 6): closing the terminal
(SIGHUP), SIGTERM and Ctrl-C end a game as aborted with the signal's reason, in a valid
transcript that was written as the game went, and no recorded game is ever lost or
replaced.

Each case runs the real command in a pseudo-terminal (or, for the web seat, a plain
subprocess), stops it at a known point of the game and reads what is on disk."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import Transcript, TranscriptWriter, publish
from tests.seats.ptyplay import Pty
from tests.slowparams import fast_only

pytestmark = pytest.mark.heavy  # a few seconds each: handed out first (conftest.py)

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "from stille_post.cli import main; main()"
GAME = ["play", "chameleon", "--seed", "3"]
THINKS = "python:tests.seats.bad_agents:Thinks"  # an async agent that takes a minute


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def _part(path: Path) -> Path:
    return path.with_name(path.name + ".part")


def _at_the_question(tmp_path: Path) -> tuple[Pty, Path, list[dict[str, Any]]]:
    """A Chameleon game with a person in seat 1 (who speaks first with seed 3), stopped
    at the person's first question. Returns the session, the transcript path and what
    the `.part` file held at that moment."""
    out = tmp_path / "game.jsonl"
    session = Pty([*GAME, "--players", "human,bot,bot,bot", "--out", str(out)], cwd=ROOT)
    session.wait_for(r"your answer[^\n]*> $")
    # Written as the game goes: the moves up to the question are already on disk.
    assert not out.exists()
    so_far = _lines(_part(out))
    assert so_far[0]["kind"] == "header"
    assert [e["type"] for e in so_far[1:]][-1] == "turn_start"
    assert all(e["kind"] == "event" for e in so_far[1:])
    return session, out, so_far


@pytest.mark.parametrize("signum", fast_only([signal.SIGHUP, signal.SIGTERM], {signal.SIGHUP}))
def test_a_signal_at_a_question_ends_the_game_aborted_in_a_valid_transcript(
        signum: int, tmp_path: Path) -> None:
    session, out, so_far = _at_the_question(tmp_path)
    os.kill(session.pid, signum)
    assert session.exit_code() == 1
    assert "Traceback" not in session.screen
    t = Transcript.load(out)
    assert t.complete and not _part(out).exists()
    assert t.result is not None and t.result["status"] == "aborted"
    name = signal.Signals(signum).name
    assert t.result["reason"].startswith("Player 1 (human) left the game: ")
    assert t.result["reason"].endswith(f"({name})")
    # Nothing written before the signal was lost, and the engine closed the game
    # (the chameleon and the secret word are revealed).
    assert _lines(out)[:len(so_far)] == so_far
    assert "game_over" in [e.type for e in t.events]
    if signum == signal.SIGTERM:  # the terminal is still there: it is told why
        assert "game aborted: Player 1 (human) left the game: terminated (SIGTERM)" \
            in session.screen


@pytest.mark.slow
def test_closing_the_terminal_keeps_the_game(tmp_path: Path) -> None:
    """The real thing: the terminal's other end goes away (SIGHUP and a dead input)."""
    session, out, so_far = _at_the_question(tmp_path)
    session.close()
    assert session.exit_code() == 1
    t = Transcript.load(out)
    assert t.complete and t.result is not None and t.result["status"] == "aborted"
    # Which comes first, the hang-up or the dead input, is the kernel's choice.
    assert re.search(r"the terminal was closed|the input was closed", t.result["reason"])
    assert _lines(out)[:len(so_far)] == so_far


def test_ctrl_c_before_the_first_question_says_interrupted(tmp_path: Path) -> None:
    """Seat 1 (the first to speak) is an agent that thinks for a minute; the person in
    seat 2 has not been asked anything yet when Ctrl-C comes."""
    out = tmp_path / "game.jsonl"
    session = Pty([*GAME, "--players", f"{THINKS},human,bot,bot", "--out", str(out)], cwd=ROOT)
    deadline = time.monotonic() + 60
    while "turn_start" not in (_part(out).read_text(encoding="utf-8")
                               if _part(out).exists() else ""):
        assert time.monotonic() < deadline, session.screen[-2000:]
        session.read(time.monotonic() + 0.1)
    assert "your answer" not in session.screen  # no question yet
    os.write(session.fd, b"\x03")  # Ctrl-C on the terminal: SIGINT from the tty driver
    assert session.exit_code() == 1
    assert "CancelledError" not in session.screen and "Traceback" not in session.screen
    assert "game aborted: interrupted (Ctrl-C)" in session.screen
    t = Transcript.load(out)
    assert t.complete and t.result is not None
    assert (t.result["status"], t.result["reason"]) == ("aborted", "interrupted (Ctrl-C)")
    assert "game_over" in [e.type for e in t.events]


@pytest.mark.block_network(allowed_hosts=[r"127\.0\.0\.1$"])
def test_ctrl_c_at_a_web_seat_says_interrupted(tmp_path: Path) -> None:
    out = tmp_path / "game.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, *GAME, "--players", "web,bot,bot,bot", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert proc.stderr is not None
        found = re.search(r"web seat: open (\S+)", proc.stderr.readline())
        assert found, proc.stderr.read()
        deadline = time.monotonic() + 30
        while True:  # until the page's question is waiting
            with urllib.request.urlopen(found.group(1) + "api/state", timeout=5) as r:
                if json.loads(r.read())["form"] is not None:
                    break
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, err
    assert "CancelledError" not in err and "Traceback" not in err
    assert "game aborted: Player 1 (human:web) left the game: interrupted (Ctrl-C)" in err
    result = _lines(out)[-1]
    assert result["reason"] == "Player 1 (human:web) left the game: interrupted (Ctrl-C)"


def test_kill_9_keeps_every_move_and_the_next_game_takes_another_name(tmp_path: Path) -> None:
    """No handler sees SIGKILL: the `.part` file is what is left, every move in it, and
    it is never replaced by a later game of the same name."""
    session, out, so_far = _at_the_question(tmp_path)
    session.kill()
    assert _lines(_part(out)) == so_far  # line by line: nothing was waiting in a buffer
    kept = _part(out).read_bytes()
    again = subprocess.run([sys.executable, "-c", ENTRY, *GAME, "--out", str(out), "--quiet"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert again.returncode == 0, again.stderr
    assert _part(out).read_bytes() == kept and not out.exists()
    assert Transcript.load(tmp_path / "game-2.jsonl").complete


def test_publish_never_replaces_a_file(tmp_path: Path) -> None:
    final = tmp_path / "g.jsonl"
    final.write_text("a game recorded meanwhile\n", encoding="utf-8")
    part = _part(final)
    part.write_text("this game\n", encoding="utf-8")
    placed = publish(part, final)
    assert placed == tmp_path / "g-2.jsonl" and not part.exists()
    assert final.read_text(encoding="utf-8") == "a game recorded meanwhile\n"
    assert placed.read_text(encoding="utf-8") == "this game\n"


def test_a_streamed_writer_writes_each_line_at_once_and_never_truncates(tmp_path: Path) -> None:
    from stille_post.core.events import Event, Visibility

    path = tmp_path / "g.jsonl.part"
    with TranscriptWriter(path, buffered=False, exclusive=True) as w:
        w.header(game="x", config={}, seed=1, seats={})
        assert len(path.read_text(encoding="utf-8").splitlines()) == 1
        w.event(Event(1, "note", 1, 1, None, Visibility.public(), {"text": "hi"}))
        assert len(path.read_text(encoding="utf-8").splitlines()) == 2
        w.result(status="completed")
    kept = path.read_bytes()
    with pytest.raises(FileExistsError):
        TranscriptWriter(path, buffered=False, exclusive=True)
    assert path.read_bytes() == kept


def test_a_terminal_gone_mid_question_is_the_person_leaving() -> None:
    """Closing the window while the question is printed: the write fails (EIO) before
    the hang-up is handled. That is the person leaving, not an internal error."""
    import asyncio
    import errno
    import io

    from stille_post.players.forms import Form
    from stille_post.players.humans import HumanLeft, TerminalSeat

    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(errno.EIO, "Input/output error")

    form = Form(seat=1, kind="word", instruction="say a word", message="required",
                choices=(), tool_required=False, seats=(1, 2, 3, 4), seat_answer=False,
                word_limit=1)
    seat = TerminalSeat(out=Gone(), inp=io.StringIO(""))
    with pytest.raises(HumanLeft, match="the terminal was closed"):
        asyncio.run(seat.answer(1, "the rules", ["a line"], form, lambda a: None))
