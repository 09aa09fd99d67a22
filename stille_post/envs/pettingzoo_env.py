"""PettingZoo: every registered game as an AEC environment, and as a parallel one.

The agents are the seats the caller controls (`player_1`, `player_2`, ...; by default
every seat); the other seats are filled as `--players` fills them. An observation is
the request that seat's model would be sent (envs/observation.py), an action a text
reply or a tool call. The info of the agent to act holds the typed `Decision` (its kind,
seat, observation, tools and re-ask reason), so a bot or any program can answer it.
Rewards come once, at the end, from the placements (core/rewards.py).

- AEC: one agent acts at a time. Seats asked at the same moment are selected one after
  the other in seat order; none sees another's answer before all have answered.
- Parallel: each step takes the actions of the agents with a decision pending (the
  seats asked at the same moment act together); the others' actions are ignored.
"""

from __future__ import annotations

import secrets
import weakref
from collections.abc import Mapping
from typing import Any, ClassVar

from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import (
    AECOrderEnforcingIterable,
    AECOrderEnforcingIterator,
)

from stille_post.envs.episode import (
    Episode,
    EpisodeError,
    EpisodeSpec,
    PausedClockLoop,
    close_loop,
)
from stille_post.envs.observation import SeatView, observation, request_text
from stille_post.envs.spaces import ChatObservation, Reply

IDLE = {"seat": 0, "kind": "", "attempt": 0, "repair": "", "system": "", "messages": [],
        "tools": [], "tool_choice": "", "max_output_tokens": 0, "text": ""}


def agent_name(seat: int) -> str:
    return f"player_{seat}"


class _Episodes:
    """The episode an environment is playing, on the environment's one event loop, with
    its seeds: the one given first, then the next ones (S, S+1, ... as a tournament
    plays), or fresh ones."""

    def __init__(self, spec: EpisodeSpec, seed: int | None, *, together: bool = False
                 ) -> None:
        self.spec = spec
        self.next_seed = seed
        self.together = together  # seats asked at once pending together (parallel API)
        self.episode: Episode | None = None
        self.loop: PausedClockLoop | None = None

    def start(self, seed: int | None) -> Episode:
        if self.episode is not None:
            self.episode.close()
        if seed is None:
            seed = self.next_seed if self.next_seed is not None else secrets.randbelow(2**31)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise EpisodeError(f"seed {seed!r}: a non-negative integer")
        self.next_seed = seed + 1
        if self.loop is None or self.loop.is_closed():
            self.loop = PausedClockLoop()
        self.episode = Episode(self.spec, seed, loop=self.loop, together=self.together)
        return self.episode

    def close(self) -> None:
        """The episode, then the loop (an environment closed, or collected)."""
        try:
            if self.episode is not None:
                self.episode.close()
        finally:
            if self.loop is not None:
                close_loop(self.loop)


def _outcome_info(episode: Episode) -> dict[str, Any]:
    o = episode.outcome
    assert o is not None
    return {"status": o.status, "reason": o.reason, "placements": dict(o.placements),
            "winners": list(o.summary.winners), "valid": o.summary.valid,
            "details": dict(o.summary.details), "adherence": dict(o.adherence),
            "transcript": str(episode.transcript) if episode.transcript else None,
            "seed": episode.seed}


class _Seated:
    """What the AEC and the parallel environment share: the controlled seats as agents,
    their spaces, and the episodes on the environment's one loop (closed with the
    environment, or when it is collected)."""

    def _seat(self, spec: EpisodeSpec, seed: int | None, render_mode: str | None, *,
              together: bool = False) -> None:
        if render_mode not in (None, "ansi"):
            raise EpisodeError(f"render_mode {render_mode!r}: only 'ansi' or None")
        self.render_mode = render_mode
        self.spec = spec
        self.seats = {agent_name(s): s for s in spec.controlled}
        self.possible_agents = list(self.seats)
        self.agents: list[str] = []
        self._observation_spaces = {a: ChatObservation() for a in self.possible_agents}
        self._action_spaces = {a: Reply() for a in self.possible_agents}
        self._episodes = _Episodes(spec, seed, together=together)
        # Closing on collection must not hold the environment: the finalizer holds only
        # the episodes (which never point back here).
        weakref.finalize(self, _Episodes.close, self._episodes)
        self._observations: dict[str, dict[str, Any]] = {}  # made when first observed

    @property
    def episode(self) -> Episode | None:
        """The game being played (None before the first reset)."""
        return self._episodes.episode

    def observation_space(self, agent: str) -> ChatObservation:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> Reply:
        return self._action_spaces[agent]

    def close(self) -> None:
        self._episodes.close()


