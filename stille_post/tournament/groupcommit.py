"""Group commit: a tournament's finished games are made durable and indexed in groups.

A played game ends with its transcript complete in `<id>.jsonl.part`. It joins the open
group, which is committed when `COMMIT_ROWS` games wait, when its first game has waited
`COMMIT_SECONDS`, or at once when games finish slowly (no commit in the last
`COMMIT_SECONDS`: an LLM game is indexed as soon as it ends, as before). Committing a group:

1. every `.part` of the group is renamed into place;
2. with `durable`, the group reaches the disk, in the same thread hop as the renames (off
   the event loop): one `syncfs` of the results' filesystem on Linux >= 5.8, else an
   fsync of each transcript (several at once) and one of the games folder;
3. on the loop, the group's rows go into the index in one transaction.

Why kill -9 at any moment still resumes exactly: a row is only ever written after its
transcript is complete and in place (step 3 follows 1 and 2), so every indexed game's
transcript is complete. A game killed before step 1 is a `.part`, removed and replayed
by `--resume` (the same seed gives the same bytes); one killed between 1 and 3 is a
complete transcript without a row, which `--resume` indexes from the file
(`results.ensure_index`) and never plays again. The index's primary key forbids a
second row.

What this saves (docs/performance-real-path.md): before, each game's transcript was
reopened and fsynced in a thread hop of its own, a thread wake-up and an fsync (a journal
commit on ext4) per game. Now a group of games costs one hop and one `syncfs` (or
overlapping fsyncs), whatever its size.

Why `syncfs` is safe here: it writes back and waits for every dirty page and inode of
the filesystem, so the group's data and its renames among them, and commits the journal
(ext4) before it returns, as each file's fsync would. Since Linux 5.8 it also reports a
writeback error that happened on the filesystem since the descriptor was opened (or
since the last `syncfs` on it); the descriptor is opened when the run starts, before
any transcript is written, so no error on a transcript goes unseen. Older kernels
return success regardless, so they, and other systems, fsync each file. Its cost: it
also writes back other programs' dirty data on that filesystem, which may make a
group's commit slower (never less safe); `--no-fsync` skips the sync altogether.

A failed sync stops the run with the error; its group has no rows, and `--resume`
treats its games as above.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import platform
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from stille_post.tournament.index import COMMIT_ROWS, COMMIT_SECONDS, GameIndex, IndexRow

# A group is committed when COMMIT_ROWS games wait, or when the first has waited
# COMMIT_SECONDS: the index's own batch sizes (index.py).
__all__ = ["COMMIT_ROWS", "COMMIT_SECONDS", "GroupCommit"]

# Without syncfs: fsyncs in flight at once. ext4 commits concurrent fsyncs in one
# journal transaction; one at a time, each waits for a commit of its own (3.8 ms a
# file on the disk measured, against 0.12 ms with six at once).
FSYNCS_AT_ONCE = 8


@dataclass(frozen=True)
class _Finished:
    row: IndexRow
    part: Path | None  # the complete transcript still to rename; None: already in place
    final: Path


class GroupCommit:
    """Finished games of one event loop, waiting for their group's commit (see the
    module's docstring). `start` the committer; `close` commits what waits and stops it."""

    def __init__(self, index: GameIndex, games: Path, *, durable: bool) -> None:
        self.index = index
        self._sync = _GroupSync(games) if durable else None
        self._waiting: list[_Finished] = []
        self._keys: set[object] = set()  # ids and idx values waiting
        self._first_at = 0.0
        self._committed_at = float("-inf")
        self._arrived = asyncio.Event()  # a group is open
        self._due = asyncio.Event()  # ... and is to be committed now
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self.error: BaseException | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def add(self, row: IndexRow, part: Path | None, final: Path) -> None:
        """One finished game. A duplicate id or index raises `sqlite3.IntegrityError` here,
        at once; a failed commit of an earlier group is raised here too. When the group is
        due, this yields to the loop once: bot games never wait for anything, so without
        it one worker would play every game before the committer ran at all."""
        if self.error is not None:
            raise self.error
        keys = self._keys
        if ("id", row.id) in keys or ("idx", row.idx) in keys:
            raise sqlite3.IntegrityError(f"UNIQUE constraint failed: game {row.id} "
                                         f"(index {row.idx}) is already in the index")
        self.index.check_new(row)
        now = time.monotonic()
        if not self._waiting:
            self._first_at = now
            self._arrived.set()
            # Games that finish slowly (LLM seats): each is committed at once.
            due = now - self._committed_at >= COMMIT_SECONDS
        else:
            due = len(self._waiting) + 1 >= COMMIT_ROWS or now - self._first_at >= COMMIT_SECONDS
        self._waiting.append(_Finished(row, part, final))
        keys.update((("id", row.id), ("idx", row.idx)))
        if due:
            self._due.set()
            await asyncio.sleep(0)  # the committer takes the group now

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    async def _run(self) -> None:
        try:
            while True:
                if not self._waiting:
                    if self._closing:
                        return
                    self._arrived.clear()
                    await self._arrived.wait()
                    continue
                delay = self._first_at + COMMIT_SECONDS - time.monotonic()
                if delay > 0 and not self._due.is_set() and not self._closing:
                    # asyncio.timeout, not wait_for: 3.11's wait_for loses a cancel
                    # (Ctrl-C) that arrives in the turn the group falls due.
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(delay):
                            await self._due.wait()
                await self._commit()
        except asyncio.CancelledError:
            # The loop is shutting down (Ctrl-C, an error): the games that finished are
            # committed here, on the loop, rather than replayed by the next run.
            if self._waiting:
                self._commit_now()
            raise
        except Exception as exc:  # raised to the games by `add`, to the run by `close`
            self.error = exc

    def _take(self) -> tuple[list[_Finished], list[tuple[Path, Path]]]:
        group, self._waiting, self._keys = self._waiting, [], set()
        self._due.clear()
        return group, [(g.part, g.final) for g in group if g.part is not None]

    async def _commit(self) -> None:
        group, moves = self._take()
        if self._sync is not None:
            synced = self._sync.submit(moves)
            try:
                await asyncio.wrap_future(synced)
            except asyncio.CancelledError:
                synced.result()  # the thread goes on: wait for it, then index its group
                self._index(group)
                raise
        else:
            _place(moves)
        self._index(group)

    def _commit_now(self) -> None:
        group, moves = self._take()
        if self._sync is not None:
            self._sync.place(moves)
        else:
            _place(moves)
        self._index(group)

    def _index(self, group: list[_Finished]) -> None:
        # One transaction (after any rows the index keeps); each row was checked by `add`.
        self.index.add_many([g.row for g in group])
        self._committed_at = time.monotonic()

    async def close(self) -> None:
        """Commit every game that waits, then stop the committer; raises the error of a
        failed commit."""
        self._closing = True
        self._arrived.set()
        self._due.set()
        try:
            if self._task is not None:
                await self._task
            elif self._waiting:
                self._commit_now()
        finally:
            if self._sync is not None:
                self._sync.close()
        if self.error is not None:
            raise self.error


