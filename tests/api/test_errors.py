"""Bad input to the Python API and the environments is the CLI's one-line error: the
same message as `stille-post play` prints after `error: `, raised as a `UsageError`
before any game starts (never a traceback from inside the engine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import stille_post
from stille_post.core.errors import UsageError
from tests.clirun import keyless_env, run_many

# (keyword arguments, the same mistake on the command line)
CASES: list[tuple[dict[str, Any], list[str]]] = [
    ({"game": "nosuch"}, ["play", "nosuch"]),
    ({"game": "chameleon", "players": ["bot", "foo", "foo", "foo"]},
     ["play", "chameleon", "--players", "bot,foo,foo,foo"]),
    ({"game": "chameleon", "options": {"nosuch": 1}}, ["play", "chameleon", "--set", "nosuch=1"]),
    ({"game": "chameleon", "options": {"words": 0}}, ["play", "chameleon", "--words", "0"]),
    ({"game": "chameleon", "roles": {"nobody": "bot"}},
     ["play", "chameleon", "--role", "nobody=bot"]),
    ({"game": "chameleon", "preset": "nosuch"}, ["play", "chameleon", "--preset", "nosuch"]),
    ({"game": "connections", "players": ["bot", "oracle:p=2", "bot"]},
     ["play", "connections", "--players", "bot,oracle:p=2,bot"]),
    ({"game": "connections", "players": ["bot", "oracle:q=2", "bot"]},
     ["play", "connections", "--players", "bot,oracle:q=2,bot"]),
    ({"game": "chameleon", "players": ["bot", "openai:gpt-5-mini", "bot", "bot"]},
     ["play", "chameleon", "--players", "bot,openai:gpt-5-mini,bot,bot"]),
    ({"game": "chameleon", "players": ["bot", "bot"]},
     ["play", "chameleon", "--players", "bot,bot"]),
]


@pytest.fixture(scope="module")
def cli_lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    done = run_many([[*argv, "--seed", "1", "--json"] for _, argv in CASES],
                    cwd=tmp_path_factory.mktemp("cli"), env=keyless_env())
    lines = []
    for (_, argv), cli in zip(CASES, done, strict=True):
        assert cli.returncode == 2, argv
        line = cli.stderr.strip()
        assert line.startswith("error: ") and "\n" not in line, cli.stderr
        lines.append(line.removeprefix("error: "))
    return lines


@pytest.mark.parametrize("case", range(len(CASES)))
def test_play_raises_the_cli_s_line(case: int, cli_lines: list[str], tmp_path: Path) -> None:
    kwargs = dict(CASES[case][0])
    with pytest.raises(UsageError) as raised:
        stille_post.play(kwargs.pop("game"), seed=1, transcript=tmp_path / "t.jsonl", **kwargs)
    assert str(raised.value) == cli_lines[case]
    assert not (tmp_path / "t.jsonl").exists()


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_environments_raise_the_cli_s_line(case: int, cli_lines: list[str]) -> None:
    from stille_post.envs import aec_env

    kwargs = dict(CASES[case][0])
    game = kwargs.pop("game")
    players = kwargs.pop("players", None)
    options = kwargs.pop("options", {})
    if players is not None:  # seat 1 is the caller's, the others as --players names them
        kwargs.update(controlled=[1], opponents=players[1:])
        if len(players) == 2:  # too few seats: the game's num_players says so
            options = {**options, "num_players": 2}
            kwargs.pop("opponents")
    with pytest.raises(UsageError) as raised:
        aec_env(game, **kwargs, **options)
    assert str(raised.value) == cli_lines[case]


def test_bad_values_of_the_api_s_own_arguments() -> None:
    for kwargs, message in (({"seed": -1}, "seed -1"), ({"seed": "7"}, "seed '7'"),
                            ({"players": ["bot", 3]}, "one seat spec")):
        with pytest.raises(UsageError, match=message):
            stille_post.play("chameleon", **kwargs)
