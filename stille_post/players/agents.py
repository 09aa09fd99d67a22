"""Agent plug-ins: seats `agent:NAME` (entry-point group `stille_post.agents`) and
`python:module:attr`, each optionally `+MODEL` (docs/agents.md).

An agent sits where a model sits: it receives the `ChatRequest` an LLM seat of that game
receives (the rules, its own view, the tools, the generation settings) and returns a
`Completion`. It is wrapped as a provider behind the real `LLMPlayer`, so everything an
LLM seat gets, an agent gets too: its own view only, the same sanitising, the same
corrective re-asks and forfeits. The engine cannot tell it from a model.

- The plug-in is a callable (usually a class) taking an `AgentContext` and returning an
  object with `respond(request) -> Completion` (async or plain). A plain `respond` runs in
  a thread of its own, off the event loop (`_OffLoop`): an agent that blocks stalls only
  its own seat, and the game's answer deadline forfeits its turn as for a slow model.
  An async `respond` runs on the loop: it must await, not block.
- An agent is trusted code: it runs in the engine's process, which holds the deal and
  the API keys. `--isolate-agents` runs each agent in a process of its own instead
  (players/isolation.py).
- `context.model` is the provider of the seat's `+MODEL` (built by the CLI's factory:
  `--online`, `--record`, `--replay` and models.toml apply to it), or None. Its calls go
  through a meter: the seat's usage (and so its dollars) is what the agent's model really
  spent, whatever the agent's reply claims.
- An agent that raises forfeits its turn with a logged reason; a reply of the wrong type
  earns the corrective re-ask, then the forfeit. Neither is ever a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import importlib
import inspect
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol

from stille_post.core.errors import GameAborted, ProviderError, StillePostError, UsageError
from stille_post.players.base import Player, PromptBook
from stille_post.players.llm import LLMPlayer
from stille_post.players.specs import SeatSpec, parse_seat_spec
from stille_post.providers.base import ChatRequest, Completion, MalformedReply, Provider, Usage

if TYPE_CHECKING:
    from stille_post.players.isolation import IsolatedAgent

ENTRY_POINT_GROUP = "stille_post.agents"

# Whether agent seats run isolated, each in a process of its own (players/isolation.py):
# set by `play --isolate-agents` and `tournament --isolate-agents` for the run.
ISOLATE_AGENTS: ContextVar[bool] = ContextVar("stille_post_isolate_agents", default=False)


@contextmanager
def isolating_agents(on: bool = True) -> Iterator[None]:
    token = ISOLATE_AGENTS.set(on)
    try:
        yield
    finally:
        ISOLATE_AGENTS.reset(token)


class Agent(Protocol):
    """What a plug-in's factory returns. `respond` may be a coroutine function."""

    def respond(self, request: ChatRequest) -> Any: ...


@dataclass(frozen=True)
class AgentContext:
    """What an agent knows when it sits down: the game, its seat, how it was named, and
    the model it may call (None without `+MODEL`)."""

    game: str
    seat: int
    name: str
    model: Provider | None = None


class MeteredProvider:
    """The agent's model, counting what it spends (a seat's usage, as for an LLM seat)."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.spent = Usage()

    async def complete(self, request: ChatRequest) -> Completion:
        completion = await self.inner.complete(request)
        if isinstance(completion.usage, Usage):
            self.spent = self.spent + completion.usage
        return completion

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()


class _OffLoop:
    """Calls an agent's plain `respond` in a daemon thread, one call at a time.

    The asker awaits a future, so a deadline cancels the wait as for any model; the
    thread cannot be stopped and finishes in its own time, its answer dropped. The next
    call waits for it (an agent's state is never used by two threads at once), and so
    a late agent forfeits the turns that come meanwhile. Daemon threads, each ending
    with its call: a stuck one never holds the process at exit, and none is left idle."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._last: threading.Thread | None = None

    async def call(self, respond: Callable[[ChatRequest], Any], request: ChatRequest) -> Any:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Any] = loop.create_future()
        gave_up = threading.Event()  # the asker stopped waiting: do not start the call
        before = self._last

        def settle(value: Any, error: BaseException | None) -> None:
            if not answer.done():
                if error is None:
                    answer.set_result(value)
                else:
                    answer.set_exception(error)

        def work() -> None:
            if before is not None:
                before.join()
            if gave_up.is_set():
                return
            value, error = None, None
            try:
                value = respond(request)
            except BaseException as exc:  # handed to the asker, which decides
                error = exc
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody asks
                loop.call_soon_threadsafe(settle, value, error)

        thread = threading.Thread(target=work, name=f"stille-post agent {self.name}",
                                  daemon=True)
        self._last = thread
        thread.start()
        try:
            return await answer
        except asyncio.CancelledError:
            gave_up.set()
            raise


