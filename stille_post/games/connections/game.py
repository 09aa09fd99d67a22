"""The Connections engine: one game between injected players (docs/rules.md §4), on the kit.

It never does I/O and draws nothing itself: the clue-giver rotation is fixed (rules.
clue_giver) and the only chance in a game is the players' own (bots draw from their
own rng streams). Guesses are asked for at the same moment through `Table.ask_all`,
which applies them in seat order.

A decision that stays unusable after its re-asks is a forfeit, never a crash: a
clue-giver's forfeit is a Guesser Wrong attempt (no clue, so no connection), a guess's
forfeit matches nothing, and a setter that never names a usable secret word voids the
game (there is nothing to play for). `max_attempts` bounds every game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stille_post.core.errors import ParseError
from stille_post.core.events import Event, Visibility
from stille_post.core.outcome import OutcomeSummary, Status
from stille_post.games.connections import prompts as P
from stille_post.games.connections import rules
from stille_post.games.connections.config import ConnectionsConfig
from stille_post.games.connections.dictionary import Dictionary, normalise
from stille_post.games.connections.observation import (
    AttemptRecord,
    ConnectionsObservation,
    PrivateFacts,
)
from stille_post.games.kit.engine import Engine
from stille_post.games.kit.framing import clean
from stille_post.games.kit.table import Table
from stille_post.players.base import Action
from stille_post.players.specs import SeatSpec

GAME_NAME = "connections"


class ConnectionsGame(Engine[ConnectionsConfig]):
    name = GAME_NAME

    def __init__(self, config: ConnectionsConfig, table: Table,
                 specs: Sequence[SeatSpec] = (), *, dictionary: Dictionary,
                 oracle_seats: Mapping[int, float] = {}) -> None:
        super().__init__(config, table, specs)
        self.dictionary = dictionary
        self.oracle_seats = dict(oracle_seats)
        self.setter = config.setter
        self.guessers = config.guesser_seats
        self.secret: str | None = None
        self.prefix = ""
        self.blocked: list[str] = []
        self.used: list[str] = []
        self.history: list[AttemptRecord] = []
        self.attempt = 0
        self.clue_giver: int | None = None
        self.clue: str | None = None
        self.result: str | None = None
        self.curve: list[int] = []  # letters revealed after each attempt (Figure 1)
        self.forfeits: dict[int, int] = {s: 0 for s in self.seats}
        self.secret_chosen_by = "option" if config.word else "setter"
        self.facts = {s: PrivateFacts(s) for s in self.seats}
        # The Game Master has said that no letter is left (a Connection after the whole
        # secret was revealed): a public fact from then on.
        self.nothing_left = False

    # --- the kit's hooks ----------------------------------------------------------------

    def seat_info(self, seat: int) -> dict[str, Any]:
        info: dict[str, Any] = {"role": rules.role_of(seat, self.setter)}
        persona = self.config.persona_of(seat)
        if persona:
            info["persona"] = persona
        if seat in self.oracle_seats:
            info["oracle_p"] = self.oracle_seats[seat]
        return info

    def header_extra(self) -> dict[str, Any]:
        # Public facts only: the secret word stays in the setter's private event.
        extra: dict[str, Any] = {"guessers": len(self.guessers),
                                 "dictionary": {"source": self.dictionary.source,
                                                "words": len(self.dictionary)}}
        if self.oracle_seats:
            extra["oracle"] = {str(s): p for s, p in sorted(self.oracle_seats.items())}
        return extra

    async def run(self) -> None:
        c = self.config
        self.emit("game_start", setter=self.setter, guessers=self.guessers,
                  max_attempts=c.max_attempts,
                  text=P.game_start_text(self.setter, self.guessers, c.max_attempts))
        personas = {s: p for s in self.seats if (p := c.persona_of(s))}
        for seat, persona in personas.items():
            self.emit("persona", visibility=Visibility.only(seat), seat=seat, persona=persona,
                      text=P.persona_text(persona))
        if c.share_personas and personas:
            self.emit("personas", personas={str(s): p for s, p in personas.items()},
                      text=P.personas_text(personas))
        await self._choose_secret()
        assert self.secret is not None
        self.prefix = rules.initial_prefix(self.secret)
        # The first letter and nothing else: the secret's length is never announced.
        self.emit("prefix", prefix=self.prefix, revealed=1,
                  text=P.prefix_text(self.prefix, first=True))
        while self.attempt < c.max_attempts and self.result is None:
            await self._attempt()
        if self.result is None:
            self.result = rules.SETTER_WINS

    def finish(self, status: Status, reason: str | None
               ) -> tuple[dict[int, int], OutcomeSummary]:
        if status != "completed":
            self.result = rules.ABORTED
        elif self.void is not None:
            self.result = rules.VOID
        result = self.result or rules.ABORTED
        self.emit("game_over", result=result, text=P.game_over_text(result, reason))
        self.emit("reveal", secret=self.secret, text=P.reveal_text(self.secret))
        winners = rules.winners(result, self.setter, self.guessers)
        counts = {o: sum(1 for h in self.history if h.outcome == o)
                  for o in (rules.CONNECTION, rules.BLOCKED, rules.WRONG)}
        won_by_connection = result == rules.GUESSERS_WIN
        reveals = counts[rules.CONNECTION] - (1 if won_by_connection else 0)
        notes = {s: rules.role_of(s, self.setter) + (", won" if s in winners else "")
                 for s in self.seats}
        details: dict[str, Any] = {
            "result": result,
            "secret": self.secret,
            "secret_chosen_by": self.secret_chosen_by,
            "setter": self.setter,
            "guessers": self.guessers,
            "max_attempts": self.config.max_attempts,
            "attempts": len(self.history),
            # The paper's Table 1 columns. Its rows add up: reveals + guesser_wrong +
            # setter_blocked = iterations, the attempts before the winning one.
            "reveals": reveals,
            "guesser_wrong": counts[rules.WRONG],
            "setter_blocked": counts[rules.BLOCKED],
            "iterations": reveals + counts[rules.WRONG] + counts[rules.BLOCKED],
            "connections": counts[rules.CONNECTION],
            "letters_revealed": len(self.prefix),
            "curve": list(self.curve),
            "blocked": list(self.blocked),
            "used": list(self.used),
            "history": [h.to_json() for h in self.history],
            "forfeits": {str(s): n for s, n in sorted(self.forfeits.items()) if n},
        }
        if self.oracle_seats:
            # A simulation device, not a player: the report must be able to tell.
            details["oracle"] = {str(s): p for s, p in sorted(self.oracle_seats.items())}
        if self.void is not None:
            v = self.void
            details["void"] = {"seat": v.seat, "decision": v.decision, "reason": v.reason}
        summary = OutcomeSummary(
            winners=tuple(winners), eliminated=(),
            valid=status == "completed" and result in (rules.GUESSERS_WIN, rules.SETTER_WINS),
            turns=len(self.history), notes=notes, details=details)
        return rules.placements(result, self.setter, self.guessers), summary

    # --- the setter's word ----------------------------------------------------------------

    async def _choose_secret(self) -> None:
        call: dict[str, Any] = {}
        if self.config.word is not None:  # checked against the dictionary in setup
            word = normalise(self.config.word)
        else:
            def validate(action: Action) -> tuple[str, dict[str, Any]]:
                raw, data = P.read_word(action, P.CHOOSE_WORD)
                err = rules.secret_error(raw, self.dictionary)
                if err:
                    raise ParseError(err)
                return normalise(raw), data

            answer = await self.table.ask(self.setter, P.SECRET_WORD, observe=self._observe,
                                          validate=validate, on_failure="void",
                                          tools=(P.TOOL_OF[P.SECRET_WORD],))
            word, call = answer.unwrap()
        self.secret = word
        data: dict[str, Any] = {"seat": self.setter, "word": word,
                                "chosen_by": self.secret_chosen_by, **call}
        self.emit("secret", actor=self.setter, visibility=Visibility.only(self.setter),
                  **data, text=P.secret_text(word))

    # --- one attempt ------------------------------------------------------------------------

    def _check_word(self, raw: str) -> str:
        err = rules.word_error(raw, prefix=self.prefix, dictionary=self.dictionary,
                               blocked=self.blocked, used=self.used, secret=self.secret)
        if err:
            raise ParseError(err)
        return normalise(raw)

    def _validate_guess(self, action: Action) -> tuple[str, dict[str, Any]]:
        raw, call = P.read_word(action, P.GUESS_TOOL)
        return self._check_word(raw), call

    def _validate_clue(self, action: Action) -> tuple[str, str, dict[str, Any]]:
        raw_word, clue, call = P.read_clue(action)
        word = self._check_word(raw_word)
        # The check runs on the clue as it will be shown (after the caps), so a cut can
        # never expose the word.
        cleaned = clean(clue, max_chars=self.config.max_clue_chars,
                        max_words=self.config.max_clue_words).text
        err = rules.clue_error(cleaned, word)
        if err:
            raise ParseError(err)
        return word, clue, call

    async def _attempt(self) -> None:
        assert self.secret is not None
        self.attempt += 1
        self.table.log.round = self.attempt
        self.clue = None
        giver = rules.clue_giver(self.attempt, self.guessers)
        self.clue_giver = giver
        prefix = self.prefix
        self.emit("attempt_start", actor=giver, attempt=self.attempt, giver=giver,
                  prefix=prefix, text=P.attempt_text(self.attempt, giver, prefix))
        answer = await self.table.ask(giver, P.CLUE, observe=self._observe,
                                      validate=self._validate_clue, tools=(P.TOOL_OF[P.CLUE],))
        if not answer.ok:
            self._forfeit(giver, P.CLUE, answer.failure or "")
            self._record(giver, prefix, None, None, {}, rules.WRONG, ())
            return
        self.forfeits[giver] = 0
        word, raw_clue, call = answer.unwrap()
        cleaned = clean(raw_clue, max_chars=self.config.max_clue_chars,
                        max_words=self.config.max_clue_words)
        self.clue = cleaned.text
        data: dict[str, Any] = {"attempt": self.attempt, "word": word, "clue": cleaned.text,
                                **call}
        self.emit("clue_word", actor=giver, visibility=Visibility.only(giver), **data,
                  text=P.clue_word_text(word))
        clue_data: dict[str, Any] = {"attempt": self.attempt, "clue": cleaned.text,
                                     **cleaned.meta()}
        self.emit("clue", actor=giver, **clue_data)

        guessing = [s for s in self.seats if s != giver]
        answers = await self.table.ask_all(
            guessing, P.GUESS, observe=self._observe,
            validate=self._validate_guess, tools=(P.TOOL_OF[P.GUESS],))
        guesses: dict[int, str | None] = {}
        for seat, ans in answers.items():
            if ans.ok:
                self.forfeits[seat] = 0
                g, call = ans.unwrap()
                guesses[seat] = g
                gdata: dict[str, Any] = {"attempt": self.attempt, "word": g, **call}
                self.emit("guess", actor=seat, **gdata)
            else:
                guesses[seat] = None
                self._forfeit(seat, P.GUESS, ans.failure or "")
        others = {s: g for s, g in guesses.items() if s != self.setter}
        scored = rules.score(word, guesses.get(self.setter), others, self.secret)
        if scored.outcome == rules.BLOCKED:
            self.blocked.append(word)
        else:
            self.used.append(word)
        was_full = rules.fully_revealed(self.secret, prefix)
        if scored.outcome == rules.CONNECTION:
            self.prefix = rules.next_prefix(self.secret, self.prefix)
        self._record(giver, prefix, word, cleaned.text, guesses, scored.outcome,
                     scored.connectors, scored)
        if scored.win:
            self.result = rules.GUESSERS_WIN
        elif scored.outcome == rules.CONNECTION:
            if was_full:
                # No letter is left to reveal, and saying nothing would say the same:
                # the Game Master says it plainly. Play goes on until a clue word is
                # the secret itself (docs/rules.md §4).
                self.nothing_left = True
                self.emit("prefix", prefix=self.prefix, revealed=len(self.prefix),
                          complete=True, text=P.nothing_left_text(self.prefix))
            else:
                # Never "the whole word" when the last letter comes: that would tell the
                # secret's length, and so the secret, before the rules do.
                self.emit("prefix", prefix=self.prefix, revealed=len(self.prefix),
                          text=P.prefix_text(self.prefix, first=False))

    def _forfeit(self, seat: int, decision: str, reason: str) -> None:
        self.forfeits[seat] = self.forfeits.get(seat, 0) + 1
        # The rejected text is not published: a clue-giver's may name its word.
        self.emit("invalid", actor=seat, seat=seat, decision=decision, reason=reason,
                  text=P.invalid_text(seat, reason))

    def _record(self, giver: int, prefix: str, word: str | None, clue: str | None,
                guesses: Mapping[int, str | None], outcome: str,
                connectors: tuple[int, ...], scored: rules.Scored | None = None) -> None:
        rec = AttemptRecord(self.attempt, giver, prefix, word, clue, dict(guesses), outcome,
                            connectors)
        self.history.append(rec)
        self.curve.append(len(self.prefix))
        self.clue = None
        self.emit("scored", attempt=self.attempt, giver=giver, word=word, outcome=outcome,
                  connectors=list(connectors),
                  setter_matched=bool(scored and scored.setter_matched),
                  win=bool(scored and scored.win), prefix=self.prefix,
                  blocked=list(self.blocked), used=list(self.used),
                  text=P.scored_text(self.attempt, giver, word, outcome, connectors,
                                     bool(scored and scored.setter_matched), self.blocked,
                                     bool(scored and scored.win)))

    # --- observations --------------------------------------------------------------------

    def _observe(self, seat: int, events: Sequence[Event]) -> ConnectionsObservation:
        # Private facts come from the seat's committed view (the events an ask adds at
        # its end are repair notices, which hold none).
        facts = self.facts[seat].update(self.table.view(seat))
        secret, persona = facts.secret, facts.persona
        own_word = facts.own_words.get(self.attempt)
        others: dict[int, str] = {}
        if self.config.share_personas:
            others = {s: p for s in self.seats if s != seat and (p := self.config.persona_of(s))}
        return ConnectionsObservation(
            seat=seat, role=rules.role_of(seat, self.setter), setter=self.setter,
            guessers=tuple(self.guessers), max_attempts=self.config.max_attempts,
            min_length=self.config.min_word_length, attempt=self.attempt,
            prefix=self.prefix, nothing_left=self.nothing_left,
            blocked=tuple(self.blocked), used=tuple(self.used),
            history=tuple(self.history), clue_giver=self.clue_giver, clue=self.clue,
            secret=secret, own_word=own_word, persona=persona, others_personas=others,
            events=events, dictionary=self.dictionary)
