"""A decision as a person answers it: the seat's view and a form of legal choices.

Both human seats (the terminal and the web page) show the same things, built here once:
- the view is exactly the request an LLM in that seat would be sent (the game's
  `PromptBook` renders it from the seat's own observation), so a person sees the rules,
  their private information and the public record, and never another seat's secrets;
- the form lists the legal choices: a message, the tools as numbered choices with their
  arguments, seats as a list, and the word limit;
- an answer is checked here first (shapes, seats, word limits) and then by the engine's
  own validation (`Decision.check`), so invalid input is explained and asked again and
  never reaches the engine as a surprise forfeit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from stille_post.core.errors import ResponseError
from stille_post.core.events import Event
from stille_post.players.base import Action, Decision
from stille_post.providers.base import ChatRequest, Message, Tool, ToolCall


class EventStyle(Protocol):
    """How a game's event type reads (a game's `EventKind`, games/kit/definition.py):
    named here as a protocol because players sit below games."""

    @property
    def generic(self) -> str: ...

    @property
    def text_key(self) -> str: ...


# Argument names whose integer value is a seat.
SEAT_ARGUMENTS = frozenset({"target", "player", "player_id", "seat"})


@dataclass(frozen=True)
class Argument:
    name: str
    kind: str  # "text" | "integer" | "seat" | "seats"
    description: str = ""
    required: bool = True


@dataclass(frozen=True)
class Choice:
    """One way to answer: a plain message (tool None), or a tool with its arguments."""

    number: int
    tool: str | None
    description: str
    arguments: tuple[Argument, ...] = ()


@dataclass(frozen=True)
class Form:
    seat: int
    kind: str
    instruction: str  # the last line the game addressed to the seat
    message: str  # "required" | "optional" | "none": is a message asked for?
    choices: tuple[Choice, ...]  # empty: a message only
    tool_required: bool
    seats: tuple[int, ...]  # the seats a seat argument or a vote may name
    seat_answer: bool  # the message itself is a seat number (a vote in plain text)
    word_limit: int | None
    repair: str | None = None  # why the engine asked again

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat, "kind": self.kind, "instruction": self.instruction,
            "message": self.message, "tool_required": self.tool_required,
            "seats": list(self.seats), "seat_answer": self.seat_answer,
            "word_limit": self.word_limit, "repair": self.repair,
            "choices": [{"number": c.number, "tool": c.tool, "description": c.description,
                         "arguments": [{"name": a.name, "kind": a.kind,
                                        "description": a.description,
                                        "required": a.required} for a in c.arguments]}
                        for c in self.choices],
        }


@dataclass
class View:
    """What a seat has been shown so far, to show only what is new."""

    system: str = ""
    messages: list[Message] = field(default_factory=list)

    def update(self, request: ChatRequest) -> tuple[str, list[Message]]:
        """(new rules text, new messages) since the last request."""
        new_system = request.system if not request.system.startswith(self.system) or \
            not self.system else request.system[len(self.system):]
        if request.system == self.system:
            new_system = ""
        same = 0
        for old, new in zip(self.messages, request.messages, strict=False):
            if old.role != new.role or old.content != new.content:
                break
            same += 1
        fresh = list(request.messages[same:])
        self.system, self.messages = request.system, list(request.messages)
        return new_system.strip("\n"), fresh


def message_line(message: Message) -> str:
    if message.role == "assistant":
        calls = "".join(f" [{c.name} {c.arguments}]" for c in message.tool_calls)
        return f"[you]: {message.content.strip()}{calls}".rstrip()
    if message.role == "tool":
        return f"[result of your tool call]: {message.content.strip()}"
    return message.content.strip()


def build_form(decision: Decision[Any], request: ChatRequest, num_players: int) -> Form:
    seat = decision.seat
    choice = request.tool_choice
    tools = [] if choice == "none" else list(request.tools)
    if choice not in (None, "auto", "required", "none"):
        tools = [t for t in tools if t.name == choice]
    tool_required = bool(tools) and choice not in (None, "auto")
    message = "optional" if tools else "required"
    if tool_required:
        message = "none"
    seats = legal_seats(decision, num_players)
    choices = tuple(Choice(i, t.name, t.description, _arguments(t))
                    for i, t in enumerate(tools, start=1))
    instruction = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
    voted = _seats_accepted_as_answer(decision, num_players) if message == "required" else ()
    seat_answer = bool(voted)
    if seat_answer:
        seats = voted
    return Form(seat, decision.kind, instruction, message, choices, tool_required,
                seats, seat_answer, _word_limit(decision), decision.repair)


def legal_seats(decision: Decision[Any], num_players: int) -> tuple[int, ...]:
    """The seats a person may name: the active others when the observation says who is
    active, else every other seat."""
    obs = decision.observation
    active = getattr(obs, "active", None)
    if active is None:
        active = getattr(getattr(obs, "moment", None), "active", None)
    pool = sorted(int(s) for s in active) if active is not None else \
        list(range(1, num_players + 1))
    return tuple(s for s in pool if s != decision.seat)


def _seats_accepted_as_answer(decision: Decision[Any], num_players: int) -> tuple[int, ...]:
    """A plain-text vote: the engine refuses a word and accepts these seat numbers (the
    engine's own check decides, so a tie-break lists only the tied seats)."""
    if decision.check is None or _accepts(decision, Action(text="not-a-seat")):
        return ()
    return tuple(s for s in range(1, num_players + 1)
                 if _accepts(decision, Action(text=str(s))))


def _accepts(decision: Decision[Any], action: Action) -> bool:
    assert decision.check is not None
    try:
        decision.check(action)
    except ResponseError:
        return False
    except Exception:
        return False
    return True


def _word_limit(decision: Decision[Any]) -> int | None:
    limit = getattr(decision.observation, "limit_words", None)
    return int(limit) if isinstance(limit, int) and limit > 0 else None


def _arguments(tool: Tool) -> tuple[Argument, ...]:
    props: Mapping[str, Any] = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    out = []
    for name, schema in props.items():
        kind = "text"
        if schema.get("type") == "integer":
            kind = "seat" if name in SEAT_ARGUMENTS else "integer"
        elif schema.get("type") == "array":
            kind = "seats"
        out.append(Argument(name, kind, str(schema.get("description", "")),
                            name in required))
    return tuple(out)


def word_count(text: str) -> int:
    return len(text.split())


class Invalid(Exception):
    """An answer a person must give again; the message says why."""


def read_argument(arg: Argument, raw: str, form: Form) -> Any:
    raw = raw.strip()
    if not raw and arg.required:
        raise Invalid(f"{arg.name} is required")
    if arg.kind == "text":
        return raw
    if arg.kind in ("integer", "seat"):
        try:
            value = int(raw)
        except ValueError:
            raise Invalid(f"{arg.name} must be a whole number, got {raw!r}") from None
        if arg.kind == "seat" and value not in form.seats:
            raise Invalid(f"{arg.name} must be one of {_seat_list(form.seats)}")
        return value
    parts = [p for p in raw.replace(",", " ").split() if p]
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise Invalid(f"{arg.name}: give player numbers separated by commas") from None
    wrong = [v for v in values if v not in form.seats]
    if wrong:
        raise Invalid(f"{arg.name}: {wrong[0]} is not one of {_seat_list(form.seats)}")
    if len(set(values)) != len(values):
        raise Invalid(f"{arg.name}: a player is named twice")
    return values


def _seat_list(seats: Sequence[int]) -> str:
    return ", ".join(str(s) for s in seats)


def check_message(text: str, form: Form) -> str:
    text = text.strip()
    if form.message == "required" and not text:
        raise Invalid("write an answer (it cannot be empty)")
    if form.seat_answer and text not in {str(s) for s in form.seats}:
        raise Invalid(f"answer with one player number: {_seat_list(form.seats)}")
    if form.word_limit is not None and word_count(text) > form.word_limit:
        raise Invalid(f"{word_count(text)} words; the limit is {form.word_limit}: "
                      "write it shorter")
    return text


def action_of(form: Form, text: str, choice: Choice | None,
              arguments: Mapping[str, Any]) -> Action:
    calls: tuple[ToolCall, ...] = ()
    if choice is not None and choice.tool is not None:
        calls = (ToolCall(choice.tool, dict(arguments), id="human_0"),)
    return Action(text=text, tool_calls=calls, model="human")


def engine_check(decision: Decision[Any], action: Action) -> None:
    """The engine's own validation, run before the answer is handed over: a refusal is
    shown to the person, who answers again."""
    if decision.check is None:
        return
    try:
        decision.check(action)
    except ResponseError as exc:
        raise Invalid(exc.reason) from None


def event_line(event: Event, kind: EventStyle | None, seat: int, *,
               several: bool = False) -> str:
    """One event as a seat reads it, from the generic vocabulary alone: "[Player 2]:
    words", "[GAME MASTER]: text", a private line marked for its reader ("you", or the
    player when a terminal answers for several)."""
    me = f"Player {seat}" if several else "you"
    text = str(event.data.get("text", "") or "")
    if kind is not None and kind.generic == "speech" and event.actor is not None:
        spoken = str(event.data.get(kind.text_key, text))
        who = me if event.actor == seat else f"Player {event.actor}"
        private = "" if event.visibility.is_public else " (private)"
        return f"[{who}]{private}: {spoken}"
    if not text:
        return ""
    return f"[GAME MASTER]: {text}" if event.visibility.is_public \
        else f"[GAME MASTER → {me}]: {text}"


__all__ = ["Argument", "Choice", "EventStyle", "Form", "Invalid", "View", "action_of",
           "build_form", "check_message", "engine_check", "event_line", "legal_seats",
           "message_line", "read_argument", "word_count"]
