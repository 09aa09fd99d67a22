"""One export: transcripts in, one table out (`stille-post export`, docs/data.md).

The output folder holds the table's part files in `data/` (nothing else is there, so
pandas and polars read the folder as one table), a hidden manifest (`.export.jsonl`: the
settings, every exported game with its transcript's size and mtime, every skipped one)
and, with `hf_card`, a dataset card (README.md): the layout of a dataset on the Hugging
Face hub, which `datasets.load_dataset("parquet", data_dir=DIR)` reads as it is.

Writing it again (`overwrite`), after a `tournament --resume` added games:
- when the manifest has the same settings and every exported game's transcript is still
  there, unchanged, only the new games are exported, into new part files, and the
  manifest is replaced (atomically) once they are complete;
- otherwise the whole export is written into a temporary folder beside it and swapped
  in, so the folder never holds a mix of the two.
Part files that the manifest does not list (a run killed after a rename) are removed
first. A part file is always renamed into place only once it is complete.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from stille_post.core.errors import UsageError
from stille_post.core.quietgc import quiet_gc
from stille_post.core.rewards import RewardScheme
from stille_post.export import sources
from stille_post.export.records import RecordError
from stille_post.export.replay import Replay, replay, unreplayed
from stille_post.export.rows import (
    EXPORT_VERSION,
    GameSource,
    Table,
    decision_rows,
    event_rows,
    game_row,
)
from stille_post.export.writer import DATA_DIR, Format, JsonlSink, ParquetSink, Sink

MANIFEST = ".export.jsonl"
_NEW_GAMES = ".export-games.tmp"  # this run's game lines, merged into the manifest
CARD = "README.md"
Mode = Literal["new", "added", "rewritten", "unchanged"]


class ExportExists(UsageError):
    """The output folder already holds an export (and `overwrite` was not given)."""


@dataclass(frozen=True)
class ExportRequest:
    folders: tuple[Path, ...]
    out: Path
    what: Table = "decisions"
    fmt: Format = "parquet"
    reward: RewardScheme = "win"
    hf_card: bool = False
    overwrite: bool = False


@dataclass(frozen=True)
class NoPrompts:
    """A game exported without its decisions' prompts, and why."""

    game_id: str
    reason: str
    expected: bool  # a transcript that cannot have them (imported, older format)


@dataclass
class ExportResult:
    out: Path
    mode: Mode = "new"
    games: int = 0  # exported by this run
    rows: int = 0  # written by this run
    kept: int = 0  # games already in the export and left as they were
    skipped: list[sources.Skipped] = field(default_factory=list)
    no_prompts: list[NoPrompts] = field(default_factory=list)

    @property
    def problems(self) -> bool:
        """Something was skipped or exported without what it should have had."""
        return bool(self.skipped) or any(not n.expected for n in self.no_prompts)


Progress = Callable[[int, int], None]  # (games done, games to do)


def run_export(req: ExportRequest, progress: Progress | None = None) -> ExportResult:
    """Export `req.folders` into `req.out` (see the module docstring). Raises UsageError
    (one line) for bad input: a missing folder, an existing export without `overwrite`,
    an output folder that holds something else."""
    out = req.out
    head = _check_out(out, req.overwrite)
    catalog = sources.find(list(req.folders), exclude=out)
    if head is not None:
        _remove_orphans(out, head)
        exported = _exported(out, head, req, catalog)
        if exported is not None:
            return _add(req, catalog, head, exported, progress)
    return _rewrite(req, catalog, progress, existed=head is not None)


def _check_out(out: Path, overwrite: bool) -> dict[str, Any] | None:
    """The existing export's first manifest line (its settings), or None for a new
    export."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is a file, not a folder for the export")
    if not out.exists() or not any(out.iterdir()):
        return None
    path = out / MANIFEST
    if not path.is_file():
        raise UsageError(f"{out} is not empty and holds no export; choose another folder")
    if not overwrite:
        raise ExportExists(f"{out} already holds an export; add --overwrite to bring it up "
                           "to date (new games are added, or it is written anew)")
    try:
        with path.open(encoding="utf-8") as fh:
            head = json.loads(fh.readline())
    except (OSError, ValueError):
        return {}  # unreadable: written anew
    return head if isinstance(head, dict) else {}


def _settings(req: ExportRequest) -> dict[str, Any]:
    return {"export_version": EXPORT_VERSION, "table": req.what, "format": req.fmt,
            "reward": req.reward}


def _stat(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _manifest_lines(out: Path) -> Iterator[dict[str, Any]]:
    """The manifest's lines after the first (games, then skipped transcripts)."""
    with (out / MANIFEST).open(encoding="utf-8") as fh:
        fh.readline()
        for line in fh:
            obj = json.loads(line)
            if isinstance(obj, dict):
                yield obj


