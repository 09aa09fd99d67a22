"""What a results folder has spent, read from its transcripts (their result lines price
each seat; providers/pricing.py says how cached input is billed per provider), so the
folder is its own ledger. `spend.json` records, after every capped run, the caps, the
spend per model and why the run stopped (tournament/budget.py writes it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stille_post.providers.base import Usage
from stille_post.providers.pricing import recorded_cost_usd

SPEND_FILE = "spend.json"
CUT_MARK = ".cut-"  # games/ID.jsonl.cut-N: a game a hard cap cut, kept when it is replayed


@dataclass
class ModelSpend:
    seat_games: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    dollars: float = 0.0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, usage: Usage, dollars: float) -> None:
        self.seat_games += 1
        self.input_tokens += usage.input_tokens
        self.cached_input_tokens += usage.cached_input_tokens
        self.output_tokens += usage.output_tokens
        self.dollars += dollars

    def to_json(self) -> dict[str, Any]:
        return {"seat_games": self.seat_games, "input_tokens": self.input_tokens,
                "cached_input_tokens": self.cached_input_tokens,
                "output_tokens": self.output_tokens, "tokens": self.tokens,
                "dollars": round(self.dollars, 6)}


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
        for seat, row in usage.items():
            if not isinstance(row, Mapping):
                continue
            u = Usage.from_json(row)
            if not (u.input_tokens or u.output_tokens):
                continue  # a bot, or a seat that never got to speak
            label = labels.get(str(seat), f"seat {seat}")
            self.models.setdefault(label, ModelSpend()).add(u, recorded_cost_usd(label, row))

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


def read_spend_file(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((folder / SPEND_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def spend_table_rows(spend: Mapping[str, Any]) -> Iterable[tuple[str, ...]]:
    """Rows for a printed table of a spend block (summary and report)."""
    for label, m in spend.get("models", {}).items():
        yield (label, f"{m['input_tokens']:,}", f"{m['cached_input_tokens']:,}",
               f"{m['output_tokens']:,}", f"${m['dollars']:.4f}")


SPEND_COLUMNS = ("model", "input", "cached input", "output", "dollars")


__all__ = ["CUT_MARK", "SPEND_COLUMNS", "SPEND_FILE", "FolderSpend", "ModelSpend", "Spend",
           "folder_spend", "read_spend_file", "spend_table_rows"]
