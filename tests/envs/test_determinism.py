"""Determinism and records: an episode with seed S whose actions are the ones a bot would
take writes the transcript of `stille-post play GAME --seed S` with those bots, timing
aside; the header says who played (`env` for the caller's seats), nothing else differs:
a bot's action handed back unchanged is recorded as the bot's answer, as the CLI records
it. A reply of the caller's own is recorded with the model `env`.
And a transcript of an environment game is read by `view` and `report` like any other."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.errors import ConfigError
from stille_post.core.transcript import canonical_text
from stille_post.envs import aec_env, bot_action, parallel_env
from tests.clirun import keyless_env, run_many
from tests.kit.conftest import TOY
from tests.slowparams import fast_only

from .conftest import BUILT_IN

pytestmark = pytest.mark.heavy
SEED = 5


def lines(path: Path, relabel: bool = False, replier: bool = False
          ) -> list[dict[str, Any]]:
    out = [json.loads(line) for line in canonical_text(path).splitlines()]
    if relabel:  # the caller's seats: `env` where the CLI wrote the bot's label
        for row in out[0]["seats"].values():
            assert row["player"] == "env"
    for row in out[0]["seats"].values():
        row.pop("player")
    if replier:  # the decision records' `model` (env, for the caller's own replies) and tokens
        for e in out:
            if e.get("type") == "decision":
                for attempt in e["data"]["attempts"]:
                    attempt.pop("model", None)
                    attempt.pop("usage", None)
    return out


def env_game(game: str, folder: Path, seed: int = SEED, copied: bool = False,
             **kwargs: Any) -> Path:
    """A game whose actions are the bots' (`copied`: as copies, the caller's own)."""
    env = aec_env(game, seed=seed, transcripts=folder, **kwargs)
    env.reset()
    for agent in env.agent_iter():
        *_, term, trunc, _info = env.last()
        action = None if term or trunc else bot_action(env, agent)
        env.step(json.loads(json.dumps(action)) if copied and action is not None else action)
    path = env.unwrapped.episode.transcript
    env.close()
    assert path is not None and path.is_file()
    return path


@pytest.mark.parametrize("game", fast_only([*BUILT_IN, "toy-rps"], {
    "stille-post", "elimination", "chameleon", "toy-rps"}))
def test_bot_actions_write_the_cli_s_transcript(game: str, tmp_path: Path) -> None:
    ours = env_game(game, tmp_path / "env")
    cli = tmp_path / "cli.jsonl"
    done = run_many([["play", game, "--seed", str(SEED), "--out", str(cli), "--json"]],
                    cwd=os.getcwd(), env=keyless_env(STILLE_POST_GAMES=TOY))[0]
    assert done.returncode == 0, done.stderr
    assert lines(ours, relabel=True) == lines(cli)
    assert len(lines(ours)) > 5  # a header, events and a result


def test_the_caller_s_own_replies_are_recorded_as_the_caller_s(tmp_path: Path) -> None:
    """The bots' answers given back as copies (the caller's own replies, read as a
    model's): the same game, each reply's record naming the model `env`."""
    ours = env_game("chameleon", tmp_path / "copies", copied=True)
    bots = env_game("chameleon", tmp_path / "bots")
    assert lines(ours, replier=True) == lines(bots, replier=True)
    models = {a.get("model") for e in lines(ours) if e.get("type") == "decision"
              for a in e["data"]["attempts"]}
    assert models == {"env"}
    assert {a.get("model") for e in lines(bots) if e.get("type") == "decision"
            for a in e["data"]["attempts"]} == {None}


def test_opponents_are_seated_as_players_seats_them(tmp_path: Path) -> None:
    """Seat 2 controlled (its bot action: the default bot, subtle), the rest named bots:
    the CLI's `--players` with the same bots."""
    ours = env_game("chameleon", tmp_path / "env", controlled=[2],
                    opponents=["copycat", "heuristic", "heuristic"])
    cli = tmp_path / "cli.jsonl"
    # Seat 2 is the game's default bot (`subtle`), as the caller's shadow.
    done = run_many([["play", "chameleon", "--seed", str(SEED), "--out", str(cli), "--json",
                      "--players", "copycat,subtle,heuristic,heuristic"]],
                    cwd=os.getcwd(), env=keyless_env())[0]
    assert done.returncode == 0, done.stderr
    assert lines(ours) == lines(cli)


def test_the_parallel_env_writes_the_same_game(tmp_path: Path) -> None:
    env = parallel_env("elimination", seed=SEED, transcripts=tmp_path / "par")
    env.reset()
    while env.agents:
        episode = env.episode
        env.step({f"player_{s}": bot_action(env, s) for s in episode.pending()})
    par = episode.transcript
    assert lines(par) == lines(env_game("elimination", tmp_path / "aec"))


def test_the_plugin_folder_game_too(tmp_path: Path) -> None:
    """The scratch game (its folder joins the package only inside this process): the
    same as `play_game`, the function `stille-post play` runs."""
    import asyncio

    from stille_post.session import play_game

    ours = env_game("highest-unique", tmp_path / "env")
    theirs = asyncio.run(play_game("highest-unique", seed=SEED, out=tmp_path / "cli.jsonl"))
    assert lines(ours) == lines(theirs.transcript)


def test_a_transcript_is_never_overwritten(tmp_path: Path) -> None:
    first = env_game("toy-rps", tmp_path, seed=1)
    second = env_game("toy-rps", tmp_path, seed=1)
    assert first.name == "toy-rps-seed-1.jsonl" and second.name == "toy-rps-seed-1-2.jsonl"
    names = sorted(p.name for p in (tmp_path / "games").iterdir())
    assert names == sorted([first.name, second.name])
    assert lines(first) == lines(second)


def test_the_folder_holds_one_game(tmp_path: Path) -> None:
    env_game("toy-rps", tmp_path, seed=1)
    with pytest.raises(ConfigError, match="not chameleon environment episodes"):
        aec_env("chameleon", transcripts=tmp_path)


def test_view_report_and_leaderboard_read_environment_games(tmp_path: Path) -> None:
    folder = tmp_path / "episodes"
    for seed in (1, 2, 3):
        env_game("chameleon", folder, seed=seed)
    one = next((folder / "games").glob("*.jsonl"))
    done = run_many([["view", str(one), "--out", str(tmp_path / "one.html")],
                     ["report", str(folder), "--json", "--passes", "2"],
                     ["leaderboard", str(folder), "--out", str(tmp_path / "board")]],
                    cwd=os.getcwd(), env=keyless_env())
    assert done[0].returncode == 0, done[0].stderr
    assert (tmp_path / "one.html").stat().st_size > 1000
    assert done[1].returncode == 0, done[1].stderr
    report = json.loads(done[1].stdout)
    assert report["games"]["completed"] == 3, report["games"]
    assert "env" in json.dumps(report["leaderboard"])  # the caller's seats are a player
    assert done[2].returncode == 0, done[2].stderr
    board = json.loads((tmp_path / "board" / "leaderboard.json").read_text(encoding="utf-8"))
    assert "env" in json.dumps(board)
