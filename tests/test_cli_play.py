"""`stille-post play`: the JSON summary, determinism, and one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stille_post.cli import main
from stille_post.core.transcript import Transcript


def run_cli(args: list[str], monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["stille-post", *args])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_play_json_summary_is_stable(tmp_path: Path, monkeypatch, capsys) -> None:
    outs = []
    for i in range(2):
        code, out, _ = run_cli(["play", "--seed", "7", "--json", "--out",
                                str(tmp_path / f"g{i}.jsonl")], monkeypatch, capsys)
        assert code == 0
        outs.append(out)
    assert outs[0] == outs[1]
    summary = json.loads(outs[0])
    assert list(summary) == ["game", "status", "seed", "seats", "winners", "eliminated",
                             "placements", "valid", "turns", "details"]
    assert summary["status"] == "completed" and summary["seed"] == 7
    assert sorted(summary["seats"]) == ["1", "2", "3", "4"]
    t = Transcript.load(tmp_path / "g0.jsonl")
    assert t.complete and t.result is not None
    assert {str(k): v for k, v in t.result["placements"].items()} == summary["placements"]


def test_play_never_overwrites_a_transcript(tmp_path: Path, monkeypatch, capsys) -> None:
    target = tmp_path / "g.jsonl"
    for _ in range(2):
        assert run_cli(["play", "--seed", "1", "--quiet", "--out", str(target)],
                       monkeypatch, capsys)[0] == 0
    assert target.exists() and (tmp_path / "g-2.jsonl").exists()


def test_play_renders_the_conversation(tmp_path: Path, monkeypatch, capsys) -> None:
    code, out, _ = run_cli(["play", "--seed", "3", "--out", str(tmp_path / "g.jsonl")],
                           monkeypatch, capsys)
    assert code == 0
    assert "seed 3" in out and "[GAME MASTER]" in out and "[Player 1]" in out
    assert "transcript:" in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["play", "--players", "detective,wizard"], "unknown player 'wizard'"),
        (["play", "--players", "random,random", "--num-players", "3"], "names 2 seats"),
        (["play", "--guess-every", "0"], "--guess-every"),
        (["play", "stille-post", "--words", "5"], "option of chameleon"),
        (["play", "chameleon", "--guess-every", "3"], "option of stille-post"),
        (["play", "chameleon", "--role", "spy=trivial"], "no role 'spy'"),
        (["play", "--max-rounds", "3", "chameleon"], "before the game name"),
        (["play", "--match", "sloppy"], "match"),
        (["play", "nonsense-game"], "unknown game"),
        (["play", "--players", "openai:gpt-5-mini,random,random,random"], "--online"),
        (["play", "--players", "openai:gpt-5-mini,bot,bot,bot"], "--online"),  # the issue's
        (["play", "--players", "mistral:large,random"], "unknown provider 'mistral'"),
        (["play", "--roster", "/nonexistent/roster.toml"], "roster file not found"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], needle: str, tmp_path: Path,
                                         monkeypatch, capsys) -> None:
    code, out, err = run_cli([*args, "--out", str(tmp_path / "g.jsonl")], monkeypatch, capsys)
    assert code == 2, (out, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0], err
    assert "Traceback" not in err


def test_malformed_roster_is_a_clear_error(tmp_path: Path, monkeypatch, capsys) -> None:
    roster = tmp_path / "roster.toml"
    roster.write_text('[[model]]\nid = "x"\nprovider = "openai"\ntier = "huge"\n')
    code, _, err = run_cli(["play", "--roster", str(roster), "--out",
                            str(tmp_path / "g.jsonl")], monkeypatch, capsys)
    assert code == 2 and "tier" in err and len(err.strip().splitlines()) == 1


def test_enumeration_warning_for_trivial_configurations(tmp_path: Path, monkeypatch,
                                                         capsys) -> None:
    code, _, err = run_cli(["play", "--seed", "2", "--quiet", "--max-rounds", "40",
                            "--players", "cautious,cautious", "--out",
                            str(tmp_path / "g.jsonl")], monkeypatch, capsys)
    assert code == 0 and "enumerating ids alone wins" in err


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "stille-post"  # the venv's, whatever PATH says
    proc = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "play" in proc.stdout
