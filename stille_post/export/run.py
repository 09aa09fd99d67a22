"""One export: transcripts in, one table out (`stille-post export`, docs/data.md).

The output folder holds the table's part files in `data/` (nothing else is there, so
pandas and polars read the folder as one table), a hidden manifest (`.export.json`: the
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
import gc
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from stille_post.core.errors import UsageError
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

MANIFEST = ".export.json"
CARD = "README.md"
Mode = Literal["new", "added", "rewritten", "unchanged"]
GC_YOUNG_THRESHOLD = 50_000


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
    manifest = _check_out(out, req.overwrite)
    found = sources.find(list(req.folders), exclude=out)
    if manifest is not None:
        _remove_orphans(out, manifest)
        if _can_add(manifest, req, found):
            return _add(req, found, manifest, progress)
    return _rewrite(req, found, progress, existed=manifest is not None)


def _check_out(out: Path, overwrite: bool) -> dict[str, Any] | None:
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
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # unreadable: written anew
    return manifest if isinstance(manifest, dict) else {}


def _settings(req: ExportRequest) -> dict[str, Any]:
    return {"export_version": EXPORT_VERSION, "table": req.what, "format": req.fmt,
            "reward": req.reward}


def _stat(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _can_add(manifest: dict[str, Any], req: ExportRequest,
             found: Sequence[sources.Found]) -> bool:
    if any(manifest.get(k) != v for k, v in _settings(req).items()):
        return False
    games = manifest.get("games")
    if not isinstance(games, dict):
        return False
    by_id = {f.game_id: f for f in found}
    for game_id, entry in games.items():
        now = by_id.get(game_id)
        if now is None or not isinstance(entry, dict) or entry.get("path") != str(now.path):
            return False
        try:
            if _stat(now.path) != {k: entry.get(k) for k in ("size", "mtime_ns")}:
                return False
        except OSError:
            return False
    return True


def _remove_orphans(out: Path, manifest: dict[str, Any]) -> None:
    listed = set(manifest.get("parts") or [])
    data = out / DATA_DIR
    leftovers = [p for p in out.iterdir() if p.name.startswith(".part-")]
    if data.is_dir():
        leftovers += [p for p in data.iterdir() if p.name not in listed]
    for path in leftovers:
        with contextlib.suppress(OSError):
            path.unlink()


def _rewrite(req: ExportRequest, found: Sequence[sources.Found], progress: Progress | None,
             *, existed: bool) -> ExportResult:
    out = req.out
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.export-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        result, entries, parts = _export(req, found, staging, 0, progress)
        result.out = out
        result.mode = "rewritten" if existed else "new"
        _write_manifest(staging, req, entries, parts, result.skipped)
        if req.hf_card:
            _write_card(staging, req, entries)
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


def _add(req: ExportRequest, found: Sequence[sources.Found], manifest: dict[str, Any],
         progress: Progress | None) -> ExportResult:
    out = req.out
    games: dict[str, Any] = dict(manifest["games"])
    parts: list[str] = list(manifest.get("parts") or [])
    new = [f for f in found if f.game_id not in games]
    first = 1 + max((int(p[5:10]) for p in parts if p[5:10].isdigit()), default=-1)
    result, entries, added = _export(req, new, out, first, progress)
    result.kept = len(games)
    result.mode = "added" if new else "unchanged"
    games.update(entries)
    _write_manifest(out, req, games, parts + added, result.skipped)
    if req.hf_card:
        _write_card(out, req, games)
    return result


def _export(req: ExportRequest, found: Sequence[sources.Found], folder: Path, first: int,
            progress: Progress | None
            ) -> tuple[ExportResult, dict[str, Any], list[str]]:
    sink = _sink(req, folder, first)
    result = ExportResult(req.out)
    entries: dict[str, Any] = {}
    try:
        # One event loop for the whole export: the re-plays run on it one after another.
        with _quiet_gc():
            asyncio.run(_games(req, found, sink, result, entries, progress))
        parts = sink.close()
    except BaseException:
        sink.abort()
        raise
    result.rows = sink.rows
    return result, entries, parts


async def _games(req: ExportRequest, found: Sequence[sources.Found], sink: Sink,
                 result: ExportResult, entries: dict[str, Any],
                 progress: Progress | None) -> None:
    quick = req.what == "decisions"  # a re-play checks every line (export/sources.py)
    for n, item in enumerate(found, start=1):
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
            entries[item.game_id] = {"path": str(item.path), **_stat(item.path),
                                     "rows": sink.rows - before}
            result.games += 1
        if progress is not None:
            progress(n, len(found))


@contextlib.contextmanager
def _quiet_gc() -> Iterator[None]:
    """The cyclic collector tuned as the tournament runner tunes it for a run of bot
    games (tournament/runner.py `_quiet_gc` says why): re-played games, like played ones,
    are freed by reference counting, so the heap as it is now is frozen and the young
    generation is collected every 50,000 allocations instead of 700."""
    thresholds = gc.get_threshold()
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    gc.set_threshold(max(thresholds[0], GC_YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if freeze:
            gc.unfreeze()


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
    return await replay(t, definition)


def _expected(source: GameSource) -> bool:
    from stille_post.export.replay import RECORDS_FORMAT, replayable

    t = source.transcript
    fmt = t.header.get("format")
    return replayable(t) is not None or (isinstance(fmt, int) and fmt < RECORDS_FORMAT)


def _roles(game: str) -> tuple[str, ...]:
    from stille_post.games import all_games

    definition = all_games().get(game)
    return tuple(r.name for r in definition.roles) if definition is not None else ()


def _write_manifest(folder: Path, req: ExportRequest, games: dict[str, Any],
                    parts: list[str], skipped: Sequence[sources.Skipped]) -> None:
    data = {**_settings(req), "sources": [str(f) for f in req.folders], "parts": parts,
            "games": games, "skipped": [{"path": str(s.path), "reason": s.reason}
                                        for s in skipped]}
    _atomic_write(folder / MANIFEST, json.dumps(data, ensure_ascii=False, indent=1) + "\n")


def _write_card(folder: Path, req: ExportRequest, games: dict[str, Any]) -> None:
    from stille_post.export.card import card

    _atomic_write(folder / CARD, card(req.what, req.fmt, req.reward, req.folders, games))


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