class StillePostAEC(_Seated, AECEnv):
    """A game of stille_post as a PettingZoo AEC environment (see `aec_env`)."""

    metadata: ClassVar[dict[str, Any]] = {"name": "stille_post_v0", "render_modes": ["ansi"],
                                          "is_parallelizable": True, "render_fps": 1}

    def __init__(self, spec: EpisodeSpec, seed: int | None = None,
                 render_mode: str | None = None) -> None:
        super().__init__()
        self._seat(spec, seed, render_mode)
        self._agents_by_seat = {s: a for a, s in self.seats.items()}
        self._views: dict[int, SeatView] = {}
        self._skip_agent_selection: str | None = None  # PettingZoo's, for the dead's steps

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None
              ) -> None:
        episode = self._episodes.start(seed)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._observations = {}
        self._views = {}
        self._skip_agent_selection = None
        self.agent_selection = self.agents[0]
        self._sync(episode)

    def _sync(self, episode: Episode) -> None:
        """Infos and the agent to act, from the episode's state; at the end, the
        terminations and the rewards."""
        if episode.done:
            info = _outcome_info(episode)
            rewards = episode.rewards()
            for agent in self.agents:
                self.terminations[agent] = True
                self.rewards[agent] = rewards.get(self.seats[agent], 0.0)
                self.infos[agent] = dict(info)
            self.agent_selection = self.agents[0]
            return
        names, infos = self._agents_by_seat, self.infos
        turns = episode.turns
        for seat, turn in turns.items():
            infos[names[seat]] = {"decision": turn.decision, "seat": seat,
                                  "kind": turn.decision.kind, "attempt": turn.attempt}
        self.agent_selection = names[min(turns)]

    def observe(self, agent: str) -> dict[str, Any]:
        """The request of the agent's pending decision (made when first observed); an
        agent with none observes its last one (an empty one before its first)."""
        episode = self.episode
        seat = self.seats[agent]
        turn = episode.turns.get(seat) if episode is not None else None
        if turn is not None:
            view = self._views.get(seat) or self._views.setdefault(seat, SeatView())
            self._observations[agent] = observation(turn, view)
        return self._observations.get(agent) or dict(IDLE, seat=seat)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not self.agents:
            raise EpisodeError("the episode is over: call reset()")
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        episode = self._episodes.episode
        assert episode is not None
        self._cumulative_rewards[agent] = 0.0
        self.infos[agent] = {}
        episode.answer(self.seats[agent], action)
        # Rewards come only with the end: until then every reward is 0, and clearing and
        # adding them up (PettingZoo's bookkeeping, per agent) would change nothing.
        if episode.done:
            self._clear_rewards()
            self._sync(episode)
            self._accumulate_rewards()
        else:
            self._sync(episode)

    def _was_dead_step(self, action: Any) -> None:
        """PettingZoo's own (`AECEnv._was_dead_step`), for the one way our agents die:
        all at once, when the game ends. Its list of the dead, remade for each of them,
        is then the agents left, in order."""
        episode = self._episodes.episode
        if episode is None or not episode.done:
            super()._was_dead_step(action)
            return
        if action is not None:
            raise ValueError("when an agent is dead, the only valid action is None")
        agent = self.agent_selection
        del self.terminations[agent], self.truncations[agent], self.rewards[agent]
        del self._cumulative_rewards[agent], self.infos[agent]
        self.agents.remove(agent)
        if self.agents:
            if getattr(self, "_skip_agent_selection", None) is None:
                self._skip_agent_selection = agent
            self.agent_selection = self.agents[0]
        else:
            skipped = getattr(self, "_skip_agent_selection", None)
            if skipped is not None:
                self.agent_selection = skipped
            self._skip_agent_selection = None
        self._clear_rewards()

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.episode is None:
            return None
        turn = self.episode.turns.get(self.seats.get(self.agent_selection, 0))
        return request_text(turn.request) if turn is not None else ""


