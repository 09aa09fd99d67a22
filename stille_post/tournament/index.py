"""The index of finished games: one SQLite row per game, committed once the game's
transcript is complete and in its final place.

Why this is crash-safe:
- A game's transcript is written to `<id>.jsonl.part` and renamed into place only after
  its result line is written; the runner inserts the row after the rename (and the sync,
  with fsync on), a group of games in one transaction (tournament/groupcommit.py).
  A kill at any point leaves either no row (the game is redone, its leftovers replaced,
  or indexed from its complete transcript) or a row whose transcript is complete.
- SQLite's write-ahead log makes each commit atomic; `id` is the primary key, so a game
  can never be counted twice, even by a buggy caller.

One transaction for many games: `add` checks a row at once (a duplicate raises at once)
and keeps it; when games finish fast (within `COMMIT_SECONDS` of the last commit) the kept
rows are written in one short transaction when `COMMIT_ROWS` wait or the oldest is
`COMMIT_SECONDS` old; `flush`/`close` write the rest. (The runner groups its games itself
with the same sizes, and writes each group with `add_many`.)
The write lock is held only while a batch is written, never across the wait: with
`--workers 2` a transaction left open for the wait made the other process's `BEGIN`
block its event loop (SQLite's busy wait is synchronous) for up to `COMMIT_SECONDS`.
A crash can therefore lose the last uncommitted rows, never a transcript: their games are
complete on disk, and a resume (or `report`) indexes a complete transcript without a row
from the file itself (`results.row_from_transcript`), so nothing is played twice.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INDEX_FILE = "index.sqlite"

# Commit the open transaction when this many rows wait, or when it is this old.
COMMIT_ROWS = 256
COMMIT_SECONDS = 0.05

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
                _stored_count(self.input_tokens), _stored_count(self.output_tokens),
                _stored_dollars(self.dollars))


# SQLite's INTEGER is 64-bit: a larger Python int raises OverflowError on insert, which
# once ended a run and made its folder unreadable. Counts are read within bounds before
# they get here (core/usage.py); this is the last guard, so no number can break a commit.
_INT64_MAX = 2**63 - 1


def _stored_count(value: Any) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError, OverflowError):
        return 0
    return min(max(n, 0), _INT64_MAX)


def _stored_dollars(value: Any) -> float:
    try:
        d = float(value)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return d if math.isfinite(d) and d > 0 else 0.0


_COLUMNS = ("id", "idx", "seed", "status", "reason", "transcript", "players", "placements",
            "summary", "input_tokens", "output_tokens", "dollars")
_INSERT = (f"INSERT INTO games ({', '.join(_COLUMNS)}) "
           f"VALUES ({', '.join('?' * len(_COLUMNS))})")


class GameIndex:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None)
        # WAL + NORMAL: a commit survives a process crash; only an OS crash can lose the
        # latest commits, and those games are then simply replayed.
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        # Another process (a second runner, a merge) may hold the write lock while it
        # commits a batch: wait for it rather than fail.
        self._db.execute("PRAGMA busy_timeout=30000")
        self._db.execute(_SCHEMA)
        self._pending: list[IndexRow] = []  # checked rows waiting for the next commit
        self._pending_keys: set[object] = set()  # their ids and idx values
        self._opened_at = 0.0
        self._committed_at = float("-inf")  # no commit yet: the first row commits at once

    @classmethod
    def open(cls, folder: Path) -> GameIndex:
        return cls(folder / INDEX_FILE)

    def check_new(self, row: IndexRow) -> None:
        """Raise `sqlite3.IntegrityError` if `row`'s id or index is in the index already
        (its pending rows included)."""
        keys = self._pending_keys
        if (("id", row.id) in keys or ("idx", row.idx) in keys or self._db.execute(
                "SELECT 1 FROM games WHERE id = ? OR idx = ?", (row.id, row.idx)).fetchone()):
            raise sqlite3.IntegrityError(f"UNIQUE constraint failed: game {row.id} "
                                         f"(index {row.idx}) is already in the index")

    def add(self, row: IndexRow) -> None:
        """Check one row now (a duplicate id or index raises `sqlite3.IntegrityError` here
        and leaves the others alone); it is written with its batch (see the module's
        docstring)."""
        self.check_new(row)
        keys = self._pending_keys
        now = time.monotonic()
        if not self._pending:
            # Games that finish slowly (LLM seats) commit one by one, as before: a batch
            # only forms when the previous commit is recent.
            self._opened_at = (now if now - self._committed_at < COMMIT_SECONDS
                               else float("-inf"))
        self._pending.append(row)
        keys.update((("id", row.id), ("idx", row.idx)))
        if len(self._pending) >= COMMIT_ROWS or now - self._opened_at >= COMMIT_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Commit the rows `add` kept so far. (A row names a transcript in place: the
        runner adds a played game's row only once its file is renamed into place,
        tournament/groupcommit.py.)"""
        if self._pending:
            rows = self._pending
            self._pending, self._pending_keys = [], set()
            with self._transaction():
                self._db.executemany(_INSERT, [r.values() for r in rows])
            self._committed_at = time.monotonic()

    @property
    def uncommitted(self) -> int:
        return len(self._pending)

    def add_many(self, rows: list[IndexRow]) -> None:
        """All of `rows` in one transaction of their own, or none of them."""
        self.flush()
        with self._transaction():
            self._db.executemany(_INSERT, [r.values() for r in rows])

    def drop_unfinished_outcomes(self) -> int:
        """Forget aborted games so that a resume plays them again; returns how many."""
        self.flush()
        with self._transaction():
            cur = self._db.execute("DELETE FROM games WHERE status != 'completed'")
        return int(cur.rowcount)

    def drop(self, ids: list[str]) -> None:
        """Forget these games (damaged or budget-cut: a resume replays them), in one
        transaction."""
        self.flush()
        if ids:
            with self._transaction():
                self._db.executemany("DELETE FROM games WHERE id = ?", [(i,) for i in ids])

    def ids(self) -> set[str]:
        """Every game's id, the rows waiting for their commit included."""
        return ({r[0] for r in self._db.execute("SELECT id FROM games")}
                | {r.id for r in self._pending})

    def rows(self) -> Iterator[IndexRow]:
        self.flush()
        for r in self._db.execute(f"SELECT {', '.join(_COLUMNS)} FROM games ORDER BY idx"):
            d = dict(zip(_COLUMNS, r, strict=True))
            d["players"] = json.loads(d["players"])
            d["placements"] = json.loads(d["placements"])
            d["summary"] = json.loads(d["summary"])
            yield IndexRow(**d)

    def check(self) -> None:
        """Read every id (as `ids` does, without keeping them): raises
        `sqlite3.DatabaseError` on a damaged index."""
        for _ in self._db.execute("SELECT id FROM games"):
            pass

    def brief(self) -> Iterator[tuple[str, int, str, str]]:
        """(id, idx, status, transcript) of every row, by idx: what a summary needs,
        streamed (no JSON decoded, nothing kept)."""
        self.flush()
        yield from self._db.execute(
            "SELECT id, idx, status, transcript FROM games ORDER BY idx")

    def lacking(self, ids: list[str]) -> list[str]:
        """Those of `ids` that have no row (pending rows count as rows)."""
        self.flush()
        have: set[str] = set()
        for i in range(0, len(ids), 500):  # SQLite allows 999 parameters per statement
            chunk = ids[i:i + 500]
            have.update(r[0] for r in self._db.execute(
                f"SELECT id FROM games WHERE id IN ({', '.join('?' * len(chunk))})", chunk))
        return [i for i in ids if i not in have]

    def count(self) -> int:
        """How many games, the rows waiting for their commit included."""
        return (int(self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
                + len(self._pending))

    def close(self) -> None:
        try:
            self.flush()
        finally:
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
