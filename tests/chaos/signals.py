"""Chaos by signal (issue 36): SIGHUP, SIGTERM and SIGINT during `stille-post play` with
a person at the table, and during a tournament with worker processes.

Every case is the real command in a pseudo-terminal, stopped at a seeded moment:

- play: each game, a person in seat 1 (bots elsewhere), who answers a seeded number of
  questions (or none: a slow agent speaks first, so the signal comes while the person is
  not being asked); then the signal: Ctrl-C typed on the terminal, SIGTERM sent to the
  process, or the terminal closed (SIGHUP and a dead input);
- tournament: 24 Chameleon games of a quick agent on two worker processes; the signal
  comes once a seeded number of games is saved; then the printed `--resume` command.

Counted:
- invalid: a transcript that is not complete, readable and `aborted` with a reason that
  names the signal (play), or a folder whose indexed games lack a complete transcript;
- lost: a game that is not on disk afterwards (play), or not completed after the resume;
- hang: the command still running 10 s after the signal (play, tournament), or a resume
  past 120 s;
- traceback: "Traceback" on the terminal.
"""

from __future__ import annotations

import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from stille_post.core.transcript import Transcript, TranscriptError
from stille_post.tournament.index import GameIndex
from stille_post.tournament.runner import resume_command_for
from tests.seats.ptyplay import Pty

ROOT = Path(__file__).resolve().parents[2]
STOP_BOUND_S = 10.0
SIGNALS = ("SIGHUP", "SIGTERM", "SIGINT")
GAMES = ("chameleon", "stille-post", "elimination")
THINKS = "python:tests.seats.bad_agents:Thinks"
SLOW = "python:tests.seats.bad_agents:Quick"


@dataclass
class SignalFigures:
    tried: int = 0
    skipped: int = 0  # a game that ended before its moment came (not a signal case)
    valid: int = 0
    invalid: int = 0
    lost: int = 0
    hangs: int = 0
    tracebacks: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (self.valid == self.tried and self.invalid == self.lost == self.hangs
                == self.tracebacks == 0)

    def bad(self, what: str, label: str, why: str) -> None:
        setattr(self, what, getattr(self, what) + 1)
        self.examples.append(f"{label}: {why}")


def _stopped_by(session: Pty, sig: str, figures: SignalFigures, label: str) -> bool:
    """Send `sig` and wait, bounded, for the process to end; a hang is counted."""
    _send(session, sig)
    try:
        session.exit_code(timeout_s=STOP_BOUND_S)
    except AssertionError:
        figures.bad("hangs", label, f"still running {STOP_BOUND_S:.0f} s after {sig}")
        return False
    return True


def _send(session: Pty, name: str) -> None:
    if name == "SIGINT":
        os.write(session.fd, b"\x03")  # typed: the terminal signals the whole group
    elif name == "SIGHUP":
        session.close()  # the window closes: SIGHUP, and the input is gone
    else:
        os.kill(session.pid, getattr(signal, name))


def _players(game: str, first: str) -> list[str]:
    n = {"chameleon": 4, "stille-post": 4, "elimination": 4}[game]
    return [first if first != "human" else "human", *(["human"] if first != "human" else []),
            *["bot"] * (n - (2 if first != "human" else 1))]


def play_case(i: int, sig: str, rng: random.Random, folder: Path, figures: SignalFigures) -> None:
    game = GAMES[i % len(GAMES)]
    asked = rng.random() < 0.75  # else: a slow agent speaks first, nobody is asked
    out = folder / f"play-{i}.jsonl"
    players = _players(game, "human" if asked else THINKS)
    extra = ["--set", "num_players=4"] if game == "elimination" else []
    label = f"play {i} ({game}, {sig}, {'at a question' if asked else 'while others think'})"
    figures.tried += 1
    session = Pty(["play", game, "--seed", str(100 + i), "--players", ",".join(players),
                   "--out", str(out), *extra], cwd=ROOT)
    try:
        answers = rng.randrange(2) if asked else 0  # every game asks a person twice
        deadline = time.monotonic() + 60
        part = out.with_name(out.name + ".part")
        while True:
            session.read(time.monotonic() + 0.05)
            prompt = session.screen.endswith("> ")
            started = part.exists() and len(part.read_bytes().splitlines()) >= 3
            if (asked and prompt and answers == 0) or (not asked and started):
                break
            if asked and prompt:
                os.write(session.fd, b"1\r")
                answers -= 1
                session.read(time.monotonic() + 0.2)
            if os.waitpid(session.pid, os.WNOHANG)[0]:  # the game ended first
                session.status = 0
                figures.tried -= 1
                figures.skipped += 1
                return
            if time.monotonic() > deadline:
                figures.bad("hangs", label, "never reached the moment of the signal")
                return
        if not _stopped_by(session, sig, figures, label):
            return
    finally:
        session.kill()
    if "Traceback" in session.screen:
        figures.bad("tracebacks", label, "a traceback on the terminal")
    if not out.exists():
        figures.bad("lost", label, "no transcript")
        return
    try:
        t = Transcript.load(out)
    except (OSError, TranscriptError) as exc:
        figures.bad("invalid", label, f"unreadable: {exc}")
        return
    reason = str((t.result or {}).get("reason"))
    names = {"SIGHUP": r"the terminal was closed|the input was closed", "SIGTERM": r"\(SIGTERM\)",
             "SIGINT": r"interrupted \(Ctrl-C\)"}
    if not t.complete or (t.result or {}).get("status") != "aborted" \
            or not re.search(names[sig], reason):
        figures.bad("invalid", label, f"complete={t.complete} result={t.result}"[:300])
        return
    figures.valid += 1


