"""Rule adherence, counted by the kit for every game (docs/adherence.md).

Every decision goes through `Table.ask`, so the kit sees, for every seat of every game,
what the rules made of each reply: valid on the first try, re-asked (and why), forfeited
(and why). The game never counts anything itself. Three marks a game already writes are
read back at the end of the game instead of being asked of it:
- a message cut at its word or character limit carries `truncated_from(_words)` (framing);
- a refused tool call (Stille Post's `tool_refused`) says why it was refused;
- a move the rules accepted in shape but not in content (`valid: false` with an
  `invalid` reason: the Elimination Game's self-vote) says why.
The last two are errors of a decision the kit had accepted: that decision no longer
counts as valid on the first try.

The tally goes into the transcript's result line (`adherence`, per seat); each re-ask's
`repair_request` event carries the error's kind. A decision with no `repair_request` was
valid on the first try.

Error kinds (`classify`), judged from the reply's shape, not from the game's wording:
- `unknown_tool`: a call to a tool the decision did not offer;
- `bad_arguments`: an unreadable call, or an offered tool called with arguments the
  rules refuse (a word not in the dictionary, a target that is not playing);
- `no_tool`: tools were offered, the reply called none (and said something);
- `text_not_vote`: the same for a vote, or a text vote that names no valid player;
- `over_limit`: a reply over a word or character limit (re-asked, or cut and marked);
- `empty`: nothing at all;
- `bad_text`: text of the wrong shape (two words where one was asked, ...);
- `call_as_text`: a tool call written out as the reply's text (`{"name": "cast_vote",
  "arguments": {...}}`, fenced or not) that means no answer here (`call_in_text`). Two are
  met half-way instead, when the rules accept what they mean (`meaning`): an offered
  tool's call is taken as that call, and a call to a tool nobody offered whose one
  argument is a string is taken as that text (a message in JSON clothes);
- `no_answer`: the provider failed after its retries, or the deadline passed.

Structured seats (constrained decoding, players/llm.py): a decision answered under the
game's legal-move schema counts in `structured`, and a refused reply that met that schema
counts in `beyond_schema` too (besides its kind): what is left when the shape is
enforced, the rules no schema states (a clue that contains its word). Both appear in a
seat's tally only when it had structured decisions, so a free seat's is as it was.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from stille_post.core.events import Event
from stille_post.players.base import Action
from stille_post.providers.base import Tool, ToolCall
from stille_post.providers.structured import admits

ERROR_KINDS = ("unknown_tool", "bad_arguments", "no_tool", "text_not_vote", "over_limit",
               "empty", "bad_text", "call_as_text", "no_answer")

_OVER_LIMIT = re.compile(r"\blimit\b|longer than|too long", re.IGNORECASE)
_VOTE_KIND = re.compile(r"vote|tie_break|jury", re.IGNORECASE)


def is_vote(kind: str) -> bool:
    """Decision kinds that ask for a vote (every game names them so)."""
    return _VOTE_KIND.search(kind) is not None


def classify(reason: str, action: Action | None, tools: Sequence[Tool], kind: str) -> str:
    """The error kind of a reply the rules refused (see the module docstring)."""
    if action is None:
        return "no_answer"
    offered = {t.name for t in tools}
    calls = action.tool_calls
    if any(c.malformed is not None for c in calls):
        return "bad_arguments"
    if offered and any(c.name not in offered for c in calls):
        return "unknown_tool"
    if _OVER_LIMIT.search(reason):
        return "over_limit"
    if calls:
        return "bad_arguments"
    if not action.text.strip():
        return "empty"
    if is_vote(kind):
        return "text_not_vote"
    return "no_tool" if offered else "bad_text"


def met_schema(action: Action) -> bool:
    """Whether a reply met the legal-move schema it was decoded under (False for a free
    reply): its first tool call's arguments, or its text."""
    legal = action.legal
    if legal is None or legal.free:
        return False
    if action.tool_calls:
        call = action.tool_calls[0]
        schema = legal.tools.get(call.name)
        return schema is not None and call.malformed is None and admits(schema,
                                                                        call.arguments)
    return legal.text is not None and admits(legal.text, action.text)


