"""Chaos for the money (issue 36, items 1-4): capped tournaments, 8 games at once, against
a loopback OpenAI-compatible server whose replies lie about their usage.

Each run draws (seeded) a share of lying replies and, per lying reply, one lie from
`LIES` (a negative count, 10**30, NaN, infinity, a fraction, a string, a list, no usage,
no input count, a count past the call bound, a negative output count, an absurd cached
count), a cap between half a game and three games, soft or `--hard-cap` in turn. The
tournament runs through the real CLI (tests/clirun.py). Counted against us:

- crash: a non-zero exit, `unexpected ...` or a traceback;
- negative ledger: spend.json missing, or a spend (total or a model's, dollars or tokens)
  below 0 or not finite;
- over the bound: a soft cap passed by more than the dearest game of the run (its
  transcripts), a hard cap by more than the dearest call the server really billed;
- unreadable folder: `report` or `tournament --resume` of the folder failing;
- unwarned: a run that got lying replies without the one-line warning.

The ledger is also compared with what the server really billed: the lies are counted
by an estimate from the texts (4 characters a token), so the ratio shows how close the
estimate came.
"""

from __future__ import annotations

import json
import math
import random
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stille_post.core.usage import MAX_CALL_TOKENS
from stille_post.providers.pricing import recorded_cost_usd
from stille_post.tournament.spend import SPEND_FILE, labels_and_usage, transcript_ends
from tests import clirun
from tests.emulators import server
from tests.emulators.server import PRICED_MODELS as MODELS
from tests.emulators.server import running

PRICE = 300.0  # USD per 1M tokens: a call costs about $0.40 (the probe)
GAMES = 12
GAME = ["tournament", "stille-post", "--online", "--max-rounds", "1", "--concurrency", "8",
        "--games", str(GAMES), "--players", "model:fast,model:slow,detective,random"]
GAME_COST = 2.4  # about, at PRICE: what the caps are drawn around


def _without(key: str) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
    return lambda u: {k: v for k, v in u.items() if k != key}


LIES: dict[str, Callable[[dict[str, Any]], dict[str, Any] | None]] = {
    "negative": lambda u: {**u, "prompt_tokens": -1_000_000_000},
    "10**30": lambda u: {**u, "prompt_tokens": 10**30},
    "NaN": lambda u: {**u, "prompt_tokens": math.nan},
    "infinity": lambda u: {**u, "completion_tokens": math.inf},
    "a fraction": lambda u: {**u, "prompt_tokens": u["prompt_tokens"] + 0.5},
    "a string": lambda u: {**u, "prompt_tokens": str(u["prompt_tokens"])},
    "a list": lambda u: {**u, "completion_tokens": [u["completion_tokens"]]},
    "no usage": lambda u: None,
    "no input count": _without("prompt_tokens"),
    "past the call bound": lambda u: {**u, "prompt_tokens": MAX_CALL_TOKENS + 1},
    "negative output": lambda u: {**u, "completion_tokens": -5},
    "absurd cached": lambda u: {**u, "prompt_tokens_details": {"cached_tokens": 10**30}},
}


@dataclass
class MoneyFigures:
    runs: int = 0
    soft: int = 0
    hard: int = 0
    replies: int = 0
    lies: int = 0
    crashes: int = 0
    negative: int = 0
    over_bound: int = 0
    unreadable: int = 0
    unwarned: int = 0
    soft_overshoot_games: float = 0.0  # the largest overshoot, in the run's dearest games
    hard_overshoot_calls: float = 0.0  # the largest overshoot, in the dearest billed calls
    ledger: float = 0.0  # dollars the folders recorded
    billed: float = 0.0  # dollars the server's true usage comes to
    examples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.crashes or self.negative or self.over_bound or self.unreadable
                    or self.unwarned)


class _Liar:
    """The emulator's OpenAI handler, its replies' usage logged and, for a drawn share of
    them, replaced by a drawn lie."""

    def __init__(self, original: Callable[..., dict[str, Any]]) -> None:
        self.original = original
        self.rng = random.Random(0)
        self.share = 0.0
        self.calls: list[dict[str, Any]] = []
        self.lies = 0

    def __call__(self, state: Any, path: str, body: bytes, req: dict[str, Any]
                 ) -> dict[str, Any]:
        out = self.original(state, path, body, req)
        self.calls.append(dict(out["usage"]))
        if self.rng.random() < self.share:
            self.lies += 1
            told = LIES[self.rng.choice(sorted(LIES))](dict(out["usage"]))
            if told is None:
                del out["usage"]
            else:
                out["usage"] = told
        return out


def _spend_ok(record: dict[str, Any]) -> bool:
    spend = record.get("spend") or {}
    values = [spend.get("dollars"), spend.get("tokens")]
    for m in (spend.get("models") or {}).values():
        values += [m.get(k) for k in ("dollars", "tokens", "input_tokens", "output_tokens",
                                      "cached_input_tokens")]
    return all(isinstance(v, int | float) and math.isfinite(v) and v >= 0 for v in values)


