"""TextArena: our games are `textarena.Env`s that TextArena's own wrapper
(`LLMObservationWrapper`) and agents (`ta.Agent`: text in, text out) play unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest

ta = pytest.importorskip("textarena")

from stille_post.envs import bot_action, textarena_env  # noqa: E402
from tests.emulators.server import running  # noqa: E402
from tests.slowparams import fast_only  # noqa: E402

from .conftest import BUILT_IN  # noqa: E402


class BotInText(ta.Agent):  # type: ignore[misc]
    """A text-only agent whose replies are a bot's answers written as text: a tool call
    as the JSON object the observation's tool help asks for. What it is sent is kept."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.seen: list[str] = []

    def __call__(self, observation: str) -> str:
        self.seen.append(observation)
        action = bot_action(self.env)
        if isinstance(action, str):
            return action
        return json.dumps(action)  # a call, or words and calls: as the tool help says


def play(env: Any, agent: Any, num_players: int | None = None, seed: int = 3) -> tuple[Any, Any]:
    env.reset(num_players=num_players or len(env.spec.controlled), seed=seed)
    done = False
    while not done:
        _player_id, observation = env.get_observation()
        done, _info = env.step(action=agent(observation))
    return env.close()


@pytest.mark.parametrize("game", fast_only(BUILT_IN, {"stille-post", "elimination",
                                                    "chameleon"}))
def test_a_text_agent_plays_a_whole_game_through_the_llm_wrapper(game: str) -> None:
    base = textarena_env(game)
    env = ta.wrappers.LLMObservationWrapper(base)
    agent = BotInText(env)
    rewards, game_info = play(env, agent, seed=3)
    outcome = base.episode.outcome
    assert outcome.status == "completed"
    n = len(base.spec.controlled)
    assert set(rewards) == set(game_info) == set(range(n))
    # Every answer was usable: the tool calls written as text were taken as calls.
    assert all(not row["forfeits"] for row in outcome.adherence.values())
    assert sum(info["turn_count"] for info in game_info.values()) == \
        sum(row["decisions"] for row in outcome.adherence.values())
    # The wrapper's text grows: a player's later observation starts with its earlier one.
    first = agent.seen[0]
    assert first.startswith("\n[GAME] ") and any(
        later.startswith(first) and len(later) > len(first) for later in agent.seen[1:])


def test_the_same_game_as_the_pettingzoo_one() -> None:
    """Text actions: the placements equal those of the AEC game played by the same bots."""
    from stille_post.envs import aec_env

    base = textarena_env("chameleon")
    rewards, _ = play(ta.wrappers.LLMObservationWrapper(base), BotInText(base), seed=9)
    env = aec_env("chameleon", seed=9)
    env.reset()
    for agent in env.agent_iter():
        *_, term, trunc, _info = env.last()
        env.step(None if term or trunc else bot_action(env, agent))
    assert base.episode.outcome.placements == env.unwrapped.episode.outcome.placements
    assert rewards == {seat - 1: r for seat, r in env.unwrapped.episode.rewards().items()}


def test_num_players_sets_the_seats() -> None:
    env = textarena_env("toy-rps", rounds=1)
    env.reset(num_players=3, seed=1)
    assert len(env.state.role_mapping) == 4  # three players and the game
    player_id, messages = env.get_observation()
    assert player_id == 0 and messages[0][2] == ta.ObservationType.PROMPT
    assert env.get_observation() == (0, [])  # sent once
    env.close()


@pytest.mark.slow
@pytest.mark.block_network(allowed_hosts=[r"127\.0\.0\.1$"])  # the emulator is loopback
@pytest.mark.parametrize("game", BUILT_IN)
def test_textarena_s_own_openai_agent_plays_unchanged(game: str) -> None:
    """`ta.agents.OpenAIAgent`, as shipped, against a loopback OpenAI emulator (its
    replies are rarely valid moves: the game re-asks, forfeits, and still ends)."""
    with running("openai") as emulator:
        agent = ta.agents.OpenAIAgent("gpt-4.1-mini", api_key="sk-test",
                                      base_url=emulator.base_url)
        base = textarena_env(game)
        rewards, game_info = play(ta.wrappers.LLMObservationWrapper(base), agent)
    assert base.episode.outcome.status == "completed"
    assert set(rewards) == set(range(len(base.spec.controlled)))
    assert sum(info["turn_count"] for info in game_info.values()) > 0


def test_the_loops_of_docs_envs_md_run(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/envs.md's random-policy loop for each interface runs as written."""
    import re
    import warnings
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "envs.md").read_text("utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert [b for b in blocks if "aec_env(" in b] and [b for b in blocks if "parallel_env(" in b]
    assert [b for b in blocks if "gymnasium.make(" in b] and [b for b in blocks if "ta.Agent" in b]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for block in blocks:
            exec(compile(block, "docs/envs.md", "exec"), {})
    assert capsys.readouterr().out.startswith("{1: ")  # the AEC loop's placements
