"""PettingZoo: `api_test` and `parallel_api_test` pass for every kind of registered game,
and the rules of the AEC loop hold: an observation is the seat's request, an invalid
action earns the model's corrective re-ask (counted in adherence), seats asked at the
same moment answer one at a time without seeing each other, rewards come at the end."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from pettingzoo.test import api_test, parallel_api_test

from stille_post.envs import EpisodeError, aec_env, bot_action, parallel_env

from .conftest import EVERY_GAME


def play_out(env: Any, policy: Any) -> None:
    for agent in env.agent_iter():
        _obs, _reward, term, trunc, _info = env.last()
        env.step(None if term or trunc else policy(env, agent))


@pytest.mark.parametrize("game", EVERY_GAME)
def test_api_test_passes(game: str) -> None:
    env = aec_env(game, seed=1)
    with warnings.catch_warnings():
        # "Observation is not a NumPy array" and the like: ours is a conversation.
        warnings.simplefilter("ignore", UserWarning)
        api_test(env, num_cycles=1000)
    env.close()


@pytest.mark.parametrize("game", EVERY_GAME)
def test_parallel_api_test_passes(game: str) -> None:
    env = parallel_env(game, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        parallel_api_test(env, num_cycles=1000)
    env.close()


def test_the_game_alone_is_enough() -> None:
    env = aec_env("chameleon", seed=1)
    env.reset()
    assert env.possible_agents == ["player_1", "player_2", "player_3", "player_4"]
    obs, reward, term, trunc, info = env.last()
    seat = int(env.agent_selection.removeprefix("player_"))
    assert obs["seat"] == seat and obs["kind"] and obs["system"] and obs["messages"]
    assert obs["text"].startswith(obs["system"])
    assert info["decision"].seat == seat and info["decision"].kind == obs["kind"]
    assert (reward, term, trunc) == (0.0, False, False)
    env.close()


@pytest.mark.parametrize("game", ["stille-post", "connections"])
def test_an_observation_is_the_request_the_seat_s_model_would_get(game: str) -> None:
    """The request behind each observation equals what a real `LLMPlayer` (with a
    scripted provider) sends for the same decision, phase generation settings included."""
    import asyncio

    from stille_post.envs.observation import message_json, tool_json
    from stille_post.players.llm import LLMPlayer
    from stille_post.providers.scripted import ScriptedProvider

    env = aec_env(game, seed=4)
    env.reset()
    for _ in range(6):
        obs, *_ = env.last()
        turn = env.unwrapped.episode.turns[obs["seat"]]
        provider = ScriptedProvider(["anything"])
        model = LLMPlayer(provider, env.unwrapped.spec.definition.prompts, name="m")
        asyncio.run(model.decide(turn.decision))
        sent = provider.requests[0]
        assert sent == turn.request
        assert obs["system"] == sent.system
        assert obs["messages"] == [message_json(m) for m in sent.messages]
        assert obs["tools"] == [tool_json(t) for t in sent.tools]
        assert obs["max_output_tokens"] == (sent.max_output_tokens or 0)
        env.step(bot_action(env))
    env.close()


def test_bot_actions_finish_the_game_with_every_decision_valid() -> None:
    env = aec_env("elimination", seed=2)
    env.reset()
    play_out(env, bot_action)
    episode = env.unwrapped.episode
    assert episode.outcome.status == "completed"
    assert all(row["reasks"] == 0 and row["forfeits"] == 0
               for row in episode.outcome.adherence.values())
    assert not env.agents  # every agent has left after its last (dead) step


def test_an_invalid_action_is_re_asked_and_counted() -> None:
    env = aec_env("chameleon", seed=3)
    env.reset()
    agent = env.agent_selection
    first, *_ = env.last()
    for bad in (12345, b"bytes", {"wrong": "shape"}, {"name": 3}):
        env.step(bad)
        assert env.agent_selection == agent  # the same seat, asked again
        obs, _r, _t, _tr, info = env.last()
        assert obs["attempt"] >= 1 and obs["repair"]
        assert info["decision"].repair == obs["repair"]
        assert obs["kind"] == first["kind"]
        if obs["attempt"] == 1:
            break
    # The re-ask is the game's own, worded as for a model's unreadable reply.
    play_out(env, bot_action)
    seat = env.unwrapped.seats[agent]
    tally = env.unwrapped.episode.outcome.adherence[seat]
    assert tally["reasks"] >= 1 and tally["errors"].get("bad_arguments", 0) >= 1


def test_simultaneous_seats_answer_one_at_a_time_and_see_no_other_answer() -> None:
    env = aec_env("toy-rps", seed=1, rounds=1)
    env.reset()
    assert env.agent_selection == "player_1"
    env.step("rock")
    # Player 2 is asked the same question: its request holds nothing of player 1's throw.
    assert env.agent_selection == "player_2"
    obs, *_ = env.last()
    spoken = [m["content"] for m in obs["messages"]]
    assert not any("rock" in text for text in spoken)  # only the system prompt names it
    assert env.unwrapped.episode.pending() == [2]
    env.step("paper")
    assert all(env.terminations.values())
    assert env.rewards == {"player_1": 0.0, "player_2": 1.0}


def test_the_parallel_env_asks_simultaneous_seats_together() -> None:
    env = parallel_env("toy-rps", seed=1, rounds=2)
    obs, infos = env.reset()
    assert set(infos) == {"player_1", "player_2"}
    assert all(infos[a]["kind"] == "throw" for a in infos)
    obs, _rewards, terms, _truncs, infos = env.step({"player_1": "rock", "player_2": "rock"})
    # The second round's throws see the first round's, both at once.
    assert all("rock" in obs[a]["text"] for a in obs) and not any(terms.values())
    obs, rewards, terms, _truncs, infos = env.step({"player_1": "paper", "player_2": "rock"})
    assert all(terms.values()) and rewards == {"player_1": 1.0, "player_2": 0.0}
    assert infos["player_1"]["placements"] == {1: 1, 2: 2}
    with pytest.raises(Exception, match="episode is over"):
        env.step({"player_1": "rock"})


def test_rewards_win_or_partial_from_placements() -> None:
    # Three seats: 2 and 3 throw rock and share first place, 1 throws scissors (third).
    for scheme, expected in (("partial", {1: 0.0, 2: 1.0, 3: 1.0}),
                             ("win", {1: 0.0, 2: 1.0, 3: 1.0})):
        env = aec_env("toy-rps", seed=1, rounds=1, num_players=3, reward=scheme)
        env.reset()
        for throw in ("scissors", "rock", "rock"):
            env.step(throw)
        assert env.unwrapped.episode.outcome.placements == {1: 3, 2: 1, 3: 1}
        assert {env.unwrapped.seats[a]: r for a, r in env.rewards.items()} == expected
        env.close()
    # Four seats, ranks 1, 2, 2, 2: partial points are (n - rank) / (n - 1).
    env = aec_env("toy-rps", seed=1, rounds=1, num_players=4, reward="partial")
    env.reset()
    for throw in ("paper", "rock", "rock", "scissors"):  # 1: +2, 2: +1, 3: +1, 4: +1
        env.step(throw)
    placements = env.unwrapped.episode.outcome.placements
    rewards = {env.unwrapped.seats[a]: r for a, r in env.rewards.items()}
    assert rewards == {s: (4 - placements[s]) / 3 for s in placements}
    assert rewards[1] == 1.0 and len(set(rewards.values())) == 2


def test_controlled_seats_and_opponents() -> None:
    env = aec_env("chameleon", controlled=[2], opponents="bot", seed=5)
    env.reset()
    assert env.possible_agents == ["player_2"]
    seats = env.unwrapped.episode._prepared.seats_json()
    assert seats["2"]["player"] == "env"
    assert all(seats[s]["player"].startswith("bot:") for s in ("1", "3", "4"))
    play_out(env, bot_action)
    assert env.unwrapped.episode.outcome.status == "completed"


def test_step_after_the_end_is_refused() -> None:
    env = aec_env("toy-rps", seed=1, rounds=1)
    env.reset()
    env.step("rock")
    env.step("rock")
    agent = env.agent_selection
    with pytest.raises(ValueError, match="only valid action is None"):
        env.step("rock")  # PettingZoo's own rule for a terminated agent
    env.step(None)
    env.step(None)
    assert not env.agents and env.terminations == {}
    assert agent.startswith("player_")
    # After the last agent has left, PettingZoo's order check warns and steps nothing;
    # the environment itself refuses.
    env.step(None)
    with pytest.raises(EpisodeError, match="episode is over"):
        env.unwrapped.step(None)


def test_step_or_observe_before_reset_is_pettingzoo_s_error() -> None:
    env = aec_env("toy-rps", seed=1)
    with pytest.raises(AssertionError, match="reset"):
        env.step("rock")


@pytest.mark.parametrize("game", ["elimination", "stille-post"])
def test_observations_reused_between_steps_equal_fresh_ones(game: str) -> None:
    """A seat's observation reuses the messages converted for its previous one; every
    observation of a whole game equals one made from scratch from the same request."""
    from stille_post.envs.observation import SeatView, observation, request_text

    env = aec_env(game, seed=6)
    env.reset()
    seen = 0
    for agent in env.agent_iter():
        obs, _r, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        turn = env.unwrapped.episode.turns[env.unwrapped.seats[agent]]
        turn.observed = None
        fresh = observation(turn, SeatView())
        assert obs == fresh and obs["text"] == request_text(turn.request)
        seen += 1
        env.step(bot_action(env, agent))
    assert seen > 10
