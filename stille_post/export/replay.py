"""Re-playing a recorded game to recover the prompt of every decision.

A transcript records what happened (events with their audience) and, since format 3,
every answer each seat gave (the `decision` records, export/records.py), but not the
requests a model was sent. Those are recovered by playing the game again, not by
re-rendering them by hand:

1. the game is set up from the header exactly as `play` sets it up (`kit.setup`): the
   seed, the config, and the seats, whose specs are rebuilt from the header's labels;
2. every seat (LLM, bot, script, person, agent) is handed back its recorded replies in
   order, and a recorded failure is raised again as the failure it was; a transcript
   written before decision records (format 2) can be re-played only when every seat is
   a bot, and its bots are re-run (they are seeded from the header: `derive_rng(seed,
   "seat", seat, bot)`);
3. every decision of every seat goes through the real `LLMPlayer` with the game's own
   `PromptBook` before it is answered (`LLMPlayer.request`, the very method whose request
   `LLMPlayer.decide` sends), so the request kept here is the one `LLMPlayer` builds, by
   the same code, for LLM seats and bots alike ("what a model in that seat would have
   been sent");
4. the re-played header, every event line and the result are compared with the
   transcript's (each event line as JSON: `_check_events`). Games are deterministic
   (the same seed and the same answers give a byte-identical transcript), so any
   difference means the prompts might not be the real ones: the first difference is
   named (`Replay.problem`) and no prompt is exported for that game.

A seat's requests are matched to its decisions by order: a seat is asked one decision at
a time, so its k-th decision record belongs to the k-th first ask of it in the re-play.
Nothing named in a transcript is imported or opened: agent, script and person seats are
never rebuilt, only answered from the record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

from stille_post.core.errors import GameAborted, ProviderError, StillePostError
from stille_post.core.events import Event, Visibility
from stille_post.core.rng import make_rng
from stille_post.core.transcript import FORMAT_VERSION, Transcript, dumps
from stille_post.export.records import (
    DecisionRecord,
    RecordError,
    by_seat,
    decision_records,
    record_of,
)
from stille_post.games.kit.definition import GameDefinition, SetupContext
from stille_post.games.kit.setup import PreparedGame, build_config
from stille_post.games.kit.table import DECISION_EVENT, Table
from stille_post.players.base import Action, Decision, Player, PromptBook, is_instant
from stille_post.players.generation import GenerationConfig
from stille_post.players.llm import LLMPlayer
from stille_post.players.specs import AGENT_KINDS, HUMAN_LABELS, LLM_KINDS, SeatSpec
from stille_post.providers.base import ChatRequest, Completion

# The transcript format that has decision records (core/transcript.py).
RECORDS_FORMAT = 3
# How `asking.ask` words the two failures that leave an ask with no reply at all.
_UNREACHABLE = ("the model could not be reached (", ")")
_DEADLINE = "no answer within "
# Header keys written by the transcript writer itself, not by the game's set-up.
_EVENT_LINE = '{"kind":"event",'
_WRITER_KEYS = frozenset({"kind", "format", "game", "version", "seed", "config", "seats",
                          "timing"})


class ReplayError(Exception):
    """The game cannot be re-played; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """One ask's request as the game's PromptBook rendered it (`LLMPlayer` without a
    seat's own settings), and the phase's generation settings laid over it."""

    request: ChatRequest | None
    phase: GenerationConfig | None = None
    problem: str | None = None  # why `request` is None (the PromptBook failed)


@dataclass
class Replay:
    """What re-playing one transcript gave."""

    records: list[DecisionRecord]  # every decision of the game, in log order
    prompts: list[list[Prompt]] | None  # per record, one per ask; None: not replayed
    problem: str | None  # why there are no prompts (None: replayed and checked)
    events: Sequence[Event] | None  # the events `records` were read from
    # True when the records' seq, round and turn are the transcript's own (False: a
    # format-2 transcript, whose records exist only in the re-play)
    written: bool = True


