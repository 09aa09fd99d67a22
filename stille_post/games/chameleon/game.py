"""The Chameleon engine: orchestrates one game between injected players (RULES.md §3).

It never does I/O and never reads the clock (the decision deadline only fires on a hung
player). All chance went into the `Deal` (drawn by rules.deal from the injected rng) or
goes through the rng here (a random tie-break). The votes are asked for at the same
moment and applied in seat order, so the same seed and answers give the same events.

Visibility: the secret word appears only in the `role` events of the non-chameleons
(each visible to its own seat) until the public `reveal` that closes the game.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from stille_post.core.events import Event, EventLog, EventSink, Visibility
from stille_post.core.rng import Rng
from stille_post.games.asking import Answer, Pending, ask
from stille_post.games.base import GameOutcome
from stille_post.games.chameleon import prompts as P
from stille_post.games.chameleon import rules
from stille_post.games.chameleon.config import ChameleonConfig
from stille_post.games.chameleon.observation import observe
from stille_post.players.base import Action, Decision, Player
from stille_post.providers.base import Usage

GAME_NAME = "chameleon"
T = TypeVar("T")


class _Void(Exception):
    """A seat's answer stayed unusable: the game ends as Fail (RULES.md §3)."""

    def __init__(self, seat: int, kind: str, reason: str, rejected: str) -> None:
        super().__init__(reason)
        self.seat, self.kind, self.reason, self.rejected = seat, kind, reason, rejected


