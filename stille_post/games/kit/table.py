"""The table: seats, their players, the event log, the usage meter and the rng, with the
two ways an engine asks for decisions.

- `ask(seat, ...)`: one seat, with corrective re-asks (asking.py).
- `ask_all(seats, ...)`: several seats at the same moment. The rule for simultaneous
  answers (DESIGN.md "Determinism") is applied here, once: all are awaited together,
  then their notices are emitted and the answers handed back in ascending seat order,
  whatever order they arrived in.

Private sub-conversations that run at the same time (the Elimination Game's pair
chats) are `Channel`s (channels.py): each buffers its events, and the table merges them
into the log in a fixed order, so a replay is byte-identical.

Every ask ends in a `decision` record: a log-only event (no player sees it) with the
decision's kind, each reply the seat gave (text, tool calls with their arguments, the
model's name, tokens, opaque provider data), the error kind and reason of each refused
reply, and, when no usable answer came, the forfeit's kind and the failure. It is written
for every seat, whatever plays it, where the ask's notices are (in seat order after an
`ask_all`, in the channel's place after a channel), so a transcript holds every answer a
game was given: `stille_post/export` re-plays a game from its header and these records
and renders each decision's prompt through the game's own PromptBook (docs/data.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal, Protocol, TypeVar

from stille_post.core.errors import ParseError
from stille_post.core.events import Event, EventLog, EventSink, Visibility
from stille_post.core.rng import Rng
from stille_post.games.kit.adherence import (
    AdherenceLog,
    call_as_text_reason,
    call_in_text,
    classify,
    meaning,
    met_schema,
)
from stille_post.games.kit.asking import Answer, Pending, ask
from stille_post.players.base import Action, Decision, Player, is_instant
from stille_post.players.generation import GenerationConfig
from stille_post.providers.base import Tool, ToolCall, Usage

T = TypeVar("T")

OnFailure = Literal["return", "void"]


class GameVoid(Exception):
    """A seat's answer stayed unusable and the game's rule is that the game is void
    (The Chameleon's `Fail`). The engine base ends the game `completed`, not valid."""

    def __init__(self, seat: int, decision: str, reason: str, rejected: str = "") -> None:
        super().__init__(reason)
        self.seat, self.decision, self.reason, self.rejected = seat, decision, reason, rejected


class Venue(Protocol):
    """Where an ask happens when it is not the table's main log: a private channel
    (channels.py builds on this module, so the table names only what it uses of one)."""

    def emit(self, type: str, *, actor: int | None = None,
             visibility: Visibility | None = None, **data: Any) -> Event: ...

    def view(self, seat: int) -> Sequence[Event]: ...


class Observe(Protocol):
    """Builds a seat's observation from the events it may see (its view, then anything
    pending for it in this ask)."""

    def __call__(self, seat: int, events: Sequence[Event]) -> Any: ...


REJECTED_ARGUMENTS_CHARS = 300  # of a refused call's arguments kept in its repair_request


def rejected_calls(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    """A refused reply's tool calls as a repair request keeps them: the name, the
    arguments as JSON text (cut: a model may send an essay), why it was unreadable."""
    out: list[dict[str, Any]] = []
    for c in calls[:4]:
        row: dict[str, Any] = {"name": c.name[:64], "arguments": json.dumps(
            c.arguments, ensure_ascii=False, sort_keys=True)[:REJECTED_ARGUMENTS_CHARS]}
        if c.malformed:
            row["malformed"] = c.malformed[:200]
        out.append(row)
    return out


def default_repair_text(reason: str) -> str:
    return f"Your reply could not be used: {reason}. Please answer again."


# The record of every ask (see the module docstring): its event type, seen by no player.
DECISION_EVENT = "decision"
_LOG_ONLY = Visibility.log_only()


def call_json(call: ToolCall) -> dict[str, Any]:
    """One tool call of a reply, as the decision record keeps it (unset fields left out)."""
    out: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
    if call.id is not None:
        out["id"] = call.id
    if call.malformed is not None:
        out["malformed"] = call.malformed
    if call.provider_data:
        out["provider_data"] = call.provider_data
    return out


def reply_json(action: Action) -> dict[str, Any]:
    """One reply, as the decision record keeps it: everything `Action` carries, so the
    reply can be handed back to the game unchanged (`export/replay.py`)."""
    out: dict[str, Any] = {"text": action.text}
    if action.tool_calls:
        out["tool_calls"] = [call_json(c) for c in action.tool_calls]
    if action.model is not None:
        out["model"] = action.model
    if action.usage is not None:
        out["usage"] = action.usage.to_json()
    if action.provider_data:
        out["provider_data"] = action.provider_data
    return out


class Table:
    def __init__(
        self,
        game: str,
        players: Mapping[int, Player],
        rng: Rng,
        *,
        repair_attempts: int = 1,
        timeout_s: float = 300.0,
        repair_text: Callable[[str], str] = default_repair_text,
        invalid_text: Callable[[int, str], str] | None = None,
    ) -> None:
        self.game = game
        self.players = dict(players)
        self.seats = sorted(self.players)
        self.rng = rng
        self.repair_attempts = repair_attempts
        self.timeout_s = timeout_s
        self.repair_text = repair_text
        self.invalid_text = invalid_text or (
            lambda seat, reason: f"Player {seat} gave no usable answer ({reason}).")
        self.usage: dict[int, Usage] = {s: Usage() for s in self.seats}
        self.log = EventLog(self.seats)
        self.adherence = AdherenceLog(self.seats)

    def start(self, sink: EventSink | None) -> None:
        """A fresh log for a game about to be played, streaming to `sink`."""
        self.log = EventLog(self.seats, sink)

    # --- events ----------------------------------------------------------------------

    def emit(self, type: str, *, actor: int | None = None,
             visibility: Visibility | None = None, **data: Any) -> Event:
        return self.log.emit(type, actor=actor, visibility=visibility, **data)

    def view(self, seat: int) -> Sequence[Event]:
        return self.log.views[seat]

    def flush(self, answer: Answer[Any], channel: Venue | None = None) -> None:
        """Emit the notices an ask made (repair requests), where the ask happened."""
        emit = channel.emit if channel is not None else self.emit
        for p in answer.pending:
            emit(p.type, actor=p.actor, visibility=p.visibility, **p.data)
        answer.pending.clear()

    # --- asking ----------------------------------------------------------------------

    async def ask(
        self,
        seat: int,
        kind: str,
        *,
        observe: Observe,
        validate: Callable[[Action], T],
        tools: Sequence[Tool] = (),
        generation: GenerationConfig | None = None,
        channel: Venue | None = None,
        on_failure: OnFailure = "return",
        flush: bool = True,
    ) -> Answer[T]:
        """Ask one seat. With `flush` (the default) the ask's notices are emitted at once;
        `ask_all` turns it off to emit them in seat order. `on_failure="void"` ends the
        game as void when no usable answer came (after a public notice)."""

        def decision_for(pending: Sequence[Pending], repair: str | None) -> Decision[Any]:
            log = self.log
            extra = [p.preview(log.round, log.turn) for p in pending]
            seen = channel.view(seat) if channel is not None else log.views[seat]
            events = (*seen, *extra) if extra else seen
            return Decision(self.game, kind, seat, observe(seat, events), tuple(tools),
                            repair, generation, check=validate)

        errors: list[str] = []  # the kind of each refused reply (kit/adherence.py)
        under_schema: list[bool] = []  # per reply: decoded under a legal-move schema
        beyond_schema: list[bool] = []  # per refused reply: it met that schema
        replies: list[dict[str, Any]] = []  # each reply, for the decision record

        def checked(action: Action) -> T:
            under_schema.append(action.legal is not None and not action.legal.free)
            replies.append(reply_json(action))
            try:
                return judged(action)
            except ParseError as exc:
                replies[-1].update(error=errors[-1], reason=exc.reason)
                # Met the legal-move schema and still refused: a rule no schema states.
                beyond_schema.append(met_schema(action))
                raise

        def judged(action: Action) -> T:
            written = None if action.tool_calls else call_in_text(action.text)
            if written is not None:
                # A call written as text (kit/adherence.py `call_in_text`) is met half-way
                # when its meaning is plain, and otherwise refused (`call_as_text`):
                meant = meaning(written, tools)
                if meant is not None:
                    with contextlib.suppress(ParseError):
                        return validate(replace(action, **meant))
                errors.append("call_as_text")
                raise ParseError(call_as_text_reason(written))
            try:
                return validate(action)
            except ParseError as exc:
                errors.append(classify(exc.reason, action, tools, kind))
                raise

        def repair_notice(reason: str, action: Action) -> Pending:
            data = {"seat": seat, "decision": kind, "reason": reason, "error": errors[-1],
                    "rejected_text": action.text[:200]}
            if action.tool_calls:  # what the refused calls said, not only the text
                data["rejected_calls"] = rejected_calls(action.tool_calls)
            return Pending("repair_request", Visibility.only(seat),
                           {**data, "text": self.repair_text(reason)}, actor=seat)

        answer = await ask(self.players[seat], decision_for=decision_for, validate=checked,
                           repair_attempts=self.repair_attempts, timeout_s=self.timeout_s,
                           repair_notice=repair_notice)
        self.usage[seat] = self.usage[seat] + answer.usage
        forfeited = None
        if answer.failure is not None:  # a refused last reply, or no reply at all
            forfeited = errors[-1] if answer.failure.startswith("invalid reply") and errors \
                else "no_answer"
        self.adherence.record(seat, errors, forfeited, structured=any(under_schema),
                              beyond_schema=sum(beyond_schema))
        record: dict[str, Any] = {"decision": kind, "attempts": replies}
        if forfeited is not None:
            # "no_answer": one more ask got no reply at all (the failure says why).
            record.update(forfeited=forfeited, failure=answer.failure)
        answer.pending.append(Pending(DECISION_EVENT, _LOG_ONLY, record, actor=seat))
        if flush:
            self.flush(answer, channel)
            if on_failure == "void":
                self.void_if_failed(seat, kind, answer, channel)
        return answer

    async def ask_all(
        self,
        seats: Iterable[int],
        kind: str,
        *,
        observe: Observe,
        validate: Callable[[Action], T],
        tools: Sequence[Tool] = (),
        generation: GenerationConfig | None = None,
        on_failure: OnFailure = "return",
    ) -> dict[int, Answer[T]]:
        """Ask `seats` at the same moment; answers come back keyed and ordered by seat,
        with every seat's notices already emitted in that order."""
        order = sorted(set(seats))
        asks = (self.ask(s, kind, observe=observe, validate=validate, tools=tools,
                         generation=generation, flush=False) for s in order)
        if all(is_instant(self.players[s]) for s in order):
            # Players that never suspend answer at once: one after the other gives the
            # same answers as a gather, without a task per seat (bot tournaments).
            answers = [await a for a in asks]
        else:
            answers = await asyncio.gather(*asks)
        out = dict(zip(order, answers, strict=True))
        for seat in order:
            self.flush(out[seat])
        if on_failure == "void":
            for seat in order:
                self.void_if_failed(seat, kind, out[seat])
        return out

    def void_if_failed(self, seat: int, kind: str, answer: Answer[Any],
                       channel: Venue | None = None) -> None:
        if answer.failure is None:
            return
        emit = channel.emit if channel is not None else self.emit
        # The rejected text is not published: it may name a secret (The Chameleon's
        # word). It stays in the seat's own repair requests and in the outcome details.
        emit("invalid", actor=seat, seat=seat, decision=kind, reason=answer.failure,
             text=self.invalid_text(seat, answer.failure))
        raise GameVoid(seat, kind, answer.failure, answer.raw[:200])
