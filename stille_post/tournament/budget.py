"""Budgets: caps on what a results folder spends, in dollars and in tokens.

A cap bounds the whole folder (every game it holds, across runs and resumes), so
`--resume` with a higher cap continues where the last run stopped. The caps are declared
in tournament/caps.py: the folder's come from the tournament settings (command line,
tournament file, the run saved in the folder), each alias's from the registry.

How a run keeps to its caps:
- Before a game starts, its expected cost is added to what the folder has spent and what
  the running games are expected to spend (`BudgetGuard.admit`). If that would cross a
  cap, no new game starts; the running ones finish (a soft cap).
- A game's expected cost comes from the folder's own completed games, and it is the most
  a game has cost, not the mean: with fixed seats, the most each model spent in one game;
  with a pool, the most each model spent in one seat of one game (a model not seen yet:
  the most tokens any model spent in one seat, at its own price). Several games start at
  once only on that: games that cost no more than the dearest one seen keep the spend
  under the cap, so the overshoot is at most what one game costs beyond it.
- Until the folder has a completed game, the run does not know what a game costs, and it
  starts games one at a time (`--concurrency` applies from the first completed game): the
  first game alone can pass the cap, by at most its own cost. (`--estimate` is not used
  for this: on the recorded cassettes it is within 0.62-1.86x of the billed tokens, too
  loose to start several games on.)
- `--hard-cap`: every LLM call first reserves its worst case, the request's input
  (estimated at 4 characters a token) and its most output tokens (the request's
  `max_output_tokens`, else `WORST_OUTPUT_TOKENS`) at the model's price, beside what the
  folder spent, what the running games spent and the calls in flight. A call whose worst
  case would pass a cap is not sent, and its game ends as aborted with a reason starting
  `budget`. So a hard cap is passed only by what the calls in flight cost beyond their
  estimated input: in practice less than one call's cost. A resume plays such games
  again from the start (their cut transcripts are kept beside as `games/ID.jsonl.cut-N`,
  and their spend still counts); every other finished game is left alone.
- Spend is read from the transcripts (tournament/spend.py), so the folder is its own
  ledger; it never goes down (`spend.ledger`: no count is read negative, and no model's
  total falls below what the last `spend.json` recorded). `spend.json` records, after
  every run, the caps, the spend per model and why the run stopped (`completed`,
  `budget`, `interrupted`); its stop line says what was spent (the figure of its `spend`)
  and by how much that passed the cap, or stayed under it.
- A reply without a usable token count (core/usage.py) is counted by an estimate from
  its texts; a capped run says so at once, in one line on stderr, the first time a model
  sends one (and spend.json lists the line under `warnings`).

What is not counted: the calls of games a `kill -9` interrupted (their transcripts have
no result line, and resume replays them). At most `--concurrency` games' worth.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stille_post.core.errors import GameAborted
from stille_post.core.text import clean_text
from stille_post.core.usage import approx_tokens
from stille_post.games.kit.setup import LLMFactory
from stille_post.players.base import Action, Decision, Player, PromptBook
from stille_post.providers.base import ChatRequest, Completion, Usage
from stille_post.providers.pricing import model_of, seat_cost_usd
from stille_post.providers.secrets import redact
from stille_post.tournament.caps import Caps, alias_of_label, flag
from stille_post.tournament.config import GameSpec, TournamentConfig, write_json_atomic
from stille_post.tournament.spend import (
    CUT_MARK,
    SPEND_FILE,
    FolderSpend,
    labels_and_usage,
    ledger,
    read_spend_file,
    recorded_runs,
    transcript_ends,
)

BUDGET_REASON = "budget"  # an aborted game's reason starts with it
# The output a request without `max_output_tokens` is assumed to reach at worst, for
# `--hard-cap` (the adapters' own default where they have one: Anthropic's 2,048).
WORST_OUTPUT_TOKENS = 32_768
_ADAPTER_MAX_OUTPUT = {"anthropic": 2048}

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


@dataclass(frozen=True)
class _Stop:
    """Why no new game starts: which cap, and what crossed it."""

    what: str  # "budget_usd" | "max_tokens"
    cap: float
    alias: str | None
    how: str  # "reached" | "next game" | "next call"
    add: float = 0.0  # the next game's expected cost, or the next call's worst case
    label: str = ""  # the model of the call refused

    def unit(self, v: float) -> str:
        return f"${v:.4f}" if self.what == "budget_usd" else f"{v:,.0f} tokens"

    @property
    def whose(self) -> str:
        return f"model:{self.alias}'s {self.what}" if self.alias else flag(self.what)

    @property
    def key(self) -> str:
        return f"model:{self.alias}.{self.what}" if self.alias else self.what

    def line(self, spent: float) -> str:
        """One line, with `spent` the figure a reader compares with the cap."""
        u = self.unit
        if self.how == "next game":
            why = f"the next game (expected {u(self.add)}) would pass {self.whose} {u(self.cap)}"
        elif self.how == "next call":
            why = (f"the next call of {self.label} (at most {u(self.add)}) would pass "
                   f"{self.whose} {u(self.cap)}")
        else:
            why = f"{self.whose} {u(self.cap)} is reached"
        over = spent - self.cap
        margin = f"{u(over)} over the cap" if over > 0 else f"{u(-over)} under it"
        return f"{why}: {u(spent)} spent, {margin}"


class BudgetGuard:
    """Keeps one run (one process) within its caps. See the module's docstring."""

    def __init__(self, folder: Path, config: TournamentConfig, caps: Caps,
                 spent: FolderSpend) -> None:
        self.folder = folder
        self.config = config
        self.caps = caps
        self.spent = spent
        self.running: dict[str, _Running] = {}
        self.stop: _Stop | None = None
        self.started_at = time.time()
        self.played = 0
        # Worst cases of the calls in flight (`--hard-cap`), per label.
        self.reserved: dict[str, _Cost] = {}
        self.warnings: list[str] = []
        self._warned: set[str] = set()
        self.warn: Callable[[str], None] = _print_warning
        self._wake: asyncio.Event | None = None

    @classmethod
    def open(cls, folder: Path, config: TournamentConfig, caps: Caps, index: Any) -> BudgetGuard:
        reopen_cut_games(folder, index)
        return cls(folder, config, caps, ledger(folder))

    @property
    def stopped(self) -> str | None:
        """The one-line reason no new game starts (None while games may start)."""
        if self.stop is None:
            return None
        return self.stop.line(self._spent_for(self.stop, self.spent_now()))

    @property
    def cap_hit(self) -> str | None:
        return self.stop.key if self.stop is not None else None

    # --- expected costs ---

    def _labels(self, spec: GameSpec) -> list[str]:
        from stille_post.games import get_game
        from stille_post.players.specs import parse_seat_spec

        bots = get_game(self.config.game).bot_names
        return [parse_seat_spec(p, bots).label for p in spec.players or ()
                if p.strip() not in ("bot", "bot:")]

    def cost_known(self) -> bool:
        """Whether the run knows what a game costs: the folder has a completed game."""
        return self.spent.completed.games > 0

    def expected(self, spec: GameSpec) -> dict[str, _Cost]:
        """Per label, the most it has cost in one game (see the module's docstring)."""
        done = self.spent.completed
        if not done.games:
            return {}
        if self.config.pool is None:
            # Fixed seats: every game seats the same players.
            return {k: _Cost(m.game_dollars, float(m.game_tokens))
                    for k, m in done.models.items()}
        out: dict[str, _Cost] = {}
        for label in self._labels(spec):
            out[label] = out.get(label, _Cost()) + self._seat_game(label)
        return out

    def _seat_game(self, label: str) -> _Cost:
        done = self.spent.completed.models
        m = done.get(label)
        if m is not None and m.seat_games:
            return _Cost(m.seat_dollars, float(m.seat_tokens))
        if not done or model_of(label) is None:
            return _Cost()
        # A model not seen yet: the dearest seat-game of any model, in tokens, at its own
        # price (split as that model's input and output were).
        worst = max(done.values(), key=lambda x: x.seat_tokens)
        share = worst.output_tokens / worst.tokens if worst.tokens else 0.0
        out = round(worst.seat_tokens * share)
        usage = Usage(worst.seat_tokens - out, out)
        return _Cost(seat_cost_usd(label, usage) or 0.0, float(worst.seat_tokens))

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

    def _reserved(self, alias: str | None = None) -> _Cost:
        total = _Cost()
        for k, c in self.reserved.items():
            if alias is None or alias_of_label(k) == alias:
                total = total + c
        return total

    def spent_now(self) -> _Cost:
        """Finished games plus what running games have spent so far."""
        return self._committed() + self._running(live=True)

    def _spent_for(self, stop: _Stop, total: _Cost) -> float:
        if stop.alias is not None:
            c = self._committed(stop.alias) + self._running(stop.alias, live=True)
            return c.dollars if stop.what == "budget_usd" else c.tokens
        return total.dollars if stop.what == "budget_usd" else total.tokens

    # --- the gate ---

    async def admit(self, spec: GameSpec) -> bool:
        """Wait until `spec` may start (True: it counts as running until `finished`) or
        no game may start any more (False). While the cost of a game is unknown, a game
        waits for the running one to finish."""
        while True:
            verdict = self.may_start(spec)
            if verdict is not None:
                return verdict
            if self._wake is None:
                self._wake = asyncio.Event()
            self._wake.clear()
            await self._wake.wait()

    def may_start(self, spec: GameSpec) -> bool | None:
        """True: `spec` starts now (it counts as running until `finished`); False: no new
        game starts; None: wait for a running game to finish (the cost is not known yet)."""
        if self.stop is not None:
            return False
        if not self.cost_known() and self.running:
            return None
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
                return self._stop(_Stop(what, cap, None, "reached" if have >= cap
                                        else "next game", add))
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
                    return self._stop(_Stop(what, cap, alias, "reached" if have >= cap
                                            else "next game", add))
        self.running[spec.id] = _Running(expected)
        _GAME.set(spec.id)
        return True

    def _stop(self, stop: _Stop) -> bool:
        if self.stop is None:
            self.stop = stop
        self._wake_up()
        return False

    def _wake_up(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def finished(self, game_id: str, folder: Path) -> None:
        """A game's row is written: its transcript's spend replaces its running charge."""
        self.running.pop(game_id, None)
        self.played += 1
        self._wake_up()
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
        if usage.unknown_calls and label not in self._warned:
            self._warned.add(label)
            line = clean_text(redact(
                f"warning: {label} sent a reply without a usable token count; the caps "
                "count such replies by an estimate from their texts (4 characters a "
                "token)"))
            self.warnings.append(line)
            self.warn(line)
        game = self.running.get(_GAME.get() or "")
        if game is None:
            return
        c = game.live.setdefault(label, _Cost())
        # Never negative: the ledger only grows (the usage is read within bounds already).
        c.dollars += max(0.0, seat_cost_usd(label, usage) or 0.0)
        c.tokens += max(0, usage.input_tokens + usage.output_tokens)

    def worst_case(self, label: str, request: ChatRequest, kind: str | None) -> _Cost:
        """The most one call may cost: its input, estimated from its characters, and its
        most output tokens, at the model's price."""
        from stille_post.providers._common import request_chars

        most = request.max_output_tokens or _ADAPTER_MAX_OUTPUT.get(kind or "") \
            or WORST_OUTPUT_TOKENS
        usage = Usage(approx_tokens(request_chars(request)), most)
        return _Cost(seat_cost_usd(label, usage) or 0.0,
                     float(usage.input_tokens + usage.output_tokens))

    def reserve(self, label: str, worst: _Cost) -> None:
        """`--hard-cap`: count a call's worst case as spent while it is in flight, or
        raise `GameAborted` (reason `budget: ...`) if that would pass a cap."""
        reason = self._over_hard_cap(label, worst)
        if reason is not None:
            raise GameAborted(reason)
        c = self.reserved.setdefault(label, _Cost())
        c.dollars += worst.dollars
        c.tokens += worst.tokens

    def release(self, label: str, worst: _Cost) -> None:
        c = self.reserved.get(label)
        if c is not None:
            c.dollars -= worst.dollars
            c.tokens -= worst.tokens

    def _over_hard_cap(self, label: str, worst: _Cost) -> str | None:
        """The abort reason when a call's worst case would pass a cap, else None."""
        if not self.caps.hard:
            return None
        now = self.spent_now() + self._reserved()
        found: _Stop | None = None
        for what, cap, have, add in (
                ("budget_usd", self.caps.budget_usd, now.dollars, worst.dollars),
                ("max_tokens", self.caps.max_tokens, now.tokens, worst.tokens)):
            if cap is not None and (have >= cap or have + add > cap):
                found = _Stop(what, cap, None, "reached" if have >= cap else "next call",
                              add, label)
                break
        alias = alias_of_label(label)
        mcap = self.caps.models.get(alias or "")
        if found is None and mcap is not None:
            m = self._committed(alias) + self._running(alias, live=True) + \
                self._reserved(alias)
            for what, cap, have, add in (("budget_usd", mcap.budget_usd, m.dollars,
                                          worst.dollars),
                                         ("max_tokens", mcap.max_tokens, m.tokens,
                                          worst.tokens)):
                if cap is not None and (have >= cap or have + add > cap):
                    found = _Stop(what, cap, alias, "reached" if have >= cap
                                  else "next call", add, label)
                    break
        if found is None:
            return None
        self._stop(found)
        spent = self._spent_for(found, self.spent_now())
        return f"{BUDGET_REASON}: {found.line(spent)}; running games are cut"

    def over_hard_cap(self, label: str) -> str | None:
        """The abort reason when a hard cap is reached (no call fits any more), for a
        seat whose requests cannot be seen (a player without a provider)."""
        return self._over_hard_cap(label, _Cost())

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
        """Write `spend.json` (atomic) and return it. Its stop line's "spent" is the
        figure of its own `spend` block (the folder's ledger, `spend.ledger`)."""
        spend = ledger(self.folder)
        total = _Cost(round(spend.all.dollars, 6), float(spend.all.tokens))
        if interrupted:
            stopped, reason = "interrupted", "the run was interrupted"
        elif self.stop is not None:
            stopped = BUDGET_REASON
            if self.stop.alias is not None:
                models = [m for k, m in spend.all.models.items()
                          if alias_of_label(k) == self.stop.alias]
                mine = (round(sum(m.dollars for m in models), 6) if self.stop.what ==
                        "budget_usd" else float(sum(m.tokens for m in models)))
            else:
                mine = total.dollars if self.stop.what == "budget_usd" else total.tokens
            reason = self.stop.line(mine)
        elif finished >= planned:
            stopped, reason = "completed", "every planned game is finished"
        else:
            stopped, reason = "incomplete", "some games are not finished"
        entry: dict[str, Any] = {
            "stopped": stopped, "reason": reason, "cap": self.cap_hit,
            "caps": self.caps.to_json(), "spend": spend.all.to_json(),
            "games": {"planned": planned, "finished": finished,
                      "not_started": max(0, planned - finished), "cut": spend.cut,
                      "played_this_run": self.played},
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if self.warnings:
            entry["warnings"] = list(self.warnings)
        runs = recorded_runs(read_spend_file(self.folder))
        data = {**entry, "runs": [*runs, entry]}
        write_json_atomic(self.folder / SPEND_FILE, data)
        return data


def _print_warning(line: str) -> None:
    # stderr: under a live progress bar, rich prints it above the bar.
    print(line, file=sys.stderr, flush=True)


class CappedProvider:
    """An LLM seat's provider under the run's caps: each call reserves its worst case
    first (`--hard-cap`), and its usage is charged to its game as soon as it is known."""

    def __init__(self, inner: Any, label: str, guard: BudgetGuard) -> None:
        self.inner = inner
        self.label = label
        self.guard = guard

    def __getattr__(self, name: str) -> Any:  # model, kind, aclose, ...: the inner's
        return getattr(self.inner, name)

    async def complete(self, request: ChatRequest) -> Completion:
        guard = self.guard
        worst = guard.worst_case(self.label, request, getattr(self.inner, "kind", None)) \
            if guard.caps.hard else _Cost()
        guard.reserve(self.label, worst)
        try:
            completion: Completion = await self.inner.complete(request)
        finally:
            guard.release(self.label, worst)
        if isinstance(completion.usage, Usage):
            guard.charge(self.label, completion.usage)
        return completion


class BudgetedPlayer:
    """An LLM seat whose calls are charged to its game, and refused at a hard cap. When
    the seat's player has a provider (an `LLMPlayer`, under any wrappers with `.inner`),
    the provider is wrapped (`CappedProvider`), which sees each request; otherwise the
    seat's answers are charged here and a reached hard cap ends the game."""

    def __init__(self, inner: Player, label: str, guard: BudgetGuard) -> None:
        self.inner = inner
        self.name = inner.name
        self.label = label
        self.guard = guard
        self._per_call = _wrap_provider(inner, label, guard)

    async def decide(self, decision: Decision[Any]) -> Action:
        if self._per_call:
            return await self.inner.decide(decision)
        reason = self.guard.over_hard_cap(self.label)
        if reason is not None:
            raise GameAborted(reason)
        action = await self.inner.decide(decision)
        if action.usage is not None:
            self.guard.charge(self.label, action.usage)
        return action


def _wrap_provider(player: Any, label: str, guard: BudgetGuard) -> bool:
    seen = 0
    while player is not None and seen < 8:
        provider = getattr(player, "provider", None)
        if provider is not None and callable(getattr(provider, "complete", None)):
            if not isinstance(provider, CappedProvider):
                player.provider = CappedProvider(provider, label, guard)
            return True
        player, seen = getattr(player, "inner", None), seen + 1
    return False


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


__all__ = ["BUDGET_REASON", "BudgetGuard", "BudgetedPlayer", "CappedProvider",
           "reopen_cut_games"]