# The opening of a tool call written as text, the way small models served without a
# tool-call parser write one (llama-cpp-python's server with tool_choice "auto" or "none"
# returns it as content): a code fence, a <tool_call> or <tools> tag, a bracket or a
# doubled brace, then an object that starts with its name and either its arguments or
# its end (`{"name": "russian_roulette"}`: a call without arguments).
_CALL_IN_TEXT = re.compile(
    r"\A[\s(\[]*(?:```[A-Za-z]*\s*|<tool_call>\s*|<tools>\s*)?\{+\s*"
    r"\"name\"\s*:\s*\"(?P<name>[A-Za-z_][\w.-]{0,63})\"\s*(?:,\s*"
    r"\"(?:arguments|parameters)\"\s*:\s*|(?P<bare>\}))")


def call_in_text(text: str) -> ToolCall | None:
    """The tool call a reply's text opens with, or None. Its arguments are read when they
    are a JSON object (none given: no arguments); otherwise the call is marked malformed
    (it is no answer either way)."""
    found = _CALL_IN_TEXT.match(text)
    if found is None:
        return None
    name = found.group("name")
    if found.group("bare") is not None:
        return ToolCall(name, {}, "text_call")
    try:
        args, _ = json.JSONDecoder().raw_decode(text, found.end())
    except ValueError:
        return ToolCall(name, {}, "text_call", malformed="arguments are not valid JSON")
    if isinstance(args, str):
        # `"arguments": "Hello all"`: a bare string is what the call says; as its one
        # argument, `meaning` may take it as text.
        return ToolCall(name, {"text": args}, "text_call")
    if not isinstance(args, dict):
        return ToolCall(name, {}, "text_call", malformed="arguments are not a JSON object")
    return ToolCall(name, args, "text_call")


def meaning(call: ToolCall, tools: Sequence[Tool]) -> dict[str, Any] | None:
    """What a call written as text plainly means, as replacements of the reply's fields,
    for the rules to judge: the call itself when an offered tool's arguments are readable;
    the text when the call is to a tool nobody offered whose one argument is a string
    (`{"name": "write_message", "arguments": {"message": "Hello"}}`: a message in JSON
    clothes). Anything else means nothing (None)."""
    if call.malformed is not None:
        return None
    if any(t.name == call.name for t in tools):
        return {"text": "", "tool_calls": (call,)}
    values = list(call.arguments.values())
    if len(values) == 1 and isinstance(values[0], str) and values[0].strip():
        return {"text": values[0]}
    return None


def call_as_text_reason(call: ToolCall) -> str:
    # Short and direct: a small model tends to echo a long corrective text back.
    return (f"you wrote a `{call.name}` tool call out as text; write only your answer "
            "itself, in plain words, without JSON")


def refused_kind(reason: str) -> str:
    """The kind of a tool call a game refused after accepting the turn (`tool_refused`)."""
    return "unknown_tool" if reason.startswith("there is no tool") else "bad_arguments"


