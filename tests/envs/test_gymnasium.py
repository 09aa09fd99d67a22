"""Gymnasium: `stille_post/<game>-v0` is registered on import of stille_post.envs, works
with no arguments, passes `check_env`, and plays one seat against fixed opponents."""

from __future__ import annotations

import warnings

import gymnasium
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

from stille_post.envs import bot_action

from .conftest import EVERY_GAME


@pytest.mark.parametrize("game", EVERY_GAME)
def test_check_env_passes(game: str) -> None:
    env = gymnasium.make(f"stille_post/{game}-v0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "not a Box": a conversation is not
        check_env(env.unwrapped)
    env.close()


def test_one_seat_against_bots_to_the_end() -> None:
    env = gymnasium.make("stille_post/chameleon-v0", seat=1, opponents="bot")
    obs, info = env.reset(seed=7)
    assert obs["seat"] == 1 and info["decision"].seat == 1
    steps, terminated, reward = 0, False, 0.0
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(bot_action(env))
        steps += 1
        assert not truncated
    assert info["status"] == "completed" and info["seed"] == 7
    assert info["valid"] and reward == (4 - info["placements"][1]) / 3  # partial points
    with pytest.raises(ResetNeeded):
        env.step("anything")  # after the end: reset first
    env.reset()  # the next seed
    assert env.unwrapped.episode.seed == 8
    env.close()


def test_reset_with_a_seed_replays_the_same_game() -> None:
    env = gymnasium.make("stille_post/elimination-v0", seat=3)
    first = []
    obs, _info = env.reset(seed=11)
    for _ in range(5):
        first.append(obs["text"])
        obs, *_ = env.step(bot_action(env))
    obs, _info = env.reset(seed=11)
    again = []
    for _ in range(5):
        again.append(obs["text"])
        obs, *_ = env.step(bot_action(env))
    assert first == again
    env.close()


def test_step_before_reset_is_gymnasium_s_error() -> None:
    env = gymnasium.make("stille_post/toy-rps-v0")
    with pytest.raises(ResetNeeded):
        env.step("rock")