class ChameleonGame:
    def __init__(self, config: ChameleonConfig, deal: rules.Deal,
                 players: Mapping[int, Player], rng: Rng) -> None:
        n = config.num_players
        if sorted(players) != list(range(1, n + 1)):
            raise ValueError(f"players must be seats 1..{n}, got {sorted(players)}")
        self.config = config
        self.deal = deal
        self.players = dict(players)
        self.rng = rng
        self.seats = list(range(1, n + 1))
        self.usage: dict[int, Usage] = {s: Usage() for s in self.seats}
        self.log = EventLog(self.seats)
        self.responses: dict[int, str] = {}
        self.votes: dict[int, int] = {}
        self.record: dict[str, Any] = {}

    # --- the whole game -------------------------------------------------------------

    async def play(self, sink: EventSink | None = None) -> GameOutcome:
        self.log = EventLog(self.seats, sink)
        status, reason = "completed", None
        d = self.deal
        try:
            outcome = await self._run()
        except _Void as void:
            outcome, reason = rules.FAIL, f"Player {void.seat}: {void.reason}"
            self.record["fail"] = {"seat": void.seat, "decision": void.kind,
                                   "reason": void.reason, "rejected_text": void.rejected}
        except Exception as exc:  # a bug must not lose the game record: end it as aborted
            status, outcome = "aborted", rules.FAIL
            reason = f"internal error: {type(exc).__name__}: {exc}"
        self._emit("game_over", outcome=outcome, text=P.game_over_text(outcome, reason))
        self._emit("reveal", chameleon=d.chameleon, secret=d.secret,
                   text=P.reveal_text(d.chameleon, d.secret))
        return GameOutcome(
            status=status,
            reason=reason,
            placements=rules.placements(outcome, d.chameleon, self.seats),
            usage=dict(self.usage),
            summary=self._summary(outcome, status),
        )

    def _summary(self, outcome: str, status: str) -> dict[str, Any]:
        d = self.deal
        return {
            "outcome": outcome,
            "valid": status == "completed" and outcome != rules.FAIL,
            "winners": rules.winners(outcome, d.chameleon, self.seats),
            "eliminated": [],
            "turns": len(self.responses),
            "chameleon": d.chameleon,
            "secret": d.secret,
            "category": d.category,
            "num_words": len(d.words),
            "tie_rule": self.config.tie_rule,
            "order": list(d.order),
            "roles": {str(s): rules.role_of(s, d.chameleon) for s in self.seats},
            "responses": {str(s): w for s, w in self.responses.items()},
            "votes": {str(s): t for s, t in sorted(self.votes.items())},
            **self.record,
        }

    async def _run(self) -> str:
        d, c = self.deal, self.config
        self._emit("game_start", num_players=c.num_players, category=d.category,
                   words=list(d.words), tie_rule=c.tie_rule,
                   text=P.game_start_text(c.num_players, d.category, d.words))
        for seat in self.seats:
            role = rules.role_of(seat, d.chameleon)
            secret = None if role == rules.CHAMELEON else d.secret
            data: dict[str, Any] = {"seat": seat, "role": role}
            if secret is not None:
                data["secret"] = secret
            self._emit("role", visibility=Visibility.only(seat), **data,
                       text=P.role_text(role, secret))
        if c.tie_rule == "dealer":
            self._emit("dealer", seat=d.dealer, text=P.dealer_text(d.dealer))
        self._emit("speaking_order", order=list(d.order), text=P.order_text(d.order))
        self.log.round = 1
        for seat in d.order:
            await self._word_turn(seat)
        accused = await self._vote()
        caught = accused == d.chameleon
        self.record.update(accused=accused, identified=caught)
        self._emit("accusation", seat=accused, chameleon_caught=caught,
                   text=P.accusation_text(accused, caught))
        guess_correct = await self._second_chance() if caught else None
        return rules.outcome_of(accused, d.chameleon, guess_correct)

    # --- the three phases --------------------------------------------------------------

    async def _word_turn(self, seat: int) -> None:
        self.log.turn += 1
        self._emit("turn_start", actor=seat, text=P.turn_text(seat))
        answer = await self._ask(seat, P.WORD, self._parse_word)
        self._settle(seat, P.WORD, answer)
        word = answer.unwrap()
        self.responses[seat] = word
        extra: dict[str, Any] = {"raw": answer.raw[:200]} if answer.raw.strip() != word else {}
        self._emit("word", actor=seat, word=word, **extra, text=P.word_text(seat, word))

    async def _vote(self) -> int | None:
        self._emit("vote_start", text=P.vote_start_text())
        parse = self._parse_vote()
        answers = await asyncio.gather(*(self._ask(s, P.VOTE, parse) for s in self.seats))
        for answer in answers:
            self._flush(answer)
        for seat, answer in zip(self.seats, answers, strict=True):
            self._settle(seat, P.VOTE, answer)
        for seat, answer in zip(self.seats, answers, strict=True):
            target = answer.unwrap()
            self.votes[seat] = target
            self._emit("vote", actor=seat, target=target, text=P.vote_text(seat, target))
        counts = rules.tally(self.votes)
        top = rules.top_seats(counts)
        self.record.update(tally={str(s): n for s, n in counts.items()}, top=top,
                           tie=len(top) > 1)
        self._emit("vote_result", tally={str(s): n for s, n in counts.items()}, top=top,
                   tie=len(top) > 1, text=P.vote_result_text(counts, top))
        if len(top) == 1:
            return top[0]
        return await self._break_tie(top)

    async def _break_tie(self, tied: list[int]) -> int | None:
        rule = self.config.tie_rule
        picked: int | None
        actor: int | None = None
        if rule == "chameleon_wins":
            picked = None
        elif rule == "random":
            picked = self.rng.choice(tied)
        else:
            actor = self.deal.dealer
            self._emit("tie_break_request", actor=actor, tied=tied,
                       text=P.tie_break_request_text(actor, tied))
            answer = await self._ask(actor, P.TIE_BREAK, self._parse_vote(tied))
            self._settle(actor, P.TIE_BREAK, answer)
            picked = answer.unwrap()
        self.record["tie_break"] = {"rule": rule, "tied": tied, "picked": picked,
                                    **({"dealer": actor} if actor is not None else {})}
        self._emit("tie_break", actor=actor, rule=rule, tied=tied, picked=picked,
                   text=P.tie_break_text(rule, picked, actor))
        return picked

    async def _second_chance(self) -> bool:
        seat, d = self.deal.chameleon, self.deal
        self._emit("second_chance", actor=seat, text=P.second_chance_text(seat))
        answer = await self._ask(seat, P.GUESS, lambda text: rules.parse_guess(text, d.words))
        self._settle(seat, P.GUESS, answer)
        word = answer.unwrap()
        correct = rules.same_word(word, d.secret)
        self.record.update(guess=word, guess_correct=correct)
        self._emit("guess", actor=seat, guess=answer.raw.strip()[:200], word=word,
                   correct=correct, text=P.guess_text(seat, word, correct))
        return correct

    # --- parsing (a ParseError earns a corrective re-ask) ------------------------------------

    def _parse_word(self, text: str) -> str:
        return rules.parse_response(text, self.config.max_word_chars)

    def _parse_vote(self, allowed: list[int] | None = None) -> Callable[[str], int]:
        n = self.config.num_players
        return lambda text: rules.parse_vote(text, n, allowed)

    # --- asking players ------------------------------------------------------------------

    async def _ask(self, seat: int, kind: str, parse: Callable[[str], T]) -> Answer[T]:
        def decision_for(pending: Sequence[Pending], repair: str | None) -> Decision[Any]:
            extra = [p.preview(self.log.round, self.log.turn) for p in pending]
            obs = observe(seat, self.config.max_word_chars, (*self.log.views[seat], *extra))
            return Decision(GAME_NAME, kind, seat, obs, (), repair)

        def repair_notice(reason: str, action: Action) -> Pending:
            return Pending("repair_request", Visibility.only(seat),
                           {"seat": seat, "decision": kind, "reason": reason,
                            "rejected_text": action.text[:200], "text": P.repair_text(reason)},
                           actor=seat)

        answer = await ask(self.players[seat], decision_for=decision_for,
                           validate=lambda action: parse(action.text),
                           repair_attempts=self.config.repair_attempts,
                           timeout_s=self.config.decision_timeout_s,
                           repair_notice=repair_notice)
        self.usage[seat] = self.usage[seat] + answer.usage
        return answer

    def _flush(self, answer: Answer[Any]) -> None:
        for p in answer.pending:
            self._emit(p.type, actor=p.actor, visibility=p.visibility, **p.data)
        answer.pending.clear()

    def _settle(self, seat: int, kind: str, answer: Answer[Any]) -> None:
        self._flush(answer)
        if answer.failure is not None:
            # The rejected text is not published: a non-chameleon's unusable reply may
            # name the secret word. It stays in the seat's own repair_request events and
            # in the result summary.
            self._emit("invalid", actor=seat, seat=seat, decision=kind, reason=answer.failure,
                       text=P.invalid_text(seat, answer.failure))
            raise _Void(seat, kind, answer.failure, answer.raw[:200])

    def _emit(self, type: str, *, actor: int | None = None,
              visibility: Visibility | None = None, **data: Any) -> Event:
        return self.log.emit(type, actor=actor, visibility=visibility, **data)
