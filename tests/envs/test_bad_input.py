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
    loop, task = episode._loop, episode.task
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


def test_the_one_at_a_time_env_waits_for_an_opponent_still_answering() -> None:
    """In the AEC env the caller's seat is answered on the game's own coroutine, and the
    game's task takes over while an opponent's answer is on its way (here an agent
    taking 10 ms of game time against a 50 ms deadline): the caller's thinking between
    steps still does not time it out, and the game ends as the rules say."""
    import time

    env = aec_env("toy-rps", seed=1, rounds=2, decision_timeout_s=0.05, controlled=[1],
                  opponents=["python:tests.envs.test_bad_input:SlowAgent"])
    env.reset()
    for _agent in env.agent_iter():
        _obs, _r, term, trunc, _info = env.last()
        if not (term or trunc):
            time.sleep(0.15)
        env.step(None if term or trunc else "rock")
    outcome = env.unwrapped.episode.outcome
    assert outcome is not None
    assert all(row["forfeits"] == 0 for row in outcome.adherence.values())
    assert outcome.placements == {1: 2, 2: 1}
    env.close()


def test_a_timer_due_on_the_loop_does_not_lose_the_game_s_hand_over() -> None:
    """An episode made on a loop where a timer is already due (one left by an earlier
    episode, say): the first hand-over of the game to its task (here to wait for a slow
    opponent) happens before that task has ever run, and must still reach it."""
    from stille_post.envs.episode import Episode, PausedClockLoop, close_loop, episode_spec
    from stille_post.games import get_game

    spec = episode_spec(get_game("toy-rps"), controlled=[1], options={"rounds": 1},
                        opponents=["python:tests.envs.test_bad_input:SlowAgent"])
    loop = PausedClockLoop()
    try:
        loop.call_at(loop.time() - 1, lambda: None)
        loop.call_later(10, _hung)  # a lost hand-over leaves the loop idle for ever
        episode = Episode(spec, 1, loop=loop, together=False)
        assert episode.pending() == [1]
        episode.answer(1, "rock")
        assert episode.done and episode.outcome is not None
        assert episode.outcome.placements == {1: 2, 2: 1}
        episode.close()
    finally:
        close_loop(loop)


def _hung() -> None:
    raise SystemExit("the episode's loop waited 10 s for nothing")  # out of run_forever


def test_a_bot_s_action_changed_in_place_is_read_as_changed() -> None:
    """A bot's answer handed back unchanged is the bot's own; changed in place, even deep
    inside its arguments, it is the caller's reply, read and checked as such: here a
    ranking emptied in place is refused and the seat is asked again."""
    env = aec_env("elimination", seed=1)
    env.reset()
    while True:  # the bots' answers up to the first ranking
        agent = env.agent_selection
        action = bot_action(env, agent)
        if isinstance(action, dict) and action.get("name") == "submit_ranking":
            break
        env.step(action)
    action["arguments"]["ranking"].clear()
    env.step(action)
    assert env.agent_selection == agent
    assert env.infos[agent]["attempt"] == 1  # the corrective re-ask
    again = bot_action(env, agent)
    env.step(again)  # unchanged: taken, and the next seat is asked
    assert env.agent_selection != agent
    env.close()


def test_a_bot_s_action_shares_nothing_with_the_bot_s_answer() -> None:
    from stille_post.envs.episode import action_of, says
    from stille_post.players.base import Action
    from stille_post.providers.base import ToolCall

    answer = Action(text="", tool_calls=(ToolCall("rank", {"order": [3, 1, 2],
                                                           "why": {"3": ["best"]}}),))
    action = action_of(answer)
    assert says(action, answer)
    assert isinstance(action, dict)
    action["arguments"]["why"]["3"].append("x")
    action["arguments"]["order"].clear()
    assert answer.tool_calls[0].arguments == {"order": [3, 1, 2], "why": {"3": ["best"]}}
    assert not says(action, answer)


def test_a_finished_episode_is_freed_without_the_cycle_collector() -> None:
    """At the next reset the finished episode before is freed by reference counting
    alone: no cycle runs through it (the caller's seats let go of it when it is
    closed), so episodes do not pile up for the cycle collector, whose full passes over
    every object of the process would otherwise come every few episodes and cost as
    much as the games. (An episode cancelled midway is left to the collector: the
    cancellation's traceback holds the game's frames.)"""
    import weakref

    env = aec_env("chameleon", seed=1)
    gc.collect()
    gc.disable()
    try:
        env.reset()
        episode = weakref.ref(env.unwrapped.episode)
        for agent in env.agent_iter():
            *_, term, trunc, _info = env.last(observe=False)
            env.step(None if term or trunc else bot_action(env, agent))
        assert episode().done  # type: ignore[union-attr]
        env.reset()
        assert episode() is None
    finally:
        gc.enable()
        env.close()
