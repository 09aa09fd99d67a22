"""The rows of the three tables, built from one transcript (and its re-play).

Rows are plain dicts whose keys are the columns of export/schema.py (a test holds the
two together). Two columns hold objects rather than dicts, because the same ones recur
in many rows and are converted once each by the writer: `messages` holds the
`Message`s of the request (a seat's history is shared between its requests, object for
object: kit/incremental.py) and `tools` the `Tool`s offered. `message_json` and
`tool_json` say what each becomes.

What a value is, where the transcript leaves it open:
- a JSON object whose shape depends on the game or the provider (a game's config and
  details, an event's data, a tool call's arguments, a tool's parameter schema, opaque
  provider data) is JSON text: one declared schema cannot know every game's shapes;
- everything of a known shape (messages, tool calls, replies, re-asks, seats, usage,
  placements, audiences) is a typed column, nested lists and structs included.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from stille_post.core.events import Event
from stille_post.core.outcome import OutcomeSummary
from stille_post.core.rewards import RewardScheme, rewards
from stille_post.core.transcript import Transcript, dumps
from stille_post.core.usage import Usage
from stille_post.export.records import DecisionRecord, Reply
from stille_post.export.replay import Prompt, Replay
from stille_post.games.kit.adherence import refused_kind
from stille_post.games.kit.table import DECISION_EVENT
from stille_post.players.generation import GenerationConfig
from stille_post.players.specs import LLM_KINDS
from stille_post.providers.base import ChatRequest, LegalMoves, Message, Tool, ToolCall
from stille_post.providers.pricing import seat_cost_usd

# The version of the tables' columns (docs/data.md). A change of a column's name, type or
# meaning is a new version; a new column is one too.
EXPORT_VERSION = 2  # 2: `structured` and `legal` (issue 41)
Table = Literal["decisions", "games", "events"]
TABLES: tuple[Table, ...] = ("decisions", "games", "events")
# `prompt_source` of a decision whose requests come from a checked re-play.
REPLAYED = "replayed"


@dataclass(frozen=True)
class GameSource:
    """One transcript to export, with the id its rows carry. A `quick` one was read for
    a re-play: its events are kept as written lines and their decoded values
    (`written`), not as `Event`s (`transcript.events` is empty; export/sources.py)."""

    game_id: str
    transcript: Transcript
    path: Path | None = None
    quick: bool = False
    written: list[Any] | None = None  # each event line decoded (quick sources)


# --- converters of the shared objects ---------------------------------------------------

def json_text(value: Any) -> str | None:
    """An open-shaped value as JSON text (None stays None; an empty mapping is None)."""
    if value is None or (isinstance(value, Mapping) and not value):
        return None
    return dumps(value)


def call_json(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": dumps(call.arguments),
            "malformed": call.malformed, "provider_data": json_text(call.provider_data)}


def message_json(m: Message) -> dict[str, Any]:
    return {"role": m.role, "content": m.content,
            "tool_calls": [call_json(c) for c in m.tool_calls],
            "tool_call_id": m.tool_call_id, "provider_data": json_text(m.provider_data)}


def tool_json(t: Tool) -> dict[str, Any]:
    return {"name": t.name, "description": t.description, "parameters": dumps(t.parameters)}


def settings_json(request: ChatRequest | GenerationConfig) -> dict[str, Any]:
    if (request.max_output_tokens is None and request.temperature is None
            and request.reasoning_effort is None and not request.extra):
        return _NO_SETTINGS
    return {"max_output_tokens": request.max_output_tokens,
            "temperature": request.temperature,
            "reasoning_effort": request.reasoning_effort,
            "extra": json_text(dict(request.extra))}


def legal_json(legal: LegalMoves | None) -> str | None:
    """A structured seat's legal moves of the moment (providers/base.py `LegalMoves`), as
    JSON text: the schemas its request was decoded under."""
    if legal is None:
        return None
    return dumps({"tools": dict(legal.tools), "text": legal.text, "free": legal.free})


_NO_SETTINGS: dict[str, Any] = {"max_output_tokens": None, "temperature": None,
                                "reasoning_effort": None, "extra": None}


def reply_json(reply: Reply | None) -> dict[str, Any] | None:
    if reply is None:
        return None
    a = reply.action
    u = a.usage
    return {"text": a.text, "tool_calls": [call_json(c) for c in a.tool_calls],
            "model": a.model, "provider_data": json_text(a.provider_data),
            "input_tokens": u.input_tokens if u is not None else None,
            "output_tokens": u.output_tokens if u is not None else None,
            "cached_input_tokens": u.cached_input_tokens if u is not None else None}


# --- per game -----------------------------------------------------------------------------

def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _finite(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def seed_of(header: Mapping[str, Any]) -> int | None:
    """The seed as a number (a string seed, allowed by the engine, is not one)."""
    return _int(header.get("seed"))


def seed_text(header: Mapping[str, Any]) -> str | None:
    seed = header.get("seed")
    return None if seed is None or isinstance(seed, bool) else str(seed)


@dataclass(frozen=True)
class Outcome:
    """What the result line says about each seat, read leniently."""

    status: str | None
    valid: bool | None
    placements: dict[int, int]
    rewards: dict[int, float]

    @classmethod
    def of(cls, t: Transcript, scheme: RewardScheme) -> Outcome:
        result = t.result or {}
        raw = result.get("placements")
        placements = {int(k): v for k, v in raw.items()
                      if str(k).isdigit() and _int(v) is not None} \
            if isinstance(raw, Mapping) else {}
        summary = t.summary
        valid = summary.valid if result else None
        return cls(_str(result.get("status")), valid, placements,
                   rewards(placements, scheme, valid=bool(valid)) if placements else {})


def seat_role(info: Mapping[str, Any], roles: Sequence[str]) -> str | None:
    """The seat's role: the header's, else the game's only role."""
    role = info.get("role")
    if isinstance(role, str):
        return role
    return roles[0] if len(roles) == 1 else None