def _is_async(method: Any) -> bool:
    return inspect.iscoroutinefunction(method)


class AgentProvider:
    """An agent as the provider behind an `LLMPlayer`."""

    def __init__(self, agent: Any, name: str, model: MeteredProvider | None) -> None:
        self.agent = agent
        self.name = name
        self.model = model
        self._off_loop = _OffLoop(name)
        self.model_seat: Any = None  # keeps the model's own seat (and so its provider)

    async def complete(self, request: ChatRequest) -> Completion:
        before = self.model.spent if self.model is not None else Usage()
        try:
            respond = self.agent.respond
            reply = respond(request) if _is_async(respond) \
                else await self._off_loop.call(respond, request)
            if inspect.isawaitable(reply):
                reply = await reply
        except (GameAborted, ProviderError):
            raise  # a replay miss aborts; the agent's model failing forfeits, as for a model
        except StillePostError as exc:
            raise ProviderError(f"agent {self.name} failed: {exc}") from exc
        except (Exception, SystemExit) as exc:  # the plug-in's own bug: a logged forfeit
            raise ProviderError(f"agent {self.name} raised {type(exc).__name__}: "
                                f"{str(exc)[:200]}") from exc
        if not isinstance(reply, Completion):
            raise MalformedReply(f"agent {self.name} returned {type(reply).__name__}, "
                                 "not a Completion")
        spent = _since(before, self.model.spent) if self.model is not None else Usage()
        return replace(reply, usage=spent,
                       model=reply.model if isinstance(reply.model, str) and reply.model
                       else self.name)

    async def aclose(self) -> None:
        if self.model is not None:
            await self.model.aclose()


def _since(before: Usage, now: Usage) -> Usage:
    return Usage(now.input_tokens - before.input_tokens,
                 now.output_tokens - before.output_tokens,
                 now.cached_input_tokens - before.cached_input_tokens,
                 now.unknown_calls - before.unknown_calls)


def load_agent_factory(ref: str) -> Callable[[AgentContext], Any]:
    """The plug-in named by `agent:NAME` or `python:module:attr`; one line if it cannot be
    found or imported."""
    kind, _, target = ref.partition(":")
    if kind == "agent":
        found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
        if target not in found:
            known = ", ".join(sorted(found)) or "none installed"
            raise UsageError(f"unknown agent {target!r}; agents ({ENTRY_POINT_GROUP} entry "
                             f"points): {known}; or write python:module:attr")
        try:
            factory = found[target].load()
        except Exception as exc:
            raise UsageError(f"agent {target!r} could not be loaded: "
                             f"{type(exc).__name__}: {exc}") from None
    else:
        module_name, _, attr = target.rpartition(":")
        # As `python -m` does: modules in the folder you run from are importable (the
        # console script's own folder is on sys.path, the current one is not).
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.append(os.getcwd())
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise UsageError(f"python:{target}: cannot import {module_name!r} "
                             f"({type(exc).__name__}: {exc})") from None
        factory = getattr(module, attr, None)
        if factory is None:
            raise UsageError(f"python:{target}: {module_name} has no attribute {attr!r}")
    if not callable(factory):
        raise UsageError(f"{ref}: not callable (an agent is a class or function taking "
                         "an AgentContext)")
    return factory


