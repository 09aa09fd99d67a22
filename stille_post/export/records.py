"""The decision records of a transcript, read back as typed values.

`Table.ask` (games/kit/table.py) ends every ask with a log-only `decision` event: the
decision's kind, each reply the seat gave, the error kind and reason of each refused
one, and the forfeit's kind and failure when no usable answer came. This module turns
those events back into `DecisionRecord`s, and each recorded reply back into the `Action`
the game was handed, so that a re-played game is handed the same answers
(export/replay.py).

A transcript is untrusted: a record of the wrong shape raises `RecordError`, naming the
event, and the transcript is skipped as damaged rather than half-read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stille_post.core.events import Event
from stille_post.core.usage import Usage
from stille_post.games.kit.table import DECISION_EVENT
from stille_post.players.base import Action
from stille_post.providers.base import ToolCall


class RecordError(ValueError):
    """A decision record that cannot be read; the message names the event."""


@dataclass(frozen=True, slots=True)
class Reply:
    """One recorded reply: the action as the game received it, and what the rules made
    of it (`error` None: accepted)."""

    action: Action
    error: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    seat: int
    kind: str
    replies: tuple[Reply, ...]
    forfeited: str | None  # the kind of the failure that forfeited it; None: answered
    failure: str | None  # why no usable answer came
    event: Event  # the record itself (its seq, round and turn place it in the game)

    @property
    def asks(self) -> int:
        """How many times the seat was asked: each reply, plus one ask that got no reply
        at all when the decision was forfeited for `no_answer`."""
        return len(self.replies) + (self.forfeited == "no_answer")

    @property
    def no_reply(self) -> bool:
        """True when the last ask got no reply (a provider failure or a missed deadline)."""
        return self.forfeited == "no_answer"

    def usage(self) -> Usage:
        total = _NO_TOKENS
        for r in self.replies:
            if r.action.usage is not None:
                total = total + r.action.usage
        return total


_NO_TOKENS = Usage()  # immutable: one for every decision without tokens (a bot's)


def decision_records(events: Iterable[Event]) -> list[DecisionRecord]:
    """Every decision record of a game, in log order."""
    return [read_record(e) for e in events if e.type == DECISION_EVENT]


def read_record(event: Event) -> DecisionRecord:
    return record_of(event.actor, event.data, event.seq, event)


def record_of(seat: Any, data: Any, seq: Any, event: Event) -> DecisionRecord:
    """The record of a decision event's actor (`seat`) and `data`, as read from its line
    (`seq` names it in an error) and placed at `event`."""
    if not isinstance(seat, int) or isinstance(seat, bool):
        raise RecordError(f"{_where(seq)}: no seat")
    if not isinstance(data, Mapping):
        raise RecordError(f"{_where(seq)}: data is not an object")
    kind = data.get("decision")
    if not isinstance(kind, str):
        raise RecordError(f"{_where(seq)}: decision is not text")
    attempts = data.get("attempts")
    if not isinstance(attempts, list):
        raise RecordError(f"{_where(seq)}: attempts is not a list")
    replies = tuple([_reply(a, seq, i) for i, a in enumerate(attempts)])
    forfeited = data.get("forfeited")
    failure = data.get("failure")
    if forfeited is not None or failure is not None:
        forfeited = _optional_string(forfeited, f"{_where(seq)}: forfeited")
        failure = _optional_string(failure, f"{_where(seq)}: failure")
    if forfeited is None and (not replies or replies[-1].error is not None):
        raise RecordError(f"{_where(seq)}: no accepted reply and no forfeit")
    return DecisionRecord(seat, kind, replies, forfeited, failure, event)


def _where(seq: Any, reply: int | None = None) -> str:
    """How an error names a record (and one of its replies, counted from 0)."""
    where = f"decision record at seq {seq}"
    return where if reply is None else f"{where}, reply {reply + 1}"


def _reply(obj: Any, seq: Any, i: int) -> Reply:
    if type(obj) is dict and len(obj) == 1:
        text = obj.get("text")
        if type(text) is str:  # a reply of text alone (every bot's): nothing else to read
            return Reply(Action(text))
    where = _where(seq, i)
    if not isinstance(obj, Mapping):
        raise RecordError(f"{where}: not an object")
    text = _string(obj.get("text"), f"{where}: text")
    calls = obj.get("tool_calls", [])
    if not isinstance(calls, list):
        raise RecordError(f"{where}: tool_calls is not a list")
    usage = obj.get("usage")
    if usage is not None:
        if not isinstance(usage, Mapping) or not all(
                isinstance(usage.get(k, 0), int) for k in Usage.__dataclass_fields__):
            raise RecordError(f"{where}: usage is not a token count")
        usage = Usage.from_json(usage)
    action = Action(
        text=text,
        tool_calls=tuple(_call(c, where) for c in calls),
        usage=usage,
        model=_optional_string(obj.get("model"), f"{where}: model"),
        provider_data=_mapping(obj.get("provider_data"), f"{where}: provider_data"),
    )
    return Reply(action, _optional_string(obj.get("error"), f"{where}: error"),
                 _optional_string(obj.get("reason"), f"{where}: reason"))


def _call(obj: Any, where: str) -> ToolCall:
    if not isinstance(obj, Mapping):
        raise RecordError(f"{where}: a tool call is not an object")
    arguments = obj.get("arguments")
    if not isinstance(arguments, dict):
        raise RecordError(f"{where}: tool call arguments are not an object")
    return ToolCall(_string(obj.get("name"), f"{where}: tool call name"), arguments,
                    id=_optional_string(obj.get("id"), f"{where}: tool call id"),
                    malformed=_optional_string(obj.get("malformed"), f"{where}: malformed"),
                    provider_data=_mapping(obj.get("provider_data"), f"{where}: provider_data"))


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise RecordError(f"{where} is not text")
    return value


def _optional_string(value: Any, where: str) -> str | None:
    return None if value is None else _string(value, where)


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError(f"{where} is not an object")
    return value


def by_seat(records: Sequence[DecisionRecord]) -> dict[int, list[DecisionRecord]]:
    """Each seat's records, in the order the seat was asked."""
    out: dict[int, list[DecisionRecord]] = {}
    for r in records:
        out.setdefault(r.seat, []).append(r)
    return out
