"""The Elimination Game engine (docs/rules.md §2): rounds of public statements, rankings,
deferred-acceptance pairing, private chats, votes with the tie chain, then the final and
the jury.

Determinism: every chance event is a `choice` of the injected rng (rules.permutation,
the ranking fill, the last step of a tie chain), drawn in a fixed order per round:
public speaking order, ranking fills (ascending seat), pairing entry order, tie-break
speaking order, the rng pick. Simultaneous answers (rankings, votes) go through
`table.ask_all`, and the pairs' private chats through `run_channels`: they run at the
same time and are merged into the log in pairing order, so a replay is byte-identical
whatever order the answers arrive in.

Hostile output never stops a game: an unusable message is recorded as empty, an unusable
ranking is filled in rng order, an unusable vote is not counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from stille_post.core.errors import ParseError
from stille_post.core.events import Event, Visibility
from stille_post.core.outcome import OutcomeSummary, Status
from stille_post.games.elimination import prompts as P
from stille_post.games.elimination import rules as R
from stille_post.games.elimination.config import EliminationConfig
from stille_post.games.elimination.observation import Facts, Moment, Observation
from stille_post.games.kit.channels import Channel, run_channels
from stille_post.games.kit.engine import Engine
from stille_post.games.kit.table import Table
from stille_post.players.base import Action
from stille_post.players.specs import SeatSpec

GAME_NAME = "elimination"


def facts_of(c: EliminationConfig) -> Facts:
    return Facts(c.num_players, c.private_subrounds, c.public_words, c.private_limits,
                 c.tie_break_words, c.final_words, c.limit_policy, c.jury_tie)


_keyed = R.keyed


class EliminationEngine(Engine[EliminationConfig]):
    name = GAME_NAME

    def __init__(self, config: EliminationConfig, table: Table,
                 specs: Sequence[SeatSpec] = ()) -> None:
        super().__init__(config, table, specs)
        self.facts = facts_of(config)
        self.active: list[int] = list(self.seats)
        self.eliminated: list[int] = []
        self.eliminated_in: dict[int, int] = {}
        self.decided_by: dict[int, str] = {}
        self.cumulative: dict[int, int] = dict.fromkeys(self.seats, 0)
        self.moment = Moment()
        self.round = 0
        self.finalists: tuple[int, ...] = ()
        self.winner: int | None = None
        self.jury_votes: dict[int, int | None] = {}
        self.cuts = 0  # messages cut at their word limit

    # --- the game ---------------------------------------------------------------------------

    async def run(self) -> None:
        c = self.config
        self.emit("game_start", num_players=c.num_players, seats=list(self.seats),
                  private_subrounds=c.private_subrounds,
                  word_limits={"public": c.public_words,
                               "private": list(c.private_limits[: c.private_subrounds]),
                               "tie_break": c.tie_break_words, "final": c.final_words},
                  limit_policy=c.limit_policy, jury_tie=c.jury_tie,
                  text=P.game_start_text(c.num_players, c.private_subrounds))
        while len(self.active) > 2:
            await self._round()
        await self._final()

    async def _round(self) -> None:
        self.round += 1
        self.table.log.round = self.round
        self._set_moment()
        self.emit("round_start", round=self.round, active=list(self.active),
                  eliminated=list(self.eliminated),
                  text=P.round_start_text(self.round, self.active, self.eliminated))
        order = R.permutation(self.table.rng, self.active)
        self.emit("speaking_order", phase="public", order=order,
                  text=P.order_text("public", order))
        for seat in order:
            await self._say(seat, P.PUBLIC, self.config.public_words, "public_message")
        if self.config.private_subrounds:
            pairing = await self._pairing()
            if pairing.pairs:
                self.emit("phase", phase="private", text=P.phase_text("private"))
                await self._private_chats(pairing.pairs)
        await self._vote_round()

    def _set_moment(self, **changes: Any) -> None:
        base = Moment(self.round, tuple(self.active), tuple(self.eliminated))
        self.moment = replace(base, **changes)

    # --- statements ---------------------------------------------------------------------------

    async def _say(self, seat: int, kind: str, limit: int, event: str, *,
                   channel: Channel | None = None, partner: int | None = None,
                   subround: int = 0, extra: Mapping[str, Any] | None = None) -> None:
        """Ask one message and log it capped at `limit` words (policy truncate|reask)."""
        policy = self.config.limit_policy
        reasked = False

        def validate(action: Action) -> str:
            nonlocal reasked
            text = action.text.strip()
            if not text:
                raise ParseError("your message was empty: write it as plain text")
            if policy == "reask" and R.over_limit(text, limit):
                # Marked only when a re-ask can follow (repair_attempts 0: a plain cut).
                reasked = reasked or self.table.repair_attempts > 0
                raise ParseError(f"your message has {R.word_count(text)} words and the limit "
                                 f"is {limit}: write it again, at most {limit} words")
            return text

        moment = self.moment

        def observe(seat: int, events: Sequence[Event]) -> Observation:
            return Observation(seat, self.facts, moment, events, limit_words=limit,
                               subround=subround, partner=partner)

        answer = await self.table.ask(seat, kind, observe=observe, validate=validate,
                                      tools=P.tools(self.facts.num_players), channel=channel)
        raw = answer.value if answer.value is not None else answer.raw
        limited = R.apply_limit(raw, limit, self.config.max_message_chars)
        data: dict[str, Any] = {"seat": seat, **(extra or {}), "text": limited.text,
                                **limited.meta()}
        if reasked:
            data["reasked"] = True
        if answer.failure is not None:
            data["failure"] = answer.failure
        if limited.truncated_from_words is not None:
            self.cuts += 1  # only a shared counter; channels never await between reads
        if channel is not None:
            channel.emit(event, actor=seat, **data)
        else:
            self.table.log.turn += 1
            self.emit(event, actor=seat, **data)

    # --- ranking and pairing --------------------------------------------------------------------

    async def _pairing(self) -> R.Pairing:
        self.emit("phase", phase="ranking", text=P.phase_text("ranking"))
        moment, active = self.moment, list(self.active)

        def observe(seat: int, events: Sequence[Event]) -> Observation:
            return Observation(seat, self.facts, moment, events,
                               allowed=tuple(x for x in active if x != seat))

        answers = await self.table.ask_all(active, P.RANKING, observe=observe,
                                           validate=P.read_ranking,
                                           tools=P.tools(self.facts.num_players))
        rankings: dict[int, tuple[int, ...]] = {}
        for seat in sorted(active):  # fills draw from the rng in ascending seat order
            a = answers[seat]
            given = a.value if a.value is not None else []
            r = R.complete_ranking(seat, given, active, self.table.rng)
            rankings[seat] = r.ranking
            data: dict[str, Any] = {"seat": seat, "ranking": list(r.ranking),
                                    "given": [_jsonable(x) for x in r.given],
                                    "dropped": [_jsonable(x) for x in r.dropped],
                                    "filled": list(r.filled)}
            if a.failure is not None:
                data["failure"] = a.failure
            self.emit("ranking", actor=seat, visibility=Visibility.only(seat), **data,
                      text=P.ranking_text(r.ranking))
        entry = R.permutation(self.table.rng, active)
        pairing = R.pair(rankings, entry)
        self.emit("pairing_trace", visibility=Visibility.log_only(), entry_order=entry,
                  steps=[s.to_json() for s in pairing.steps],
                  exhausted=list(pairing.exhausted), text="")
        pairs = [list(p) for p in pairing.pairs]
        self.emit("pairing", pairs=pairs, unpaired=list(pairing.unpaired),
                  text=P.pairing_text(pairs, pairing.unpaired))
        return pairing

    async def _private_chats(self, pairs: Sequence[tuple[int, int]]) -> None:
        k = self.config.private_subrounds

        async def chat(ch: Channel) -> None:
            first, second = pairs[ch.key]
            for sub in range(1, k + 1):
                limit = self.config.private_limit(sub)
                for speaker, listener in ((first, second), (second, first)):
                    await self._say(speaker, P.PRIVATE, limit, "private_message", channel=ch,
                                    partner=listener, subround=sub,
                                    extra={"to": listener, "pair": [first, second],
                                           "subround": sub})

        await run_channels(self.table, {i: p for i, p in enumerate(pairs)}, chat)

    # --- votes ----------------------------------------------------------------------------------

    async def _ballots(self, voters: Sequence[int], kind: str, stage: R.VoteStage,
                       allowed: Sequence[int]) -> list[R.Ballot]:
        moment = self.moment

        def observe(seat: int, events: Sequence[Event]) -> Observation:
            return Observation(seat, self.facts, moment, events,
                               allowed=tuple(x for x in allowed if x != seat))

        answers = await self.table.ask_all(voters, kind, observe=observe,
                                           validate=P.read_vote,
                                           tools=P.tools(self.facts.num_players))
        ballots: list[R.Ballot] = []
        for seat in sorted(voters):
            a = answers[seat]
            target, reason = a.value if a.value is not None else (None, "")
            b = R.judge_vote(seat, target, stage, allowed)
            ballots.append(b)
            vote: dict[str, Any] = {"voter": seat, "stage": stage, "target": b.target,
                                    "valid": b.valid}
            if b.invalid is not None:
                vote["invalid"] = b.invalid
            if a.failure is not None:
                vote["failure"] = a.failure
            self.emit("vote", actor=seat, visibility=Visibility.only(seat), **vote,
                      text=P.vote_text(stage, b.target, b.valid, b.invalid))
            why = R.apply_limit(reason, self.config.reason_words, self.config.max_message_chars)
            extra = {"truncated_from_words": why.truncated_from_words} \
                if why.truncated_from_words is not None else {}
            self.emit("vote_reason", actor=seat, visibility=Visibility.log_only(), voter=seat,
                      stage=stage, target=b.target, reason=why.text, words=why.words,
                      limit_words=why.limit_words, **extra)
            if stage in ("vote", "revote") and b.valid and b.target is not None:
                self.cumulative[b.target] += 1
        return ballots

    async def _vote_round(self) -> None:
        self.emit("phase", phase="vote", text=P.phase_text("vote"))
        active = list(self.active)
        ballots = await self._ballots(active, P.VOTE, "vote", active)
        counts = R.count(ballots)
        best = R.top(counts, active)
        invalid = sum(1 for b in ballots if not b.valid)
        self.emit("vote_result", stage="vote", counts=_keyed(counts), invalid=invalid,
                  leaders=best, tie=len(best) > 1,
                  text=P.vote_result_text("vote", _keyed(counts), invalid, best))
        if len(best) == 1:
            self._eliminate(best[0], "vote", counts.get(best[0], 0), "votes")
            return
        loser, how = await self._tie(best)
        self._eliminate(loser, "vote", counts.get(loser, 0), how)

    async def _tie(self, tied: list[int]) -> tuple[int, str]:
        """docs/rules.md §2's chain: statements, one re-vote by the non-tied among the tied, then
        cumulative votes received, then the rng. Returns the loser and the deciding step."""
        rv = R.revoters(self.active, tied)
        self._set_moment(tied=tuple(tied))
        self.emit("tie", stage="vote", tied=tied, revoters=rv,
                  text=P.tie_text("vote", tied, rv))
        rest = list(tied)
        if rv:  # statements only when someone is left to persuade
            order = R.permutation(self.table.rng, tied)
            self.emit("speaking_order", phase="tie_break", order=order,
                      text=P.order_text("tie_break", order))
            for seat in order:
                await self._say(seat, P.TIE_BREAK, self.config.tie_break_words,
                                "tie_break_message", extra={"stage": "vote"})
            ballots = await self._ballots(rv, P.REVOTE, "revote", tied)
            step = R.revote_step(tied, ballots)
            self._emit_step("vote", step)
            if step.decided:
                return step.leaders[0], "revote"
            rest = list(step.leaders)
        steps = R.finish_chain(rest, self.cumulative, self.table.rng)
        for s in steps:
            self._emit_step("vote", s)
        return steps[-1].leaders[0], steps[-1].step if steps[-1].decided else "rng"

    def _emit_step(self, stage: str, s: R.TieStep) -> None:
        self.emit("tie_break", **P.tie_step_event(stage, s))

    def _eliminate(self, seat: int, stage: str, votes: int, decided_by: str) -> None:
        rank = len(self.active)
        self.active.remove(seat)
        self.eliminated.append(seat)
        self.eliminated_in[seat] = self.round
        self.decided_by[seat] = decided_by
        self.emit("elimination", actor=seat, seat=seat, stage=stage, votes=votes,
                  decided_by=decided_by, rank=rank,
                  text=P.elimination_text(seat, stage, votes, decided_by))

    # --- the final ------------------------------------------------------------------------------

    async def _final(self) -> None:
        self.round += 1
        self.table.log.round = self.round
        self.finalists = tuple(sorted(self.active))
        self._set_moment(finalists=self.finalists)
        self.emit("phase", phase="final", text=P.phase_text("final"))
        order = R.permutation(self.table.rng, self.finalists)
        self.emit("speaking_order", phase="final", order=order, text=P.order_text("final", order))
        for seat in order:
            await self._say(seat, P.FINAL, self.config.final_words, "final_message")
        self.emit("phase", phase="jury", text=P.phase_text("jury"))
        jury = sorted(self.eliminated)
        ballots = await self._ballots(jury, P.JURY, "jury", self.finalists)
        self.jury_votes = {b.voter: b.target for b in ballots}
        counts = R.count(ballots)
        best = R.top(counts, self.finalists)
        invalid = sum(1 for b in ballots if not b.valid)
        self.emit("vote_result", stage="jury", counts=_keyed(counts), invalid=invalid,
                  leaders=best, tie=len(best) > 1,
                  text=P.vote_result_text("jury", _keyed(counts), invalid, best))
        how = "votes"
        if len(best) > 1:
            self.emit("tie", stage="jury", tied=best, revoters=[],
                      text=P.tie_text("jury", best, []))
            cumulative = self.cumulative if self.config.jury_tie == "cumulative" else None
            steps = R.finish_chain(best, cumulative, self.table.rng)
            for s in steps:
                self._emit_step("jury", s)
            best, how = list(steps[-1].leaders), steps[-1].step
        loser = best[0]
        self._eliminate(loser, "jury", counts.get(loser, 0), how)
        self.winner = self.active[0]

    # --- the end ----------------------------------------------------------------------------------

    def finish(self, status: Status, reason: str | None
               ) -> tuple[dict[int, int], OutcomeSummary]:
        ranks = R.ranks(self.eliminated, sorted(self.active), self.winner)
        keyed = _keyed(ranks)
        data: dict[str, Any] = {"status": status, "winner": self.winner,
                                "finalists": list(self.finalists), "ranks": keyed}
        if reason:
            data["reason"] = reason
        self.emit("game_over", **data, text=P.game_over_text(self.winner, status, reason))
        self.emit("reveal", ranks=keyed, eliminated=list(self.eliminated),
                  cumulative=_keyed(self.cumulative), text=P.reveal_text(keyed))
        notes = {s: self._note(s, ranks[s]) for s in self.seats}
        details = R.outcome_details(
            ranks=ranks, winner=self.winner, finalists=self.finalists, rounds=self.round,
            eliminated_in=self.eliminated_in, decided_by=self.decided_by,
            cumulative=self.cumulative, jury_votes=self.jury_votes,
            over_limit_messages=self.cuts, num_players=self.config.num_players)
        summary = OutcomeSummary(
            winners=(self.winner,) if self.winner is not None else (),
            eliminated=tuple(self.eliminated), valid=status == "completed",
            turns=self.table.log.turn, notes=notes, details=details)
        return ranks, summary

    def _note(self, seat: int, rank: int) -> str:
        if seat == self.winner:
            return "won the jury vote"
        if seat in self.finalists and seat in self.eliminated:
            return "finalist, eliminated by the jury"
        if seat in self.eliminated_in:
            return f"out in round {self.eliminated_in[seat]} (rank {rank})"
        return "still in when the game stopped"

    def header_extra(self) -> dict[str, Any]:
        # The rules' section, now docs/rules.md §2. The label is kept as every recorded
        # transcript has it, so the recorded games (real models among them) still replay.
        return {"rules": "RULES.md §2"}


def _jsonable(x: Any) -> Any:
    """A ranking entry as a model wrote it, safe for JSON (anything odd becomes text)."""
    if x is None or isinstance(x, bool | int):
        return x
    if isinstance(x, float):  # NaN and inf are not JSON: keep them as text
        return int(x) if x.is_integer() else str(x)
    return str(x)[:40]