class _NoProvider:
    """The provider of a re-played seat's `LLMPlayer`, which is only asked to build its
    requests (`LLMPlayer.request`), never to send one."""

    async def complete(self, request: ChatRequest) -> Completion:
        raise AssertionError("a re-played seat never asks a provider")


_NO_PROVIDER = _NoProvider()


class ReplaySeat:
    """The player of one seat in a re-played game: a bot re-run, or a seat answered from
    its record; either way each ask's request is rendered and kept first."""

    def __init__(self, seat: int, book: PromptBook, *, bot: Player | None = None,
                 records: Sequence[DecisionRecord] = (), aborted: str | None = None,
                 structured: str | None = None) -> None:
        self.seat = seat
        self.bot = bot
        self.name = bot.name if bot is not None else f"replay:{seat}"
        # A recorded seat answers at once; a bot keeps its own nature (a bot that awaits
        # keeps its deadline and its place in a gather).
        self.instant = True if bot is None else is_instant(bot)
        self._records = list(records)
        self._aborted = aborted
        # A structured seat's requests carry the legal moves of each moment (players/llm.py),
        # and its replies count as answered under them (the adherence tally).
        self.structured = structured
        self._llm = LLMPlayer(_NO_PROVIDER, book, name=self.name, generation=(
            GenerationConfig(structured=structured) if structured else None))
        self._record: DecisionRecord | None = None
        self._ask = 0
        self.prompts: list[list[Prompt]] = []  # per decision asked, one per ask
        self.problem: str | None = None

    async def decide(self, decision: Decision[Any]) -> Action:
        if decision.repair is None:
            self._ask = 0
            self.prompts.append([])
            if self.bot is None:
                self._record = self._next_record(decision)
        else:
            self._ask += 1
        self.prompts[-1].append(self._render(decision))
        if self.bot is not None:
            return await self.bot.decide(decision)
        return self._answer(decision)

    def _next_record(self, decision: Decision[Any]) -> DecisionRecord | None:
        k = len(self.prompts) - 1
        if k >= len(self._records):
            if self._aborted is not None:
                return None  # the recorded game was aborted at this ask (_answer)
            self._fail(f"seat {self.seat} is asked a decision ({decision.kind}) that the "
                       "transcript does not record")
        record = self._records[k]
        if record.kind != decision.kind:
            self._fail(f"seat {self.seat}'s decision #{k + 1} is {decision.kind!r} in the "
                       f"replay but {record.kind!r} in the transcript")
        return record

    def _answer(self, decision: Decision[Any]) -> Action:
        record = self._record
        if record is None:
            assert self._aborted is not None
            raise GameAborted(self._aborted)
        if self._ask < len(record.replies):
            action = record.replies[self._ask].action
            asked = self.prompts[-1][-1].request  # this ask's request, rendered just now
            if self.structured and asked is not None:
                action = replace(action, legal=asked.legal)
            return action
        if self._ask == len(record.replies) and record.no_reply:
            failure = record.failure or ""
            if failure.startswith(_DEADLINE):
                raise TimeoutError
            head, tail = _UNREACHABLE
            if failure.startswith(head) and failure.endswith(tail):
                failure = failure[len(head):len(failure) - len(tail)]
            raise ProviderError(failure)
        self._fail(f"seat {self.seat} is asked {decision.kind!r} more often than the "
                   "transcript records")

    def _fail(self, problem: str) -> NoReturn:
        self.problem = self.problem or problem
        raise _Diverged(problem)

    def _render(self, decision: Decision[Any]) -> Prompt:
        phase = decision.generation
        if phase is not None:  # the prompt alone; the phase's settings are kept beside it
            decision = replace(decision, generation=None)
        try:
            # What `LLMPlayer.decide` sends, built by its own code (without a seat's
            # settings: a transcript does not hold them); no provider is asked.
            request = self._llm.request(decision)
        except Exception as exc:  # a PromptBook that cannot render this decision
            return Prompt(None, phase, f"{type(exc).__name__}: {exc}"[:300])
        return Prompt(request, phase)