class StillePostParallel(_Seated, ParallelEnv):
    """A game of stille_post as a PettingZoo parallel environment (see `parallel_env`)."""

    metadata: ClassVar[dict[str, Any]] = {"name": "stille_post_v0", "render_modes": ["ansi"],
                                          "render_fps": 1}

    def __init__(self, spec: EpisodeSpec, seed: int | None = None,
                 render_mode: str | None = None) -> None:
        self._seat(spec, seed, render_mode, together=True)

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None
              ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
        episode = self._episodes.start(seed)
        self.agents = list(self.possible_agents)
        self._observations = {a: dict(IDLE, seat=self.seats[a]) for a in self.agents}
        self._views = {seat: SeatView() for seat in self.seats.values()}
        report = self._report(episode)
        return report[0], report[4]

    def _report(self, episode: Episode) -> tuple[Any, Any, Any, Any, Any]:
        infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        rewards = dict.fromkeys(self.agents, 0.0)
        done = episode.done
        if done:
            won = episode.rewards()
            info = _outcome_info(episode)
            for a in self.agents:
                rewards[a] = won.get(self.seats[a], 0.0)
                infos[a] = dict(info)
        else:
            for seat in episode.pending():
                turn = episode.turns[seat]
                agent = agent_name(seat)
                self._observations[agent] = observation(turn, self._views[seat])
                infos[agent] = {"decision": turn.decision, "seat": seat,
                                "kind": turn.decision.kind, "attempt": turn.attempt}
        observations = {a: self._observations[a] for a in self.agents}
        return (observations, rewards, dict.fromkeys(self.agents, done),
                dict.fromkeys(self.agents, False), infos)

    def step(self, actions: Mapping[str, Any]) -> tuple[Any, Any, Any, Any, Any]:
        episode = self.episode
        if episode is None or not self.agents:
            raise EpisodeError("the episode is over: call reset()")
        if not isinstance(actions, Mapping):
            raise EpisodeError("step takes a mapping of agent -> action")
        pending = [agent_name(s) for s in episode.pending()]
        missing = [a for a in pending if a not in actions]
        if missing:
            raise EpisodeError(f"no action for {', '.join(missing)}, which must act")
        for agent in pending:  # in seat order; the game resumes once all have answered
            episode.answer(self.seats[agent], actions[agent])
        report = self._report(episode)
        if episode.done:
            self.agents = []
        return report

    def render(self) -> str | None:
        episode = self.episode
        if self.render_mode != "ansi" or episode is None:
            return None
        return "\n\n".join(request_text(episode.turns[s].request) for s in episode.pending())


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order check (observe or step before reset is one clear error), with
    the three calls of every step of a loop (`agent_iter`, `last`, `step`) made on the
    environment directly: PettingZoo's wrapper reaches each attribute through two
    `__getattr__`s, eight of them a step, a cost the size of a bot's decision. What is
    checked and raised is PettingZoo's own."""

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """`AECEnv.last`, read from the environment."""
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        env = self.env
        agent = env.agent_selection
        return (env.observe(agent) if observe else None, env._cumulative_rewards[agent],
                env.terminations[agent], env.truncations[agent], env.infos[agent])

    def step(self, action: Any) -> None:
        env = self.env
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not env.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            env.step(action)

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable[Any, Any, Any]:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _Iterable(self, max_iter)

    def __str__(self) -> str:
        return str(self.env)


class _Iterable(AECOrderEnforcingIterable[Any, Any, Any]):
    def __iter__(self) -> _Iterator:
        return _Iterator(self.env, self.max_iter)


class _Iterator(AECOrderEnforcingIterator[Any, Any, Any]):
    """PettingZoo's iterator of agents, reading the environment directly."""

    def __next__(self) -> Any:
        wrapper = self.env
        env = wrapper.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return env.agent_selection


def wrap_aec(env: StillePostAEC) -> AECEnv:
    """PettingZoo's order check: observe or step before reset is one clear error."""
    return OrderEnforcing(env)


__all__ = ["StillePostAEC", "StillePostParallel", "agent_name", "wrap_aec"]
