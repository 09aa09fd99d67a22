"""One game of the published Elimination Game logs -> one of our transcripts.

The log lines of a game (already parsed, in file order) become the Elimination Game's
events exactly as stille_post/games/elimination/EVENTS.md defines them, in the order our
engine emits them: round_start, the public statements, the pairing, the private chats,
the votes with their reasons, the vote result, the tie chain, the elimination; then the
final, the jury, game_over and reveal.

Rules of the conversion (the "why" of each is in the code):
- Texts are kept whole. A message over its word limit is marked (`over_limit: true`,
  with `limit_words` and `words`), never cut: the import is a record of what the models
  wrote, and our engine's limits did not exist when they wrote it.
- The log is the truth about outcomes: who was eliminated and the final ranks come from
  its `elimination` and `final_results` lines. Vote counts and the tie chain are
  recomputed with our rules (rules.py); where the recount would have eliminated someone
  else, the event says `recount_differs: true` instead of silently disagreeing.
- A log field with no counterpart in our vocabulary is kept under the event's data under
  its own name (`public_vote`, `timestamp`, `rank_of_target`, `cumu_check`, ...), or as
  `source_<name>` where that name is already ours.
- Seats keep their numbers; the model key of the full player id becomes the seat's
  `player` label (`unknown` for bare `P3` ids).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stille_post import __version__
from stille_post.core.outcome import OutcomeSummary
from stille_post.core.transcript import FORMAT_VERSION, dumps
from stille_post.games.elimination import prompts as P
from stille_post.games.elimination import rules as R
from stille_post.games.elimination.config import EliminationConfig
from stille_post.games.kit.framing import word_count

GAME = "elimination"
SOURCE_FORMAT = "elimination-logs"
UNKNOWN = "unknown"

LINE_TYPES = frozenset({
    "conversation", "preference_proposal", "preference_outcome", "preference_result",
    "private", "private_vote_reason", "private_revote_reason", "vote", "elimination",
    "private_jury_reason", "final_results",
})

_DEFAULTS = EliminationConfig()
REASON_WORDS = _DEFAULTS.reason_words

# "Player7_Game1754984898827689_o1-mini": seat, game, model key (which may hold "_").
_FULL_ID = re.compile(r"^Player(\d+)_Game([^_]*)_(.+)$", re.S)
_SHORT_ID = re.compile(r"^\s*P(?:layer)?\s*_?(\d+)\s*$", re.I)


class ConvertError(ValueError):
    """A game whose lines do not make a consistent game; the message says why."""


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


@dataclass(frozen=True)
class Converted:
    """A converted game: the transcript's lines and what the results index needs."""

    game_id: str  # the original id
    lines: list[str]  # JSONL lines, without newlines
    seats: dict[str, dict[str, Any]]
    placements: dict[int, int]
    summary: OutcomeSummary
    bare_ids: bool  # no model keys anywhere: labels are `unknown`

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


# --- segmentation --------------------------------------------------------------------------

@dataclass
class _Round:
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


def _segment(lines: Sequence[dict[str, Any]], n: int
             ) -> tuple[list[_Round], _Round, dict[str, Any]]:
    """Rounds (each closed by its `elimination` line), the final, and `final_results`.

    Phases are told apart by position, since the log's `subround` field is not uniform:
    a statement after the round's votes is a tie-break statement, a vote after a
    tie-break statement or a re-vote reason is a re-vote, and everything after the
    elimination that leaves two seats belongs to the final.
    """
    rounds: list[_Round] = []
    cur = _Round()
    final = _Round()
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
            cur = _Round()
        elif t == "private_jury_reason":
            raise ConvertError("a jury reason before the final")
    if results is None:
        raise ConvertError("no final_results line")
    if any((cur.public, cur.private, cur.votes, cur.reasons, cur.proposals)):
        raise ConvertError(f"round {len(rounds) + 1} has no elimination line")
    return rounds, final, results


# --- the event log -------------------------------------------------------------------------

Vis = str | list[int]
_LOG_ONLY: list[int] = []


