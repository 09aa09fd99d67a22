"""One game as an episode that a caller steps through: the core of every environment.

A seat the caller controls is a `CallerSeat`: an `LLMPlayer` whose model is the caller.
When the engine asks that seat, the decision is parked as a pending `Turn`, whose
request is the one the game's prompts render for a model, and the seat waits for the
caller's action. Re-asks, validation, adherence and prompts are therefore exactly a
model's, for every game, with no game-specific code here.

The engine is async and the environments' APIs are not. An `Episode` runs the game only
while it is made and inside `answer`, up to the next decision it waits for from the
caller (or its end), then returns. No thread is involved. A step costs what the game
does, not a turn of the event loop:
- The game has a task of its own on the environment's event loop (`_hold`), but while
  it waits only for the caller, the episode drives its coroutine itself (`_drive`): the
  caller's answer is sent into it, as that task, and it runs to the caller's next
  decision. Code of the game that asks for its task (deadlines, `asyncio.timeout`)
  finds that task, running.
- When the game awaits anything else (an opponent's model, a timer, a gather of seats
  that are not instant), the task takes over on the loop, as any task would run the
  game, until the game waits for the caller again. The loop runs only then.
- In the one-at-a-time environments (PettingZoo AEC, Gymnasium, TextArena) a caller's
  seat is answered as an instant player is (players/base.py `is_instant`): seats asked
  at the same moment are asked one after another in seat order, as the kit asks bots
  (kit/table.py `ask_all`), and no deadline is armed for the caller (the game's clock
  does not run while it thinks anyway). The answers, the events and the transcript are
  those of `stille-post play`; no seat sees another's answer until all have answered.
  The parallel environment (`together`) has them pending together instead.
- A bot's answer (`bot_action`) handed back unchanged is taken as the bot's own
  `Action`, as the CLI's bot seat hands it to the game; any other action is read and
  made safe as a model's reply (`completion_of`, `safe_completion`).
- The loop's clock stands still while the loop is not running (`PausedClockLoop`): the
  time a caller takes between two steps is not the game's, so no answer deadline
  (kit/deadlines.py) fires because of it, neither on the caller's seats nor on an
  opponent whose answer is still on its way; an opponent's own slowness still counts.
- In the parallel environment, seats asked at the same moment (`ask_all`, parallel
  channels) are all pending together; `pending` lists them in seat order. None sees
  another's answer before all have answered, because the table emits the answers only
  when every seat has one.
- A bot's answer handed back unchanged is recorded as the bot's (the decision record
  names no model, as the CLI's does); the caller's own replies name the model `env`.
- `close()` (also run when an environment is reset midway, closed or garbage-collected)
  cancels the game, runs the loop until the task is gone, closes the opponents'
  connections and removes an unfinished transcript; `close_loop` then ends the loop.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import os
import sys
import time
import types
from asyncio.events import _get_running_loop, _set_running_loop
from asyncio.tasks import _enter_task, _leave_task  # asyncio's own bookkeeping, 3.11+
from collections.abc import Callable, Coroutine, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stille_post.core.blocking import outside_running_loop
from stille_post.core.errors import ConfigError, UsageError
from stille_post.core.events import EventSink
from stille_post.core.outcome import GameOutcome
from stille_post.core.rewards import RewardScheme, rewards
from stille_post.core.rng import derive_rng, make_rng
from stille_post.games.kit.definition import BotContext, GameDefinition, SetupContext
from stille_post.games.kit.setup import LLMFactory, PreparedGame, build_config
from stille_post.players.base import Action, Decision, Player
from stille_post.players.llm import (
    UNREADABLE_REPLY,
    LLMPlayer,
    safe_completion,
    safe_text,
    with_generation,
)
from stille_post.players.llm_seats import SeatFactory, make_llm_factory
from stille_post.players.specs import SeatSpec
from stille_post.providers.base import ChatRequest, Completion, MalformedReply, ToolCall, Usage
from stille_post.providers.models import ModelRegistry, load_models, using_models
from stille_post.session import play_prepared, usage_json

ENV_LABEL = "env"  # how a caller's seat is named in the transcript header
CALLER_MODEL = "env"  # the `model` of a caller's reply (a model's name for an LLM seat)
ACTION_HELP = ("an action is a text reply (a string) or a tool call "
               "({'name': TOOL, 'arguments': {...}})")


class EpisodeError(UsageError):
    """A call the episode cannot take (an answer for a seat that was not asked, a step
    after the end). The environments raise their library's own error types on top."""


