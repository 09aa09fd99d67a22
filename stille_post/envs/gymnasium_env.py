"""Gymnasium: one seat of a game, the other seats fixed (`stille_post/<game>-v0`).

`gymnasium.make("stille_post/chameleon-v0", seat=1, opponents="bot")`: the caller plays
`seat`, bots (or any `--players` specs) play the rest. The observation and the action
are those of the PettingZoo environments (envs/observation.py, envs/spaces.py); the
reward comes once, when the game ends (`terminated`), from the placements. `info` holds
the typed `Decision` while the seat has one pending, the outcome at the end.

`reset(seed=S)` plays the game with seed S (the same game as `stille-post play GAME
--seed S` with the same seats); `reset()` alone plays the next seed.
"""

from __future__ import annotations

import weakref
from typing import Any

import gymnasium
from gymnasium.error import ResetNeeded

from stille_post.envs.episode import Episode, EpisodeSpec
from stille_post.envs.observation import SeatView, observation, request_text
from stille_post.envs.pettingzoo_env import IDLE, _Episodes, _outcome_info
from stille_post.envs.spaces import ChatObservation, Reply


class StillePostGym(gymnasium.Env[dict[str, Any], Any]):
    """A game of stille_post for one seat (see `gym_env`)."""

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012

    def __init__(self, spec: EpisodeSpec, seed: int | None = None,
                 render_mode: str | None = None) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi' or None")
        assert len(spec.controlled) == 1
        self.render_mode = render_mode
        self.spec_ = spec
        self.seat = spec.controlled[0]
        self.observation_space = ChatObservation()
        self.action_space = Reply()
        self._episodes = _Episodes(spec, seed)
        weakref.finalize(self, _Episodes.close, self._episodes)
        self._last = dict(IDLE, seat=self.seat)
        self._view = SeatView()
        self._over = True

    @property
    def episode(self) -> Episode | None:
        return self._episodes.episode

    def _observe(self, episode: Episode) -> tuple[dict[str, Any], dict[str, Any]]:
        turn = episode.turns.get(self.seat)
        if turn is None:  # the game is over
            return dict(self._last), _outcome_info(episode)
        self._last = observation(turn, self._view)
        return self._last, {"decision": turn.decision, "seat": self.seat,
                            "kind": turn.decision.kind, "attempt": turn.attempt}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        episode = self._episodes.start(seed)
        self._last = dict(IDLE, seat=self.seat)
        self._view = SeatView()
        self._over = False
        return self._observe(episode)

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        episode = self.episode
        if episode is None or self._over:
            raise ResetNeeded("the episode is over: call reset() before step()")
        if not episode.done:
            episode.answer(self.seat, action)
        obs, info = self._observe(episode)
        if not episode.done:
            return obs, 0.0, False, False, info
        self._over = True
        return obs, float(episode.rewards().get(self.seat, 0.0)), True, False, info

    def render(self) -> str | None:
        episode = self.episode
        if self.render_mode != "ansi" or episode is None:
            return None
        turn = episode.turns.get(self.seat)
        return request_text(turn.request) if turn is not None else ""

    def close(self) -> None:
        self._episodes.close()


__all__ = ["StillePostGym"]