def _dearest_game(folder: Path) -> float:
    costs = [0.0]
    for path in (folder / "games").glob("*.jsonl*"):
        ends = transcript_ends(path)
        if ends is not None:
            labels, usage = labels_and_usage(*ends)
            costs.append(sum(recorded_cost_usd(labels.get(s, ""), u)
                             for s, u in usage.items()))
    return max(costs)


def run_money(seed: int, runs: int) -> MoneyFigures:
    figures = MoneyFigures()
    rng = random.Random(f"{seed}:money")
    liar = _Liar(server._HANDLERS["openai"])
    server._HANDLERS["openai"] = liar
    try:
        with running("openai") as emu, tempfile.TemporaryDirectory(prefix="money-") as t:
            emu.state.cached_tokens = lambda *a, **k: 0  # type: ignore[method-assign]
            tmp = Path(t)
            (tmp / "models.toml").write_text(MODELS.format(url=emu.base_url, p=PRICE),
                                             encoding="utf-8")
            for k in range(runs):
                _one_run(k, tmp, liar, rng, figures)
    finally:
        server._HANDLERS["openai"] = liar.original
    return figures


def _cli(tmp: Path, *argv: str) -> Any:
    return clirun.run_cli(*argv, cwd=tmp, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
                          timeout=300)


def _one_run(k: int, tmp: Path, liar: _Liar, rng: random.Random,
             figures: MoneyFigures) -> None:
    hard = k % 2 == 1
    cap = round(rng.uniform(0.5, 3.0) * GAME_COST, 2)
    liar.rng = random.Random(rng.random())
    liar.share = rng.choice([0.3, 0.6, 1.0])
    liar.calls, liar.lies = [], 0
    out = f"run-{k}"
    what = f"run {k} ({'hard' if hard else 'soft'} ${cap}, {liar.share:.0%} lies)"
    done = _cli(tmp, *GAME, "--seed", str(k), "--out", out, "--budget-usd", str(cap),
                *(["--hard-cap"] if hard else []))
    figures.runs += 1
    figures.hard += hard
    figures.soft += not hard
    figures.replies += len(liar.calls)
    figures.lies += liar.lies
    billed_calls = [(u["prompt_tokens"] + u["completion_tokens"]) * PRICE / 1e6
                    for u in liar.calls]
    figures.billed += sum(billed_calls)
    if done.returncode != 0 or re.search("unexpected|Traceback", done.stderr):
        figures.crashes += 1
        figures.examples.append(f"{what}: exit {done.returncode}: {done.stderr[-300:]}")
        return
    try:
        record = json.loads((tmp / out / SPEND_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        figures.negative += 1
        figures.examples.append(f"{what}: no spend.json ({exc})")
        return
    if not _spend_ok(record):
        figures.negative += 1
        figures.examples.append(f"{what}: spend {record.get('spend')}")
        return
    spent = float(record["spend"]["dollars"])
    figures.ledger += spent
    over = spent - cap
    if hard:
        unit = max(billed_calls, default=0.0)
        figures.hard_overshoot_calls = max(figures.hard_overshoot_calls,
                                           over / unit if unit else 0.0)
    else:
        unit = _dearest_game(tmp / out)
        figures.soft_overshoot_games = max(figures.soft_overshoot_games,
                                           over / unit if unit else 0.0)
    if over > unit:
        figures.over_bound += 1
        figures.examples.append(f"{what}: spent ${spent:.4f}, {over / unit:.2f}x the bound")
    if liar.lies and "without a usable token count" not in done.stderr:
        figures.unwarned += 1
        figures.examples.append(f"{what}: {liar.lies} lies, no warning")
    for argv in (["report", out, "--json"],
                 ["tournament", "--resume", "--out", out, "--online"]):
        again = _cli(tmp, *argv)
        if again.returncode != 0 or re.search("unexpected|Traceback", again.stderr):
            figures.unreadable += 1
            figures.examples.append(f"{what}: {argv[0]} exit {again.returncode}: "
                                    f"{again.stderr[-300:]}")


def report_money(f: MoneyFigures) -> str:
    ratio = f"{f.ledger / f.billed:.2f}" if f.billed else "-"
    return (f"money: {f.runs} capped runs ({f.soft} soft, {f.hard} hard; {GAMES} games, 8 at "
            f"once) against lying usage ({f.lies} of {f.replies} replies lied): crashes "
            f"{f.crashes}, negative ledgers {f.negative}, unreadable folders {f.unreadable}, "
            f"over the bound {f.over_bound} (soft overshoot at most "
            f"{f.soft_overshoot_games:.2f} of a game, hard at most "
            f"{f.hard_overshoot_calls:.2f} of a call), unwarned {f.unwarned}; "
            f"ledger / billed {ratio}")
