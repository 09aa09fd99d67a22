"""The index of finished games: one SQLite row per game, committed once the game's
transcript is complete and in its final place.

Why this is crash-safe:
- A game's transcript is written to `<id>.jsonl.part` and renamed into place only after
  its result line is on disk; the row is inserted after the rename, in one transaction.
  A kill at any point leaves either no row (the game is redone, its leftovers replaced)
  or a row whose transcript is complete.
- SQLite's write-ahead log makes each commit atomic; `id` is the primary key, so a game
  can never be counted twice, even by a buggy caller.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INDEX_FILE = "index.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    idx INTEGER NOT NULL UNIQUE,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    transcript TEXT NOT NULL,
    players TEXT NOT NULL,
    placements TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '{}',
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    dollars REAL NOT NULL DEFAULT 0
)
"""


@dataclass(frozen=True)
class IndexRow:
    id: str
    idx: int
    seed: int
    status: str
    reason: str | None
    transcript: str  # relative to the results folder
    players: dict[str, str]  # seat -> player label
    placements: dict[str, int]  # seat -> rank
    summary: dict[str, Any]  # the game's own JSON summary (winners, eliminated, ...)
    input_tokens: int = 0
    output_tokens: int = 0
    dollars: float = 0.0

    def values(self) -> tuple[Any, ...]:
        return (self.id, self.idx, self.seed, self.status, self.reason, self.transcript,
                json.dumps(self.players), json.dumps(self.placements), json.dumps(self.summary),
                self.input_tokens,
                self.output_tokens, self.dollars)


_COLUMNS = ("id", "idx", "seed", "status", "reason", "transcript", "players", "placements",
            "summary", "input_tokens", "output_tokens", "dollars")


class GameIndex:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None)
        # WAL + NORMAL: a commit survives a process crash; only an OS crash can lose the
        # latest commits, and those games are then simply replayed.
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    @classmethod
    def open(cls, folder: Path) -> GameIndex:
        return cls(folder / INDEX_FILE)

    def add(self, row: IndexRow) -> None:
        with self._transaction():
            self._db.execute(f"INSERT INTO games ({', '.join(_COLUMNS)}) "
                             f"VALUES ({', '.join('?' * len(_COLUMNS))})", row.values())

    def add_many(self, rows: list[IndexRow]) -> None:
        with self._transaction():
            self._db.executemany(f"INSERT INTO games ({', '.join(_COLUMNS)}) "
                                 f"VALUES ({', '.join('?' * len(_COLUMNS))})",
                                 [r.values() for r in rows])

    def drop_unfinished_outcomes(self) -> int:
        """Forget aborted games so that a resume plays them again; returns how many."""
        with self._transaction():
            cur = self._db.execute("DELETE FROM games WHERE status != 'completed'")
        return int(cur.rowcount)

    def ids(self) -> set[str]:
        return {r[0] for r in self._db.execute("SELECT id FROM games")}

    def rows(self) -> Iterator[IndexRow]:
        for r in self._db.execute(f"SELECT {', '.join(_COLUMNS)} FROM games ORDER BY idx"):
            d = dict(zip(_COLUMNS, r, strict=True))
            d["players"] = json.loads(d["players"])
            d["placements"] = json.loads(d["placements"])
            d["summary"] = json.loads(d["summary"])
            yield IndexRow(**d)

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> GameIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _transaction(self) -> _Tx:
        return _Tx(self._db)


class _Tx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