class _Log:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.round = 0
        self.turn = 0

    def emit(self, type: str, *, actor: int | None = None, vis: Vis = "public",
             **data: Any) -> None:
        self.events.append({"kind": "event", "seq": len(self.events) + 1, "type": type,
                            "round": self.round, "turn": self.turn, "actor": actor,
                            "visibility": vis, "data": data})


def _keyed(counts: Mapping[int, int]) -> dict[str, int]:
    return {str(k): v for k, v in sorted(counts.items())}


def _extras(line: Mapping[str, Any], used: Iterable[str], ours: Iterable[str]
            ) -> dict[str, Any]:
    """The log fields that have no counterpart: kept under their own name, or as
    `source_<name>` where the name is already one of ours."""
    skip = {"game_id", "type", *used}
    taken = set(ours)
    return {(f"source_{k}" if k in taken else k): v for k, v in line.items() if k not in skip}


def _message(text: Any, limit: int) -> dict[str, Any]:
    """A message's data besides seat: the whole text, its words, the limit and marks."""
    s = text if isinstance(text, str) else "" if text is None else str(text)
    words = word_count(s)
    out: dict[str, Any] = {"text": s, "words": words, "limit_words": limit}
    if words > limit:
        out["over_limit"] = True
    if not s.strip():
        out["empty"] = True
    return out


_MESSAGE_KEYS = ("seat", "text", "words", "limit_words", "over_limit", "empty", "to", "pair",
                 "subround", "stage")