class _Diverged(Exception):
    """Raised inside the re-played engine when the answers run out of step; the engine
    turns it into an aborted game, and the seat's `problem` says what happened."""


@dataclass
class _ReplayContext(SetupContext):
    """`SetupContext` with the seats taken from a transcript instead of the user. With
    decision records (`recorded` not None) every seat is answered from its records, a
    bot's too; without them (an older transcript) bots are re-run."""

    header_specs: list[SeatSpec] = field(default_factory=list)
    recorded: Mapping[int, Sequence[DecisionRecord]] | None = None
    aborted: str | None = None
    seats_out: dict[int, ReplaySeat] = field(default_factory=dict)

    def seat_specs(self, roles: Mapping[int, str] | None = None) -> list[SeatSpec]:
        return list(self.header_specs)

    def player(self, seat: int, spec: SeatSpec, setup: Any = None) -> Player:
        if spec.bot is not None and self.recorded is None:
            return super().player(seat, spec, setup)
        return self._answered(seat)

    def _answered(self, seat: int) -> ReplaySeat:
        spec = self.header_specs[seat - 1] if 0 < seat <= len(self.header_specs) else None
        return ReplaySeat(seat, self.definition.prompts,
                          records=(self.recorded or {}).get(seat, ()), aborted=self.aborted,
                          structured=spec.structured if spec is not None else None)

    def table(self, players: Mapping[int, Player]) -> Table:
        # Every seat goes through a ReplaySeat, also the ones a game builds itself.
        wrapped: dict[int, Player] = {}
        for seat, p in players.items():
            if isinstance(p, ReplaySeat):
                rs = p
            elif self.recorded is not None:
                rs = self._answered(seat)
            else:
                rs = ReplaySeat(seat, self.definition.prompts, bot=p)
            self.seats_out[seat] = rs
            wrapped[seat] = rs
        return super().table(wrapped)


def header_specs(transcript: Transcript, definition: GameDefinition) -> list[SeatSpec]:
    """Each seat's spec rebuilt from the header's label (`SeatSpec.label` read back), so
    that the re-played header says the same. Raises ReplayError for a label that names
    nothing this package can seat."""
    from stille_post.players.specs import parse_seat_spec

    seats = transcript.seats
    n = len(seats)
    if sorted(seats) != list(range(1, n + 1)):
        raise ReplayError(f"the header's seats are {sorted(seats)[:12]}, not 1..{n}")
    specs: list[SeatSpec] = []
    by_label = {v: k for k, v in HUMAN_LABELS.items()}
    for seat in range(1, n + 1):
        row = seats[seat]
        label = row.get("player")
        if not isinstance(label, str) or not label:
            raise ReplayError(f"seat {seat} has no player label")
        head, _, rest = label.partition(":")
        if head == "bot":
            try:
                specs.append(parse_seat_spec(label, definition.bot_names))
            except StillePostError as exc:
                raise ReplayError(f"seat {seat}: {exc}") from None
        elif label in by_label:
            specs.append(SeatSpec(raw=label, human=by_label[label]))
        elif head in AGENT_KINDS and rest:
            agent, _, model = label.partition("+")
            specs.append(SeatSpec(raw=label, agent=agent, agent_model=model or None))
        elif head == "script" and rest:
            specs.append(SeatSpec(raw=label, script=rest))
        elif head in ("model", *LLM_KINDS) and rest:
            # A structured seat's label ends with its mode: "model:x (schema)".
            mode = _text(row.get("structured"))
            if mode and rest.endswith(f" ({mode})"):
                rest = rest[:-len(f" ({mode})")]
            else:
                mode = None
            if head == "model":
                specs.append(SeatSpec(raw=label, provider=_text(row.get("provider")),
                                      model=_text(row.get("model")), alias=rest,
                                      structured=mode))
            else:
                specs.append(SeatSpec(raw=label, provider=head, model=rest, structured=mode))
        else:
            raise ReplayError(f"seat {seat}'s player {label!r} is no seat this package knows")
    return specs


