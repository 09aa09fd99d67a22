"""Every registered game as an environment: PettingZoo (AEC and parallel), Gymnasium and
TextArena (docs/envs.md).

    from stille_post.envs import aec_env
    env = aec_env("chameleon", seed=1)

Built on the kit's generic contracts only (envs/episode.py), so every registered game
gets them: the built-in games, a plugin game, a game named in STILLE_POST_GAMES.
Importing this package registers `stille_post/<game>-v0` with Gymnasium for every game
registered at that moment (`register_games()` registers games added later).

Needs the `envs` extra (pettingzoo, gymnasium, textarena): `pip install
'stille_post[envs]'`. TextArena is imported only by `textarena_env`.
"""

from __future__ import annotations

try:
    import gymnasium
    import pettingzoo  # noqa: F401
except ImportError as _missing:  # one line, naming the extra
    raise ImportError(f"stille_post.envs needs the envs extra (missing {_missing.name}): "
                      "pip install 'stille_post[envs]'") from None

import os
from collections.abc import Mapping, Sequence
from typing import Any

from stille_post.envs.episode import (
    ACTION_HELP,
    ENV_LABEL,
    Episode,
    EpisodeError,
    EpisodeSpec,
    action_of,
    episode_spec,
)
from stille_post.envs.gymnasium_env import StillePostGym
from stille_post.envs.pettingzoo_env import (
    OrderEnforcing,
    StillePostAEC,
    StillePostParallel,
    agent_name,
    wrap_aec,
)
from stille_post.envs.spaces import ChatObservation, Reply
from stille_post.games import all_games, get_game

Opponents = str | Sequence[str] | Mapping[int, str] | None
GYM_NAMESPACE = "stille_post"


def _spec(game: str, controlled: int | Sequence[int] | None, opponents: Opponents,
          roles: Mapping[str, str] | None, preset: str | None, reward: str, label: str,
          transcripts: str | os.PathLike[str] | None, options: dict[str, Any]
          ) -> EpisodeSpec:
    online = bool(options.pop("online", False))
    models = options.pop("models", None)
    return episode_spec(get_game(game), controlled=controlled, opponents=opponents,
                        options=options, roles=roles, preset=preset, label=label,
                        reward=reward, transcripts=transcripts, online=online,
                        models=models)


def aec_env(game: str, *, controlled: int | Sequence[int] | None = None,
            opponents: Opponents = None, seed: int | None = None,
            roles: Mapping[str, str] | None = None, preset: str | None = None,
            reward: str = "partial", label: str = ENV_LABEL,
            transcripts: str | os.PathLike[str] | None = None,
            render_mode: str | None = None, **options: Any) -> Any:
    """A PettingZoo AEC environment of `game`.

    - `controlled`: the seats the caller plays (agents `player_<seat>`); default: all.
    - `opponents`: the other seats, as `--players` fills them: one spec for all ("bot":
      each seat's role's default bot, a bot's name, an LLM spec, "script:FILE.yaml"), a
      list in seat order, or {seat: spec}; default: the game's default seats.
    - `seed`: the first episode's game seed; `reset()` plays the next ones.
    - `roles`, `preset`, `**options`: as `--role`, `--preset` and the game's options.
    - `reward`: "partial" ((n - rank) / (n - 1)) or "win" (1 for first place).
    - `label`: how the caller's seats are named in transcripts (`env`).
    - `transcripts`: a results folder; every finished episode's transcript is added to
      it (envs/records.py), for `view`, `report` and `merge`.
    - `online=True`, `models=FILE`: LLM opponents call the live APIs, as `--online` and
      `--models` (option names the game does not use).
    """
    spec = _spec(game, controlled, opponents, roles, preset, reward, label, transcripts,
                 options)
    return wrap_aec(StillePostAEC(spec, seed, render_mode))