# --- the caller's action ------------------------------------------------------------------

def completion_of(action: object) -> Completion:
    """The caller's action as the completion a model would have returned.

    A string is a text reply; `{"name": ..., "arguments": {...}}` one tool call;
    `{"text": ..., "tool_calls": [...]}` both. Anything else (a number, bytes, a mapping
    of another shape) is a reply that cannot be read: `MalformedReply`, which the LLM
    player turns into the corrective re-ask a model gets for an unreadable reply.
    """
    if isinstance(action, str):
        return Completion(action, [], Usage(), CALLER_MODEL, "stop")
    if isinstance(action, Mapping):
        keys = set(action)
        if "name" in keys and keys <= {"name", "arguments", "id"}:
            return Completion("", [_tool_call(action)], Usage(), CALLER_MODEL, "tool_calls")
        if keys and keys <= {"text", "tool_calls"}:
            text = action.get("text", "")
            calls = action.get("tool_calls", [])
            if not isinstance(text, str):
                raise MalformedReply(f"the action's text is {type(text).__name__}, "
                                     "not a string")
            if not isinstance(calls, list | tuple):
                raise MalformedReply("the action's tool_calls is not a list")
            made = [_tool_call(c) for c in calls]
            return Completion(text, made, Usage(), CALLER_MODEL,
                              "tool_calls" if made else "stop")
        shown = ", ".join(sorted(map(str, keys)))[:80]
        raise MalformedReply(f"{ACTION_HELP}; got a mapping with keys {shown or 'none'}")
    raise MalformedReply(f"{ACTION_HELP}; got {type(action).__name__}")


def _tool_call(call: object) -> ToolCall:
    if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
        raise MalformedReply(f"a tool call is {{'name': TOOL, 'arguments': {{...}}}}; "
                             f"got {str(call)[:80]}")
    args = call.get("arguments", {})
    if not isinstance(args, Mapping):
        return ToolCall(call["name"], {},
                        malformed=f"arguments are not a JSON object: {str(args)[:80]}")
    given = call.get("id")
    # No id given: none, as for a bot's call (the game names it, as it does a bot's).
    call_id = given[:256] if isinstance(given, str) and given else None
    return ToolCall(call["name"], {str(k): v for k, v in args.items()}, id=call_id)


def action_of(answer: Action) -> str | dict[str, Any]:
    """A player's `Action` (a bot's, say) as a caller's action: what `completion_of`
    reads back into the same reply."""
    if not answer.tool_calls:
        return answer.text
    calls = [{"name": c.name, "arguments": _copied(c.arguments),
              **({"id": c.id} if c.id else {})} for c in answer.tool_calls]
    if not answer.text and len(calls) == 1:
        return calls[0]
    return {"text": answer.text, "tool_calls": calls}


def _copied(value: Any) -> Any:
    """A tool call's arguments, their lists and mappings copied all the way down: an
    action handed out shares nothing with the bot's own answer, so a change made to it
    in place is seen (`says`)."""
    if type(value) is dict:
        return {k: _copied(v) for k, v in value.items()}
    if type(value) is list:
        return [_copied(v) for v in value]
    return value


def says(action: object, answer: Action) -> bool:
    """Whether `action`, made by `action_of(answer)`, still says the same: a mapping
    handed out may have been changed in place since (what `action == action_of(answer)`
    tells, without building another)."""
    calls = answer.tool_calls
    if not calls:
        return action == answer.text
    if not answer.text and len(calls) == 1:
        return _says_call(action, calls[0])
    if type(action) is not dict or len(action) != 2 or action.get("text") != answer.text:
        return False
    given = action.get("tool_calls")
    return type(given) is list and len(given) == len(calls) and all(
        _says_call(d, c) for d, c in zip(given, calls, strict=True))


def _says_call(d: object, c: ToolCall) -> bool:
    return type(d) is dict and len(d) == (3 if c.id else 2) and d.get("name") == c.name \
        and d.get("arguments") == c.arguments and d.get("id") == (c.id or None)


# --- the caller's seats -------------------------------------------------------------------

