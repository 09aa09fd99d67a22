"""TextArena: every registered game as a `textarena.Env`.

TextArena's loop is `reset(num_players, seed)`, then `get_observation() -> (player_id,
messages)` and `step(action) -> (done, info)` until done, then `close() -> (rewards,
game_info)`. Its wrappers (`LLMObservationWrapper`) and agents (`ta.Agent`: text in, text
out) then play our games unchanged.

- Player ids are 0, 1, ...: id i plays the i-th seat the caller controls (by default,
  every seat: id 0 is seat 1). `state.role_mapping` names them "Player <seat>", as our
  prompts do.
- A player's messages are the pieces of its request it has not been sent yet
  (envs/observation.py `paragraphs`): the system prompt once, as the PROMPT; the Game
  Master's lines and tool results as GAME_MESSAGEs; its own earlier replies as
  PLAYER_ACTIONs; the offered tools, with how to call one in text, as GAME_ADMIN.
- An action is text. A tool call is written as a JSON object, `{"name": TOOL,
  "arguments": {...}}`, which the kit takes as that call (kit/adherence.py); words and
  calls at once as `{"text": ..., "tool_calls": [...]}` (`text_action`).
- `close()` returns the rewards from placements and, per player, its seat, its role (if
  the game deals roles), whether it ever forfeited a decision (`invalid_move`) and how
  many decisions it answered (`turn_count`).
"""

from __future__ import annotations

import json
import weakref
from dataclasses import replace
from typing import Any

import textarena as ta

from stille_post.envs.episode import Episode, EpisodeError, EpisodeSpec, episode_spec
from stille_post.envs.observation import new_pieces, paragraphs
from stille_post.envs.pettingzoo_env import _Episodes, _outcome_info

_KIND = {"system": ta.ObservationType.PROMPT, "user": ta.ObservationType.GAME_MESSAGE,
         "tool": ta.ObservationType.GAME_MESSAGE, "tools": ta.ObservationType.GAME_ADMIN,
         "assistant": ta.ObservationType.PLAYER_ACTION}


class TextArenaState:
    """What TextArena's wrappers read from `env.state`."""

    def __init__(self, seats: tuple[int, ...]) -> None:
        self.num_players = len(seats)
        self.role_mapping: dict[int, str] = {i: f"Player {s}" for i, s in enumerate(seats)}
        self.role_mapping[ta.GAME_ID] = "GAME"
        self.current_player_id = 0
        self.done = False
        self.turn = 0
        self.rewards: dict[int, float] | None = None
        self.game_info: dict[int, dict[str, Any]] = {}


class StillePostTextArena(ta.Env):
    """A game of stille_post for TextArena (see `textarena_env`)."""

    def __init__(self, spec: EpisodeSpec, make_spec: Any) -> None:
        self.spec = spec
        self._make_spec = make_spec  # num_players -> EpisodeSpec
        self._episodes = _Episodes(spec, None)
        weakref.finalize(self, _Episodes.close, self._episodes)
        self.state = TextArenaState(spec.controlled)
        self._sent: dict[int, list[tuple[str, str]]] = {}
        self._ids: dict[int, int] = {}

    @property
    def episode(self) -> Episode | None:
        return self._episodes.episode

    def reset(self, num_players: int, seed: int | None = None) -> None:
        if num_players != len(self.spec.controlled):
            self.spec = self._make_spec(num_players)
            self._episodes.close()
            self._episodes.spec = self.spec
        episode = self._episodes.start(seed)
        self.state = TextArenaState(self.spec.controlled)
        self._ids = {s: i for i, s in enumerate(self.spec.controlled)}
        self._sent = {i: [] for i in self._ids.values()}
        self._sync(episode)

    def _sync(self, episode: Episode) -> None:
        self.state.done = episode.done
        if not episode.done:
            self.state.current_player_id = self._ids[episode.pending()[0]]

    def _episode(self) -> Episode:
        episode = self.episode
        if episode is None:
            raise EpisodeError("call reset(num_players) first")
        return episode

    def get_observation(self) -> tuple[int, list[tuple[int, str, ta.ObservationType]]]:
        episode = self._episode()
        pid = self.state.current_player_id
        if episode.done:
            return pid, []
        seat = episode.pending()[0]
        now = paragraphs(episode.turns[seat].request)
        new = new_pieces(self._sent[pid], now)
        self._sent[pid] = now
        return pid, [(pid if role == "assistant" else ta.GAME_ID, text, _KIND[role])
                     for role, text in new]

    def step(self, action: str) -> tuple[bool, dict[str, Any]]:
        episode = self._episode()
        if episode.done:
            raise EpisodeError("the episode is over: call close(), then reset()")
        episode.answer(episode.pending()[0], text_action(action))
        self.state.turn += 1
        self._sync(episode)
        return episode.done, (_outcome_info(episode) if episode.done else {})

    def close(self) -> tuple[dict[int, float], dict[int, dict[str, Any]]]:
        episode = self.episode
        if episode is None or not episode.done:
            self._episodes.close()
            return {}, {}
        won = episode.rewards()
        seats = episode._prepared.seats_json()
        adherence = episode.outcome.adherence if episode.outcome else {}
        rewards = {pid: won.get(seat, 0.0) for seat, pid in self._ids.items()}
        info = {}
        for seat, pid in self._ids.items():
            tally = adherence.get(seat, {})
            info[pid] = {"seat": seat, "role": str(seats.get(str(seat), {}).get("role",
                                                                                 f"Player {seat}")),
                         "invalid_move": bool(tally.get("forfeits", 0)),
                         "turn_count": int(tally.get("decisions", 0))}
        self.state.rewards, self.state.game_info = rewards, info
        self._episodes.close()
        return rewards, info


def text_action(action: Any) -> Any:
    """A text that is a whole JSON object `{"text": ..., "tool_calls": [...]}` is that
    reply (words and calls at once, which a text alone cannot say otherwise); any other
    text is a text reply, in which the kit finds a call written as JSON itself."""
    if not isinstance(action, str) or not action.lstrip().startswith("{"):
        return action
    try:
        value = json.loads(action)
    except ValueError:
        return action
    if isinstance(value, dict) and "tool_calls" in value and set(value) <= {"text",
                                                                          "tool_calls"}:
        return value
    return action


def make(game: str, **kwargs: Any) -> StillePostTextArena:
    from stille_post.games import get_game

    definition = get_game(game)
    spec = episode_spec(definition, **kwargs)
    given = kwargs.get("controlled")

    def for_players(n: int) -> EpisodeSpec:
        if given is not None:
            raise EpisodeError(f"reset(num_players={n}): this environment controls "
                               f"{len(spec.controlled)} seats")
        options = {**kwargs.get("options", {}), "num_players": n}
        return replace(episode_spec(definition, **{**kwargs, "options": options}))

    return StillePostTextArena(spec, for_players)


__all__ = ["StillePostTextArena", "TextArenaState", "make"]