def tournament_case(i: int, sig: str, rng: random.Random, folder: Path,
                    figures: SignalFigures) -> None:
    out = folder / f"tournament-{i}"
    label = f"tournament {i} ({sig})"
    figures.tried += 1
    session = Pty(["tournament", "chameleon", "--games", "24", "--seed", str(200 + i),
                   "--workers", "2", "--concurrency", "4", "--players",
                   f"{SLOW},bot,bot,bot", "--out", str(out)], cwd=ROOT)
    saved_before = rng.randrange(2, 12)
    try:
        deadline = time.monotonic() + 60
        while True:
            session.read(time.monotonic() + 0.05)
            done = re.findall(r"(\d+)/24", session.screen)
            if done and int(done[-1]) >= saved_before:
                break
            if session.status is not None or time.monotonic() > deadline:
                figures.bad("hangs", label, "the run never got going")
                return
        if not _stopped_by(session, sig, figures, label):
            return
    finally:
        session.kill()
    if "Traceback" in session.screen:
        figures.bad("tracebacks", label, "a traceback on the terminal")
    index = GameIndex.open(out)
    try:
        rows = list(index.rows())
    finally:
        index.close()
    broken = [r.id for r in rows if not _complete(out / r.transcript)]
    if broken:
        figures.bad("invalid", label, f"indexed without a complete transcript: {broken[:3]}")
        return
    command = resume_command_for(out)
    if sig != "SIGHUP" and f"continue with: {command}" not in session.screen:
        figures.bad("invalid", label, "no resume line on the terminal")
        return
    resume = subprocess.run(
        [sys.executable, "-c", "from stille_post.cli import main; main()",
         *shlex.split(command)[1:]], capture_output=True, text=True, cwd=ROOT, timeout=120)
    games = sorted((out / "games").glob("*.jsonl"))
    completed = sum(1 for p in games if _complete(p) and
                    (Transcript.load(p).result or {}).get("status") == "completed")
    if resume.returncode != 0 or completed != 24:
        figures.bad("lost", label, f"after the resume (exit {resume.returncode}) "
                                   f"{completed} of 24 games completed {resume.stderr[-200:]}")
        return
    figures.valid += 1


def _complete(path: Path) -> bool:
    try:
        return Transcript.load(path).complete
    except (OSError, TranscriptError):
        return False


def run_signals(rounds: int, seed: int, *, tournaments: bool = True) -> SignalFigures:
    """`rounds` of each signal in `play` (cycling through the games), and, with
    `tournaments`, one tournament per signal and round."""
    rng = random.Random(seed)
    figures = SignalFigures()
    with tempfile.TemporaryDirectory(prefix="chaos-signals-") as tmp:
        folder = Path(tmp)
        for r in range(rounds):
            for k, sig in enumerate(SIGNALS):
                play_case(r * len(SIGNALS) + k, sig, rng, folder, figures)
        if tournaments:
            for r in range(rounds):
                for k, sig in enumerate(SIGNALS):
                    tournament_case(r * len(SIGNALS) + k, sig, rng, folder, figures)
    return figures


def report_signals(f: SignalFigures) -> str:
    skipped = f" ({f.skipped} games ended before their moment)" if f.skipped else ""
    return (f"signals: {f.tried} runs stopped by SIGHUP, SIGTERM or SIGINT (play with a "
            f"person, tournaments with 2 workers){skipped}: {f.valid} left valid transcripts; "
            f"invalid {f.invalid}, lost games {f.lost}, hangs {f.hangs}, "
            f"tracebacks {f.tracebacks}")


__all__ = ["SignalFigures", "report_signals", "run_signals"]