class Turn:
    """A decision waiting for the caller. `request` is what the seat's model would be
    sent, rendered by the game's prompts on first use: a policy that never looks (a bot,
    a random one) never pays for it."""

    __slots__ = ("_player", "_request", "attempt", "decision", "future", "observed", "seat",
                 "suggested")

    def __init__(self, player: CallerSeat, decision: Decision[Any],
                 future: asyncio.Future[Completion | Action] | None, attempt: int) -> None:
        self.seat = player.seat
        self.decision = decision
        self._player = player
        self._request: ChatRequest | None = None
        # How the answer reaches the seat: sent into the game's coroutine by the episode
        # (None), or, for a seat asked from a task of the game's own (a gather), a future.
        self.future = future
        self.attempt = attempt  # 0 for a decision's first ask, then 1, 2, ... (re-asks)
        self.observed: Any = None  # the environments' observation of it, once made
        # The last bot answer `Episode.bot_action` gave for it: (the action handed out,
        # the bot's own Action).
        self.suggested: tuple[str | dict[str, Any], Action] | None = None

    @property
    def request(self) -> ChatRequest:
        if self._request is None:
            self._request = self._player.request_for(self.decision)
        return self._request

    def __await__(self) -> Generator[Turn, Completion | Action, Completion | Action]:
        """What a caller's seat awaits on the game's own task: the turn goes up the
        coroutine to whoever drives the game (`Episode._drive`, or the task, `_carry`),
        which sends the answer back down."""
        return (yield self)


class CallerSeat(LLMPlayer):
    """An LLM seat whose model is the caller: what `LLMPlayer.decide` does, with the
    request rendered only when the caller looks at it (`Turn.request`) and the reply
    coming from `Episode.answer`. The reply is made safe as a model's is
    (players/llm.py `safe_completion`: keys masked, control characters replaced), and an
    unreadable one becomes the same placeholder call, which the game re-asks."""

    def __init__(self, episode: Episode, seat: int, prompts: Any, name: str) -> None:
        super().__init__(_NoProvider(), prompts, name=name)
        self.episode = episode
        self.seat = seat
        # One at a time (see the module's notes): asked as an instant player is.
        self.instant = not episode.together

    def request_for(self, decision: Decision[Any]) -> ChatRequest:
        """Exactly the request `LLMPlayer.decide` sends for `decision`."""
        request = self.prompts.render(decision)
        gen = self.generation
        if decision.generation is not None:  # precedence: seat < phase
            gen = decision.generation.over(gen)
        if gen is not None:
            request = with_generation(request, gen)
        self.last_request = request
        return request

    async def decide(self, decision: Decision[Any]) -> Action:
        episode = self.episode
        seat = self.seat
        attempt = 0 if decision.repair is None else episode.attempts[seat] + 1
        episode.attempts[seat] = attempt
        turn = Turn(self, decision, None, attempt)
        if asyncio.current_task() is not episode.task:
            turn.future = episode.loop().create_future()  # asked from another task
        episode.park(turn)
        try:
            reply = await (turn.future if turn.future is not None else turn)
        except MalformedReply as exc:
            return Action(text="", tool_calls=(ToolCall(
                UNREADABLE_REPLY, {}, malformed=f"the reply could not be read: "
                f"{safe_text(str(exc))}"),))
        finally:
            if episode.turns.get(seat) is turn:  # not answered (cancelled): not pending
                del episode.turns[seat]
        if isinstance(reply, Action):  # a bot's own answer, handed back unchanged
            return reply
        text, calls = safe_completion(reply)
        return Action(text=text, tool_calls=calls, usage=reply.usage, model=CALLER_MODEL)


class _NoProvider:
    """A caller's seat calls no provider (its `decide` waits for `Episode.answer`)."""

    async def complete(self, request: ChatRequest) -> Completion:
        raise AssertionError("a caller's seat is answered by the caller")


@dataclass
class _EnvSetup(SetupContext):
    """The kit's set-up context with the caller's seats swapped in: the game deals and
    seats exactly as for `--players` (the specs it sees for the caller's seats are
    neither bots nor models, as for an agent), and each of those seats gets a
    `CallerSeat`. What the CLI would have seated there (`shadows`) and what the game
    handed that seat at set-up (`setups`) are kept, for bot policies."""

    controlled: frozenset[int] = frozenset()
    label: str = ENV_LABEL
    make_seat: Callable[[int], Player] | None = None
    shadows: dict[int, SeatSpec] = field(default_factory=dict)
    setups: dict[int, Any] = field(default_factory=dict)

    def seat_specs(self, roles: Mapping[int, str] | None = None) -> list[SeatSpec]:
        specs = super().seat_specs(roles)
        out = []
        for seat, spec in enumerate(specs, start=1):
            if seat in self.controlled:
                self.shadows[seat] = spec
                # An agent's seat for the header (`label`), but naming the bot the CLI
                # seats there: a game whose set-up depends on its seats' bots (the
                # Chameleon reads its traits only when `subtle` sits) deals the game the
                # CLI deals. The seat's player is still the caller's (`player`).
                spec = SeatSpec(raw=self.label, agent=self.label, bot=spec.bot,
                                bot_args=spec.bot_args)
            out.append(spec)
        return out

    def player(self, seat: int, spec: SeatSpec, setup: Any = None) -> Player:
        if seat in self.controlled:
            assert self.make_seat is not None
            self.setups[seat] = setup
            return self.make_seat(seat)
        return super().player(seat, spec, setup)


