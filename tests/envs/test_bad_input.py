"""Bad input to the environments: an action of the wrong type is refused like a model's
bad reply, and an episode abandoned midway (closed early, garbage-collected, replaced by
a reset) leaves no task, thread or file. (The CLI's one-line errors for an unknown game,
seat or option: tests/api/test_errors.py.)"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.errors import UsageError
from stille_post.envs import aec_env, bot_action, gym_env, parallel_env


def test_seats_of_the_environment_are_checked() -> None:
    for controlled, message in ((9, "seat 9: the game has seats 1..4"),
                                ([1, 1], "give each seat once"),
                                ("1", "give seat numbers")):
        with pytest.raises(UsageError, match=message):
            aec_env("chameleon", controlled=controlled)
    with pytest.raises(UsageError, match="not an opponent's seat"):
        aec_env("chameleon", controlled=[1], opponents={1: "bot"})
    with pytest.raises(UsageError, match="reward 'best'"):
        aec_env("chameleon", reward="best")


@pytest.mark.parametrize("action", [7, 2.5, None, b"rock", ["rock"], {"throw": "rock"},
                                    {"name": 1}, {"name": "x", "arguments": "y"},
                                    {"text": 3}, {"text": "x", "tool_calls": "y"},
                                    {"text": "x", "tool_calls": [5]}, object()])
def test_an_action_of_the_wrong_type_is_refused_like_a_bad_reply(action: Any) -> None:
    env = parallel_env("toy-rps", seed=1, rounds=1, repair_attempts=1)
    env.reset()
    obs, *_ , _infos = env.step({"player_1": action, "player_2": "rock"})
    # player_1 is asked again (the re-ask a model gets), player_2 waits for it
    assert env.episode.pending() == [1] and obs["player_1"]["attempt"] == 1
    assert obs["player_1"]["repair"]
    env.step({"player_1": action, "player_2": "rock"})  # refused again: a forfeit
    outcome = env.episode.outcome
    assert outcome is not None and outcome.status == "completed"
    tally = outcome.adherence[1]
    assert tally["reasks"] == 1 and tally["forfeits"] == 1
    # refused as an unreadable reply (a model's malformed answer), not read as some text
    assert tally["errors"] == {"bad_arguments": 2}
    assert outcome.adherence[2]["forfeits"] == 0


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _half_played(tmp_path: Path) -> Any:
    env = aec_env("elimination", seed=3, transcripts=tmp_path)
    env.reset()
    for _ in range(20):
        env.step(bot_action(env))
    assert not env.unwrapped.episode.done
    return env


@pytest.mark.parametrize("how", ["close", "collect", "reset"])
def test_an_abandoned_episode_leaves_nothing_behind(how: str, tmp_path: Path) -> None:
    threads, fds = threading.active_count(), _fds()
    env = _half_played(tmp_path)
    parts = list((tmp_path / "games").glob("*.part"))
    assert len(parts) == 1  # the game being played
    episode = env.unwrapped.episode
    loop, task = episode._loop, episode._task
    if how == "close":
        env.close()
        env.close()  # twice is fine
    elif how == "collect":
        del env, episode
        gc.collect()
    else:
        env.reset()  # a new episode: the old one is abandoned (the loop goes on)
    assert task.done() and loop.is_closed() == (how != "reset")
    assert not parts[0].exists()
    assert not list((tmp_path / "games").glob("*.jsonl"))  # no unfinished game recorded
    if how == "reset":
        env.close()
        assert loop.is_closed() and not list((tmp_path / "games").glob("*.part"))
    gc.collect()
    assert threading.active_count() == threads
    assert _fds() <= fds


def test_the_environments_work_inside_a_running_loop() -> None:
    """A notebook runs an event loop; the environments' own loops run beside it."""

    async def inside() -> Any:
        env = gym_env("toy-rps", rounds=2)
        env.reset(seed=1)
        terminated = False
        while not terminated:
            _obs, _reward, terminated, _t, info = env.step("paper")
        env.close()
        return info

    info = asyncio.run(inside())
    assert info["status"] == "completed"


class SlowAgent:
    """An opponent that takes 10 ms of game time to answer (an agent plug-in seat)."""

    def __init__(self, context: Any) -> None:
        self.context = context

    async def respond(self, request: Any) -> Any:
        from stille_post.providers.base import Completion, Usage

        await asyncio.sleep(0.01)
        return Completion("paper", [], Usage(), "slow")


def test_the_time_between_steps_is_not_the_game_s() -> None:
    """A caller may think as long as it likes: the answer deadline (here 50 ms) counts
    only the time the game runs, so an opponent asked at the same moment as the caller,
    whose answer is still on its way, is not timed out by the caller's thinking."""
    import time

    env = parallel_env("toy-rps", seed=1, rounds=2, decision_timeout_s=0.05, controlled=[1],
                       opponents=["python:tests.envs.test_bad_input:SlowAgent"])
    env.reset()
    for _ in range(2):
        time.sleep(0.15)
        env.step({"player_1": "rock"})
    outcome = env.episode.outcome
    assert outcome is not None
    assert all(row["forfeits"] == 0 for row in outcome.adherence.values())
    assert outcome.placements == {1: 2, 2: 1}