# The specs of the seat rows seen last (a tournament's games share a few line-ups):
# `SeatSpec`s are immutable, and parsing them is a tenth of a game's set-up.
_SPECS: dict[tuple[Any, ...], list[SeatSpec]] = {}
_SPECS_KEPT = 256


def _specs(transcript: Transcript, definition: GameDefinition) -> list[SeatSpec]:
    seats = transcript.header.get("seats")
    if not isinstance(seats, dict):
        return header_specs(transcript, definition)
    key = (definition.name, *((k, v.get("player"), v.get("provider"), v.get("model"))
                              if isinstance(v, dict) else (k, v)
                              for k, v in seats.items()))
    try:
        hit = _SPECS.get(key)
    except TypeError:  # a value that cannot be a key (the header is untrusted)
        return header_specs(transcript, definition)
    if hit is None:
        hit = header_specs(transcript, definition)
        if len(_SPECS) >= _SPECS_KEPT:
            _SPECS.clear()
        _SPECS[key] = hit
    return list(hit)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def replayable(transcript: Transcript) -> str | None:
    """Why this transcript cannot be re-played at all (None: it can be tried)."""
    header = transcript.header
    if "imported_from" in header:
        return "imported from another program's logs: no engine here played it"
    if not isinstance(header.get("seed"), int | str) or isinstance(header.get("seed"), bool):
        return "the header has no seed"
    if not isinstance(header.get("config"), dict):
        return "the header has no config"
    return None


def records_of(transcript: Transcript) -> list[DecisionRecord]:
    """The transcript's own decision records (raises RecordError for a damaged one)."""
    return decision_records(transcript.events)


def unreplayed(transcript: Transcript, why: str) -> Replay:
    """A game exported from its own records, without prompts, and why (`transcript`
    read whole: its events are parsed). Raises RecordError for a damaged record."""
    return Replay(records_of(transcript), None, why, transcript.events)


async def replay(transcript: Transcript, definition: GameDefinition,
                 written: Sequence[Any] | None = None) -> Replay:
    """Re-play `transcript`, read with its event lines as written
    (`Transcript.load(keep_lines=True)`; its events need not be parsed), and `written`,
    those lines decoded when the caller has them (export/sources.py decodes a whole file
    at once). Each re-played event must equal its written line as JSON: compared as
    values first (what the transcript writer would write, `Event.to_json`, against the
    line decoded), and when the values differ, byte for byte and then decoded from the
    re-played line's own bytes, as the writer would write it (an older writer may have
    spelled a line otherwise). Without prompts, the Replay has no records either: the
    caller reads them from the whole transcript (`unreplayed`)."""
    why = replayable(transcript)
    if why is not None:
        return Replay([], None, why, None)
    try:
        events, seats, written = await _play(transcript, definition, written)
        if written is None:  # bots re-run: the records are the re-play's own
            records = decision_records(events)
            prompts = _match(records, seats)
            return Replay(records, prompts, None, events, written=False)
        else:  # the written records, proved equal line by line, at the re-play's events
            mine = [e for e in events if e.type == DECISION_EVENT]
            records = [DecisionRecord(r.seat, r.kind, r.replies, r.forfeited, r.failure, e)
                       for r, e in zip(written, mine, strict=True)]
        prompts = _match(records, seats)
    except (ReplayError, RecordError) as exc:
        return Replay([], None, str(exc), None)
    return Replay(records, prompts, None, events)


