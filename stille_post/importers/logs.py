"""Import a game's logs played elsewhere (JSONL; the game's `LogFormat`, kit/importing.py)
into a results folder that `report`, `view` and `merge` read like a tournament's:

    OUT/tournament.json     the game, the format's `source`, the game ids
    OUT/index.sqlite        one row per imported game
    OUT/games/<id>.jsonl    one transcript per game (header `imported_from`)

Resumable: a game whose complete transcript is already in OUT is skipped, never
rewritten. A transcript is written to `<id>.jsonl.part` and renamed when whole; the
game ids are recorded in tournament.json before their index rows are added, and a
complete transcript that an interrupted run left unrecorded is adopted on the next run.

Bad input never raises: each game that cannot be imported is a named, counted skip.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stille_post.core.errors import ConfigError
from stille_post.core.text import printable
from stille_post.games.kit.importing import ConvertError, ImportedGame, LogFormat
from stille_post.importers.reader import (
    GameLines,
    NotALog,
    Progress,
    Stray,
    log_files,
    read_games,
)
from stille_post.tournament.config import CONFIG_FILE, TournamentConfig, imported_index
from stille_post.tournament.index import GameIndex, IndexRow
from stille_post.tournament.results import GAMES_DIR, ensure_index, is_complete

BATCH = 200  # games per index transaction (and per save of the game list)

# Skip reasons, as the summary names them.
NO_FINAL = "no final_results"
DUPLICATE = "duplicate game id"
STRICT_BARE = "no model keys (--strict)"
INCONSISTENT = "inconsistent log"
UNWRITABLE = "text that cannot be written as UTF-8"

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def transcript_id(game_id: str, prefix: str) -> str:
    """A file-safe id for an original game id. Ids that need changing get a hash suffix,
    so two ids that differ only in unsafe characters stay two files."""
    safe = _UNSAFE.sub("_", game_id)[:80]
    if safe != game_id or not safe:
        safe += "-" + hashlib.blake2b(game_id.encode("utf-8"), digest_size=4).hexdigest()
    return f"{prefix}{safe}"


@dataclass
class ImportStats:
    files: int = 0
    read: int = 0  # games seen (each group of lines closed or left open)
    imported: int = 0
    already: int = 0  # imported by an earlier run
    skipped: Counter[str] = field(default_factory=Counter)
    skips: list[dict[str, str]] = field(default_factory=list)  # one per skipped game
    stray_lines: Counter[str] = field(default_factory=Counter)  # damaged, of no game
    # Files with no line of any game: {"file", "why", "named"} ("named": given on the
    # command line itself, not found in a folder given there).
    not_logs: list[dict[str, Any]] = field(default_factory=list)
    warnings: Counter[str] = field(default_factory=Counter)
    unknown_types: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def skip(self, game_id: str, reason: str, detail: str = "") -> None:
        self.skipped[reason] += 1
        self.skips.append({"game_id": game_id, "reason": reason, "detail": detail})

    def to_json(self) -> dict[str, Any]:
        return {"files": self.files, "games_read": self.read, "imported": self.imported,
                "already_imported": self.already, "skipped": sum(self.skipped.values()),
                "skipped_by_reason": dict(sorted(self.skipped.items())),
                "skips": self.skips, "stray_lines": dict(sorted(self.stray_lines.items())),
                "not_logs": self.not_logs,
                "warnings": dict(sorted(self.warnings.items())),
                "unknown_line_types": dict(sorted(self.unknown_types.items())),
                "seconds": round(self.seconds, 3)}


def check_folder(out: Path, game: str, fmt: LogFormat) -> TournamentConfig:
    """The folder's config, or a new one (nothing is written): refuses a file, and a
    folder of another tournament or another import."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a folder")
    if (out / CONFIG_FILE).exists():
        config = TournamentConfig.load(out)
        if config.source != fmt.source or config.game != game:
            raise ConfigError(f"{out} holds a {config.game} tournament, not an import of "
                              f"{fmt.description}; choose another --out")
        return config
    return TournamentConfig(game=game, games=0, seed=0, source=fmt.source, imported=())