def make_agent(ref: str, context: AgentContext) -> Any:
    factory = load_agent_factory(ref)
    try:
        agent = factory(context)
    except Exception as exc:
        raise UsageError(f"{ref}: the agent could not be created: "
                         f"{type(exc).__name__}: {exc}") from None
    if not callable(getattr(agent, "respond", None)):
        raise UsageError(f"{ref}: the agent has no respond(request) method")
    return agent


def agent_player(spec: SeatSpec, *, game: str, seat: int, prompts: PromptBook,
                 model_player: Callable[[SeatSpec], Player]) -> Player:
    """The player of an `agent:NAME[+MODEL]` / `python:module:attr[+MODEL]` seat: the real
    LLM path with the agent as its provider. `model_player` builds the player an LLM (or
    script) seat of MODEL would get, with its provider (keys, replay, base_url) and its
    settings (models.toml): the agent gets that provider, metered, and its requests those
    settings."""
    assert spec.agent is not None
    model: MeteredProvider | None = None
    generation: Any = None
    model_seat: Player | None = None
    wrappers: list[Any] = []
    if spec.agent_model is not None:
        model_seat = model_player(parse_seat_spec(spec.agent_model, ()))
        wrappers, inner = _unwrapped(model_seat)
        provider = getattr(inner, "provider", None)
        if provider is None:
            raise UsageError(f"seat {seat} ({spec.raw}): {spec.agent_model} is not a model")
        model = MeteredProvider(provider)
        generation = getattr(inner, "generation", None)
    provider_of_seat: AgentProvider | IsolatedAgent
    if ISOLATE_AGENTS.get():
        from stille_post.players.isolation import IsolatedAgent

        provider_of_seat = IsolatedAgent(spec.agent, spec.raw, game=game, seat=seat,
                                         model=model)
    else:
        agent = make_agent(spec.agent, AgentContext(game, seat, spec.raw, model))
        provider_of_seat = AgentProvider(agent, spec.raw, model)
    # The model's seat owns its provider: a tournament's pool takes the provider back
    # when that player is freed (providers/pool.py), so it lives as long as the agent.
    provider_of_seat.model_seat = model_seat
    player: Player = LLMPlayer(provider_of_seat, prompts, name=spec.raw, generation=generation)
    return _rewrapped(player, wrappers, spec.label)


def _unwrapped(player: Any) -> tuple[list[Any], Any]:
    """The decorators a factory put around a model's player (a run's rate limits and
    budget caps: `LimitedPlayer`, `BudgetedPlayer`, each with `inner`), outermost first,
    and the model's own player inside them."""
    wrappers: list[Any] = []
    while getattr(player, "provider", None) is None and getattr(player, "inner", None) \
            is not None and len(wrappers) < 16:
        wrappers.append(player)
        player = player.inner
    return wrappers, player


def _rewrapped(player: Any, wrappers: list[Any], label: str) -> Any:
    """The agent's seat inside the same decorators as its model's seat (copies, one per
    seat, as the factory makes them): each of its decisions then waits for the rate
    limits, is refused at a hard cap and is charged with what the agent's model spent in
    it, as the model's own seat would be. A decorator that keeps a seat `label` (the
    budget's) gets the agent seat's, the label its transcript is priced by
    ("python:module:attr+model:ALIAS"). Per decision, not per call: an agent may call
    its model more than once in one decision."""
    for wrapper in reversed(wrappers):
        outer = copy.copy(wrapper)
        outer.inner = player
        outer.name = player.name
        if hasattr(outer, "label"):
            outer.label = label
        player = outer
    return player


__all__ = ["ENTRY_POINT_GROUP", "ISOLATE_AGENTS", "Agent", "AgentContext", "AgentProvider",
           "MeteredProvider", "agent_player", "isolating_agents", "load_agent_factory",
           "make_agent"]