def _place(moves: list[tuple[Path, Path]]) -> None:
    for part, final in moves:
        os.replace(part, final)


class _GroupSync:
    """Renames a group's transcripts into place and syncs them (in a worker thread)."""

    def __init__(self, games: Path) -> None:
        # Opened before any transcript of the run is written: `syncfs` on it then reports
        # every writeback error since (see the module's docstring).
        try:
            self.fd: int | None = os.open(games, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            self.fd = None  # a system that cannot open a folder (Windows): files only
        self.syncfs = _syncfs() if self.fd is not None else None
        self._hop = ThreadPoolExecutor(1, "group-commit")  # one group at a time
        self._pool: ThreadPoolExecutor | None = None

    def submit(self, moves: list[tuple[Path, Path]]) -> Future[None]:
        return self._hop.submit(self.place, moves)

    def place(self, moves: list[tuple[Path, Path]]) -> None:
        _place(moves)
        if self.syncfs is not None and self.fd is not None:
            if self.syncfs(self.fd) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"syncfs of the results folder: {os.strerror(err)}")
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(FSYNCS_AT_ONCE, "group-fsync")
        for _ in self._pool.map(_fsync, [final for _, final in moves]):
            pass
        if self.fd is not None:
            os.fsync(self.fd)  # the renames

    def close(self) -> None:
        self._hop.shutdown()
        if self._pool is not None:
            self._pool.shutdown()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _syncfs() -> Callable[[int], int] | None:
    """libc's syncfs where it reports writeback errors (Linux 5.8 and later), else None."""
    if platform.system() != "Linux" or os.environ.get("STILLE_POST_NO_SYNCFS"):
        return None
    try:
        major, minor = (int(x) for x in platform.release().split(".")[:2])
    except ValueError:
        return None
    if (major, minor) < (5, 8):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn
