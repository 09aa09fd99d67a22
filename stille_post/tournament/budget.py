"""Budgets: caps on what a results folder spends, in dollars and in tokens.

A cap bounds the whole folder (every game it holds, across runs and resumes), so
`--resume` with a higher cap continues where the last run stopped. The caps are declared
declared in tournament/caps.py: the folder's come from the tournament settings (command
line, tournament file, the run saved in the folder), each alias's from the registry.

How a run keeps to its caps:
- Before a game starts, its expected cost is added to what the folder has spent and what
  the running games are expected to spend (`BudgetGuard.may_start`). If that would cross
  a cap, no new game starts; the running ones finish (a soft cap: the spend ends at most
  the running games' overshoot above the cap).
- A game's expected cost comes from the folder's own completed games: the mean per game
  with fixed seats, the mean per seat-game of each model with a pool; a model not seen
  yet is priced on the mean tokens of a seat-game of any model. A folder with no history
  expects nothing, so the first games always start.
- `--hard-cap`: every LLM call first checks the spend so far (the finished games plus
  the running games' calls); at the cap the call is not sent and its game ends as
  aborted, with a reason starting `budget`. A resume plays such games again from the
  start (their cut transcripts are kept beside as `games/ID.jsonl.cut-N`, and their spend
  still counts); every other finished game is left alone.
- Spend is read from the transcripts (tournament/spend.py), so the folder is its own
  ledger. `spend.json` records, after every run, the caps, the spend per model and why
  the run stopped (`completed`, `budget`, `interrupted`).

What is not counted: the calls of games a `kill -9` interrupted (their transcripts have
no result line, and resume replays them). At most `--concurrency` games' worth.
"""

from __future__ import annotations

import os
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stille_post.core.errors import GameAborted
from stille_post.games.kit.setup import LLMFactory
from stille_post.players.base import Action, Decision, Player, PromptBook
from stille_post.providers.base import Usage
from stille_post.providers.pricing import model_of
from stille_post.tournament.caps import Caps, alias_of_label, flag
from stille_post.tournament.config import GameSpec, TournamentConfig, write_json_atomic
from stille_post.tournament.spend import (
    CUT_MARK,
    SPEND_FILE,
    FolderSpend,
    folder_spend,
    labels_and_usage,
    read_spend_file,
    transcript_ends,
)

BUDGET_REASON = "budget"  # an aborted game's reason starts with it


# The game a task is playing: an LLM seat's wrapper charges its calls to it.
_GAME: ContextVar[str | None] = ContextVar("budget_game", default=None)


@dataclass
class _Cost:
    dollars: float = 0.0
    tokens: float = 0.0

    def __add__(self, other: _Cost) -> _Cost:
        return _Cost(self.dollars + other.dollars, self.tokens + other.tokens)


@dataclass
class _Running:
    expected: dict[str, _Cost]  # per label
    live: dict[str, _Cost] = field(default_factory=dict)

    def charge(self) -> dict[str, _Cost]:
        """What the game counts for now: its expected cost, or more once it spent more."""
        out: dict[str, _Cost] = {}
        for label in {*self.expected, *self.live}:
            e, v = self.expected.get(label, _Cost()), self.live.get(label, _Cost())
            out[label] = _Cost(max(e.dollars, v.dollars), max(e.tokens, v.tokens))
        return out


