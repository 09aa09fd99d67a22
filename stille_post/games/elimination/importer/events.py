"""The Elimination Game's events of an imported game, built in the order our engine emits
them (EVENTS.md), from a game's lines sorted into rounds (lines.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from stille_post.games.elimination import prompts as P
from stille_post.games.elimination import rules as R
from stille_post.games.elimination.config import EliminationConfig
from stille_post.games.elimination.importer.lines import ConvertError, Round, seat_of
from stille_post.games.kit.framing import word_count

_DEFAULTS = EliminationConfig()
REASON_WORDS = _DEFAULTS.reason_words


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


keyed = R.keyed


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


class GameEvents:
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

    def pairing(self, rnd: Round) -> list[list[int]]:
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
        derived = rnd.result is None and bool(rnd.private)
        if derived:  # no preference_result: the pairs are who chatted with whom
            for x in rnd.private:
                a, b = self._seat(x, "speaker_id"), self._seat(x, "target_id")
                if not any({a, b} == set(p) for p in pairs) and a != b:
                    pairs.append([a, b])
        if rnd.result is not None:
            raw = rnd.result.get("matched_pairs")
            if not isinstance(raw, list):
                raise ConvertError("preference_result without a matched_pairs list")
            for p in raw:
                if not isinstance(p, list) or len(p) != 2:
                    raise ConvertError(f"a matched pair that is not two ids: {str(p)[:60]}")
                one, two = seat_of(p[0]), seat_of(p[1])
                if one is None or two is None or one == two or one not in self.active \
                        or two not in self.active:
                    raise ConvertError(f"a matched pair of unknown seats: {str(p)[:60]}")
                pairs.append([one, two])
        paired = {s for p in pairs for s in p}
        unpaired = [s for s in self.active if s not in paired]
        exhausted = [s for s in entry if s not in held.values()]
        self.log.emit("phase", phase="ranking", text=P.phase_text("ranking"))
        self.log.emit("pairing_trace", vis=_LOG_ONLY, entry_order=entry, steps=steps,
                      exhausted=exhausted, text="")
        keep = _extras(rnd.result or {}, ("round", "matched_pairs"), ("pairs", "unpaired"))
        if derived:
            keep["pairs_from"] = "private"
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
        does. A voter with a reason but no vote line votes for the reason's target. A voter
        logged twice: the last vote counts, the earlier one is kept as `superseded`, and
        every reason is kept (no text is dropped)."""
        by_voter: dict[int, list[dict[str, Any]]] = {}
        for v in votes:
            by_voter.setdefault(self._seat(v, "voter_id"), []).append(v)
        why: dict[int, list[dict[str, Any]]] = {}
        for r in reasons:
            why.setdefault(self._seat(r, "voter_id"), []).append(r)
        out: list[R.Ballot] = []
        for voter in sorted(set(by_voter) | set(why)):
            for old in by_voter.get(voter, [])[:-1]:
                target = seat_of(old.get("target_id"))
                self.log.emit("vote", actor=voter, vis=[voter], voter=voter, stage=stage,
                              target=target, valid=False, invalid="superseded",
                              superseded=True, **_extras(old, ("round", "voter_id",
                                                               "target_id"), ("voter",)),
                              text=P.vote_text(stage, target, False, "superseded"))
            logged = by_voter.get(voter) or []
            line = logged[-1] if logged else None
            said = why.get(voter) or []
            source = line if line is not None else said[-1]
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
            for reason in said:
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
        self.log.emit("vote_result", stage=stage, counts=keyed(counts), invalid=invalid,
                      leaders=best, tie=len(best) > 1,
                      text=P.vote_result_text(stage, keyed(counts), invalid, best))
        return counts, best

    def step(self, stage: str, s: R.TieStep) -> None:
        self.log.emit("tie_break", **P.tie_step_event(stage, s))

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

    def round(self, rnd: Round) -> None:
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
        unseen = len(best) == 1 and bool(rnd.tie_msgs or rnd.revotes or rnd.revote_reasons)
        if len(best) > 1 or unseen:
            # A tie-break in the log that our recount does not see is still imported, so
            # that no statement or re-vote is lost; its tied seats are the ones it names.
            tied = best
            if unseen:
                named = {seat_of(x.get("player_id")) for x in rnd.tie_msgs} or \
                    {seat_of(x.get("target_id")) for x in rnd.revotes + rnd.revote_reasons
                     if x.get("target_id") != x.get("voter_id")}
                tied = sorted({best[0], *(s for s in named if s in self.active)})
            outcome, how = self.tie(rnd, tied, loser, differs=unseen)
        keep = _extras(line, ("round", "eliminated_player"),
                       ("seat", "stage", "votes", "decided_by", "rank", "recount_differs"))
        if outcome != [loser] or unseen:
            keep["recount_differs"] = True
            how = _how_from_flags(line)
        self.eliminate(loser, "vote", counts.get(loser, 0), how, keep)

    def tie(self, rnd: Round, tied: list[int], loser: int, *, differs: bool = False
            ) -> tuple[list[int], str]:
        revoters = R.revoters(self.active, tied)
        mark: dict[str, Any] = {"recount_differs": True} if differs else {}
        self.log.emit("tie", stage="vote", tied=tied, revoters=revoters, **mark,
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

    def final(self, rnd: Round, winner: int) -> None:
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