def _format(transcript: Transcript) -> int:
    value = transcript.header.get("format")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class _Written:
    """A transcript's event lines as written, and each decoded (None: not JSON)."""

    def __init__(self, transcript: Transcript, decoded: Sequence[Any] | None) -> None:
        lines = transcript.event_lines
        if lines is None:  # events read without their lines: as the writer writes them
            lines = [dumps({"kind": "event", **e.to_json()}) for e in transcript.events]
        self.lines: Sequence[str] = lines
        if decoded is None or len(decoded) != len(lines):
            decoded = _decode(lines)
        self.values: Sequence[Any] = decoded

    def records(self) -> list[DecisionRecord]:
        """The decision records of the written lines, read from their decoded values (no
        `Event` is built: each record is placed at the re-play's event once that event is
        proved equal to the line)."""
        out = []
        for obj in self.values:
            if type(obj) is dict and obj.get("type") == DECISION_EVENT:
                out.append(record_of(obj.get("actor"), obj.get("data"), obj.get("seq"),
                                     _UNPLACED))
        return out


# Where a record read before the re-play stands until the re-play places it.
_UNPLACED = Event(0, DECISION_EVENT, 0, 0, None, Visibility.log_only())


def _decode(lines: Sequence[str]) -> list[Any]:
    """Each line decoded: all at once by one `json.loads` when every line is one JSON
    value, else line by line (None for a line that is not JSON)."""
    try:
        values = json.loads("[" + ",".join(lines) + "]")
        if isinstance(values, list) and len(values) == len(lines):
            return values
    except (ValueError, RecursionError):
        pass
    return [_decoded(line) for line in lines]


async def _play(transcript: Transcript, definition: GameDefinition,
                decoded: Sequence[Any] | None
                ) -> tuple[list[Event], dict[int, ReplaySeat], list[DecisionRecord] | None]:
    header = transcript.header
    result = transcript.result or {}
    seed = header["seed"]
    specs = _specs(transcript, definition)
    has_records = _format(transcript) >= RECORDS_FORMAT
    if not has_records and any(s.bot is None for s in specs):
        raise ReplayError(f"written before decision records (format "
                          f"{header.get('format')}), and not every seat is a bot")
    # With records, every seat is handed its recorded answers (a bot's too: the re-play
    # then needs no bot code, only the engine and its prompts); without, bots re-run.
    lines = _Written(transcript, decoded)
    written = lines.records() if has_records else None
    recorded = by_seat(written) if written is not None else None
    try:
        config = build_config(definition, dict(header["config"]), None)
        ctx = _ReplayContext(definition, config, seed, make_rng(seed), None, {}, None,
                             header_specs=specs, recorded=recorded,
                             aborted=_abort_reason(result))
        engine = definition.setup(ctx)
    except Exception as exc:  # a config or data file this package no longer accepts
        raise ReplayError(f"set-up failed: {type(exc).__name__}: {exc}"[:300]) from None
    prepared = PreparedGame(definition, engine, ctx.data, seed)
    _check_header(header, prepared)
    events: list[Event] = []
    outcome = await prepared.play(events.append)
    seats = ctx.seats_out
    for rs in seats.values():
        if rs.problem is not None:
            raise ReplayError(rs.problem)
    _check_events(lines, _as_written(events, has_records))
    _check_result(result, outcome)
    return events, seats, written


def _check_header(header: Mapping[str, Any], prepared: PreparedGame) -> None:
    if not _same(prepared.config_json(), header.get("config")):
        raise ReplayError("the re-played config differs from the header's")
    if not _same(prepared.seats_json(), header.get("seats")):
        raise ReplayError("the re-played seats differ from the header's")
    extra = {k: v for k, v in header.items() if k not in _WRITER_KEYS}
    if not _same(prepared.header_extra(), extra):
        raise ReplayError("the re-played game's set-up (the header's game facts) differs")


def _as_written(events: Sequence[Event], has_records: bool) -> list[dict[str, Any]]:
    """Each re-played event as the transcript writer writes it: `{"kind": "event",
    **event.to_json()}` (the key's place in the line does not matter to JSON)."""
    out = []
    if has_records:
        for event in events:
            obj = event.to_json()
            obj["kind"] = "event"
            out.append(obj)
    else:
        # A format-2 writer wrote no records, and numbered the other events 1, 2, ...
        for event in events:
            if event.type != DECISION_EVENT:
                obj = event.to_json()
                obj["kind"] = "event"
                obj["seq"] = len(out) + 1
                out.append(obj)
    return out


