"""Asking a seat for a decision, with the corrective re-asks every game uses.

One loop for every engine (RULES.md §1 "Bad model output", §3 "Responses"): a parse error
earns `repair_attempts` re-asks that state the reason; a provider that still fails after
its own retries, or a player that misses the deadline, ends the ask at once. What a
failure *means* (a forfeit, a void game) is the engine's business, not this module's.

Notices made during an ask are kept as `Pending` and emitted when the table flushes the
answer: parallel asks then leave the event log in seat order, whatever order the answers
arrive in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from stille_post.core.errors import ParseError, ProviderError
from stille_post.core.events import Event, Visibility
from stille_post.games.kit.deadlines import deadline
from stille_post.players.base import Action, Decision, Player, is_instant
from stille_post.providers.base import Usage

T = TypeVar("T")


@dataclass
class Pending:
    """An event decided during an ask, emitted when the answer is applied."""

    type: str
    visibility: Visibility
    data: dict[str, Any]
    actor: int | None = None

    def preview(self, round: int, turn: int) -> Event:
        """The event as the asked seat sees it before it is emitted (seq 0)."""
        return Event(0, self.type, round, turn, self.actor, self.visibility, self.data)


@dataclass
class Answer(Generic[T]):
    value: T | None = None
    pending: list[Pending] = field(default_factory=list)
    failure: str | None = None  # why no usable answer came
    raw: str = ""  # the last reply's text, usable or not
    usage: Usage = field(default_factory=Usage)
    action: Action | None = None  # the last reply, usable or not

    @property
    def ok(self) -> bool:
        return self.failure is None

    def unwrap(self) -> T:
        """The usable answer; for callers that have already dealt with failure."""
        if self.value is None:
            raise ValueError(f"no usable answer: {self.failure}")
        return self.value


async def ask(
    player: Player,
    *,
    decision_for: Callable[[Sequence[Pending], str | None], Decision[Any]],
    validate: Callable[[Action], T],
    repair_attempts: int,
    timeout_s: float,
    repair_notice: Callable[[str, Action], Pending],
) -> Answer[T]:
    """`decision_for(pending, repair_reason)` builds each (re-)ask; `validate` raises
    `ParseError` for a reply that earns a re-ask; `repair_notice` words that re-ask."""
    answer: Answer[T] = Answer()
    repair: str | None = None
    instant = is_instant(player)
    for attempt in range(repair_attempts + 1):
        decision = decision_for(answer.pending, repair)
        try:
            if instant:
                action = await player.decide(decision)
            else:
                # As asyncio.timeout (no task wrapped around each answer, unlike
                # wait_for), without a loop timer per decision (kit/deadlines.py).
                with deadline(timeout_s):
                    action = await player.decide(decision)
        except ProviderError as exc:
            answer.failure = f"the model could not be reached ({exc})"
            return answer
        except TimeoutError:
            answer.failure = f"no answer within {timeout_s:g} s"
            return answer
        if action.usage is not None:
            answer.usage = answer.usage + action.usage
        answer.raw = action.text
        answer.action = action
        try:
            answer.value = validate(action)
            return answer
        except ParseError as exc:
            repair = exc.reason
            if attempt == repair_attempts:
                answer.failure = f"invalid reply ({exc.reason})"
                return answer
            answer.pending.append(repair_notice(exc.reason, action))
    raise AssertionError("unreachable: the loop always returns")
