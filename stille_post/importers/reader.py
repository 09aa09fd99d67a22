"""A streaming reader of JSONL game logs: lines grouped into games by `game_id`.

Memory stays flat in the size of the input: a game is handed on as soon as its closing
line (the format's `closing_type`; `final_results` for the Elimination Game) is read, and
a game still open when its file ends is *parked*: its parsed lines are dropped and only
their byte offsets are kept. If a later file goes on with the same game id (a game split
across files), the parked lines are read again from their offsets. The published logs
hold one game per file, so parking costs nothing there; several games per file,
interleaved or not, work the same way.

Bad input is never an exception: a line that is not UTF-8, not JSON, cut off at the end
of a file, without a game id, or holding a lone surrogate is a *problem* attached to the
game it belongs to (found by its `game_id` text where the line is readable enough, else
the game of the line before it), and that game is later skipped with the problem as its
reason.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stille_post.core.errors import UsageError

# The game id of a line too damaged to parse, if its text still shows it.
_GAME_ID_TEXT = re.compile(rb'"game_id"\s*:\s*"?([^",}\s]+)')


@dataclass
class GameLines:
    """One game's lines as read, with the files they came from and any problems."""

    game_id: str
    lines: list[dict[str, Any]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (reason, where)
    closed: bool = False  # its closing line was read
    offsets: list[tuple[int, int]] = field(default_factory=list)  # (file index, byte offset)
    parked: bool = False


@dataclass
class Stray:
    """A damaged line that belongs to no game we can name."""

    reason: str
    where: str


@dataclass
class NotALog:
    """A file none of whose lines belongs to a game: empty, binary, UTF-16, other JSON.
    Its damaged lines are not counted as stray lines: the file is named instead."""

    path: str
    why: str


Progress = Callable[[int], None]  # bytes read since the last call
PROGRESS_EVERY = 1 << 20  # report every MiB: a callback per line would cost more than it shows


# Folders below a folder given to `import`, at most: published logs sit one or two deep.
MAX_FOLDER_DEPTH = 64
# The longest line read whole; a longer one is skipped in chunks as a damaged line, so a
# file of one endless line (or no newline at all) never fills the memory.
MAX_LINE_BYTES = 16 << 20


def log_files(paths: Sequence[Path]) -> list[Path]:
    """The files to read: each file as given, each folder's *.jsonl files (recursively,
    at most `MAX_FOLDER_DEPTH` folders deep), in sorted order so that a run is
    reproducible. A path that is neither a regular file nor a folder (a device such as
    /dev/zero, a pipe, a socket) is refused in one line (`UsageError`): reading it could
    take forever."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(_jsonl_under(p))
        elif p.is_file():
            out.append(p)
        else:
            raise UsageError(f"{p}: not a regular file or a folder (a device, a pipe or a "
                             "socket); give log files or folders of them")
    seen: set[Path] = set()
    unique = []
    for p in out:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def _jsonl_under(root: Path) -> list[Path]:
    """`sorted(x for x in root.rglob("*.jsonl") if x.is_file())`, without recursion (a
    folder 1,200 deep exhausted Python's stack in rglob) and at most `MAX_FOLDER_DEPTH`
    deep. As rglob, it does not follow links to folders and skips unreadable ones."""
    found: list[Path] = []
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth >= MAX_FOLDER_DEPTH:
                        raise UsageError(f"{root}: folders nested more than "
                                         f"{MAX_FOLDER_DEPTH} deep; give a folder nearer "
                                         "to the logs")
                    stack.append((Path(entry.path), depth + 1))
                elif entry.name.endswith(".jsonl") and entry.is_file():
                    found.append(Path(entry.path))
            except OSError:
                continue
    return sorted(found)


LONE_SURROGATE = "lone surrogate in text"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_lone_surrogate(value: Any) -> bool:
    """Whether any string in the parsed line (keys too) holds a lone surrogate."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def _parse(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(the line as an object, None) or (None, the reason it is unusable)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # the byte-order mark some editors put first in a file: not damage
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "non-UTF-8 bytes"
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None, "malformed line"
    if not isinstance(obj, dict):
        return None, "malformed line"
    # Valid JSON may still hold half an emoji (`"\\ud83d"`): text that no UTF-8 file
    # can hold, so the transcript could never be written. The escape is the only way in
    # (the bytes were UTF-8), so only a line that has one is walked.
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(obj):
        return None, LONE_SURROGATE
    gid, kind = obj.get("game_id"), obj.get("type")
    if gid is None or isinstance(gid, (dict, list, bool)) or str(gid) == "" \
            or not isinstance(kind, str):
        return None, "line without a game_id or type"
    return obj, None


def _lines(fh: Any) -> Iterator[tuple[bytes, int]]:
    """(line, its length in bytes) of a binary file, each line at most `MAX_LINE_BYTES`
    long: a longer one comes as its first `MAX_LINE_BYTES` bytes (not a whole line, so
    it reads as damaged), its length the whole line's, the rest skipped in chunks."""
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        size = len(raw)
        if size > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while True:
                chunk = fh.readline(MAX_LINE_BYTES)
                size += len(chunk)
                if not chunk or chunk.endswith(b"\n"):
                    break
            raw = raw[:MAX_LINE_BYTES]
        yield raw, size


def _not_a_log_reason(strays: Counter[str], lines: int) -> str:
    if not lines:
        return "empty"
    if strays.get("non-UTF-8 bytes"):
        return "not UTF-8 text: binary, or UTF-16"
    if strays.get("line without a game_id or type"):
        return "no line has a game_id and a type"
    return "no line is a game's (" + ", ".join(sorted(strays)) + ")"


def read_games(files: Sequence[Path], *, closing_type: str, progress: Progress | None = None
               ) -> Iterator[GameLines | Stray | NotALog]:
    """Games in the order their closing line (of type `closing_type`) is read; then every
    game never closed (no closing line, or its last line cut off), in the order first
    seen. A file with no line of any game is one `NotALog` (after its games, if any, so
    never: its damaged lines are held back until a game's line shows it is a log)."""
    open_games: dict[str, GameLines] = {}
    for fi, path in enumerate(files):
        where_file = str(path)
        current: str | None = None  # the game of the last readable line in this file
        touched: set[str] = set()
        held: list[Stray] = []  # this file's stray lines while it may not be a log at all
        held_reasons: Counter[str] = Counter()
        is_log = False
        lines = 0
        try:
            fh = path.open("rb")
        except OSError as exc:
            yield Stray(f"unreadable file ({exc.strerror or exc})", where_file)
            continue
        with fh:
            offset = reported = 0
            for lineno, (raw, size) in enumerate(_lines(fh), start=1):
                start, offset = offset, offset + size
                if progress is not None and offset - reported >= PROGRESS_EVERY:
                    progress(offset - reported)
                    reported = offset
                if not raw.strip():
                    continue
                lines += 1
                obj: dict[str, Any] | None
                problem: str | None
                if size > len(raw):
                    obj, problem = None, f"line longer than {MAX_LINE_BYTES >> 20} MiB"
                else:
                    obj, problem = _parse(raw)
                where = f"{where_file}:{lineno}"
                if obj is None:
                    assert problem is not None
                    if problem == "malformed line" and not raw.endswith(b"\n"):
                        problem = "truncated last line"
                    m = _GAME_ID_TEXT.search(raw)
                    gid = m.group(1).decode("utf-8", "replace") if m else current
                    if gid is None:
                        if is_log:
                            yield Stray(problem, where)
                        else:
                            held_reasons[problem] += 1
                            if len(held) < MAX_HELD_STRAYS:
                                held.append(Stray(problem, where))
                        continue
                    if not is_log:
                        is_log = True
                        yield from _release(held, held_reasons)
                    game = open_games.get(gid)
                    if game is None:
                        game = open_games[gid] = GameLines(gid)
                    _unpark(game, files)
                    game.problems.append((problem, where))
                    if where_file not in game.sources:
                        game.sources.append(where_file)
                    touched.add(gid)
                    current = gid
                    continue
                if not is_log:
                    is_log = True
                    yield from _release(held, held_reasons)
                gid = str(obj["game_id"])
                current = gid
                game = open_games.get(gid)
                if game is None:
                    game = open_games[gid] = GameLines(gid)
                _unpark(game, files)
                game.lines.append(obj)
                game.offsets.append((fi, start))
                if where_file not in game.sources:
                    game.sources.append(where_file)
                touched.add(gid)
                if obj["type"] == closing_type:
                    game.closed = True
                    del open_games[gid]
                    touched.discard(gid)
                    yield game
            if progress is not None and offset > reported:
                progress(offset - reported)
        if not is_log:
            yield NotALog(where_file, _not_a_log_reason(held_reasons, lines))
        for gid in touched:  # still open at the end of its file: keep offsets only
            game = open_games[gid]
            game.lines = []
            game.parked = True
    for game in open_games.values():
        yield game  # never closed: skipped, so its parked lines are not read again


MAX_HELD_STRAYS = 1000  # a file's stray lines kept while it may not be a log; more are counted


def _release(held: list[Stray], reasons: Counter[str]) -> Iterator[Stray]:
    """The stray lines held back for a file that turned out to be a log, each counted."""
    yield from held
    for reason, n in reasons.items():
        kept = sum(1 for s in held if s.reason == reason)
        where = next((s.where for s in held if s.reason == reason), "")
        for _ in range(n - kept):
            yield Stray(reason, where)
    held.clear()
    reasons.clear()


def _unpark(game: GameLines, files: Sequence[Path]) -> None:
    """Read a parked game's lines again from their offsets (a game split across files)."""
    if not game.parked:
        return
    game.parked = False
    lines: list[dict[str, Any]] = []
    handles: dict[int, Any] = {}
    try:
        for fi, off in game.offsets:
            fh = handles.get(fi)
            if fh is None:
                fh = handles[fi] = files[fi].open("rb")
            fh.seek(off)
            obj, problem = _parse(fh.readline())
            if obj is None:  # the file changed under us
                game.problems.append((problem or "malformed line", str(files[fi])))
            else:
                lines.append(obj)
    except OSError as exc:
        game.problems.append((f"unreadable file ({exc.strerror or exc})", ""))
    finally:
        for fh in handles.values():
            fh.close()
    game.lines = lines