@dataclass(frozen=True)
class EpisodeSpec:
    """Everything an environment was made with, checked once (`episode_spec`)."""

    definition: GameDefinition
    num_players: int
    controlled: tuple[int, ...]
    players: tuple[str, ...] | None  # one spec per seat, or None for the game's defaults
    options: Mapping[str, Any]
    roles: Mapping[str, str]
    preset: str | None
    label: str
    reward: RewardScheme
    transcripts: Path | None  # a results folder (envs/records.py)
    online: bool = False  # LLM opponents call the live APIs (keys from the environment)
    models: Path | None = None  # the model registry file (`--models`)
    registry: ModelRegistry | None = None  # read from it once, for every episode


def episode_spec(
    definition: GameDefinition, *, controlled: int | Sequence[int] | None,
    opponents: str | Sequence[str] | Mapping[int, str] | None, options: Mapping[str, Any],
    roles: Mapping[str, str] | None = None, preset: str | None = None,
    label: str = ENV_LABEL, reward: str = "partial",
    transcripts: str | os.PathLike[str] | None = None,
    online: bool = False, models: str | os.PathLike[str] | None = None,
) -> EpisodeSpec:
    """Check an environment's arguments the way the CLI checks its flags, so that bad
    input is the same one line (a `UsageError`) before any game starts."""
    for name in roles or {}:
        definition.role(name)
    config = build_config(definition, options, None, preset)
    n = int(config.num_players)  # type: ignore[attr-defined]
    seats = _controlled(controlled, n)
    players = _players(definition, opponents, seats, n)
    if players is not None:  # the seats' specs are checked now, not at the first reset
        build_config(definition, options, players, preset)
    if reward not in ("win", "partial"):
        raise ConfigError(f"reward {reward!r}: choose win or partial")
    if not isinstance(label, str) or not label or len(label) > 64 or any(
            not c.isprintable() or c in ", " for c in label):
        raise ConfigError(f"label {label!r}: a short name without spaces or commas")
    if transcripts is not None:
        from stille_post.envs import records  # the tournament layer, only when recording

        records.check_folder(Path(transcripts), definition.name)
    spec = EpisodeSpec(definition, n, seats, players, dict(options), dict(roles or {}),
                       preset, label, reward,  # type: ignore[arg-type]
                       Path(transcripts) if transcripts is not None else None,
                       bool(online), Path(models) if models is not None else None,
                       load_models(Path(models) if models is not None else None))
    # The seats' specs, checked by the game's own set-up (no game is played, no model
    # client made: an LLM opponent's key is checked when its first episode starts).
    _set_up(spec, 0, lambda seat: _Unseated(),
            (lambda text, prompts: _Unseated()) if online else None)
    return spec


class _Unseated:
    """A caller's seat in a set-up that is only checked, never played."""

    name = ENV_LABEL

    async def decide(self, decision: Decision[Any]) -> Action:
        raise AssertionError("a checked set-up is never played")


def _set_up(spec: EpisodeSpec, seed: int, make_seat: Callable[[int], Player],
            llm_factory: LLMFactory | None) -> tuple[_EnvSetup, PreparedGame]:
    """The game dealt and seated for `seed`, the caller's seats made by `make_seat`: the
    kit's `prepare` with the caller's seats swapped in (`_EnvSetup`), under the model
    registry a `model:ALIAS` opponent is read against."""
    definition = spec.definition
    with using_models(spec.registry or load_models(spec.models)):
        config = build_config(definition, spec.options, spec.players, spec.preset)
        ctx = _EnvSetup(definition, config, seed, make_rng(seed),
                        list(spec.players) if spec.players is not None else None,
                        dict(spec.roles), llm_factory,
                        controlled=frozenset(spec.controlled), label=spec.label,
                        make_seat=make_seat)
        engine = definition.setup(ctx)
    return ctx, PreparedGame(definition, engine, ctx.data, seed)


def _controlled(controlled: int | Sequence[int] | None, n: int) -> tuple[int, ...]:
    if controlled is None:
        return tuple(range(1, n + 1))
    given = [controlled] if isinstance(controlled, int) else controlled
    if isinstance(given, str | bytes) or not all(
            isinstance(s, int) and not isinstance(s, bool) for s in given):
        raise ConfigError(f"controlled {controlled!r}: give seat numbers 1..{n}")
    for seat in given:
        if not 1 <= seat <= n:
            raise ConfigError(f"seat {seat}: the game has seats 1..{n}")
    if not given or len(set(given)) != len(given):
        raise ConfigError(f"controlled {list(given)}: give each seat once, at least one")
    return tuple(sorted(given))


def _players(definition: GameDefinition, opponents: str | Sequence[str] | Mapping[int, str]
             | None, seats: tuple[int, ...], n: int) -> tuple[str, ...] | None:
    """One spec per seat, as `--players` would give them, or None (the game's defaults).
    A caller's seat holds what the CLI seats there by default (its `shadow`)."""
    if opponents is None:
        return None
    others = [s for s in range(1, n + 1) if s not in seats]
    if isinstance(opponents, str):
        given = dict.fromkeys(others, opponents)
    elif isinstance(opponents, Mapping):
        given = {}
        for seat, spec in opponents.items():
            if seat not in others:
                raise ConfigError(f"opponents: seat {seat} is not an opponent's seat "
                                  f"(opponents sit at {others or 'no seat'})")
            given[seat] = spec
    else:
        listed = list(opponents)
        if len(listed) != len(others):
            raise ConfigError(f"opponents names {len(listed)} seats but the game has "
                              f"{len(others)} opponents' seats")
        given = dict(zip(others, listed, strict=True))
    if not all(isinstance(v, str) for v in given.values()):
        raise ConfigError("opponents: each seat is a spec (a bot name, bot, an LLM spec or "
                          "script:FILE.yaml)")
    defaults = definition.seats_by_default(n)
    return tuple(given.get(s, defaults[s - 1]) for s in range(1, n + 1))


# --- the episode ------------------------------------------------------------------------------

_COUNTER = itertools.count()