class _Game:
    """Builds the events of one game from its segmented lines."""

    def __init__(self, n: int, private_limits: Sequence[int]) -> None:
        self.n = n
        self.log = _Log()
        self.active = list(range(1, n + 1))
        self.eliminated: list[int] = []
        self.eliminated_in: dict[int, int] = {}
        self.decided_by: dict[int, str] = {}
        self.cumulative: dict[int, int] = dict.fromkeys(self.active, 0)
        self.private_limits = list(private_limits)
        self.over_limit = 0
        self.jury_votes: dict[int, int | None] = {}
        self.finalists: list[int] = []

    # statements --------------------------------------------------------------------------

    def _seat(self, line: Mapping[str, Any], key: str) -> int:
        seat = seat_of(line.get(key))
        if seat is None or not 1 <= seat <= self.n:
            raise ConvertError(f"{line.get('type')} line with an unknown {key} "
                               f"{str(line.get(key))[:60]!r}")
        return seat

    def statements(self, lines: Sequence[dict[str, Any]], phase: str, event: str,
                   limit: int, extra: Mapping[str, Any] | None = None) -> None:
        order = [self._seat(x, "player_id") for x in lines]
        if not order:
            return
        self.log.emit("speaking_order", phase=phase, order=order,
                      text=P.order_text(phase, order))
        for seat, line in zip(order, lines, strict=True):
            self.log.turn += 1
            msg = _message(line.get("message"), limit)
            self.over_limit += bool(msg.get("over_limit"))
            keep = _extras(line, ("round", "player_id", "message"), _MESSAGE_KEYS)
            self.log.emit(event, actor=seat, seat=seat, **(extra or {}), **msg, **keep)

    # pairing -----------------------------------------------------------------------------

    def pairing(self, rnd: _Round) -> list[list[int]]:
        steps: list[dict[str, Any]] = []
        held: dict[int, int] = {}
        entry: list[int] = []
        open_step: dict[str, Any] | None = None
        for line in rnd.proposals:
            if line["type"] == "preference_proposal":
                proposer, target = self._seat(line, "proposer"), self._seat(line, "target")
                if proposer not in entry:
                    entry.append(proposer)
                # Without an outcome line the result is not in the log.
                open_step = {"proposer": proposer, "receiver": target, "result": "unknown",
                             **_extras(line, ("round", "proposer", "target"),
                                       ("proposer", "receiver", "result", "displaced"))}
                steps.append(open_step)
            else:
                target = self._seat(line, "target")
                if open_step is None or open_step["receiver"] != target:
                    raise ConvertError(f"a preference_outcome for P{target} without its "
                                       "proposal")
                if line.get("accepted") is True:
                    current = held.get(target)
                    open_step["result"] = "accepted" if current is None else "swapped"
                    if current is not None:
                        open_step["displaced"] = current
                    held[target] = open_step["proposer"]
                else:
                    open_step["result"] = "rejected"
                open_step.update(_extras(line, ("round", "target", "accepted"), open_step))
                open_step = None
        pairs: list[list[int]] = []
        if rnd.result is not None:
            raw = rnd.result.get("matched_pairs")
            if not isinstance(raw, list):
                raise ConvertError("preference_result without a matched_pairs list")
            for p in raw:
                if not isinstance(p, list) or len(p) != 2:
                    raise ConvertError(f"a matched pair that is not two ids: {str(p)[:60]}")
                a, b = seat_of(p[0]), seat_of(p[1])
                if a is None or b is None or a == b or a not in self.active \
                        or b not in self.active:
                    raise ConvertError(f"a matched pair of unknown seats: {str(p)[:60]}")
                pairs.append([a, b])
        paired = {s for p in pairs for s in p}
        unpaired = [s for s in self.active if s not in paired]
        exhausted = [s for s in entry if s not in held.values()]
        self.log.emit("phase", phase="ranking", text=P.phase_text("ranking"))
        self.log.emit("pairing_trace", vis=_LOG_ONLY, entry_order=entry, steps=steps,
                      exhausted=exhausted, text="")
        keep = _extras(rnd.result or {}, ("round", "matched_pairs"), ("pairs", "unpaired"))
        self.log.emit("pairing", pairs=pairs, unpaired=unpaired,
                      text=P.pairing_text(pairs, unpaired), **keep)
        return pairs

    def private_chats(self, lines: Sequence[dict[str, Any]], pairs: Sequence[list[int]]
                      ) -> None:
        if not lines:
            return
        self.log.emit("phase", phase="private", text=P.phase_text("private"))
        pair_of = {s: p for p in pairs for s in p}
        for line in lines:
            speaker, to = self._seat(line, "speaker_id"), self._seat(line, "target_id")
            sub = line.get("subround")
            sub = sub if isinstance(sub, int) and not isinstance(sub, bool) and sub >= 1 else 1
            limit = self.private_limits[min(sub, len(self.private_limits)) - 1]
            msg = _message(line.get("message"), limit)
            self.over_limit += bool(msg.get("over_limit"))
            pair = pair_of.get(speaker) or [speaker, to]
            keep = _extras(line, ("round", "subround", "speaker_id", "target_id", "message"),
                           _MESSAGE_KEYS)
            self.log.emit("private_message", actor=speaker, vis=sorted({speaker, to}),
                          seat=speaker, to=to, pair=list(pair), subround=sub, **msg, **keep)

    # votes -------------------------------------------------------------------------------

    def ballots(self, votes: Sequence[dict[str, Any]], reasons: Sequence[dict[str, Any]],
                stage: R.VoteStage, allowed: Sequence[int]) -> list[R.Ballot]:
        """One `vote` and one `vote_reason` event per voter, in seat order as the engine
        does. A voter with a reason but no vote line votes for the reason's target."""
        by_voter: dict[int, dict[str, Any]] = {}
        for v in votes:
            by_voter[self._seat(v, "voter_id")] = v
        why: dict[int, dict[str, Any]] = {}
        for r in reasons:
            why[self._seat(r, "voter_id")] = r
        out: list[R.Ballot] = []
        for voter in sorted(set(by_voter) | set(why)):
            line = by_voter.get(voter)
            reason = why.get(voter)
            source = line if line is not None else reason
            assert source is not None
            raw_target = source.get("target_id")
            b = R.judge_vote(voter, seat_of(raw_target), stage, allowed)
            out.append(b)
            data: dict[str, Any] = {"voter": voter, "stage": stage, "target": b.target,
                                    "valid": b.valid}
            if b.invalid is not None:
                data["invalid"] = b.invalid
            if b.target is None and raw_target is not None:
                data["source_target"] = raw_target
            if line is None:
                data["from_reason"] = True  # the log has only the reason line
            else:
                data.update(_extras(line, ("round", "voter_id", "target_id"), data))
            self.log.emit("vote", actor=voter, vis=[voter], **data,
                          text=P.vote_text(stage, b.target, b.valid, b.invalid))
            if reason is not None:
                text = reason.get("reason")
                s = text if isinstance(text, str) else "" if text is None else str(text)
                rdata: dict[str, Any] = {"voter": voter, "stage": stage, "target": b.target,
                                         "reason": s, "words": word_count(s),
                                         "limit_words": REASON_WORDS}
                if rdata["words"] > REASON_WORDS:
                    rdata["over_limit"] = True
                rdata.update(_extras(reason, ("round", "voter_id", "target_id", "reason"),
                                     rdata))
                self.log.emit("vote_reason", actor=voter, vis=_LOG_ONLY, **rdata)
            if stage in ("vote", "revote") and b.valid and b.target is not None:
                self.cumulative[b.target] += 1
        return out

    def vote_result(self, stage: str, ballots: Sequence[R.Ballot], candidates: Sequence[int]
                    ) -> tuple[dict[int, int], list[int]]:
        counts = R.count(ballots)
        best = R.top(counts, candidates)
        invalid = sum(1 for b in ballots if not b.valid)
        self.log.emit("vote_result", stage=stage, counts=_keyed(counts), invalid=invalid,
                      leaders=best, tie=len(best) > 1,
                      text=P.vote_result_text(stage, _keyed(counts), invalid, best))
        return counts, best

    def step(self, stage: str, s: R.TieStep) -> None:
        data: dict[str, Any] = {"stage": stage, "step": s.step, "tied": list(s.tied),
                                "leaders": list(s.leaders), "decided": s.decided}
        if s.step == "revote":
            data.update(counts=_keyed(s.counts), invalid=s.invalid)
        elif s.step == "cumulative":
            data.update(cumulative=_keyed(s.cumulative))
        else:
            data.update(picked=s.picked)
        self.log.emit("tie_break", **data, text=P.tie_break_text(
            s.step, s.leaders, counts=_keyed(s.counts), invalid=s.invalid,
            cumulative=_keyed(s.cumulative), picked=s.picked))

    def chain(self, stage: str, rest: list[int], loser: int, *, cumulative: bool = True
              ) -> tuple[list[int], str]:
        """Cumulative votes, then the rng, over the still-tied seats. The rng's pick is
        not in the log: it is the seat the log says was eliminated."""
        how = "votes"
        if len(rest) > 1 and cumulative:
            s = R.cumulative_step(rest, self.cumulative)
            self.step(stage, s)
            rest, how = list(s.leaders), "cumulative"
        if len(rest) > 1:
            picked = loser if loser in rest else rest[0]
            s = R.TieStep("rng", tuple(sorted(rest)), (picked,), picked=picked)
            self.step(stage, s)
            rest, how = [picked], "rng"
        return rest, how

    def eliminate(self, seat: int, stage: str, votes: int, decided_by: str,
                  extra: Mapping[str, Any]) -> None:
        rank = len(self.active)
        self.active.remove(seat)
        self.eliminated.append(seat)
        self.eliminated_in[seat] = self.log.round
        self.decided_by[seat] = decided_by
        self.log.emit("elimination", actor=seat, seat=seat, stage=stage, votes=votes,
                      decided_by=decided_by, rank=rank, **extra,
                      text=P.elimination_text(seat, stage, votes, decided_by))

    # rounds ------------------------------------------------------------------------------

    def round(self, rnd: _Round) -> None:
        log = self.log
        log.round += 1
        log.emit("round_start", round=log.round, active=list(self.active),
                 eliminated=list(self.eliminated),
                 text=P.round_start_text(log.round, self.active, self.eliminated))
        self.statements(rnd.public, "public", "public_message", _DEFAULTS.public_words)
        pairs: list[list[int]] = []
        if rnd.proposals or rnd.result is not None or rnd.private:
            pairs = self.pairing(rnd)
        self.private_chats(rnd.private, pairs)
        log.emit("phase", phase="vote", text=P.phase_text("vote"))
        active = list(self.active)
        ballots = self.ballots(rnd.votes, rnd.reasons, "vote", active)
        counts, best = self.vote_result("vote", ballots, active)
        assert rnd.elimination is not None
        line = rnd.elimination
        loser = self._seat(line, "eliminated_player")
        if loser not in self.active:
            raise ConvertError(f"round {log.round} eliminates P{loser}, who is not in the game")
        how = "votes"
        outcome = best
        if len(best) > 1:
            outcome, how = self.tie(rnd, best, loser)
        keep = _extras(line, ("round", "eliminated_player"),
                       ("seat", "stage", "votes", "decided_by", "rank", "recount_differs"))
        if outcome != [loser]:
            keep["recount_differs"] = True
            how = _how_from_flags(line)
        self.eliminate(loser, "vote", counts.get(loser, 0), how, keep)

    def tie(self, rnd: _Round, tied: list[int], loser: int) -> tuple[list[int], str]:
        revoters = R.revoters(self.active, tied)
        self.log.emit("tie", stage="vote", tied=tied, revoters=revoters,
                      text=P.tie_text("vote", tied, revoters))
        self.statements(rnd.tie_msgs, "tie_break", "tie_break_message",
                        _DEFAULTS.tie_break_words, {"stage": "vote"})
        rest = list(tied)
        if rnd.revotes or rnd.revote_reasons:
            ballots = self.ballots(rnd.revotes, rnd.revote_reasons, "revote", tied)
            s = R.revote_step(tied, ballots)
            self.step("vote", s)
            if s.decided:
                return list(s.leaders), "revote"
            rest = list(s.leaders)
        return self.chain("vote", rest, loser)

    def final(self, rnd: _Round, winner: int) -> None:
        log = self.log
        log.round += 1
        if len(self.active) != 2:
            raise ConvertError(f"the log ends with {len(self.active)} seats still in")
        if winner not in self.active:
            raise ConvertError(f"the winner P{winner} is not a finalist")
        self.finalists = sorted(self.active)
        log.emit("phase", phase="final", text=P.phase_text("final"))
        self.statements(rnd.public, "final", "final_message", _DEFAULTS.final_words)
        log.emit("phase", phase="jury", text=P.phase_text("jury"))
        ballots = self.ballots(rnd.votes, rnd.reasons, "jury", self.finalists)
        self.jury_votes = {b.voter: b.target for b in ballots}
        counts, best = self.vote_result("jury", ballots, self.finalists)
        loser = next(s for s in self.finalists if s != winner)
        how = "votes"
        outcome = best
        if len(best) > 1:
            log.emit("tie", stage="jury", tied=best, revoters=[],
                     text=P.tie_text("jury", best, []))
            outcome, how = self.chain("jury", best, loser)
        keep = _extras(rnd.elimination or {}, ("round", "eliminated_player"),
                       ("seat", "stage", "votes", "decided_by", "rank", "recount_differs"))
        if outcome != [loser]:
            keep["recount_differs"] = True
        self.eliminate(loser, "jury", counts.get(loser, 0), how, keep)