# --- the decisions table ------------------------------------------------------------------

_MARKED = frozenset({"tool_refused"})


def marked_error(event: Event) -> str | None:
    """The error kind a game marked on a decision the kit had accepted (the same three
    marks kit/adherence.py `AdherenceLog.to_json` reads), or None."""
    d = event.data
    if event.type == "tool_refused":
        return refused_kind(str(d.get("reason", "")))
    if d.get("valid") is False and "invalid" in d and "failure" not in d:
        return "bad_arguments"
    if "truncated_from" in d or "truncated_from_words" in d:
        return "over_limit"
    return None


def game_marks(events: Sequence[Event], records: Sequence[DecisionRecord]
               ) -> dict[int, list[str]]:
    """Marks by decision (index into `records`): each mark goes to the last decision of
    the marked seat recorded before it."""
    index = {id(r.event): i for i, r in enumerate(records)}
    last: dict[int, int] = {}
    out: dict[int, list[str]] = {}
    for e in events:
        if e.type == DECISION_EVENT:
            i = index.get(id(e))
            if i is not None:
                last[records[i].seat] = i
            continue
        if e.actor is None:
            continue
        mark = marked_error(e)
        if mark is not None and e.actor in last:
            out.setdefault(last[e.actor], []).append(mark)
    return out


def _reask(prompt: Prompt | None, reply: Reply | None) -> dict[str, Any]:
    request = prompt.request if prompt is not None else None
    return {"system": request.system if request is not None else None,
            "messages": [message_json(m) for m in request.messages]
            if request is not None else None,
            "reply": reply_json(reply),
            "error": reply.error if reply is not None else "no_answer",
            "reason": reply.reason if reply is not None else None}


@dataclass(frozen=True)
class _Seat:
    """What every row of one seat repeats."""

    label: str
    role: str | None
    llm: bool
    placement: int | None
    reward: float | None