def parallel_env(game: str, *, controlled: int | Sequence[int] | None = None,
                 opponents: Opponents = None, seed: int | None = None,
                 roles: Mapping[str, str] | None = None, preset: str | None = None,
                 reward: str = "partial", label: str = ENV_LABEL,
                 transcripts: str | os.PathLike[str] | None = None,
                 render_mode: str | None = None, **options: Any) -> StillePostParallel:
    """A PettingZoo parallel environment of `game` (arguments as `aec_env`): each step
    takes the actions of the agents with a decision pending."""
    spec = _spec(game, controlled, opponents, roles, preset, reward, label, transcripts,
                 options)
    return StillePostParallel(spec, seed, render_mode)


def gym_env(game: str, *, seat: int = 1, opponents: Opponents = "bot",
            seed: int | None = None, roles: Mapping[str, str] | None = None,
            preset: str | None = None, reward: str = "partial", label: str = ENV_LABEL,
            transcripts: str | os.PathLike[str] | None = None,
            render_mode: str | None = None, **options: Any) -> StillePostGym:
    """A Gymnasium environment of `game` for one seat (what `gymnasium.make(
    "stille_post/<game>-v0", ...)` builds; arguments as `aec_env`)."""
    spec = _spec(game, seat, opponents, roles, preset, reward, label, transcripts, options)
    return StillePostGym(spec, seed, render_mode)


def textarena_env(game: str, *, controlled: int | Sequence[int] | None = None,
                  opponents: Opponents = None, roles: Mapping[str, str] | None = None,
                  preset: str | None = None, reward: str = "partial",
                  label: str = ENV_LABEL, transcripts: str | os.PathLike[str] | None = None,
                  **options: Any) -> Any:
    """A `textarena.Env` of `game` (arguments as `aec_env`); `reset(num_players, seed)`
    sets the number of seats when `controlled` is not given."""
    from stille_post.envs.arena import make

    online = bool(options.pop("online", False))
    models = options.pop("models", None)
    return make(game, controlled=controlled, opponents=opponents, options=options,
                roles=roles, preset=preset, reward=reward, label=label,
                transcripts=transcripts, online=online, models=models)


def register_games() -> list[str]:
    """Register `stille_post/<game>-v0` with Gymnasium for every registered game (those
    already registered are left alone); the ids registered."""
    done = []
    for name in all_games():
        env_id = f"{GYM_NAMESPACE}/{name}-v0"
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="stille_post.envs:gym_env",
                               kwargs={"game": name}, disable_env_checker=False)
        done.append(env_id)
    return done


def bot_action(env: Any, agent: str | int | None = None, bot: str | None = None
               ) -> str | dict[str, Any]:
    """What a bot answers to the pending decision of `agent` (a name such as "player_2",
    a seat, or None for the agent to act), as an action for `step`: the bot the CLI
    seats there by default (or `bot`), built as the CLI builds it, with its own rng from
    (seed, seat, bot). Playing every decision with it reproduces `stille-post play`."""
    if type(env) is OrderEnforcing and type(agent) is str:  # an AEC loop's call, at once
        seat = env.env.seats.get(agent)
        current = env.env.episode
        if seat is not None and current is not None:
            return current.bot_action(seat, bot)
    base = getattr(env, "unwrapped", env)
    episode: Episode | None = getattr(base, "episode", None)
    if episode is None:
        raise EpisodeError("call reset() first")
    if agent is None:
        pending = episode.pending()
        if not pending:
            raise EpisodeError("no decision is pending")
        seat = pending[0]
    elif isinstance(agent, int):
        seat = agent
    else:
        seat = int(str(agent).rpartition("_")[2])
    return episode.bot_action(seat, bot)


register_games()

__all__ = ["ACTION_HELP", "ChatObservation", "EpisodeError", "Reply", "StillePostAEC",
           "StillePostGym", "StillePostParallel", "action_of", "aec_env", "agent_name",
           "bot_action", "gym_env", "parallel_env", "register_games", "textarena_env"]
