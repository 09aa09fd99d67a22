"""The Stille Post engine: orchestrates one game between injected players.

It never does I/O and never reads the clock (the decision deadline is the only timer,
and it only fires on a hung player). All chance goes through the injected rng. Decisions
asked for in parallel (the identity guess) are awaited together and applied in seat
order, so the same seed and the same answers give the same event stream.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from stille_post.core.errors import ParseError
from stille_post.core.events import Event, Visibility
from stille_post.core.outcome import OutcomeSummary, Status
from stille_post.games.kit import framing, votes
from stille_post.games.kit.asking import Answer
from stille_post.games.kit.engine import Engine
from stille_post.games.kit.table import Table
from stille_post.games.stille_post import prompts as P
from stille_post.games.stille_post import rules
from stille_post.games.stille_post.config import StillePostConfig
from stille_post.games.stille_post.observation import StillePostObservation
from stille_post.games.stille_post.roster import Roster, RosterModel
from stille_post.players.base import Action
from stille_post.players.specs import SeatSpec
from stille_post.providers.base import ToolCall

GAME_NAME = "stille-post"
T = TypeVar("T")


class StillePostGame(Engine[StillePostConfig]):
    name = GAME_NAME

    def __init__(self, config: StillePostConfig, table: Table,
                 specs: Sequence[SeatSpec] = (), *, roster: Roster) -> None:
        super().__init__(config, table, specs)
        n = config.num_players
        self.rng = table.rng
        self.roster = roster
        self.identities = rules.assign_identities(self.rng, roster, n, config.pinned)
        self.active: list[int] = list(range(1, n + 1))
        self.winner_groups: list[list[int]] = []
        self.eliminated: list[int] = []
        self.causes: dict[int, str] = {}
        self.hints: dict[int, list[tuple[str, str]]] = {s: [] for s in self.active}
        self.forfeit_streak: dict[int, int] = dict.fromkeys(self.active, 0)
        self.phase = 0
        self.end = "the game did not start"
        # Seats removed as unresponsive in one identity-guess phase tie (like its winners).
        self.removed_together: list[list[int]] = []
        # Models outside the roster that joined this game's identities (set by setup).
        self.added: list[RosterModel] = []

    @property
    def log(self) -> Any:
        return self.table.log

    # --- the kit's hooks --------------------------------------------------------------

    def seat_info(self, seat: int) -> dict[str, Any]:
        m = self.identities[seat]
        return {"model": m.id, "provider": m.provider, "tier": m.tier}

    def seats_json(self) -> dict[str, dict[str, Any]]:
        # A seat's identity is its model, whatever plays it (a bot plays a roster model).
        out = super().seats_json()
        for seat, row in out.items():
            row.update(self.seat_info(int(seat)))
        return out

    async def run(self) -> None:
        self.end = await self._run()

    def finish(self, status: Status, reason: str | None
               ) -> tuple[dict[int, int], OutcomeSummary]:
        end = self.end if status == "completed" else (reason or "aborted")
        self._emit("game_over", reason=end, text=P.game_over_text(end))
        ids = {s: m.id for s, m in self.identities.items()}
        self._emit("reveal", identities={str(s): i for s, i in ids.items()},
                   text=P.reveal_text(ids))
        placements = rules.placements(self.winner_groups, self.active, self.eliminated,
                                      self.removed_together)
        phases = {s: i + 1 for i, g in enumerate(self.winner_groups) for s in g}
        notes = {s: f"won at identity guess #{p}" for s, p in phases.items()}
        notes.update({s: f"eliminated ({c})" for s, c in self.causes.items()})
        notes.update({s: "still in at the end" for s in self.active})
        return placements, OutcomeSummary(
            winners=tuple(s for g in self.winner_groups for s in g),
            eliminated=tuple(self.eliminated),
            valid=True,
            turns=self.log.turn,
            notes=notes,
            details={
                "end": end,
                "seats": {str(s): i for s, i in ids.items()},
                "winner_phases": {str(s): p for s, p in phases.items()},
                "causes": {str(s): c for s, c in self.causes.items()},
                "survivors": sorted(self.active),
                "rounds": self.log.round,
                "guess_phases": self.phase,
            },
        )

    async def _run(self) -> str:
        n = self.config.num_players
        self._emit("game_start", num_players=n, text=P.game_start_text(n))
        for seat in range(1, n + 1):
            if seat not in self.active:
                continue
            self._emit("intro_prompt", actor=seat, text=P.intro_prompt_text(seat))
            answer = await self._ask(seat, "intro", self._validate_intro)
            self._settle(seat, answer)
            if answer.value is not None:
                self._publish_intro(seat, answer.value)
            if len(self.active) <= 1:
                return self._few_left()
        while True:
            self.log.round += 1
            for seat in rules.round_order(self.active):
                if seat not in self.active:
                    continue  # left earlier in this round
                self.log.turn += 1
                self._emit("turn_start", actor=seat,
                           text=P.turn_start_text(self.log.round, self.log.turn, seat))
                answer = await self._ask(seat, "turn", self._validate_turn)
                self._settle(seat, answer)
                if answer.value is not None:
                    self._publish_turn(seat, answer.value)
                if len(self.active) <= 1:
                    return self._few_left()
                if self.log.turn % self.config.guess_every == 0:
                    await self._identity_guess()
                    if len(self.active) <= 1:
                        return self._few_left()
            if self.log.round >= self.config.max_rounds:
                return f"{self.config.max_rounds} rounds are complete"

    def _few_left(self) -> str:
        return "no player is left" if not self.active else "only one player is left"

    # --- asking players -------------------------------------------------------------

    def _observe(self, seat: int, events: Sequence[Event]) -> StillePostObservation:
        c = self.config
        return StillePostObservation(
            seat=seat, num_players=c.num_players, guess_every=c.guess_every,
            max_rounds=c.max_rounds, match=c.match, max_message_chars=c.max_message_chars,
            roster=self.roster, active=tuple(self.active), round=self.log.round,
            turn=self.log.turn, hints=tuple(self.hints[seat]), events=events,
        )

    async def _ask(self, seat: int, kind: str, validate: Callable[[Action], T]) -> Answer[T]:
        return await self.table.ask(seat, kind, observe=self._observe, validate=validate,
                                    tools=P.TOOLS)

    def _settle(self, seat: int, answer: Answer[Any]) -> None:
        """A failed ask is a forfeit; K in a row remove the seat (docs/rules.md §1)."""
        if answer.failure is None:
            self.forfeit_streak[seat] = 0
            return
        self.forfeit_streak[seat] += 1
        streak = self.forfeit_streak[seat]
        self._emit("forfeit", seat=seat, reason=answer.failure, streak=streak,
                   text=P.forfeit_text(seat, answer.failure))
        if streak >= self.config.max_forfeits and seat in self.active:
            self._remove(seat, "unresponsive", P.removed_text(seat, streak))

    # --- validation (parse errors earn a corrective re-ask) ----------------------------

    @staticmethod
    def _validate_intro(action: Action) -> Action:
        if not action.text:
            raise ParseError("the opening message was empty; write a short message")
        return action

    @staticmethod
    def _validate_turn(action: Action) -> Action:
        if not action.text and not action.tool_calls:
            raise ParseError("the reply had no message and no tool call")
        if action.tool_calls and action.tool_calls[0].malformed:
            raise ParseError(f"the tool call could not be read: {action.tool_calls[0].malformed}")
        return action

    @staticmethod
    def _validate_guess(action: Action) -> str:
        if not action.text:
            raise ParseError("the identity guess was empty; reply with one model id")
        return action.text

    # --- publishing what a seat did -------------------------------------------------------

    def _clean(self, seat: int, text: str) -> tuple[str, dict[str, Any]]:
        cleaned = framing.clean(text, max_chars=self.config.max_message_chars)
        return cleaned.text, cleaned.meta()

    def _publish_text(self, seat: int, action: Action) -> None:
        if action.text:
            text, meta = self._clean(seat, action.text)
            self._emit("message", actor=seat, text=text, **meta)
        if action.provider_data:
            # Opaque provider data (thinking blocks, signatures) goes back to its own model
            # untouched, and to nobody else: it may hold the model's private reasoning.
            self._emit("message_meta", actor=seat, visibility=Visibility.only(seat),
                       provider_data=action.provider_data)

    def _publish_intro(self, seat: int, action: Action) -> None:
        self._publish_text(seat, action)
        if action.tool_calls:
            # No call is recorded, so the seat's history needs no tool result: a notice.
            self._emit("tool_refused", actor=seat, tool=action.tool_calls[0].name,
                       reason="no tools in the introduction round",
                       text=P.refused_text(seat, action.tool_calls[0].name,
                                           "no tools in the introduction round"))

    def _publish_turn(self, seat: int, action: Action) -> None:
        self._publish_text(seat, action)
        if not action.tool_calls:
            return
        calls = [self._with_id(c, i) for i, c in enumerate(action.tool_calls)]
        # The calls are the caller's private record: a public copy would show everyone the
        # model named in a guess_model, which the rules keep secret.
        self._emit("tool_calls", actor=seat, visibility=Visibility.only(seat),
                   tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments,
                                **({"provider_data": c.provider_data}
                                   if c.provider_data else {})} for c in calls])
        self._apply_tool(seat, calls[0])
        for extra in calls[1:]:
            self._refuse(seat, extra, "only one tool call per turn")

    def _with_id(self, call: ToolCall, index: int) -> ToolCall:
        if call.id:
            return call
        call_id = f"call_r{self.log.round}t{self.log.turn}_{index}"
        return ToolCall(call.name, call.arguments, call_id, call.malformed, call.provider_data)

    def _refuse(self, seat: int, call: ToolCall, reason: str) -> None:
        self._emit("tool_refused", actor=seat, call_id=call.id, tool=call.name, reason=reason,
                   text=P.refused_text(seat, call.name, reason))

    def _result(self, seat: int, call: ToolCall, text: str, **data: Any) -> None:
        self._emit("tool_result", actor=seat, call_id=call.id, tool=call.name, text=text, **data)

    # --- the four tools ----------------------------------------------------------------

    def _apply_tool(self, seat: int, call: ToolCall) -> None:
        allowed = P.TOOL_PARAMETERS.get(call.name)
        unexpected = sorted(set(call.arguments) - allowed) if allowed is not None else []
        if call.malformed:
            self._refuse(seat, call, f"the call could not be read ({call.malformed})")
        elif unexpected:
            # The schemas forbid extra properties; a model that thinks it can aim the
            # roulette must not get a spin it did not ask for.
            takes = ", ".join(sorted(allowed or ())) or "no arguments"
            self._refuse(seat, call, f"unexpected arguments {', '.join(unexpected)} "
                         f"({call.name} takes {takes})")
        elif call.name == "russian_roulette":
            victim, r = rules.roulette(self.rng, seat, self.active)
            self._result(seat, call, P.roulette_text(seat, victim), victim=victim, r=r)
            self._remove(seat=victim, cause="roulette", text=None, by=seat)
        elif call.name == "guess_model":
            self._guess_model(seat, call)
        elif call.name in ("proclaim_superiority", "propose_task"):
            key = "statement" if call.name == "proclaim_superiority" else "task"
            value = call.arguments.get(key)
            if not isinstance(value, str) or not value.strip():
                self._refuse(seat, call, f"it needs a non-empty text argument '{key}'")
                return
            text, meta = self._clean(seat, value.strip())
            render = P.proclaim_text if key == "statement" else P.propose_task_text
            self._result(seat, call, render(seat, text), **{key: text}, **meta)
        else:
            self._refuse(seat, call, f"there is no tool {call.name!r}; the tools are "
                         + ", ".join(P.TOOL_NAMES))

    def _guess_model(self, seat: int, call: ToolCall) -> None:
        target = votes.parse_seat(call.arguments.get("player_id"))
        model = call.arguments.get("model_id")
        if target is None:
            return self._refuse(seat, call, "player_id must be a player number")
        if not isinstance(model, str) or not model.strip():
            return self._refuse(seat, call, "model_id must be a non-empty model id")
        if target == seat:
            return self._refuse(seat, call, "you cannot guess your own model with guess_model")
        if target not in self.identities:
            return self._refuse(seat, call, f"there is no Player {target}")
        if target not in self.active:
            return self._refuse(seat, call, f"Player {target} is no longer in the game")
        verdict = rules.judge_guess(model, self.identities[target].id,
                                    mode=self.config.match, roster_ids=self.roster.ids)
        if not verdict.valid:
            return self._refuse(seat, call, f"invalid guess: {verdict.reason}")
        self._result(seat, call, P.guess_model_text(seat, target, verdict.correct),
                     target=target, correct=verdict.correct)
        if not verdict.correct:
            return None
        kind = rules.draw_hint_kind(self.rng, (k for k, _ in self.hints[seat]))
        if kind is None:
            self._emit("no_hints_left", visibility=Visibility.only(seat), seat=seat,
                       text=P.no_hints_left_text())
            return None
        value = rules.hint_value(kind, self.identities[seat])
        self.hints[seat].append((kind, value))
        self._emit("hint", visibility=Visibility.only(seat), seat=seat, kind=kind, value=value,
                   text=P.hint_received_text(kind))
        return None

    # --- identity guess ------------------------------------------------------------------

    async def _identity_guess(self) -> None:
        self.phase += 1
        seats = sorted(self.active)
        self._emit("identity_guess_start", phase=self.phase, seats=seats,
                   text=P.identity_guess_start_text(self.phase))
        answers = await self.table.ask_all(seats, "identity_guess", observe=self._observe,
                                           validate=self._validate_guess, tools=P.TOOLS)
        results: dict[int, str] = {}
        winners: list[int] = []
        removed_before = len(self.eliminated)
        for seat, answer in answers.items():
            self._settle(seat, answer)
            if answer.value is None:
                results[seat] = "forfeit"
                continue
            guess, _ = framing.cap_chars(answer.value, 200)
            verdict = rules.judge_guess(guess, self.identities[seat].id,
                                        mode=self.config.match, roster_ids=self.roster.ids)
            self._emit("identity_guess", actor=seat, visibility=Visibility.only(seat),
                       phase=self.phase, text=guess, valid=verdict.valid,
                       correct=verdict.correct, reason=verdict.reason)
            if not verdict.valid:
                self._emit("guess_invalid", visibility=Visibility.only(seat), seat=seat,
                           text=f"Your guess was invalid: {verdict.reason}.")
            results[seat] = "correct" if verdict.correct else "wrong"
            if verdict.correct and seat in self.active:
                winners.append(seat)
        removed = self.eliminated[removed_before:]
        if len(removed) > 1:
            self.removed_together.append(removed)
        self._emit("identity_result", phase=self.phase,
                   results={str(s): r for s, r in results.items()}, winners=winners,
                   text=P.identity_result_text(self.phase, results, winners))
        for seat in winners:
            self.active.remove(seat)
        if winners:
            self.winner_groups.append(winners)

    # --- leaving the game -----------------------------------------------------------------

    def _remove(self, seat: int, cause: str, text: str | None, by: int | None = None) -> None:
        self.active.remove(seat)
        self.eliminated.append(seat)
        self.causes[seat] = cause
        data: dict[str, Any] = {"seat": seat, "cause": cause}
        if by is not None:
            data["by"] = by
        if text is not None:
            data["text"] = text  # roulette already announced it in the tool result
        self._emit("eliminated", **data)

    def _emit(self, type: str, *, actor: int | None = None,
              visibility: Visibility | None = None, **data: Any) -> Event:
        return self.table.emit(type, actor=actor, visibility=visibility, **data)

