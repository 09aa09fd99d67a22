"""A theory game's bad inputs on the command line: one clear line on stderr, exit 2, no
traceback, nothing written (tests/clirun.py forks the CLI from one interpreter)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clirun import keyless_env, run_many

pytestmark = pytest.mark.heavy  # a dozen command lines: seconds in all

PLAY = ("play", "chameleon", "--seed", "1", "--quiet")
AMB = ("--set", "theory=amb")

BAD = [
    # a theory seat in a normal game, by seat and by role
    (("--players", "theory,heuristic,heuristic,heuristic"),
     "seat 1: bot theory plays only in a theory game"),
    (("--role", "chameleon=theory-null"), "bot theory-null plays only in a theory game"),
    # a normal seat (a bot, a model) in a theory game, or a π^amb-only chameleon elsewhere
    ((*AMB, "--words", "10", "--players", "theory,heuristic,theory,theory"),
     "seat 2: a theory game seats only the theory bots"),
    ((*AMB, "--words", "10", "--role", "others=openai:gpt-5-mini"),
     "a theory game seats only the theory bots"),
    (("--set", "theory=concealing", "--set", "alpha=1", "--role", "chameleon=theory-last"),
     "bot theory-last is a π^amb chameleon; this is a concealing game"),
    # α out of range (or missing, or not a number)
    (("--set", "theory=concealing", "--set", "alpha=10.5"),
     "--set alpha=10.5 is out of range for concealing: 0 <= alpha <= 10"),
    (("--set", "theory=concealing", "--set", "alpha=-1"), "out of range for concealing"),
    (("--set", "theory=revealing", "--set", "alpha=0"),
     "--set alpha=0 is out of range for revealing: 0 < alpha <= 2"),
    (("--set", "theory=revealing", "--set", "alpha=2.5"), "out of range for revealing"),
    (("--set", "theory=revealing", "--set", "alpha=NaN"), "out of range for revealing"),
    (("--set", "theory=revealing", "--set", "alpha=big"), "alpha"),
    (("--set", "theory=revealing"), "theory revealing needs --set alpha=A"),
    ((*AMB, "--set", "alpha=1"), "--set alpha is for the stationary classes"),
    (("--set", "theory=bluffing"), "theory"),
    # K ≠ l(N+1)
    ((*AMB, "--words", "7"),
     "π^amb needs K = l(N+1): --words 7 is not a multiple of N+1 = 5 (try --words 5, 10 or "
     "15)"),
    ((*AMB, "--words", "7", "--set", "num_players=3"), "--words 7 is not a multiple of N+1 = 4"),
    ((*AMB, "--words", "10", "--tie-rule", "dealer"), "a theory game breaks ties at random"),
]


def test_bad_theory_options_are_one_line_and_exit_2(tmp_path: Path) -> None:
    argvs = [[*PLAY, "--out", str(tmp_path / f"{i}.jsonl"), *extra]
             for i, (extra, _) in enumerate(BAD)]
    # The same refusals through the tournament path, before any game is played.
    tour = ["tournament", "chameleon", "--games", "3", "--seed", "1", *AMB, "--words", "7",
            "--out", str(tmp_path / "tour")]
    procs = run_many([*argvs, tour], cwd=tmp_path, env=keyless_env())
    for (extra, message), proc in zip([*BAD, (("tournament",), "not a multiple")], procs,
                                      strict=True):
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2, (extra, proc.returncode, proc.stderr)
        assert len(lines) == 1 and message in lines[0], (extra, proc.stderr)
        assert "Traceback" not in proc.stderr + proc.stdout
    assert not list(tmp_path.glob("*.jsonl"))
    assert not (tmp_path / "tour" / "games").exists() or \
        not list((tmp_path / "tour" / "games").iterdir())


def test_a_theory_game_plays_and_is_marked(tmp_path: Path) -> None:
    out = tmp_path / "amb.jsonl"
    (proc,) = run_many([[*PLAY, *AMB, "--words", "10", "--out", str(out)]], cwd=tmp_path,
                       env=keyless_env())
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    mark = {"kind": "amb", "n": 4, "k": 10, "alpha": None, "l": 2}
    assert lines[0]["theory"] == mark and lines[-1]["summary"]["details"]["theory"] == mark
    assert {s["player"] for s in lines[0]["seats"].values()} == {"bot:theory"}
