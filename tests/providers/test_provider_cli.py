"""`stille-post play` with LLM seats: --replay of a repository cassette works offline and
gives the recorded transcript; without --online/--replay, or without a key, the command
stops with one line and exit code 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests import clirun
from tests.emulators import scenarios as S
from tests.providers._helpers import cassette_or_skip, comparable
from tests.slowparams import fast_only

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # Anything that tried the network would hang or fail: point proxies at nothing.
    env = clirun.keyless_env(HTTPS_PROXY="http://127.0.0.1:9",
                             HTTP_PROXY="http://127.0.0.1:9")
    return clirun.run_cli(*args, cwd=cwd, env=env)


# Each kind imports its SDK in a fresh child (a second or two); the in-process replay of
# every kind is tests/providers/test_provider_replay.py.
@pytest.mark.parametrize("kind", fast_only(S.KINDS, {"openai"}))
def test_play_replay_offline_gives_the_recorded_transcript(kind: str, tmp_path: Path) -> None:
    path = cassette_or_skip(kind, "game_4seat")
    setup = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    out = tmp_path / "game.jsonl"
    args = ["play", "stille-post", "--seed", str(setup["seed"]),
            "--players", ",".join(setup["players"]), "--replay", str(path),
            "--out", str(out), "--quiet"]
    for name, value in setup["options"].items():
        args += [f"--{name.replace('_', '-')}", str(value)]
    proc = run_cli(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert comparable(out) == comparable(S.transcript_path(kind))


def test_llm_seat_without_online_or_replay_exits_2_with_one_line(tmp_path: Path) -> None:
    proc = run_cli("play", "stille-post", "--seed", "1", "--players",
                   "openai:gpt-5-mini,detective,cautious,random", cwd=tmp_path)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--online" in lines[0] and "--replay" in lines[0]
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("*.jsonl"))


def test_online_without_a_key_exits_2_naming_the_variable(tmp_path: Path) -> None:
    proc = run_cli("play", "stille-post", "--seed", "1", "--online", "--players",
                   "anthropic:claude-opus-4-6,detective,cautious,random", cwd=tmp_path)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "ANTHROPIC_API_KEY" in lines[0]


def test_record_needs_online(tmp_path: Path) -> None:
    proc = run_cli("play", "stille-post", "--seed", "1", "--record", str(tmp_path / "c.yaml"),
                   "--players", "openai:gpt-5-mini,detective,cautious,random", cwd=tmp_path)
    assert proc.returncode == 2 and "--record needs --online" in proc.stderr
