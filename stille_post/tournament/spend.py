"""What a results folder has spent, read from its transcripts (their result lines price
each seat; providers/pricing.py says how cached input is billed per provider), so the
folder is its own ledger. `spend.json` records, after every capped run, the caps, the
spend per model and why the run stopped (tournament/budget.py writes it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stille_post.core.usage import MAX_RECORDED_TOKENS, token_count
from stille_post.providers.base import Usage
from stille_post.providers.pricing import recorded_cost_usd

SPEND_FILE = "spend.json"
# A folder's token totals as spend.json may record them: many games at the transcript
# bound (core/usage.py), still exact in a float.
MAX_LEDGER_TOKENS = MAX_RECORDED_TOKENS * 8
CUT_MARK = ".cut-"  # games/ID.jsonl.cut-N: a game a hard cap cut, kept when it is replayed


@dataclass
class ModelSpend:
    seat_games: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    dollars: float = 0.0
    unknown_calls: int = 0  # calls counted by an estimate (core/usage.py)
    # The most this model spent in one game (all its seats) and in one seat of one game:
    # what a run expects the next game to cost (tournament/budget.py).
    game_dollars: float = 0.0
    game_tokens: int = 0
    seat_dollars: float = 0.0
    seat_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, usage: Usage, dollars: float) -> None:
        # Both are read within bounds (Usage.from_json, recorded_cost_usd): never negative,
        # so the ledger can only grow. The max() is the last guard of that.
        dollars = max(0.0, dollars)
        self.seat_games += 1
        self.input_tokens += max(0, usage.input_tokens)
        self.cached_input_tokens += max(0, usage.cached_input_tokens)
        self.output_tokens += max(0, usage.output_tokens)
        self.dollars += dollars
        self.unknown_calls += max(0, usage.unknown_calls)
        self.seat_dollars = max(self.seat_dollars, dollars)
        self.seat_tokens = max(self.seat_tokens, usage.input_tokens + usage.output_tokens)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seat_games": self.seat_games, "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "output_tokens": self.output_tokens, "tokens": self.tokens,
            "dollars": round(self.dollars, 6)}
        if self.unknown_calls:
            out["unknown_calls"] = self.unknown_calls
        return out

    def at_least(self, recorded: Any) -> None:
        """Raise each total to what an earlier record says was spent (`spend.json`), so
        the ledger never goes down: a transcript moved aside as damaged, or replaced by
        `--retry-aborted`, was still paid for. Values that are not finite numbers of 0 or
        more (a hand edit) are ignored, so no edit can lower it."""
        if not isinstance(recorded, Mapping):
            return
        for key in ("seat_games", "input_tokens", "cached_input_tokens", "output_tokens"):
            n = token_count(recorded.get(key), MAX_LEDGER_TOKENS)
            if n is not None and n > getattr(self, key):
                setattr(self, key, n)
        d = recorded.get("dollars")
        if isinstance(d, int | float) and not isinstance(d, bool) and math.isfinite(d) \
                and d > self.dollars:
            self.dollars = float(d)


@dataclass
class Spend:
    """Tokens and dollars per player label, over some games."""

    models: dict[str, ModelSpend] = field(default_factory=dict)
    games: int = 0

    @property
    def dollars(self) -> float:
        return sum(m.dollars for m in self.models.values())

    @property
    def tokens(self) -> int:
        return sum(m.tokens for m in self.models.values())

    def add_game(self, labels: Mapping[str, str], usage: Mapping[str, Any]) -> None:
        self.games += 1
        game: dict[str, tuple[float, int]] = {}  # label -> this game's dollars, tokens
        for seat, row in usage.items():
            if not isinstance(row, Mapping):
                continue
            u = Usage.from_json(row)
            if not (u.input_tokens or u.output_tokens or u.unknown_calls):
                continue  # a bot, or a seat that never got to speak
            label = labels.get(str(seat), f"seat {seat}")
            dollars = recorded_cost_usd(label, row)
            self.models.setdefault(label, ModelSpend()).add(u, dollars)
            d, t = game.get(label, (0.0, 0))
            game[label] = d + dollars, t + u.input_tokens + u.output_tokens
        for label, (d, t) in game.items():
            m = self.models[label]
            m.game_dollars, m.game_tokens = max(m.game_dollars, d), max(m.game_tokens, t)

    def at_least(self, recorded: Any) -> None:
        """Every model's totals raised to an earlier record's (`ModelSpend.at_least`);
        a model the transcripts no longer show keeps its recorded spend."""
        models = recorded.get("models") if isinstance(recorded, Mapping) else None
        if not isinstance(models, Mapping):
            return
        for label, m in models.items():
            if isinstance(label, str) and isinstance(m, Mapping):
                self.models.setdefault(label, ModelSpend()).at_least(m)

    def to_json(self) -> dict[str, Any]:
        return {"dollars": round(self.dollars, 6), "tokens": self.tokens,
                "games": self.games,
                "models": {k: v.to_json() for k, v in sorted(self.models.items())}}


def transcript_ends(path: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A transcript's header and result lines (None if it has no result line)."""
    try:
        with path.open("rb") as fh:
            first = fh.readline()
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - 65536))
            last = fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        head, tail = json.loads(first), json.loads(last)
    except (OSError, ValueError):
        return None
    if not (isinstance(head, dict) and isinstance(tail, dict)) or tail.get("kind") != "result":
        return None
    return head, tail