def _check_events(written: _Written, mine: Sequence[dict[str, Any]]) -> None:
    """Every re-played event equals its written line as JSON; the first that does not is
    named. The values are compared first (the line decoded, the event as the writer
    would write it); when they differ, the line the writer would write is compared with
    the written one: byte for byte (a shortcut), then decoded, which is the rule (the
    same JSON: a tuple the writer writes as a list, a NaN, equal too). That is the rule
    the byte-by-byte check had when the bytes differed."""
    values, lines = written.values, written.lines
    for i, (obj, theirs) in enumerate(zip(mine, values, strict=False)):
        if obj == theirs:
            continue
        line = _EVENT_LINE + dumps({k: v for k, v in obj.items() if k != "kind"})[1:]
        if line == lines[i] or _decoded(line) == theirs:
            continue
        seq = theirs.get("seq") if isinstance(theirs, dict) else None
        raise ReplayError(f"event #{i + 1} (seq {seq}) differs in the replay: "
                          f"{_short(lines[i])} was recorded, {_short(line)} re-played")
    if len(mine) != len(lines):
        raise ReplayError(f"the replay has {len(mine)} events, the transcript "
                          f"{len(lines)}")


def _decoded(line: str) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _check_result(result: Mapping[str, Any], outcome: Any) -> None:
    if result.get("status") != outcome.status:
        raise ReplayError(f"the replay ended {outcome.status}, the transcript "
                          f"{result.get('status')}")
    placements = {str(k): v for k, v in outcome.placements.items()}
    if not _same(placements, result.get("placements") or {}):
        raise ReplayError("the replay's placements differ from the transcript's")
    if not _same(outcome.summary.to_json(), result.get("summary") or {}):
        raise ReplayError("the replay's outcome summary differs from the transcript's")
    written = result.get("adherence")
    if written is not None and not _same(
            {str(k): v for k, v in (outcome.adherence or {}).items()}, written):
        raise ReplayError("the replay's adherence tally differs from the transcript's")
    usage = result.get("usage")
    tokens = {str(s): u.to_json() for s, u in outcome.usage.items()}
    if isinstance(usage, Mapping) and not _same(
            tokens, {k: {t: v.get(t) for t in ("input_tokens", "output_tokens",
                                               "cached_input_tokens")}
                     for k, v in usage.items() if isinstance(v, Mapping)}):
        raise ReplayError("the replay's tokens differ from the transcript's")


def _match(replayed: Sequence[DecisionRecord], seats: Mapping[int, ReplaySeat]
           ) -> list[list[Prompt]]:
    """Each decision's prompts: the seat's k-th record gets its k-th first ask."""
    taken: dict[int, int] = {}
    out: list[list[Prompt]] = []
    for record in replayed:
        k = taken.get(record.seat, 0)
        taken[record.seat] = k + 1
        rs = seats.get(record.seat)
        asks = rs.prompts[k] if rs is not None and k < len(rs.prompts) else []
        if len(asks) != record.asks:
            raise ReplayError(f"seat {record.seat}'s decision #{k + 1} was asked "
                              f"{len(asks)} times in the replay, {record.asks} in its record")
        out.append(asks)
    return out


def _abort_reason(result: Mapping[str, Any]) -> str | None:
    """The reason of an aborted game (a replay miss aborts at an ask: _answer)."""
    if result.get("status") != "aborted":
        return None
    reason = result.get("reason")
    return reason if isinstance(reason, str) else "aborted"


def _same(mine: Any, written: Any) -> bool:
    """Equal as JSON: compared directly (JSON read back equals what was written), and
    through JSON text only when that fails (a tuple written as a list)."""
    return bool(mine == written) or _json(mine) == _json(written)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _short(line: str) -> str:
    return line if len(line) <= 160 else line[:157] + "..."


__all__ = ["FORMAT_VERSION", "Prompt", "Replay", "ReplayError", "ReplaySeat", "replay",
           "unreplayed"]