class Episode:
    """One game, stepped by the caller. Made by `start`; finished when `done`."""

    def __init__(self, spec: EpisodeSpec, seed: int, *, watch: EventSink | None = None,
                 loop: PausedClockLoop | None = None, together: bool = True) -> None:
        self.spec = spec
        self.seed = seed
        # Seats asked at the same moment pending together (the parallel API), or asked
        # one after another (see the module's notes).
        self.together = together
        self.attempts: dict[int, int] = dict.fromkeys(spec.controlled, 0)
        self.turns: dict[int, Turn] = {}  # pending, by seat
        self.outcome: GameOutcome | None = None
        self.transcript: Path | None = None
        self.steps = 0
        self._bots: dict[tuple[int, str | None], Player] = {}
        self._watch = watch
        # The environment's loop, reused episode after episode (`close_loop` ends it);
        # an episode made without one has a loop of its own, closed with it.
        self._own_loop = loop is None
        self._loop: PausedClockLoop | None = loop if loop is not None else PausedClockLoop()
        self._part: Path | None = None
        self._factory: SeatFactory | None = None  # LLM opponents' providers (online)
        self._seats: list[CallerSeat] = []
        self._context = self._prepare()
        prepared = self._prepared
        if spec.transcripts is not None:
            from stille_post.envs import records

            records.open_folder(spec.transcripts, spec.definition.name)
            path = records.new_path(spec.transcripts, spec.definition.name, seed)
            self._part = records.part_path(path, next(_COUNTER))
            coro: Any = self._record(prepared, self._part)
        else:
            coro = prepared.play(watch)
        self._coro: Coroutine[Any, Any, GameOutcome] = coro
        self._ended = False  # the coroutine has returned or raised
        self._looping = False  # inside `_run`'s run_forever: a park stops the loop
        # The game's task: it waits on `_baton` while the episode drives the game, and
        # runs it when the game awaits something else (`_hold`).
        self._baton: asyncio.Future[Any] = self._loop.create_future()
        self.task: asyncio.Task[Any] = self._loop.create_task(self._hold())
        self.task.add_done_callback(self._finished)
        self._loop.run_ready()  # the task starts, and waits
        self._drive(None)

    # --- set-up ---

    def _prepare(self) -> _EnvSetup:
        if self.spec.online:
            self._factory = make_llm_factory(models=self.spec.registry)
        ctx, self._prepared = _set_up(self.spec, self.seed, self._seat, self._factory)
        ctx.make_seat = None  # seated: no reference back to this episode (`_release`)
        return ctx

    def _seat(self, seat: int) -> Player:
        player = CallerSeat(self, seat, self.spec.definition.prompts, self.spec.label)
        self._seats.append(player)
        return player

    def _release(self) -> None:
        """Once the game is over or closed: the caller's seats let go of the episode.
        They are the only way back to it from the game, so an episode left behind (at
        the next reset) is then freed at once rather than by the cycle collector, whose
        full passes, over every object of the process, would otherwise come every few
        episodes."""
        for player in self._seats:
            player.episode = None  # type: ignore[assignment]

    async def _record(self, prepared: PreparedGame, part: Path) -> GameOutcome:
        from stille_post.envs import records

        run = await play_prepared(prepared, seed=self.seed, out=part, watch=self._watch)
        folder = self.spec.transcripts
        assert folder is not None
        final = records.new_path(folder, self.spec.definition.name, self.seed)
        os.replace(part, final)
        self._part = None
        self.transcript = final
        records.record(folder, final, self.seed)
        return run.outcome

    # --- running ---

    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None
        return self._loop

    def park(self, turn: Turn) -> None:
        self.turns[turn.seat] = turn
        if self._looping:
            self.loop().stop()  # `_run` returns once this round of callbacks is done

    def _finished(self, task: asyncio.Task[Any]) -> None:
        if self._looping:
            self.loop().stop()

    async def _hold(self) -> GameOutcome | None:
        """The game's task. While the episode drives the game it waits on the baton;
        handed the baton (what the game awaits), it runs the game from there as a task
        runs a coroutine (`_carry`) until the game waits for the caller again, and waits
        anew. A cancellation (closing, a deadline or timeout of the game's own) goes to
        the game where it waits, as it would in a task that ran it all along."""
        coro = self._coro
        while True:
            # The baton is made before the wait (the first in `__init__`), so that it is
            # handed over even if this task has not yet reached its wait.
            throw: BaseException | None = None
            try:
                waits = await self._baton
            except asyncio.CancelledError as exc:
                if self._ended:  # the game ended, or failed, driven by the episode
                    return None
                waits, throw = None, exc
            ended = await _carry(coro, waits, throw)
            if ended is _PARKED:
                self._baton = self.loop().create_future()
                continue
            return ended.value

    def _drive(self, value: Any, exc: BaseException | None = None) -> None:
        """Send the caller's answer (`value`, or an error to raise at the seat) into the
        game and run it, as its task, to the caller's next decision or the end. If the
        game awaits something else on the way, its task takes over (`_run`).

        Meanwhile the loop is marked running in this thread and the game's task is the
        current task, as when the loop steps that task (a notebook's loop is set aside);
        the loop's clock stands still, as between runs. The loop's async-generator hooks
        are left alone: no game iterates one, and one that did would be finalised when
        collected instead."""
        loop = self._loop
        assert loop is not None
        task = self.task
        outer = _get_running_loop()
        _set_running_loop(loop)
        _enter_task(loop, task)
        try:
            waits = self._coro.send(value) if exc is None else self._coro.throw(exc)
        except StopIteration as stop:
            self.outcome = stop.value
            self._ended = True
        except BaseException:
            self._ended = True
            raise
        finally:
            _leave_task(loop, task)
            _set_running_loop(outer)
            if self._ended:
                self._baton.cancel()  # the task ends without running anything
        if self._ended:
            loop.run_ready()
        elif type(waits) is not Turn:  # an await of asyncio's: the task runs the game
            self._baton.set_result(waits)
            self._run()
        elif loop._ready:  # the game's other tasks go on as the loop would run them
            loop.run_ready()

    def _run(self) -> None:
        """Run the loop until a decision is pending for the caller or the game is over:
        first the callbacks that are ready (whatever the answer woke), then, if the game
        waits for something else (an opponent's model, a timer), the loop until a
        decision is pending. The loop stops itself (`park`, `_finished`) after the round
        of callbacks in which that happened: seats asked at the same moment are all
        pending by then."""
        loop = self._loop
        assert loop is not None
        task = self.task
        loop.run_ready()
        if not self.turns and not task.done():
            self._looping = True
            try:
                with outside_running_loop():
                    while not self.turns and not task.done():
                        loop.run_forever()
            finally:
                self._looping = False
        if task.done() and self.outcome is None:
            exc = task.exception() if not task.cancelled() else None
            if exc is not None:  # the engine turns its own bugs into aborted games
                raise exc
            self.outcome = task.result()

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def pending(self) -> list[int]:
        return sorted(self.turns)

    def answer(self, seat: int, action: object) -> None:
        """Give `seat`'s pending decision the caller's action, and run the game on."""
        turn = self.turns.pop(seat, None)
        if turn is None:
            raise EpisodeError(f"seat {seat} has no decision pending"
                               + (" (the game is over)" if self.done else ""))
        self.steps += 1
        suggested = turn.suggested
        reply: Completion | Action
        if suggested is not None and action is suggested[0] and says(action, suggested[1]):
            # The very answer `bot_action` gave (a mapping not changed since): the bot's
            # own Action, as the CLI's bot seat hands it to the game.
            reply = suggested[1]
        else:
            try:
                reply = completion_of(action)
            except MalformedReply as exc:
                if turn.future is None:
                    return self._drive(None, exc)
                turn.future.set_exception(exc)
                return self._run()
        if turn.future is None:
            return self._drive(reply)
        turn.future.set_result(reply)
        return self._run()

    def rewards(self) -> dict[int, float]:
        """Per seat, at the end: from placements (core/rewards.py); 0 for all in a void or
        aborted game."""
        o = self.outcome
        if o is None:
            return {}
        valid = o.status == "completed" and o.summary.valid
        return rewards(o.placements, self.spec.reward, valid=valid)

    def usage(self) -> dict[int, dict[str, Any]]:
        if self.outcome is None:
            return {}
        return usage_json(self._prepared.seats_json(), self.outcome.usage)

    # --- bots as policies ---

    def shadow(self, seat: int) -> SeatSpec:
        """What `stille-post play` with the same seats would seat at `seat`."""
        return self._context.shadows[seat]

    def bot(self, seat: int, name: str | None = None) -> Player:
        """The bot `name` (default: the one the CLI seats there, else the seat's role's
        default bot) as the CLI builds it for this seat: its own rng from (seed, seat,
        bot) and what the game handed the seat at set-up. One per episode and seat."""
        definition = self.spec.definition
        shadow = self._context.shadows.get(seat)
        if name is None:
            name = shadow.bot if shadow is not None and shadow.bot else None
        if name is None:
            raise EpisodeError(f"seat {seat} has no bot by default here; name one of "
                               f"{', '.join(definition.bot_names)}")
        if name not in definition.bots:
            raise EpisodeError(f"{definition.name} has no bot {name!r}; bots: "
                               f"{', '.join(definition.bot_names)}")
        key = (seat, name)
        if key not in self._bots:
            args = dict(shadow.bot_args) if shadow is not None and shadow.bot == name else {}
            ctx = BotContext(self.seed, seat, name, derive_rng(self.seed, "seat", seat, name),
                             self._context.config, self._context.setups.get(seat), args)
            self._bots[key] = definition.bots[name](ctx)
            if shadow is not None and name == shadow.bot:
                self._bots[(seat, None)] = self._bots[key]  # the seat's default bot
        return self._bots[key]

    def bot_action(self, seat: int, name: str | None = None) -> str | dict[str, Any]:
        """What that bot answers to `seat`'s pending decision, as a caller's action."""
        turn = self.turns.get(seat)
        if turn is None:
            raise EpisodeError(f"seat {seat} has no decision pending")
        player = self._bots.get((seat, name)) or self.bot(seat, name)
        if getattr(player, "instant", False) is True:  # players/base.py `is_instant`
            answer = _answer_now(player.decide(turn.decision), player.name)
        else:
            with outside_running_loop():
                answer = self.loop().run_until_complete(player.decide(turn.decision))
        action = action_of(answer)
        turn.suggested = (action, answer)
        return action

    # --- closing ---

    def close(self) -> None:
        """Cancel an unfinished game and free what it held (its task, its opponents'
        connections, an unfinished transcript); the environment's loop stays, for the
        next episode. Idempotent."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        try:
            with outside_running_loop():
                if not self.task.done():
                    self.task.cancel()
                    with contextlib.suppress(BaseException):
                        loop.run_until_complete(self.task)
                if self._factory is not None:  # the opponents' connections, on their loop
                    loop.run_until_complete(self._factory.aclose())
        finally:
            self.turns.clear()
            self._release()
            if self._part is not None:
                with contextlib.suppress(OSError):
                    self._part.unlink()
                self._part = None
            if self._own_loop:
                close_loop(loop)


def close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """End an environment's loop (its episodes closed first): async generators, the
    default executor's threads, the loop's own file descriptors."""
    if loop.is_closed():
        return
    try:
        with outside_running_loop():
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()


def _answer_now(coro: Any, name: str) -> Action:
    """The answer of a bot that never suspends (`instant`), without running a loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise EpisodeError(f"bot {name} is marked instant but waited for something")