def labels_and_usage(head: Mapping[str, Any], result: Mapping[str, Any]
                  ) -> tuple[dict[str, str], dict[str, Any]]:
    """seat -> player label (the header), seat -> usage row (the result line)."""
    seats = head.get("seats")
    usage = result.get("usage")
    labels = {str(s): str(i.get("player", "")) for s, i in seats.items()
              if isinstance(i, dict)} if isinstance(seats, dict) else {}
    return labels, dict(usage) if isinstance(usage, dict) else {}


@dataclass
class FolderSpend:
    """What a results folder has spent: `all` counts every recorded game (cut ones
    included); `completed` only completed games, whose means predict the next game."""

    all: Spend
    completed: Spend
    cut: int = 0


def folder_spend(folder: Path) -> FolderSpend:
    from stille_post.tournament.results import GAMES_DIR

    out = FolderSpend(Spend(), Spend())
    games = folder / GAMES_DIR
    for path in _sorted_transcripts(games):
        ends = transcript_ends(path)
        if ends is None:
            continue
        head, result = ends
        labels, usage = labels_and_usage(head, result)
        out.all.add_game(labels, usage)
        if CUT_MARK in path.name:
            out.cut += 1
        elif result.get("status") == "completed":
            out.completed.add_game(labels, usage)
    return out


def _sorted_transcripts(games: Path) -> Iterator[Path]:
    """`sorted(glob("*.jsonl")) + sorted(glob("*.jsonl.cut-*"))`, streamed: SQLite sorts
    the names in a temporary file (a list of a million names would take ~100 MiB)."""
    import os
    import sqlite3
    import tempfile

    if not games.is_dir():
        return
    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite3.connect(Path(tmp) / "names.sqlite")
        try:
            db.execute("CREATE TABLE names (cut INTEGER, name TEXT)")
            with os.scandir(games) as entries:
                db.executemany("INSERT INTO names VALUES (?, ?)", (
                    (cut, e.name) for e in entries
                    for cut, match in ((0, e.name.endswith(".jsonl")),
                                       (1, f".jsonl{CUT_MARK}" in e.name)) if match))
            # BINARY order is UTF-8 byte order, which is Python's code point order.
            for (name,) in db.execute("SELECT name FROM names ORDER BY cut, name"):
                yield games / name
        finally:
            db.close()


def ledger(folder: Path) -> FolderSpend:
    """What a folder has spent, for its caps: its transcripts' spend (`folder_spend`),
    each model's totals never below what the last `spend.json` recorded (`at_least`).
    A capped run opens with it and records it, so the ledger never goes down."""
    spend = folder_spend(folder)
    last = read_spend_file(folder)
    if last is not None:
        spend.all.at_least(last.get("spend"))
    return spend


MAX_SPEND_FILE_BYTES = 64 << 20  # far past any real record; a bigger file is not read
MAX_RUNS_KEPT = 1000  # runs listed in spend.json (the oldest are dropped first)


def read_spend_file(folder: Path) -> dict[str, Any] | None:
    """`spend.json` as an object, or None when it is missing, damaged, or not one."""
    path = folder / SPEND_FILE
    try:
        if path.stat().st_size > MAX_SPEND_FILE_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def recorded_runs(data: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The earlier runs a spend.json lists (a hand-edited file may list anything)."""
    runs = data.get("runs") if isinstance(data, Mapping) else None
    if not isinstance(runs, list):
        return []
    return [r for r in runs if isinstance(r, dict)][-(MAX_RUNS_KEPT - 1):]


def spend_table_rows(spend: Mapping[str, Any]) -> Iterable[tuple[str, ...]]:
    """Rows for a printed table of a spend block (summary and report). A model with
    calls of unknown usage says how many were counted by an estimate."""
    for label, m in spend.get("models", {}).items():
        unknown = m.get("unknown_calls")
        name = f"{label} ({unknown:,} calls estimated)" if unknown else label
        yield (name, f"{m['input_tokens']:,}", f"{m['cached_input_tokens']:,}",
               f"{m['output_tokens']:,}", f"${m['dollars']:.4f}")


SPEND_COLUMNS = ("model", "input", "cached input", "output", "dollars")


__all__ = ["CUT_MARK", "SPEND_COLUMNS", "SPEND_FILE", "FolderSpend", "ModelSpend", "Spend",
           "folder_spend", "ledger", "read_spend_file", "recorded_runs", "spend_table_rows"]
