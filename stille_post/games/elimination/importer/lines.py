"""The published Elimination Game logs, read: player ids, and a game's lines sorted into
rounds and phases (the first step of convert.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stille_post.games.kit.importing import ConvertError

GAME = "elimination"
SOURCE_FORMAT = "elimination-logs"
UNKNOWN = "unknown"

LINE_TYPES = frozenset({
    "conversation", "preference_proposal", "preference_outcome", "preference_result",
    "private", "private_vote_reason", "private_revote_reason", "vote", "elimination",
    "private_jury_reason", "final_results",
})

# "Player7_Game1754984898827689_o1-mini": seat, game, model key (which may hold "_").
_FULL_ID = re.compile(r"^Player(\d+)_Game([^_]*)_(.+)$", re.S)
_SHORT_ID = re.compile(r"^\s*P(?:layer)?\s*_?(\d+)\s*$", re.I)


def parse_player(value: Any) -> tuple[int | None, str | None]:
    """(seat, model key) of a player id: full ids carry the model, bare `P3` does not."""
    if isinstance(value, bool):
        return None, None
    if isinstance(value, int):
        return value, None
    if not isinstance(value, str):
        return None, None
    m = _FULL_ID.match(value)
    if m:
        return int(m.group(1)), m.group(3)
    m = _SHORT_ID.match(value)
    return (int(m.group(1)), None) if m else (None, None)


def seat_of(value: Any) -> int | None:
    return parse_player(value)[0]


# --- segmentation --------------------------------------------------------------------------

@dataclass


class Round:
    """The lines of one voting round, sorted into the phases our engine has."""

    public: list[dict[str, Any]] = field(default_factory=list)
    proposals: list[dict[str, Any]] = field(default_factory=list)  # proposals and outcomes
    result: dict[str, Any] | None = None
    private: list[dict[str, Any]] = field(default_factory=list)
    votes: list[dict[str, Any]] = field(default_factory=list)
    reasons: list[dict[str, Any]] = field(default_factory=list)
    tie_msgs: list[dict[str, Any]] = field(default_factory=list)
    revotes: list[dict[str, Any]] = field(default_factory=list)
    revote_reasons: list[dict[str, Any]] = field(default_factory=list)
    elimination: dict[str, Any] | None = None

    @property
    def voted(self) -> bool:
        return bool(self.votes or self.reasons)


def _hint(line: Mapping[str, Any]) -> str | None:
    """A conversation's own word for its phase, where the log gives one as text."""
    for key in ("subround", "phase", "stage", "round"):
        v = line.get(key)
        if isinstance(v, str):
            low = v.lower()
            if "tie" in low:
                return "tie_break"
            if "final" in low:
                return "final"
    return None


def segment(lines: Sequence[dict[str, Any]], n: int
             ) -> tuple[list[Round], Round, dict[str, Any]]:
    """Rounds (each closed by its `elimination` line), the final, and `final_results`.

    Phases are told apart by position, since the log's `subround` field is not uniform:
    a statement after the round's votes is a tie-break statement, a vote after a
    tie-break statement or a re-vote reason is a re-vote, and everything after the
    elimination that leaves two seats belongs to the final.
    """
    rounds: list[Round] = []
    cur = Round()
    final = Round()
    results: dict[str, Any] | None = None
    for line in lines:
        t = line["type"]
        if t == "final_results":
            if results is not None:
                raise ConvertError("two final_results lines")
            results = line
            continue
        in_final = n - len(rounds) <= 2
        if in_final:
            if t == "conversation":
                final.public.append(line)
            elif t == "vote":
                final.votes.append(line)
            elif t in ("private_jury_reason", "private_vote_reason", "private_revote_reason"):
                final.reasons.append(line)
            elif t == "elimination":
                if final.elimination is not None:
                    raise ConvertError("an elimination after the final")
                final.elimination = line
            else:
                raise ConvertError(f"a {t} line after the last round")
            continue
        hint = _hint(line) if t == "conversation" else None
        if t == "conversation":
            if hint == "final":
                raise ConvertError("a final statement while more than two seats are in")
            (cur.tie_msgs if hint == "tie_break" or cur.voted else cur.public).append(line)
        elif t in ("preference_proposal", "preference_outcome"):
            cur.proposals.append(line)
        elif t == "preference_result":
            cur.result = line
        elif t == "private":
            cur.private.append(line)
        elif t == "private_vote_reason":
            cur.reasons.append(line)
        elif t == "private_revote_reason":
            cur.revote_reasons.append(line)
        elif t == "vote":
            (cur.revotes if cur.tie_msgs or cur.revote_reasons else cur.votes).append(line)
        elif t == "elimination":
            cur.elimination = line
            rounds.append(cur)
            cur = Round()
        elif t == "private_jury_reason":
            raise ConvertError("a jury reason before the final")
    if results is None:
        raise ConvertError("no final_results line")
    if any((cur.public, cur.private, cur.votes, cur.reasons, cur.proposals)):
        raise ConvertError(f"round {len(rounds) + 1} has no elimination line")
    return rounds, final, results


# --- the whole game ------------------------------------------------------------------------

_ID_FIELDS = ("player_id", "speaker_id", "target_id", "voter_id", "eliminated_player",
              "proposer", "target")


def models(lines: Iterable[Mapping[str, Any]]) -> dict[int, str | None]:
    """Every seat named anywhere, with its model key (None until a full id names it)."""
    seats: dict[int, str | None] = {}

    def see(value: Any) -> None:
        seat, model = parse_player(value)
        if seat is None:
            return
        old = seats.get(seat)
        if model is not None and old is not None and old != model:
            raise ConvertError(f"seat {seat} is two models: {old} and {model}")
        seats[seat] = model if model is not None else old

    for line in lines:
        t = line["type"]
        if t == "final_results":
            ranks = line.get("final_ranks")
            for key in ranks if isinstance(ranks, Mapping) else ():
                see(key)
            for key in line.get("winners_full") or ():
                see(key)
            continue
        if t == "preference_result":
            for p in line.get("matched_pairs") or ():
                for x in p if isinstance(p, list) else ():
                    see(x)
            continue
        if t in ("vote", "private_vote_reason", "private_revote_reason",
                 "private_jury_reason") and seat_of(line.get("target_id")) is None:
            see(line.get("voter_id"))  # an unusable target names no seat
            continue
        for key in _ID_FIELDS:
            if key in line:
                see(line[key])
    return seats


def final_ranks(results: Mapping[str, Any], n: int) -> dict[int, int]:
    raw = results.get("final_ranks")
    out: dict[int, int] = {}
    if isinstance(raw, Mapping):
        for key, rank in raw.items():
            seat = seat_of(key)
            if seat is None or not 1 <= seat <= n or isinstance(rank, bool) \
                    or not isinstance(rank, int) or not 1 <= rank <= n:
                raise ConvertError(f"final_ranks entry {str(key)[:60]!r}: {rank!r}")
            out[seat] = rank
    return out


def winner_of(results: Mapping[str, Any], ranks: Mapping[int, int]) -> int:
    for key in ("winners", "winners_full"):
        raw = results.get(key)
        if isinstance(raw, list) and len(raw) == 1 and seat_of(raw[0]) is not None:
            return int(seat_of(raw[0]) or 0)
    firsts = [s for s, r in ranks.items() if r == 1]
    if len(firsts) == 1:
        return firsts[0]
    raise ConvertError("final_results names no single winner")

