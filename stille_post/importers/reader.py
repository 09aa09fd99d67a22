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
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


Progress = Callable[[int], None]  # bytes read since the last call
PROGRESS_EVERY = 1 << 20  # report every MiB: a callback per line would cost more than it shows


def log_files(paths: Sequence[Path]) -> list[Path]:
    """The files to read: each file as given, each folder's *.jsonl files (recursively),
    in sorted order so that a run is reproducible."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(x for x in p.rglob("*.jsonl") if x.is_file()))
        else:
            out.append(p)
    seen: set[Path] = set()
    unique = []
    for p in out:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


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


def read_games(files: Sequence[Path], *, closing_type: str, progress: Progress | None = None
               ) -> Iterator[GameLines | Stray]:
    """Games in the order their closing line (of type `closing_type`) is read; then every
    game never closed (no closing line, or its last line cut off), in the order first
    seen."""
    open_games: dict[str, GameLines] = {}
    for fi, path in enumerate(files):
        where_file = str(path)
        current: str | None = None  # the game of the last readable line in this file
        touched: set[str] = set()
        try:
            fh = path.open("rb")
        except OSError as exc:
            yield Stray(f"unreadable file ({exc.strerror or exc})", where_file)
            continue
        with fh:
            offset = reported = 0
            for lineno, raw in enumerate(fh, start=1):
                start, offset = offset, offset + len(raw)
                if progress is not None and offset - reported >= PROGRESS_EVERY:
                    progress(offset - reported)
                    reported = offset
                if not raw.strip():
                    continue
                obj, problem = _parse(raw)
                where = f"{where_file}:{lineno}"
                if obj is None:
                    assert problem is not None
                    if problem == "malformed line" and not raw.endswith(b"\n"):
                        problem = "truncated last line"
                    m = _GAME_ID_TEXT.search(raw)
                    gid = m.group(1).decode("utf-8", "replace") if m else current
                    if gid is None:
                        yield Stray(problem, where)
                        continue
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
        for gid in touched:  # still open at the end of its file: keep offsets only
            game = open_games[gid]
            game.lines = []
            game.parked = True
    for game in open_games.values():
        yield game  # never closed: skipped, so its parked lines are not read again


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
