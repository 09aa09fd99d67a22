"""The Chameleon engine: one game between injected players (docs/rules.md §3), on the kit.

It never does I/O and never reads the clock (the decision deadline only fires on a hung
player). All chance went into the `Deal` (drawn by rules.deal from the injected rng) or
goes through the rng here (a random tie-break). The votes are asked for at the same
moment through `Table.ask_all`, which applies them in seat order.

Visibility: the secret word appears only in the `role` events of the non-chameleons
(each visible to its own seat) until the public `reveal` that closes the game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from stille_post.core.events import Event, Visibility
from stille_post.core.outcome import OutcomeSummary, Status
from stille_post.games.chameleon import prompts as P
from stille_post.games.chameleon import rules
from stille_post.games.chameleon.config import ChameleonConfig
from stille_post.games.chameleon.observation import ChameleonObservation, observe
from stille_post.games.chameleon.theory.model import Theory
from stille_post.games.chameleon.theory.space import space_of
from stille_post.games.kit import votes
from stille_post.games.kit.asking import Answer
from stille_post.games.kit.engine import Engine
from stille_post.games.kit.table import Table
from stille_post.players.base import Action
from stille_post.players.specs import SeatSpec

GAME_NAME = "chameleon"
T = TypeVar("T")


class ChameleonGame(Engine[ChameleonConfig]):
    name = GAME_NAME

    def __init__(self, config: ChameleonConfig, table: Table,
                 specs: Sequence[SeatSpec] = (), *, deal: rules.Deal,
                 theory: Theory | None = None) -> None:
        super().__init__(config, table, specs)
        self.deal = deal
        # A theory game answers in an abstract response space (theory/space.py).
        self.theory = theory
        self.space = space_of(theory) if theory is not None else None
        self.responses: dict[int, str] = {}
        self.votes: dict[int, int] = {}
        self.record: dict[str, Any] = {}
        self.outcome = rules.FAIL

    # --- the kit's hooks ----------------------------------------------------------------

    def seat_info(self, seat: int) -> dict[str, Any]:
        return {"role": rules.role_of(seat, self.deal.chameleon)}

    def header_extra(self) -> dict[str, Any]:
        c, d = self.config, self.deal
        # Only public facts: the header is read by viewers before the game's end, so the
        # secret word stays in the events.
        return {
            "category": d.category,
            "words": list(d.words),
            "baseline": {"trivial_non_chameleon_win":
                         rules.trivial_win_probability(c.num_players, len(d.words))},
            **self._theory_mark(),
        }

    def _theory_mark(self) -> dict[str, Any]:
        return {"theory": self.theory.to_json()} if self.theory is not None else {}

    async def run(self) -> None:
        d, c = self.deal, self.config
        self.emit("game_start", num_players=c.num_players, category=d.category,
                  words=list(d.words), tie_rule=c.tie_rule, **self._theory_mark(),
                  text=P.game_start_text(c.num_players, d.category, d.words))
        for seat in self.seats:
            role = rules.role_of(seat, d.chameleon)
            secret = None if role == rules.CHAMELEON else d.secret
            data: dict[str, Any] = {"seat": seat, "role": role}
            if secret is not None:
                data["secret"] = secret
            self.emit("role", visibility=Visibility.only(seat), **data,
                      text=P.role_text(role, secret))
        if c.tie_rule == "dealer":
            self.emit("dealer", seat=d.dealer, text=P.dealer_text(d.dealer))
        self.emit("speaking_order", order=list(d.order), text=P.order_text(d.order))
        self.table.log.round = 1
        for seat in d.order:
            await self._word_turn(seat)
        accused = await self._vote()
        caught = accused == d.chameleon
        self.record.update(accused=accused, identified=caught)
        self.emit("accusation", seat=accused, chameleon_caught=caught,
                  text=P.accusation_text(accused, caught))
        guess_correct = await self._second_chance() if caught else None
        self.outcome = rules.outcome_of(accused, d.chameleon, guess_correct)

    def finish(self, status: Status, reason: str | None
               ) -> tuple[dict[int, int], OutcomeSummary]:
        d = self.deal
        if status != "completed" or self.void is not None:
            self.outcome = rules.FAIL
        if self.void is not None:
            v = self.void
            self.record["fail"] = {"seat": v.seat, "decision": v.decision, "reason": v.reason,
                                   "rejected_text": v.rejected}
        outcome = self.outcome
        self.emit("game_over", outcome=outcome, text=P.game_over_text(outcome, reason))
        self.emit("reveal", chameleon=d.chameleon, secret=d.secret,
                  text=P.reveal_text(d.chameleon, d.secret))
        winners = rules.winners(outcome, d.chameleon, self.seats)
        notes = {s: ("chameleon" if s == d.chameleon else "non-chameleon")
                 + (", won" if s in winners else "") for s in self.seats}
        summary = OutcomeSummary(
            winners=tuple(winners),
            eliminated=(),
            valid=status == "completed" and outcome != rules.FAIL,
            turns=len(self.responses),
            notes=notes,
            details={
                "outcome": outcome,
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
                **self._theory_mark(),
            },
        )
        return rules.placements(outcome, d.chameleon, self.seats), summary

    # --- the three phases --------------------------------------------------------------

    async def _word_turn(self, seat: int) -> None:
        self.table.log.turn += 1
        self.emit("turn_start", actor=seat, text=P.turn_text(seat))
        answer = await self._ask(seat, P.WORD, self._parse_word)
        word = answer.unwrap()
        self.responses[seat] = word
        extra: dict[str, Any] = {"raw": answer.raw[:200]} if answer.raw.strip() != word else {}
        self.emit("word", actor=seat, word=word, **extra, text=P.word_text(seat, word))

    async def _vote(self) -> int | None:
        self.emit("vote_start", text=P.vote_start_text())
        parse = self._parse_vote()
        answers = await self.table.ask_all(
            self.seats, P.VOTE, observe=self._observe,
            validate=lambda action: parse(action.text), on_failure="void")
        for seat, answer in answers.items():
            target = answer.unwrap()
            self.votes[seat] = target
            self.emit("vote", actor=seat, target=target, text=P.vote_text(seat, target))
        counts = votes.tally(self.votes)
        top = votes.leaders(counts)
        self.record.update(tally={str(s): n for s, n in counts.items()}, top=top,
                           tie=len(top) > 1)
        self.emit("vote_result", tally={str(s): n for s, n in counts.items()}, top=top,
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
            picked = votes.rng_pick(self.table.rng, tied)
        else:
            actor = self.deal.dealer
            self.emit("tie_break_request", actor=actor, tied=tied,
                      text=P.tie_break_request_text(actor, tied))
            answer = await self._ask(actor, P.TIE_BREAK, self._parse_vote(tied))
            picked = answer.unwrap()
        self.record["tie_break"] = {"rule": rule, "tied": tied, "picked": picked,
                                    **({"dealer": actor} if actor is not None else {})}
        self.emit("tie_break", actor=actor, rule=rule, tied=tied, picked=picked,
                  text=P.tie_break_text(rule, picked, actor))
        return picked

    async def _second_chance(self) -> bool:
        seat, d = self.deal.chameleon, self.deal
        self.emit("second_chance", actor=seat, text=P.second_chance_text(seat))
        answer = await self._ask(seat, P.GUESS, lambda text: rules.parse_guess(text, d.words))
        word = answer.unwrap()
        correct = rules.same_word(word, d.secret)
        self.record.update(guess=word, guess_correct=correct)
        self.emit("guess", actor=seat, guess=answer.raw.strip()[:200], word=word,
                  correct=correct, text=P.guess_text(seat, word, correct))
        return correct

    # --- parsing (a ParseError earns a corrective re-ask) ------------------------------------

    def _parse_word(self, text: str) -> str:
        if self.space is not None:
            return self.space.parse(text)
        return rules.parse_response(text, self.config.max_word_chars)

    def _parse_vote(self, allowed: list[int] | None = None) -> Callable[[str], int]:
        n = self.config.num_players
        return lambda text: rules.parse_vote(text, n, allowed)

    # --- asking players ------------------------------------------------------------------

    def _observe(self, seat: int, events: Sequence[Event]) -> ChameleonObservation:
        return observe(seat, self.config.max_word_chars, events)

    async def _ask(self, seat: int, kind: str, parse: Callable[[str], T]) -> Answer[T]:
        """An unusable answer voids the game (docs/rules.md §3: the game is `Fail`)."""
        def validate(action: Action) -> T:
            return parse(action.text)

        return await self.table.ask(seat, kind, observe=self._observe, validate=validate,
                                    on_failure="void")