def open_folder(out: Path, game: str, fmt: LogFormat) -> tuple[TournamentConfig, set[str]]:
    """The folder's config (created if new) and the ids of the games already imported:
    those whose complete transcript is on disk (the truth; a listed game whose
    transcript is gone is imported again)."""
    config = check_folder(out, game, fmt)
    games = out / GAMES_DIR
    games.mkdir(parents=True, exist_ok=True)
    for part in games.glob("*.part"):
        part.unlink()  # a transcript an interrupted run did not finish
    done = {p.name.removesuffix(".jsonl") for p in games.glob("*.jsonl") if is_complete(p)}
    config = config.with_imported(done | set(config.imported or ()))
    config.save(out)
    ensure_index(out, config).close()  # adopts complete transcripts without a row
    return config, done


def index_row(tid: str, c: ImportedGame) -> IndexRow:
    """Equal to the row `ensure_index` rebuilds from the transcript (tested)."""
    return IndexRow(id=tid, idx=imported_index(tid), seed=0, status="completed", reason=None,
                    transcript=f"{GAMES_DIR}/{tid}.jsonl",
                    players={s: str(v.get("player", "")) for s, v in c.seats.items()},
                    placements={str(k): v for k, v in sorted(c.placements.items())},
                    summary=c.summary.to_json())


def import_logs(game: str, fmt: LogFormat, paths: Sequence[Path], out: Path, *,
                strict: bool = False, progress: Progress | None = None,
                on_game: Callable[[ImportStats], None] | None = None) -> ImportStats:
    """Import every game of `paths` (files or folders) of `game`'s format `fmt` into
    `out`; returns the counts."""
    t0 = time.monotonic()
    stats = ImportStats()
    files = log_files(paths)
    stats.files = len(files)
    named = {p.resolve() for p in paths if p.is_file()}
    # The folder is made when the first game is read, so that files which hold no game
    # at all (not logs) leave nothing behind; its checks come first, before any reading.
    check_folder(out, game, fmt)
    opened: tuple[TournamentConfig, set[str]] | None = None
    done: set[str] = set()
    seen: set[str] = set()  # original ids handed on in this run (duplicates after that)
    batch: list[IndexRow] = []
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def flush() -> None:
        nonlocal opened
        if not batch or opened is None:
            return
        config = opened[0]
        # The ids first: a row whose id is not in the plan would be an orphan.
        config = config.with_imported(done | set(config.imported or ()))
        config.save(out)
        opened = config, done
        with GameIndex.open(out) as index:
            have = index.ids()
            index.add_many([r for r in batch if r.id not in have])
        batch.clear()

    try:
        for item in read_games(files, progress=progress, closing_type=fmt.closing_type):
            if isinstance(item, Stray):
                stats.stray_lines[item.reason] += 1
                continue
            if isinstance(item, NotALog):
                stats.not_logs.append({"file": item.path, "why": item.why,
                                       "named": Path(item.path).resolve() in named})
                continue
            if opened is None:
                opened = open_folder(out, game, fmt)
                done = opened[1]
            stats.read += 1
            row = _one(fmt, item, out, done, seen, stats, strict=strict, stamp=stamp)
            if row is not None:
                batch.append(row)
                if len(batch) >= BATCH:
                    flush()
            if on_game is not None:
                on_game(stats)
    finally:
        flush()  # also on Ctrl-C: what was written is recorded
        stats.seconds = time.monotonic() - t0
    return stats