def decision_rows(source: GameSource, replay: Replay, scheme: RewardScheme,
                  roles: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
    """One row per decision of the game (see docs/data.md for each column)."""
    t = source.transcript
    outcome = Outcome.of(t, scheme)
    records = replay.records
    prompts = replay.prompts
    # The events the records came with (the re-play's, when re-played) place the marks.
    marks = game_marks(replay.events or (), records) if records else {}
    game, game_id = t.game, source.game_id
    seed = seed_of(t.header)
    seats: dict[int, _Seat] = {}
    for seat, info in t.seats.items():
        label = str(info.get("player", ""))
        seats[seat] = _Seat(label, seat_role(info, roles), _is_llm(label),
                            outcome.placements.get(seat), outcome.rewards.get(seat))
    unknown = _Seat("", None, False, None, None)
    status, valid = outcome.status, outcome.valid
    per_seat: dict[int, int] = {}
    for i, record in enumerate(records):
        seat = record.seat
        s = seats.get(seat, unknown)
        k = per_seat.get(seat, 0)
        per_seat[seat] = k + 1
        asks = prompts[i] if prompts is not None else None
        first = asks[0] if asks else None
        request = first.request if first is not None else None
        replies = record.replies
        reply = replies[0] if replies else None
        n_asks = record.asks
        reasks = [_reask(asks[j] if asks is not None and j < len(asks) else None,
                         replies[j] if j < len(replies) else None)
                  for j in range(1, n_asks)] if n_asks > 1 else []
        usage = record.usage()
        cost = seat_cost_usd(s.label, usage) if s.llm else None
        marked = marks.get(i, [])
        error = reply.error if reply is not None else "no_answer"
        ev = record.event
        yield {
            "export_version": EXPORT_VERSION,
            "game": game,
            "game_id": game_id,
            "seed": seed,
            "seat": seat,
            "player": s.label,
            "role": s.role,
            "decision": i,
            "seat_decision": k,
            "kind": record.kind,
            "round": ev.round,
            "turn": ev.turn,
            "seq": ev.seq if replay.written else None,
            "system": request.system if request is not None else None,
            "messages": request.messages if request is not None else None,
            "tools": request.tools if request is not None else None,
            "tool_choice": request.tool_choice if request is not None else None,
            "settings": settings_json(request) if request is not None else None,
            "phase_settings": settings_json(first.phase)
            if first is not None and first.phase is not None else None,
            "structured": request.structured if request is not None else None,
            "legal": legal_json(request.legal) if request is not None else None,
            "reply": reply_json(reply),
            "error": error,
            "reason": reply.reason if reply is not None else None,
            "reasks": reasks,
            "asks": n_asks,
            "valid_first_try": error is None and not marked and record.forfeited is None,
            "forfeited": record.forfeited,
            "failure": record.failure,
            "marks": marked,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cached_input_tokens": usage.cached_input_tokens,
            "cost_usd": round(cost, 8) if cost is not None else None,
            "placement": s.placement,
            "reward": s.reward,
            "reward_scheme": scheme,
            "game_status": status,
            "game_valid": valid,
            "prompt_source": REPLAYED if request is not None else None,
            "prompt_problem": _prompt_problem(replay, first),
        }


def _is_llm(label: str) -> bool:
    head = label.partition(":")[0]
    return head in LLM_KINDS or head == "model"


def _prompt_problem(replay: Replay, first: Prompt | None) -> str | None:
    if replay.problem is not None:
        return replay.problem
    if first is not None and first.problem is not None:
        return first.problem
    return None


# --- the games table ----------------------------------------------------------------------

def _decisions(adherence: Mapping[str, Any]) -> int | None:
    """The game's decisions, as the result line's adherence counts them."""
    counts = [_int(a.get("decisions")) for a in adherence.values() if isinstance(a, Mapping)]
    return sum(c for c in counts if c is not None) if counts else None


def game_row(source: GameSource, scheme: RewardScheme,
             roles: Sequence[str] = ()) -> dict[str, Any]:
    t = source.transcript
    header, result = t.header, t.result or {}
    summary = t.summary
    outcome = Outcome.of(t, scheme)
    usage = _mapping(result.get("usage"))
    adherence = _mapping(result.get("adherence"))
    seat_rows = []
    for seat, info in sorted(t.seats.items()):
        u = usage.get(str(seat)) if isinstance(usage.get(str(seat)), Mapping) else None
        a = _mapping(adherence.get(str(seat)))
        spent = Usage.from_json(u) if u is not None else None
        seat_rows.append({
            "seat": seat,
            "player": _str(info.get("player")),
            "role": seat_role(info, roles),
            "model": _str(info.get("model")),
            "provider": _str(info.get("provider")),
            "info": json_text({k: v for k, v in info.items()
                               if k not in ("player", "model", "provider", "role")}),
            "placement": outcome.placements.get(seat),
            "reward": outcome.rewards.get(seat),
            "input_tokens": spent.input_tokens if spent is not None else None,
            "output_tokens": spent.output_tokens if spent is not None else None,
            "cost_usd": float(u["cost_usd"]) if u is not None and isinstance(
                u.get("cost_usd"), int | float) else None,
            "decisions": _int(a.get("decisions")),
            "valid_first_try": _int(a.get("valid_first_try")),
            "forfeits": _int(a.get("forfeits")),
            "note": summary.notes.get(seat),
        })
    timing = _mapping(result.get("timing"))
    started = _mapping(header.get("timing"))
    imported = header.get("imported_from")
    facts = {k: v for k, v in header.items()
             if k not in ("kind", "format", "game", "version", "seed", "config", "seats",
                          "timing", "imported_from")}
    return {
        "export_version": EXPORT_VERSION,
        "game": t.game,
        "game_id": source.game_id,
        "seed": seed_of(header),
        "seed_text": seed_text(header),
        "format": _int(header.get("format")),
        "package_version": _str(header.get("version")),
        "started_at": _str(started.get("started_at")),
        "seconds": _finite(timing.get("seconds")),
        "status": outcome.status,
        "reason": _str(result.get("reason")),
        "valid": outcome.valid,
        "turns": summary.turns if result else None,
        "winners": list(summary.winners),
        "eliminated": list(summary.eliminated),
        "config": json_text(header.get("config")),
        "facts": json_text(facts),
        "details": json_text(dict(summary.details)),
        "seats": seat_rows,
        "imported_from": json_text(imported) if isinstance(imported, Mapping) else None,
        "decisions": _decisions(adherence),
        "reward_scheme": scheme,
    }


# --- the events table ---------------------------------------------------------------------

def event_rows(source: GameSource) -> Iterator[dict[str, Any]]:
    t = source.transcript
    game, game_id = t.game, source.game_id
    for e in t.events:
        seats = e.visibility.seats
        text = e.data.get("text")
        yield {
            "export_version": EXPORT_VERSION,
            "game": game,
            "game_id": game_id,
            "seq": e.seq,
            "type": e.type,
            "round": e.round,
            "turn": e.turn,
            "actor": e.actor if isinstance(e.actor, int) and not isinstance(e.actor, bool)
            else None,
            "public": seats is None,
            "audience": sorted(seats) if seats is not None else None,
            "text": text if isinstance(text, str) else None,
            "data": dumps(dict(e.data)),
        }


__all__ = ["EXPORT_VERSION", "GameSource", "OutcomeSummary", "decision_rows", "event_rows",
           "game_row", "message_json", "tool_json"]
