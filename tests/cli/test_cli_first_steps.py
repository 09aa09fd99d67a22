"""What a newcomer types first (issue 40, item 19): `--version`, `-h`, every missing key
in one line, a short usage for `tournament` without a game, and a `--players` help that
names every kind of seat."""

from __future__ import annotations

from pathlib import Path

import pytest

from stille_post import __version__
from tests.clirun import keyless_env, run_many

pytestmark = pytest.mark.heavy

THREE = "openai:gpt-5-mini,anthropic:claude-haiku-4-5-20241022,google:gemini-2.5-flash,random"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def test_first_commands(tmp_path: Path) -> None:
    env = {**keyless_env(), "COLUMNS": "200"}
    version, short_h, play_h, game_h, report_h, usage, help_play, help_tour = run_many([
        ["--version"], ["-h"], ["play", "-h"], ["play", "chameleon", "-h"], ["report", "-h"],
        ["tournament"], ["play", "--help"], ["tournament", "chameleon", "--help"]],
        cwd=tmp_path, env=env)
    assert version.returncode == 0 and version.stdout == f"stille-post {__version__}\n"
    for done, usage_line in ((short_h, "Usage: stille-post [OPTIONS] COMMAND"),
                             (play_h, "Usage: stille-post play [OPTIONS] COMMAND"),
                             (game_h, "Usage: stille-post play chameleon [OPTIONS]"),
                             (report_h, "Usage: stille-post report [OPTIONS]")):
        assert done.returncode == 0, done.stderr
        assert usage_line in done.stdout
    assert play_h.stdout == help_play.stdout  # -h is --help
    # `tournament` alone: a short usage on stderr, not the whole help.
    assert usage.returncode == 2
    assert usage.stdout == ""
    lines = usage.stderr.splitlines()
    assert 2 <= len(lines) <= 5, usage.stderr
    assert lines[0].startswith("usage: stille-post tournament GAME")
    assert "chameleon" in lines[0] and "--resume --out FOLDER" in usage.stderr
    assert "--concurrency" not in usage.stderr  # not the help's option list
    for seat in ("`human`", "`web`", "agent:NAME", "python:module:attr"):
        assert seat in " ".join(help_play.stdout.replace("│", " ").split()), seat
    flat_tour = " ".join(help_tour.stdout.replace("│", " ").split())
    assert "agent:NAME" in flat_tour and "python:module:attr" in flat_tour


def test_every_missing_key_in_one_line(tmp_path: Path) -> None:
    env = keyless_env(COLUMNS="200")
    play, tour, agent, replay = run_many([
        ["play", "--online", "--seed", "1", "--players", THREE],
        ["tournament", "stille-post", "--online", "--games", "2", "--out", "t",
         "--pool", THREE, "--seats", "4"],
        ["play", "chameleon", "--online", "--seed", "1", "--players",
         "python:examples.agents.rule_based:Agent+openai:gpt-4.1,"
         "anthropic:claude-haiku-4-5-20241022,bot,bot"],
        ["play", "--replay", "nowhere.yaml", "--seed", "1", "--players", THREE]],
        cwd=tmp_path, env=env)
    for done in (play, tour):
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1, done.stderr
        assert ("error: ANTHROPIC_API_KEY, GEMINI_API_KEY (or GOOGLE_API_KEY) and "
                "OPENAI_API_KEY are not set: export them to play the anthropic, google and "
                "openai seats") in done.stderr
    assert not (tmp_path / "t").exists()  # refused before anything started
    # an agent's model needs its key too, named before the game starts
    assert agent.returncode == 2 and agent.stderr.startswith(
        "error: ANTHROPIC_API_KEY and OPENAI_API_KEY are not set"), agent.stderr
    # replay needs no key: the cassette's problem is the one reported
    assert replay.returncode == 2 and "API_KEY" not in replay.stderr, replay.stderr


def test_a_key_that_is_set_is_not_named(tmp_path: Path) -> None:
    env = {**keyless_env(COLUMNS="200"), "ANTHROPIC_API_KEY": "sk-ant-test-not-used",
           "GOOGLE_API_KEY": "g-test-not-used"}
    (done,) = run_many([["play", "--online", "--seed", "1", "--players", THREE]],
                       cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert done.stderr.startswith("error: OPENAI_API_KEY is not set: export it to play "
                                  "openai seats"), done.stderr
    for key in KEYS[1:]:
        assert key not in done.stderr