@dataclass
class SeatAdherence:
    """One seat's decisions in one game (or one player's over many)."""

    decisions: int = 0
    valid_first_try: int = 0
    reasked: int = 0  # decisions that needed at least one re-ask
    reasks: int = 0  # re-asks in all
    forfeits: int = 0  # decisions with no usable answer in the end
    over_limit: int = 0  # decisions re-asked for, or cut at, a word/character limit
    errors: Counter[str] = field(default_factory=Counter)  # every refused reply, by kind
    forfeited_for: Counter[str] = field(default_factory=Counter)  # the last error's kind
    structured: int = 0  # decisions answered under a legal-move schema
    beyond_schema: int = 0  # refused replies that met their schema (rules it cannot state)

    def add(self, other: SeatAdherence) -> None:
        for f in fields(self):  # counts add, and so do the counters (all positive)
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def copy(self) -> SeatAdherence:
        """A new row with these counts: `SeatAdherence()` with this one added."""
        return SeatAdherence(self.decisions, self.valid_first_try, self.reasked, self.reasks,
                             self.forfeits, self.over_limit, +self.errors,
                             +self.forfeited_for, self.structured, self.beyond_schema)

    def to_json(self) -> dict[str, Any]:
        out = {"decisions": self.decisions, "valid_first_try": self.valid_first_try,
               "reasked": self.reasked, "reasks": self.reasks, "forfeits": self.forfeits,
               "over_limit": self.over_limit, "errors": dict(sorted(self.errors.items())),
               "forfeited_for": dict(sorted(self.forfeited_for.items()))}
        if self.structured:  # only for seats that had structured decisions
            out.update(structured=self.structured, beyond_schema=self.beyond_schema)
        return out

    @classmethod
    def from_json(cls, data: Any) -> SeatAdherence | None:
        """Lenient: a transcript is untrusted, and a field of the wrong shape reads as
        absent (None for a row that is not a mapping at all)."""
        if not isinstance(data, Mapping):
            return None

        def count(key: str) -> int:
            v = data.get(key)
            return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0

        def counter(key: str) -> Counter[str]:
            v = data.get(key)
            if not isinstance(v, Mapping):
                return Counter()
            return Counter({str(k): n for k, n in v.items()
                            if isinstance(n, int) and not isinstance(n, bool) and n > 0})

        return cls(count("decisions"), count("valid_first_try"), count("reasked"),
                   count("reasks"), count("forfeits"), count("over_limit"),
                   counter("errors"), counter("forfeited_for"), count("structured"),
                   count("beyond_schema"))


class AdherenceLog:
    """The kit's tally for one game: `Table.ask` records each decision."""

    def __init__(self, seats: Iterable[int]) -> None:
        self.seats: dict[int, SeatAdherence] = {s: SeatAdherence() for s in seats}

    def record(self, seat: int, errors: Sequence[str], forfeited: str | None, *,
               structured: bool = False, beyond_schema: int = 0) -> None:
        """One decision: the kinds of its refused replies in order, and the kind of the
        failure that forfeited it (None: it got a usable answer); whether it was asked
        under a legal-move schema, and how many refused replies met it."""
        row = self.seats.get(seat)
        if row is None:  # not `setdefault`: a row (two Counters) made per decision for nothing
            row = self.seats[seat] = SeatAdherence()
        row.decisions += 1
        row.structured += structured
        row.beyond_schema += beyond_schema
        if not errors and forfeited is None:  # the common case, on every decision
            row.valid_first_try += 1
            return
        reasks = len(errors) - (1 if forfeited is not None and errors else 0)
        row.reasks += reasks
        row.reasked += reasks > 0
        row.errors.update(errors)
        row.over_limit += "over_limit" in errors
        if forfeited is not None:
            row.forfeits += 1
            row.forfeited_for[forfeited] += 1

    def to_json(self, events: Sequence[Event]) -> dict[int, dict[str, Any]]:
        """The tally with what the game marked in its events: cut messages count as
        over the limit, refused tool calls and refused moves as errors of their kind."""
        out = {s: row.copy() for s, row in self.seats.items()}
        for e in events:
            found = out.get(e.actor) if e.actor is not None else None
            if found is None:
                continue
            row, d = found, e.data
            if e.type == "tool_refused":
                row.errors[refused_kind(str(d.get("reason", "")))] += 1
                row.valid_first_try = max(0, row.valid_first_try - 1)
            elif d.get("valid") is False and "invalid" in d and "failure" not in d:
                row.errors["bad_arguments"] += 1
                row.valid_first_try = max(0, row.valid_first_try - 1)
            elif "truncated_from" in d or "truncated_from_words" in d:
                row.over_limit += 1
                row.errors["over_limit"] += 1
        return {s: row.to_json() for s, row in sorted(out.items())}
