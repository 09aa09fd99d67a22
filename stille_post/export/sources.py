"""Which transcripts an export reads, their ids, and which of them it must skip.

A FOLDER argument is a results folder (`tournament`, `import`: the transcripts are in
its `games/`), any other folder (every `*.jsonl` below it, as `play` leaves them under
`runs/`), or one transcript file. A game's id is the folder's name and the transcript's
path below it, without `.jsonl`: `t1/g000001`, stable across re-exports.

A transcript is skipped, and named with the reason, when it cannot be read (not a
transcript, garbage in the middle), when it is incomplete (no result line, or a last
line torn by a crash: the game was cut off, and a `--resume` replays it), or when it
holds a lone surrogate (`"\\ud800"` in its JSON), which no UTF-8 file, Parquet or JSON
Lines, can hold: exported text is never silently changed.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stille_post.core.transcript import Transcript, TranscriptError
from stille_post.export.rows import GameSource

GAMES_DIR = "games"  # a results folder's transcripts (tournament/results.py)
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class SourceError(ValueError):
    """A FOLDER argument that names nothing to export (one line)."""


@dataclass(frozen=True)
class Found:
    game_id: str
    path: Path


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str

    def line(self) -> str:
        return f"{self.path}: {self.reason}"


class Catalog(Sequence[Found]):
    """Every transcript to export, in id order, held compactly: a string per game (its
    id) and a byte (which FOLDER argument it is under), so that even a million games
    cost little memory. Indexing gives a `Found`."""

    def __init__(self, roots: list[tuple[str, Path, bool]], ids: list[str],
                 where: bytearray) -> None:
        self._roots, self.ids, self._where = roots, ids, where  # (prefix, root, is_file)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> Found:  # type: ignore[override]
        game_id = self.ids[i]
        prefix, root, is_file = self._roots[self._where[i]]
        if is_file:
            return Found(game_id, root)
        return Found(game_id, root / (game_id[len(prefix) + 1:] + ".jsonl"))


def find(folders: Sequence[Path], *, exclude: Path | None = None) -> Catalog:
    """Every transcript under `folders`, in id order. Raises SourceError for a folder
    that does not exist, and for two transcripts that would get the same id."""
    if len(folders) > 255:
        raise SourceError("at most 255 folders at once; export them in groups")
    roots: list[tuple[str, Path, bool]] = []
    pairs: list[tuple[str, int]] = []
    skip = os.path.realpath(exclude) if exclude is not None else None
    for k, folder in enumerate(folders):
        if folder.is_file():
            roots.append(("", folder, True))
            pairs.append((folder.name.removesuffix(".jsonl"), k))
            continue
        if not folder.is_dir():
            raise SourceError(f"{folder}: no such folder or transcript")
        name = folder.resolve().name
        games = folder / GAMES_DIR
        root = games if games.is_dir() else folder
        roots.append((name, root, False))
        pairs.extend((f"{name}/{rel}", k) for rel in _names(root, skip))
    pairs.sort()
    for (a, i), (b, j) in itertools.pairwise(pairs):
        if a == b:
            raise SourceError(f"{roots[i][1]} and {roots[j][1]} both hold game {a!r}: "
                              "export folders with different names")
    return Catalog(roots, [p[0] for p in pairs], bytearray(p[1] for p in pairs))


def _names(root: Path, skip: str | None) -> Iterator[str]:
    """Each `*.jsonl` below `root` by its path from there, without `.jsonl` (plain
    strings: a Path per game would cost more memory than the game's row)."""
    for dirpath, dirnames, filenames in os.walk(root):
        # hidden folders (a half-written export, editor files) and the export's own
        # output, when it is inside the folder, are not looked into
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and (
            skip is None or os.path.realpath(os.path.join(dirpath, d)) != skip))
        rel = os.path.relpath(dirpath, root)
        base = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for f in filenames:
            if f.endswith(".jsonl") and not f.startswith("."):
                yield base + f[:-6]