def _exported(out: Path, head: dict[str, Any], req: ExportRequest,
              catalog: sources.Catalog) -> bytearray | None:
    """Which games of `catalog` the export holds (a mark per game), when only new games
    need adding; None when it must be written anew: other settings, or an exported
    transcript gone or changed. The manifest is read line by line beside the catalog
    (both are in id order), so this costs a byte per game."""
    if any(head.get(k) != v for k, v in _settings(req).items()):
        return None
    marks = bytearray(len(catalog))
    ids = catalog.ids
    i = 0
    try:
        for entry in _manifest_lines(out):
            if "skipped" in entry:
                continue
            game_id = entry.get("game")
            while i < len(ids) and ids[i] < str(game_id):
                i += 1
            if i == len(ids) or ids[i] != game_id:
                return None  # gone
            found = catalog[i]
            if entry.get("path") != str(found.path) or \
                    [entry.get("size"), entry.get("mtime_ns")] != list(_stat(found.path)):
                return None  # changed
            marks[i] = 1
    except (OSError, ValueError):
        return None
    return marks


def _remove_orphans(out: Path, head: dict[str, Any]) -> None:
    listed = set(head.get("parts") or [])
    data = out / DATA_DIR
    leftovers = [p for p in out.iterdir() if p.name.startswith(".part-")]
    if data.is_dir():
        leftovers += [p for p in data.iterdir() if p.name not in listed]
    for path in leftovers:
        with contextlib.suppress(OSError):
            path.unlink()


class _Todo(Sequence[sources.Found]):
    """The games of a catalog not marked as exported, in id order."""

    def __init__(self, catalog: sources.Catalog, marks: bytearray | None) -> None:
        self.catalog = catalog
        self.at: Sequence[int] = range(len(catalog)) if marks is None else \
            [i for i, m in enumerate(marks) if not m]

    def __len__(self) -> int:
        return len(self.at)

    def __getitem__(self, k: int) -> sources.Found:  # type: ignore[override]
        return self.catalog[self.at[k]]