_PARKED = object()  # `_carry`: the game waits for the caller again


class _Ended:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


@types.coroutine
def _carry(coro: Coroutine[Any, Any, Any], waits: Any, throw: BaseException | None
           ) -> Generator[Any, None, Any]:
    """`await coro` for a coroutine already under way, in the task running this: what
    the game awaits (`waits`; or `throw` first, raised where it waits) goes to the task,
    and its wake-up (or cancellation) back into the game, until the game waits for the
    caller (`_PARKED`) or ends (`_Ended`)."""
    while True:
        if throw is not None:
            exc, throw = throw, None
            try:
                waits = coro.throw(exc)
            except StopIteration as stop:
                return _Ended(stop.value)
            if type(waits) is Turn:
                return _PARKED
        try:
            yield waits
        except BaseException as exc:  # the task's cancellation, passed on to the game
            throw = exc
            continue
        try:
            waits = coro.send(None)
        except StopIteration as stop:
            return _Ended(stop.value)
        if type(waits) is Turn:
            return _PARKED


class PausedClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock (`time()`, which timers and deadlines read) counts only
    the time the loop has been running: between runs it stands still (an episode's
    direct drive, `Episode._drive`, takes microseconds of it). It can also run just the
    callbacks that are ready (`run_ready`)."""

    def __init__(self) -> None:
        super().__init__()
        self._paused = 0.0  # seconds spent not running
        self._stopped_at: float | None = time.monotonic()  # None while running
        self._ready: collections.deque[asyncio.Handle]  # asyncio's, named for mypy

    def time(self) -> float:
        stopped = self._stopped_at
        if stopped is not None:  # not running: the clock stands still
            return stopped - self._paused
        return time.monotonic() - self._paused

    def _resume_clock(self) -> None:
        if self._stopped_at is not None:
            self._paused += time.monotonic() - self._stopped_at
            self._stopped_at = None

    def run_forever(self) -> None:
        self._resume_clock()
        try:
            super().run_forever()
        finally:
            self._stopped_at = time.monotonic()

    def run_ready(self) -> None:
        """Run the callbacks that are ready, and those they make ready, until none is,
        as `run_forever` would run them, but without polling for I/O between them and
        without the start and stop of a run (the running-loop mark, the async-generator
        hooks): an environment's step wakes the game's task, which runs to the caller's
        next decision. A step of a bot game does nothing else, so this is all it needs;
        I/O and timers wait for the next `run_forever`. Nothing is run while a timer is
        due (`run_forever` runs it first, in its order)."""
        ready = self._ready
        if not ready:
            return
        scheduled = self._scheduled  # type: ignore[attr-defined]
        if scheduled and scheduled[0].when() <= self.time():
            return
        if self.is_closed():
            raise RuntimeError("Event loop is closed")
        outer = asyncio._get_running_loop()  # a notebook's loop, set aside meanwhile
        hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(firstiter=self._asyncgen_firstiter_hook,  # type: ignore[attr-defined]
                               finalizer=self._asyncgen_finalizer_hook)  # type: ignore[attr-defined]
        asyncio._set_running_loop(self)
        self._resume_clock()
        try:
            while ready:
                handle = ready.popleft()
                if not handle.cancelled():
                    handle._run()
        finally:
            self._stopped_at = time.monotonic()
            asyncio._set_running_loop(outer)
            sys.set_asyncgen_hooks(*hooks)


__all__ = [
    "ACTION_HELP",
    "ENV_LABEL",
    "CallerSeat",
    "Episode",
    "EpisodeError",
    "EpisodeSpec",
    "PausedClockLoop",
    "Turn",
    "action_of",
    "close_loop",
    "completion_of",
    "episode_spec",
]