def _how_from_flags(line: Mapping[str, Any]) -> str:
    """The deciding step as the log's own flags tell it (used when our recount differs)."""
    if line.get("random_pick"):
        return "rng"
    if line.get("cumu_check"):
        return "cumulative"
    if line.get("tie_break"):
        return "revote"
    return "votes"


# --- the whole game ------------------------------------------------------------------------

_ID_FIELDS = ("player_id", "speaker_id", "target_id", "voter_id", "eliminated_player",
              "proposer", "target")


def _models(lines: Iterable[Mapping[str, Any]]) -> dict[int, str | None]:
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


def _final_ranks(results: Mapping[str, Any], n: int) -> dict[int, int]:
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


def _winner(results: Mapping[str, Any], ranks: Mapping[int, int]) -> int:
    for key in ("winners", "winners_full"):
        raw = results.get(key)
        if isinstance(raw, list) and len(raw) == 1 and seat_of(raw[0]) is not None:
            return int(seat_of(raw[0]) or 0)
    firsts = [s for s, r in ranks.items() if r == 1]
    if len(firsts) == 1:
        return firsts[0]
    raise ConvertError("final_results names no single winner")


def convert_game(game_id: str, lines: Sequence[dict[str, Any]], *, sources: Sequence[str],
                 imported_at: str | None = None) -> Converted:
    """The transcript of one game. Raises ConvertError for lines that make no game."""
    models = _models(lines)
    seats_seen = sorted(models)
    n = len(seats_seen)
    if not 3 <= n <= 20 or seats_seen != list(range(1, n + 1)):
        raise ConvertError(f"seats {seats_seen[:12]} are not P1..Pn with 3 <= n <= 20")
    rounds, final, results = _segment(lines, n)
    private_subs = [x.get("subround") for r in rounds for x in r.private]
    k = max([s for s in private_subs if isinstance(s, int) and not isinstance(s, bool)]
            + [0])
    k = min(max(k, 3 if any(r.proposals or r.result for r in rounds) else k), 3)
    config = EliminationConfig(num_players=n, private_subrounds=k)
    limits = [config.private_limit(i) for i in (1, 2, 3)]  # the anchor's three subrounds
    game = _Game(n, limits)
    log = game.log
    log.emit("game_start", num_players=n, seats=list(range(1, n + 1)), private_subrounds=k,
             word_limits={"public": config.public_words,
                          "private": limits[:k],
                          "tie_break": config.tie_break_words, "final": config.final_words},
             limit_policy="none", jury_tie=config.jury_tie,
             text=P.game_start_text(n, k))
    for rnd in rounds:
        game.round(rnd)
    ranks_logged = _final_ranks(results, n)
    winner = _winner(results, ranks_logged)
    game.final(final, winner)
    computed = R.ranks(game.eliminated, sorted(game.active), winner)
    ranks = {s: ranks_logged.get(s, computed[s]) for s in range(1, n + 1)}
    keyed = _keyed(ranks)
    log.emit("game_over", status="completed", winner=winner, finalists=game.finalists,
             ranks=keyed, text=P.game_over_text(winner, "completed", None))
    log.emit("reveal", ranks=keyed, eliminated=list(game.eliminated),
             cumulative=_keyed(game.cumulative), text=P.reveal_text(keyed))

    bare = all(m is None for m in models.values())
    seats: dict[str, dict[str, Any]] = {}
    for s in range(1, n + 1):
        model = models[s]
        row: dict[str, Any] = {"player": model or UNKNOWN}
        if model:
            row["model"] = model
        seats[str(s)] = row
    details: dict[str, Any] = {
        "ranks": keyed,
        "winner": winner,
        "finalists": game.finalists,
        "rounds": log.round,
        "eliminated_in": {str(s): r for s, r in game.eliminated_in.items()},
        "decided_by": {str(s): h for s, h in game.decided_by.items()},
        "cumulative": _keyed(game.cumulative),
        "jury_votes": {str(s): t for s, t in sorted(game.jury_votes.items())},
        "over_limit_messages": game.over_limit,
        "num_players": n,
        "imported": True,
    }
    if ranks != computed:
        details["computed_ranks"] = _keyed(computed)  # what our rules would have ranked
    if "winners_full" in results:
        details["winners_full"] = results["winners_full"]
    summary = OutcomeSummary(winners=(winner,), eliminated=tuple(game.eliminated), valid=True,
                             turns=log.turn, notes=_notes(game, ranks, winner),
                             details=details)
    imported = {"format": SOURCE_FORMAT, "source": sources[0], "game_id": game_id,
                "lines": len(lines)}
    if len(sources) > 1:
        imported["sources"] = list(sources)
    header = {"kind": "header", "format": FORMAT_VERSION, "game": GAME, "version": __version__,
              "seed": None, "config": config.model_dump(mode="json"), "seats": seats,
              "rules": "lechmazur/elimination_game (imported)", "imported_from": imported,
              "timing": {"started_at": imported_at or
                         time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}}
    result = {"kind": "result", "status": "completed", "reason": None,
              "placements": keyed, "usage": {}, "summary": summary.to_json(),
              "timing": {"seconds": 0.0}}
    out = [dumps(header), *(dumps(e) for e in log.events), dumps(result)]
    return Converted(game_id, out, seats, ranks, summary, bare)


def _notes(game: _Game, ranks: Mapping[int, int], winner: int) -> dict[int, str]:
    out: dict[int, str] = {}
    for s in range(1, game.n + 1):
        if s == winner:
            out[s] = "won the jury vote"
        elif s in game.finalists:
            out[s] = "finalist, eliminated by the jury"
        else:
            out[s] = f"out in round {game.eliminated_in.get(s)} (rank {ranks[s]})"
    return out