def _rewrite(req: ExportRequest, catalog: sources.Catalog, progress: Progress | None,
             *, existed: bool) -> ExportResult:
    out = req.out
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.export-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        result, parts = _export(req, _Todo(catalog, None), staging, 0, progress)
        result.out = out
        result.mode = "rewritten" if existed else "new"
        _write_manifest(staging, req, parts, result, None)
        if out.exists():
            old = out.parent / f".{out.name}.old-{os.getpid()}"
            os.replace(out, old)
            os.replace(staging, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return result


def _add(req: ExportRequest, catalog: sources.Catalog, head: dict[str, Any],
         exported: bytearray, progress: Progress | None) -> ExportResult:
    out = req.out
    parts: list[str] = list(head.get("parts") or [])
    todo = _Todo(catalog, exported)
    first = 1 + max((int(p[5:10]) for p in parts if p[5:10].isdigit()), default=-1)
    result, added = _export(req, todo, out, first, progress)
    result.kept = sum(exported)
    result.mode = "added" if len(todo) else "unchanged"
    _write_manifest(out, req, parts + added, result, out)
    return result


def _export(req: ExportRequest, todo: Sequence[sources.Found], folder: Path, first: int,
            progress: Progress | None) -> tuple[ExportResult, list[str]]:
    sink = _sink(req, folder, first)
    result = ExportResult(req.out)
    try:
        with (folder / _NEW_GAMES).open("w", encoding="utf-8") as entries, quiet_gc():
            # One event loop for the whole export: the re-plays run on it one after
            # another.
            asyncio.run(_games(req, todo, sink, result, entries, progress))
        parts = sink.close()
    except BaseException:
        sink.abort()
        with contextlib.suppress(OSError):
            (folder / _NEW_GAMES).unlink()
        raise
    result.rows = sink.rows
    return result, parts


async def _games(req: ExportRequest, todo: Sequence[sources.Found], sink: Sink,
                 result: ExportResult, entries: TextIO,
                 progress: Progress | None) -> None:
    quick = req.what == "decisions"  # a re-play checks every line (export/sources.py)
    for n, item in enumerate(todo, start=1):
        got = sources.read(item, quick=quick)
        rows = None
        if isinstance(got, sources.Skipped):
            result.skipped.append(got)
        else:
            rows = await _rows(req, got, result)
        if rows is not None:
            before = sink.rows
            for row in rows:
                sink.add(row)
            size, mtime = _stat(item.path)
            entries.write(json.dumps({"game": item.game_id, "path": str(item.path),
                                      "size": size, "mtime_ns": mtime,
                                      "rows": sink.rows - before}, ensure_ascii=False) + "\n")
            result.games += 1
        if progress is not None:
            progress(n, len(todo))


def _sink(req: ExportRequest, folder: Path, first: int) -> Sink:
    if req.fmt == "parquet":
        from stille_post.export.schema import schema

        return ParquetSink(folder, schema(req.what), first_part=first)
    return JsonlSink(folder, first_part=first)


async def _rows(req: ExportRequest, source: GameSource, result: ExportResult
                ) -> Iterable[dict[str, Any]] | None:
    """The game's rows, or None when it is skipped (named in `result`)."""
    if req.what == "events":
        return event_rows(source)
    roles = _roles(source.transcript.game)
    if req.what == "games":
        return [game_row(source, req.reward, roles)]
    got = await _replay(source)
    if got.prompts is None:
        whole = sources.read_whole(source.game_id, source.path) \
            if source.quick and source.path is not None else source
        if isinstance(whole, sources.Skipped):
            result.skipped.append(whole)
            return None
        try:
            got = unreplayed(whole.transcript, got.problem or "not re-played")
        except RecordError as exc:
            result.skipped.append(sources.Skipped(source.path or Path(source.game_id),
                                                  f"damaged: {exc}"))
            return None
        source = whole
        result.no_prompts.append(NoPrompts(source.game_id, got.problem or "",
                                           _expected(source)))
    return decision_rows(source, got, req.reward, roles)


async def _replay(source: GameSource) -> Replay:
    from stille_post.games import all_games

    t = source.transcript
    definition = all_games().get(t.game)
    if definition is None:
        return Replay([], None, f"the game {t.game!r} is not installed here", None)
    return await replay(t, definition, source.written)


def _expected(source: GameSource) -> bool:
    from stille_post.export.replay import RECORDS_FORMAT, replayable

    t = source.transcript
    fmt = t.header.get("format")
    return replayable(t) is not None or (isinstance(fmt, int) and fmt < RECORDS_FORMAT)


def _roles(game: str) -> tuple[str, ...]:
    from stille_post.games import all_games

    definition = all_games().get(game)
    return tuple(r.name for r in definition.roles) if definition is not None else ()


def _write_manifest(folder: Path, req: ExportRequest, parts: list[str],
                    result: ExportResult, old: Path | None) -> None:
    """The manifest (JSON Lines): the settings and parts; every exported game in id
    order, the earlier export's (`old`) merged with this run's, as streams; the skipped
    transcripts. Written aside and renamed; then the card, with the totals."""
    def games(path: Path) -> Iterator[tuple[str, str]]:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                yield json.loads(line)["game"], line

    head = {**_settings(req), "sources": [str(f) for f in req.folders], "parts": parts}
    new = folder / _NEW_GAMES
    tmp = folder / f".{MANIFEST}.tmp"
    count = rows = 0
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(head, ensure_ascii=False) + "\n")
        streams: list[Iterator[tuple[str, str]]] = [games(new)]
        if old is not None:
            streams.append((e["game"], json.dumps(e, ensure_ascii=False) + "\n")
                           for e in _manifest_lines(old) if "game" in e)
        for _, line in heapq.merge(*streams):
            fh.write(line)
            count += 1
            rows += int(json.loads(line).get("rows", 0))
        for s in result.skipped:
            fh.write(json.dumps({"skipped": str(s.path), "reason": s.reason},
                                ensure_ascii=False) + "\n")
    os.replace(tmp, folder / MANIFEST)
    new.unlink()
    if req.hf_card:
        from stille_post.export.card import card

        _atomic_write(folder / CARD, card(req.what, req.fmt, req.reward, req.folders,
                                          count, rows))


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
