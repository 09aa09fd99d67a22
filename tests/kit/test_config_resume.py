"""The issue's acceptance run for config files: a tournament from examples/tournament.toml,
killed with SIGKILL midway and resumed with only `--resume --out FOLDER`, ends with the
same results as a clean run of the same file."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import clirun

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "tournament.toml"
GAMES = 150


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from stille_post.cli import main; main()", *args]


def _indexed(out: Path) -> int:
    try:
        con = sqlite3.connect(out / "index.sqlite", timeout=1)
        try:
            return int(con.execute("SELECT COUNT(*) FROM games").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def _report(out: Path) -> dict[str, object]:
    done = clirun.run_cli("report", str(out), "--passes", "5", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    return {"games": report["games"], "leaderboard": report["leaderboard"],
            "metrics": report["metrics"]}


@pytest.mark.slow  # kill -9 and resume in the fast suite: tests/tournament/test_tour_resume.py
def test_config_file_run_killed_then_resumed_from_the_folder_alone(tmp_path: Path) -> None:
    env = {**os.environ}
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    proc = subprocess.Popen(_cli("tournament", "--config", str(EXAMPLE), "--games", str(GAMES),
                                 "--out", str(killed), "--concurrency", "2", "--json"),
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _indexed(killed) < GAMES // 4 and time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before the kill: {proc.stderr.read()!r}")
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 0 < _indexed(killed) < GAMES, "the kill must land midway"

    # The kill needs a process of its own; the rest run forked from one that imported the
    # CLI once (tests/clirun.py).
    resumed = clirun.run_cli("tournament", "--resume", "--out", str(killed), "--json", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"]["completed"] == GAMES
    recorded = json.loads((killed / "tournament.json").read_text(encoding="utf-8"))
    assert recorded["run"]["concurrency"] == 2 and recorded["tournament"]["games"] == GAMES

    done = clirun.run_cli("tournament", "--config", str(EXAMPLE), "--games", str(GAMES),
                          "--out", str(clean), "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert _report(killed) == _report(clean)
