"""Bad config and models files through the console script: one line, exit 2, before any
game starts (no results folder appears)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.config._cli import ROOT, one_error_line, run_cli

GOOD = """\
game = "chameleon"
games = 3
seed = 1
players = ["heuristic", "heuristic", "heuristic", "heuristic"]
out = "results"
"""


def _tournament(tmp_path: Path, text: str, *extra: str) -> str:
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    line = one_error_line(run_cli("tournament", "--config", str(path), *extra, cwd=tmp_path))
    assert not (tmp_path / "results").exists()  # stopped before anything was written
    return line


def test_a_malformed_file_names_file_and_line(tmp_path: Path) -> None:
    line = _tournament(tmp_path, GOOD.replace("seed = 1", "seed = "))
    assert "t.toml:3:" in line and "not valid TOML" in line


def test_an_unknown_key_names_line_key_and_the_known_keys(tmp_path: Path) -> None:
    line = _tournament(tmp_path, GOOD + "concurency = 4\n")
    assert "t.toml:6: concurency: unknown key" in line and "concurrency" in line


def test_a_wrong_type_names_line_key_and_value(tmp_path: Path) -> None:
    line = _tournament(tmp_path, GOOD.replace("games = 3", 'games = "three"'))
    assert "t.toml:2: games:" in line and "integer" in line and "'three'" in line


def test_an_unknown_model_alias_is_one_line(tmp_path: Path) -> None:
    line = _tournament(tmp_path, GOOD.replace('players = ["heuristic",',
                                              'players = ["model:nope",'))
    assert "unknown model alias 'nope'" in line and "models.toml" in line


@pytest.mark.parametrize("what", ["missing", "folder", "latin-1"])
def test_a_file_that_cannot_be_read_is_one_line(tmp_path: Path, what: str) -> None:
    path = tmp_path / "t.toml"
    if what == "folder":
        path.mkdir()
    elif what == "latin-1":
        path.write_bytes(GOOD.replace("chameleon", "cam\xe9l\xe9on").encode("latin-1"))
    line = one_error_line(run_cli("tournament", "--config", str(path), cwd=tmp_path))
    expect = {"missing": "no such tournament file", "folder": "is a folder",
              "latin-1": "t.toml:1: not UTF-8"}[what]
    assert expect in line


def test_a_bad_models_file_names_file_line_and_key(tmp_path: Path) -> None:
    models = tmp_path / "m.toml"
    models.write_text('[models.fast]\nprovider = "openai"\nmodel = "gpt-5-mini"\n'
                      "temprature = 0.2\n", encoding="utf-8")
    line = _tournament(tmp_path, GOOD, "--models", str(models))
    assert "m.toml:4: models.fast.temprature: unknown key" in line
    assert "temperature" in line  # the known keys are listed


def test_the_example_tournament_runs_offline(tmp_path: Path) -> None:
    """examples/tournament.toml as shipped (a shorter run, and the output redirected)."""
    out = tmp_path / "out"
    proc = run_cli("tournament", "--config", str(ROOT / "examples" / "tournament.toml"),
                   "--games", "4", "--out", str(out), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert '"played": 4' in proc.stdout
    assert (out / "tournament.json").is_file()