class BudgetGuard:
    """Keeps one run (one process) within its caps. See the module's docstring."""

    def __init__(self, folder: Path, config: TournamentConfig, caps: Caps,
                 spent: FolderSpend) -> None:
        self.folder = folder
        self.config = config
        self.caps = caps
        self.spent = spent
        self.running: dict[str, _Running] = {}
        self.stopped: str | None = None  # the one-line reason no new game starts
        self.cap_hit: str | None = None
        self.started_at = time.time()
        self.played = 0

    @classmethod
    def open(cls, folder: Path, config: TournamentConfig, caps: Caps, index: Any) -> BudgetGuard:
        reopen_cut_games(folder, index)
        return cls(folder, config, caps, folder_spend(folder))

    # --- expected costs ---

    def _labels(self, spec: GameSpec) -> list[str]:
        from stille_post.games import get_game
        from stille_post.players.specs import parse_seat_spec

        bots = get_game(self.config.game).bot_names
        return [parse_seat_spec(p, bots).label for p in spec.players or ()
                if p.strip() not in ("bot", "bot:")]

    def expected(self, spec: GameSpec) -> dict[str, _Cost]:
        done = self.spent.completed
        if not done.games:
            return {}
        if self.config.pool is None:
            # Fixed seats: every game seats the same players; its mean is the estimate.
            return {k: _Cost(m.dollars / done.games, m.tokens / done.games)
                    for k, m in done.models.items()}
        out: dict[str, _Cost] = {}
        for label in self._labels(spec):
            out[label] = out.get(label, _Cost()) + self._seat_game(label)
        return out

    def _seat_game(self, label: str) -> _Cost:
        done = self.spent.completed.models
        m = done.get(label)
        if m is not None and m.seat_games:
            return _Cost(m.dollars / m.seat_games, m.tokens / m.seat_games)
        n = sum(x.seat_games for x in done.values())
        if not n or model_of(label) is None:
            return _Cost()
        from stille_post.providers.pricing import seat_cost_usd

        usage = Usage(sum(x.input_tokens for x in done.values()) // n,
                      sum(x.output_tokens for x in done.values()) // n,
                      sum(x.cached_input_tokens for x in done.values()) // n)
        return _Cost(seat_cost_usd(label, usage) or 0.0,
                     float(usage.input_tokens + usage.output_tokens))

    # --- totals ---

    def _committed(self, label: str | None = None) -> _Cost:
        models = self.spent.all.models
        chosen = models.values() if label is None else \
            [m for k, m in models.items() if alias_of_label(k) == label]
        return _Cost(sum(m.dollars for m in chosen), float(sum(m.tokens for m in chosen)))

    def _running(self, label: str | None = None, *, live: bool = False) -> _Cost:
        total = _Cost()
        for game in self.running.values():
            parts = game.live if live else game.charge()
            for k, c in parts.items():
                if label is None or alias_of_label(k) == label:
                    total = total + c
        return total

    def spent_now(self) -> _Cost:
        """Finished games plus what running games have spent so far."""
        return self._committed() + self._running(live=True)

    # --- the gate ---

    def may_start(self, spec: GameSpec) -> bool:
        """Whether `spec` may start; if so it counts as running until `finished`."""
        if self.stopped is not None:
            return False
        expected = self.expected(spec)
        nxt = _Cost()
        for c in expected.values():
            nxt = nxt + c
        now = self._committed() + self._running()
        caps = self.caps
        for what, cap, have, add in (
                ("budget_usd", caps.budget_usd, now.dollars, nxt.dollars),
                ("max_tokens", caps.max_tokens, now.tokens, nxt.tokens)):
            if cap is not None and (have >= cap or have + add > cap):
                return self._stop(what, cap, have, add, None)
        for alias, mcap in sorted(caps.models.items()):
            here = [k for k in expected if alias_of_label(k) == alias]
            if not here and self.config.pool is not None:
                continue
            have_m = self._committed(alias) + self._running(alias)
            add_m = _Cost()
            for k in here:
                add_m = add_m + expected[k]
            for what, cap, have, add in (
                    ("budget_usd", mcap.budget_usd, have_m.dollars, add_m.dollars),
                    ("max_tokens", mcap.max_tokens, have_m.tokens, add_m.tokens)):
                if cap is not None and (have >= cap or have + add > cap):
                    return self._stop(what, cap, have, add, alias)
        self.running[spec.id] = _Running(expected)
        _GAME.set(spec.id)
        return True

    def _stop(self, what: str, cap: float, have: float, add: float, alias: str | None) -> bool:
        unit = (lambda v: f"${v:.4f}") if what == "budget_usd" else (lambda v: f"{v:,.0f} tokens")
        whose = f"model:{alias}'s {what}" if alias else flag(what)
        if have >= cap:
            self.stopped = f"{whose} {unit(cap)} is reached ({unit(have)} spent)"
        else:
            self.stopped = (f"the next game (expected {unit(add)}) would take the spend from "
                            f"{unit(have)} past {whose} {unit(cap)}")
        self.cap_hit = f"model:{alias}.{what}" if alias else what
        return False

    def finished(self, game_id: str, folder: Path) -> None:
        """A game's row is written: its transcript's spend replaces its running charge."""
        self.running.pop(game_id, None)
        self.played += 1
        from stille_post.tournament.results import transcript_path

        path = transcript_path(folder, game_id)
        part = path.with_name(path.name + ".part")
        ends = transcript_ends(part) or transcript_ends(path)
        if ends is None:
            return
        head, result = ends
        labels, usage = labels_and_usage(head, result)
        self.spent.all.add_game(labels, usage)
        if result.get("status") == "completed":
            self.spent.completed.add_game(labels, usage)

    # --- LLM seats ---

    def charge(self, label: str, usage: Usage) -> None:
        game = self.running.get(_GAME.get() or "")
        if game is None:
            return
        from stille_post.providers.pricing import seat_cost_usd

        c = game.live.setdefault(label, _Cost())
        c.dollars += seat_cost_usd(label, usage) or 0.0
        c.tokens += usage.input_tokens + usage.output_tokens

    def over_hard_cap(self, label: str) -> str | None:
        """The abort reason when a hard cap is reached (no new game starts then
        either), else None."""
        if not self.caps.hard:
            return None
        now = self.spent_now()
        hit: tuple[str, str] | None = None
        for what, cap, have in (("budget_usd", self.caps.budget_usd, now.dollars),
                                ("max_tokens", self.caps.max_tokens, now.tokens)):
            if cap is not None and have >= cap:
                hit = what, f"{flag(what)} {cap:g} reached ({have:.6g} spent)"
                break
        alias = alias_of_label(label)
        mcap = self.caps.models.get(alias or "")
        if hit is None and mcap is not None:
            m = self._committed(alias) + self._running(alias, live=True)
            for what, cap, have in (("budget_usd", mcap.budget_usd, m.dollars),
                                    ("max_tokens", mcap.max_tokens, m.tokens)):
                if cap is not None and have >= cap:
                    hit = (f"model:{alias}.{what}",
                           f"model:{alias}'s {what} {cap:g} reached ({have:.6g} spent)")
                    break
        if hit is None:
            return None
        if self.stopped is None:
            self.cap_hit, self.stopped = hit[0], f"{hit[1]}; running games were cut"
        return f"{BUDGET_REASON}: {hit[1]}"

    def wrap(self, factory: LLMFactory | None) -> LLMFactory | None:
        if factory is None:
            return None

        def guarded(spec: str, prompts: PromptBook) -> Player:
            from stille_post.players.specs import parse_seat_spec

            return BudgetedPlayer(factory(spec, prompts), parse_seat_spec(spec, ()).label,
                                  self)

        return guarded

    # --- the record ---

    def progress_text(self) -> str:
        now = self.spent_now()
        parts = []
        if self.caps.budget_usd is not None:
            parts.append(f"${now.dollars:.2f} of ${self.caps.budget_usd:.2f}")
        if self.caps.max_tokens is not None:
            parts.append(f"{now.tokens:,.0f} of {self.caps.max_tokens:,} tok")
        return "cap: " + ", ".join(parts) if parts else "cap: per model"

    def record(self, planned: int, finished: int, *, interrupted: bool = False) -> dict[str, Any]:
        """Write `spend.json` (atomic) and return it."""
        if interrupted:
            stopped, reason = "interrupted", "the run was interrupted"
        elif self.stopped is not None:
            stopped, reason = BUDGET_REASON, self.stopped
        elif finished >= planned:
            stopped, reason = "completed", "every planned game is finished"
        else:
            stopped, reason = "incomplete", "some games are not finished"
        spend = folder_spend(self.folder)
        entry = {"stopped": stopped, "reason": reason, "cap": self.cap_hit,
                 "caps": self.caps.to_json(), "spend": spend.all.to_json(),
                 "games": {"planned": planned, "finished": finished,
                           "not_started": max(0, planned - finished), "cut": spend.cut,
                           "played_this_run": self.played},
                 "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        old = read_spend_file(self.folder) or {}
        runs = [r for r in old.get("runs", []) if isinstance(r, dict)]
        data = {**entry, "runs": [*runs, entry]}
        write_json_atomic(self.folder / SPEND_FILE, data)
        return data


class BudgetedPlayer:
    """An LLM seat whose calls are charged to its game, and refused at a hard cap."""

    def __init__(self, inner: Player, label: str, guard: BudgetGuard) -> None:
        self.inner = inner
        self.name = inner.name
        self.label = label
        self.guard = guard

    async def decide(self, decision: Decision[Any]) -> Action:
        reason = self.guard.over_hard_cap(self.label)
        if reason is not None:
            raise GameAborted(reason)
        action = await self.inner.decide(decision)
        if action.usage is not None:
            self.guard.charge(self.label, action.usage)
        return action


def reopen_cut_games(folder: Path, index: Any) -> int:
    """Forget the games a hard cap cut, so that this run plays them again: their rows go
    first, then their transcripts are moved aside (kept, and still counted as spend).
    A crash between the two leaves a complete transcript without a row, which the index
    takes back on the next open, and this runs again."""
    from stille_post.tournament.results import transcript_path

    cut = [r.id for r in index.rows()
           if r.status == "aborted" and str(r.reason or "").startswith(BUDGET_REASON + ":")]
    if not cut:
        return 0
    index.drop(cut)
    for game_id in cut:
        path = transcript_path(folder, game_id)
        if path.exists():
            n = 1
            while (aside := path.with_name(f"{path.name}{CUT_MARK}{n}")).exists():
                n += 1
            os.replace(path, aside)
    return len(cut)


__all__ = ["BUDGET_REASON", "BudgetGuard", "BudgetedPlayer", "reopen_cut_games"]