def read(found: Found, *, quick: bool = False) -> GameSource | Skipped:
    """The transcript, or why it is skipped. `quick`: for a re-play, which compares
    every event line with its own: every line is decoded at once, the event lines kept
    as written beside their decoded values (`GameSource.quick`, `written`), and no
    `Event` is built; a transcript whose first and last lines are not a header and a
    result is read whole. A quick source whose re-play fails is read
    again whole (`read_whole`) to say whether it is damaged."""
    path = found.path
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return Skipped(path, f"cannot be read ({exc.strerror or exc})")
    surrogate = _lone_surrogate(raw)
    if surrogate is not None:
        return Skipped(path, surrogate)
    if quick:
        got = _quick(raw)
        if got is not None:
            return GameSource(found.game_id, got[0], path, quick=True, written=got[1])
    return read_whole(found.game_id, path)


def read_whole(game_id: str, path: Path) -> GameSource | Skipped:
    """The transcript with every line parsed and checked, or why it is skipped."""
    try:
        t = Transcript.load(path, keep_lines=True)
    except TranscriptError as exc:
        where = str(exc).removeprefix(f"{path}:").strip()
        line, colon, rest = where.partition(":")
        return Skipped(path, f"damaged: line {line}:{rest}" if colon and line.isdigit()
                       else f"damaged: {where}")
    except (OSError, RecursionError, ValueError) as exc:
        return Skipped(path, f"damaged: {type(exc).__name__}: {exc}"[:300])
    if t.torn_lines:
        return Skipped(path, "truncated: the last line was cut off (the game is incomplete)")
    if t.result is None:
        return Skipped(path, "incomplete: no result line (the game was cut off)")
    problem = header_problem(t.header)
    if problem is not None:
        return Skipped(path, f"damaged: {problem}")
    return GameSource(game_id, t, path)


def header_problem(header: dict[str, Any]) -> str | None:
    """What makes a header unusable, or None: the fields every table reads."""
    if not isinstance(header.get("game"), str):
        return "the header names no game"
    seats = header.get("seats")
    if not isinstance(seats, dict) or not all(
            isinstance(k, str) and k.isdigit() and isinstance(v, dict)
            for k, v in seats.items()):
        return "the header's seats are not a table of seat numbers"
    return None


def _quick(raw: bytes) -> tuple[Transcript, list[Any]] | None:
    """The transcript with its event lines kept as written, and every line decoded by
    one `json.loads` of them all (a call per line costs twice as much); None when that
    does not give exactly one header, the events and one result (then the transcript is
    read whole, which names what is wrong)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if "\r" in text:
        lines = [x.rstrip("\r") for x in lines]
    lines = [x for x in lines if x and not x.isspace()]
    if len(lines) < 2:
        return None
    try:
        objs = json.loads("[" + ",".join(lines) + "]")
    except (ValueError, RecursionError):
        return None
    if len(objs) != len(lines):  # a line that held two values, or none
        return None
    header, result = objs[0], objs[-1]
    if not (isinstance(header, dict) and header.get("kind") == "header"
            and header_problem(header) is None
            and isinstance(result, dict) and result.get("kind") == "result"):
        return None
    events = lines[1:-1]
    return Transcript(header=header, events=[], result=result, event_lines=events), objs[1:-1]


def _lone_surrogate(raw: bytes) -> str | None:
    """Where the transcript holds a lone surrogate, or None (a valid pair is one
    character once decoded, and is fine)."""
    if _SURROGATE.search(raw) is None:
        return None
    for lineno, line in enumerate(raw.splitlines(), start=1):
        if _SURROGATE.search(line) is None:
            continue
        try:
            json.dumps(json.loads(line), ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            return (f"refused: line {lineno} holds a lone surrogate "
                    f"(U+{ord(exc.object[exc.start]):04X}), which UTF-8 text cannot hold")
        except ValueError:
            continue  # not JSON: the reader names it
    return None