def _one(fmt: LogFormat, game: GameLines, out: Path, done: set[str], seen: set[str],
         stats: ImportStats, *, strict: bool, stamp: str) -> IndexRow | None:
    gid = game.game_id
    if gid in seen:
        stats.skip(gid, DUPLICATE, "first copy kept; this one from " + ", ".join(game.sources))
        return None
    seen.add(gid)
    tid = transcript_id(gid, fmt.transcript_prefix)
    if game.problems:
        reason, where = game.problems[0]
        more = f" (+{len(game.problems) - 1} more)" if len(game.problems) > 1 else ""
        stats.skip(gid, reason, where + more)
        return None
    if not game.closed:
        stats.skip(gid, NO_FINAL, ", ".join(game.sources))
        return None
    if tid in done:
        stats.already += 1
        return None
    lines = []
    for line in game.lines:
        if line["type"] in fmt.line_types:
            lines.append(line)
        else:  # a type the published format does not have: counted, not guessed at
            stats.unknown_types[str(line["type"])[:40]] += 1
    try:
        converted = fmt.convert(gid, lines, game.sources, stamp)
    except ConvertError as exc:
        stats.skip(gid, INCONSISTENT, str(exc))
        return None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        # A field of an unexpected shape that the checks did not foresee: still a skip.
        stats.skip(gid, INCONSISTENT, f"{type(exc).__name__}: {exc}"[:200])
        return None
    if converted.bare_ids:
        if strict:
            stats.skip(gid, STRICT_BARE)
            return None
        stats.warnings["games with no model keys (seats labelled unknown)"] += 1
    elif converted.unlabelled:
        stats.warnings["games with some seats of no model key (labelled unknown)"] += 1
    final = out / GAMES_DIR / f"{tid}.jsonl"
    part = final.with_name(final.name + ".part")
    try:
        data = converted.text().encode("utf-8")
    except UnicodeEncodeError as exc:  # text no file can hold: the reader should catch it
        stats.skip(gid, UNWRITABLE, f"{exc.reason} at character {exc.start}")
        return None
    try:
        part.write_bytes(data)
        part.replace(final)
    except BaseException:
        part.unlink(missing_ok=True)  # a full disk, Ctrl-C: never leave a .part behind
        raise
    done.add(tid)
    stats.imported += 1
    return index_row(tid, converted)


def not_logs_text(items: Sequence[dict[str, Any]], limit: int = 5) -> str:
    """"a.jsonl (empty), b.jsonl (not UTF-8 text ...)", the first `limit` of them."""
    text = ", ".join(f"{i['file']} ({i['why']})" for i in items[:limit])
    more = len(items) - limit
    return text + (f" and {more} more" if more > 0 else "")


def summary_lines(stats: ImportStats) -> list[str]:
    """The human summary: games read, imported, skipped with reasons; each line safe to
    print (`printable`)."""
    out = [f"{stats.read} games read from {stats.files} files: {stats.imported} imported, "
           f"{stats.already} already imported, {sum(stats.skipped.values())} skipped "
           f"({stats.seconds:.1f} s)"]
    if stats.skipped:
        out.append(f"{sum(stats.skipped.values())} games skipped: " + "; ".join(
            f"{n} {reason}" for reason, n in sorted(stats.skipped.items())))
        for s in stats.skips[:10]:
            out.append(f"  skipped {s['game_id']}: {s['reason']}"
                       + (f" ({s['detail']})" if s["detail"] else ""))
        if len(stats.skips) > 10:
            out.append(f"  ... and {len(stats.skips) - 10} more (--json lists them all)")
    for reason, n in sorted(stats.stray_lines.items()):
        out.append(f"{n} lines of no game ignored: {reason}")
    if stats.not_logs:
        out.append(f"warning: {len(stats.not_logs)} files hold no game, not logs: "
                   + not_logs_text(stats.not_logs))
    for what, n in sorted(stats.warnings.items()):
        out.append(f"warning: {n} {what}")
    for t, n in sorted(stats.unknown_types.items()):
        out.append(f"warning: {n} lines of unknown type {t!r} ignored")
    # Game ids, file names and details come from the logs: never raw on a terminal.
    return [printable(line) for line in out]
