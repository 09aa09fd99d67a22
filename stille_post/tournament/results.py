"""The results folder, written by the runner and read by `report` and `merge`:

    OUT/tournament.json     the run's config (atomic write)
    OUT/index.sqlite        one row per finished game (see index.py)
    OUT/games/<id>.jsonl    one transcript per game; `<id>.jsonl.part` while playing

Games without a row are unfinished: a resume replays them, the report counts them as
missing. Nothing is ever averaged over silently.

The transcripts are the truth; the index is a cache of them. `ensure_index` (run by
`--resume`, `report` and `merge`) rebuilds a missing or damaged `index.sqlite` from the
complete transcripts on disk, and adds a row for any complete transcript the index lacks
(an emptied index). A damaged index file is moved aside, never deleted.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stille_post.core.errors import ConfigError
from stille_post.core.transcript import Transcript
from stille_post.core.usage import Usage
from stille_post.providers.pricing import recorded_cost_usd
from stille_post.tournament.config import CONFIG_FILE, GameSpec, TournamentConfig
from stille_post.tournament.index import INDEX_FILE, GameIndex, IndexRow

GAMES_DIR = "games"


def transcript_path(out: Path, game_id: str) -> Path:
    return out / GAMES_DIR / f"{game_id}.jsonl"


def open_for_run(out: Path, config: TournamentConfig, *, resume: bool,
                 run: Mapping[str, Any] | None = None) -> GameIndex:
    """Create the folder, or reopen it for `--resume` after checking that it belongs to
    the same tournament. Partial transcripts of an interrupted run are removed here, and
    on resume every indexed game is checked against its transcript (`verify_for_resume`).
    `run` (concurrency, rate limits, ...) is recorded beside the config."""
    check_folder(out, config, resume=resume)
    (out / GAMES_DIR).mkdir(parents=True, exist_ok=True)
    for part in (out / GAMES_DIR).glob("*.part"):
        part.unlink()
    config.save(out, run)
    index = ensure_index(out, config)
    if resume:
        verify_for_resume(out, index)  # damaged transcripts and I/O failures are replayed
    return index


def row_from_transcript(folder: Path, spec_by_id: dict[str, tuple[int, int]],
                        path: Path) -> IndexRow | None:
    """The index row of one complete transcript on disk (None if it is not complete, or
    not a game of this tournament). Equal to the row the runner wrote when it played it."""
    game_id = path.name.removesuffix(".jsonl")
    if game_id not in spec_by_id or not is_complete(path):
        return None
    try:
        t = Transcript.load(path)
    except (OSError, ValueError):
        return None
    if t.result is None:
        return None
    idx, seed = spec_by_id[game_id]
    result = t.result
    labels = {str(seat): str(info.get("player", "")) for seat, info in t.seats.items()}
    raw_usage = result.get("usage")
    # Read within bounds (core/usage.py): a count a server or a hand sent that is
    # negative, not a number or past SQLite's INTEGER must not make the folder unreadable.
    usage = {str(s): u for s, u in raw_usage.items() if isinstance(u, dict)} \
        if isinstance(raw_usage, dict) else {}
    counted = {s: Usage.from_json(u) for s, u in usage.items()}
    return IndexRow(
        id=game_id, idx=idx, seed=seed, status=str(result.get("status")),
        reason=result.get("reason"), transcript=f"{GAMES_DIR}/{path.name}",
        players=labels,
        placements={str(k): int(v) for k, v in (result.get("placements") or {}).items()},
        summary=dict(result.get("summary") or {}),
        input_tokens=sum(u.input_tokens for u in counted.values()),
        output_tokens=sum(u.output_tokens for u in counted.values()),
        dollars=sum(recorded_cost_usd(labels.get(s, ""), u) for s, u in usage.items()),
    )


def _open_index(folder: Path) -> GameIndex | None:
    """The index if it opens and answers a query; None if it is damaged."""
    try:
        index = GameIndex.open(folder)
    except sqlite3.DatabaseError:
        return None
    try:
        index.count()
        index.check()
        return index
    except sqlite3.DatabaseError:
        index.close()
        return None


def ensure_index(folder: Path, config: TournamentConfig) -> GameIndex:
    """Open `folder`'s index, rebuilding it from the transcripts when it is missing or
    damaged, and adding rows for complete transcripts it lacks. Returns it open."""
    path = folder / INDEX_FILE
    if not path.exists():
        # A WAL left by a deleted index would be replayed into the new one.
        for extra in ("-wal", "-shm"):
            Path(str(path) + extra).unlink(missing_ok=True)
    index = _open_index(folder)
    if index is None:
        n = 1
        while (aside := folder / f"{INDEX_FILE}.damaged-{n}").exists():
            n += 1
        os.replace(path, aside)
        for extra in ("-wal", "-shm"):
            Path(str(path) + extra).unlink(missing_ok=True)
        index = GameIndex.open(folder)
    games = folder / GAMES_DIR
    if games.is_dir():
        # Streamed: the names are checked against the index in chunks, and only the
        # transcripts without a row (after a crash: a few) are ever held together.
        unindexed: list[str] = []
        chunk: list[str] = []
        for name in _transcript_names(games):
            chunk.append(name.removesuffix(".jsonl"))
            if len(chunk) == 4096:
                unindexed += index.lacking(chunk)
                chunk = []
        unindexed += index.lacking(chunk)
        if unindexed:
            wanted = set(unindexed)
            spec_by_id = {gid: (idx, seed) for idx, gid, seed in planned_games(config)
                          if gid in wanted}
            rows = [row for p in sorted(games / f"{i}.jsonl" for i in unindexed)
                    if (row := row_from_transcript(folder, spec_by_id, p)) is not None]
            if rows:
                index.add_many(rows)
    return index


def _transcript_names(games: Path) -> Iterator[str]:
    """The names `games.glob("*.jsonl")` gives (dot files too), streamed."""
    with os.scandir(games) as entries:
        for entry in entries:
            if entry.name.endswith(".jsonl"):
                yield entry.name


def planned_games(config: TournamentConfig) -> Iterator[tuple[int, str, int]]:
    """(index, id, seed) of every game of the config's plan (its shard's), in plan order,
    one at a time: `config.shard_plan()` is a list of a million `GameSpec`s at the
    largest size. Seats do not change a game's id, so they are not computed here."""
    if config.imported is not None:
        for g in config.shard_plan():
            yield g.index, g.id, g.seed
        return
    for i in range(config.games):
        if config.shard is None or config.shard.owns(i):
            yield i, GameSpec(i, config.seed + i, None).id, config.seed + i


def check_folder(out: Path, config: TournamentConfig, *, resume: bool) -> None:
    """Refuse to mix two tournaments in one folder (read-only, so the CLI can ask first)."""
    if not (out / CONFIG_FILE).exists():
        return
    old = TournamentConfig.load(out)
    if old.source is not None:
        raise ConfigError(f"{out} holds imported games ({old.source}): nothing to play there")
    if not resume:
        raise ConfigError(f"{out} already holds a tournament; add --resume to continue "
                          "it, or choose another --out")
    if old.identity() != config.identity():
        raise ConfigError(f"{out} holds a different tournament (seeds, seats, options "
                          "or shard differ); --resume needs the same settings")


class IndexRows:
    """The index rows of a results folder, in plan order, read from the index each time
    they are iterated: nothing per game stays in memory."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __iter__(self) -> Iterator[IndexRow]:
        with GameIndex.open(self.folder) as index:
            yield from index.rows()


@dataclass
class Results:
    """A results folder's games. The rows are streamed from the index (`rows`); only the
    lists of missing and broken games, and counts, are kept."""

    folder: Path
    config: TournamentConfig
    missing: list[str]  # planned games with no index row
    broken: list[str]  # indexed, but the transcript is gone or incomplete
    indexed: int = 0  # games with an index row (broken ones included)
    counts: dict[str, int] = field(default_factory=dict)  # status -> games, broken left out

    @property
    def rows(self) -> IndexRows:
        """Finished games, in plan order."""
        return IndexRows(self.folder)

    @property
    def planned(self) -> int:
        return self.indexed + len(self.missing)

    @property
    def status_counts(self) -> dict[str, int]:
        counts = self.counts
        return {"completed": counts.get("completed", 0), "aborted": counts.get("aborted", 0),
                **{k: v for k, v in counts.items() if k not in ("completed", "aborted")},
                "missing": len(self.missing) + len(self.broken)}

    def transcripts(self, *, completed_only: bool = True) -> Iterator[Transcript]:
        """Loaded one at a time, so a report over many games stays small in memory."""
        bad = set(self.broken)
        for row in self.rows:
            if row.id in bad or (completed_only and row.status != "completed"):
                continue
            yield Transcript.load(self.folder / row.transcript)


def load_results(folder: Path, *, verify: bool = True) -> Results:
    """One streamed pass over the index: the counts, the broken games (`verify`: each
    transcript's last line is read) and the missing ones (the plan, walked beside the
    rows in index order)."""
    config = TournamentConfig.load(folder)
    counts: Counter[str] = Counter()
    broken: list[str] = []
    missing: list[str] = []
    indexed = 0
    seeded = config.imported is None
    plan = planned_games(config)
    pending = next(plan, None) if seeded else None  # the next planned game not yet seen
    with ensure_index(folder, config) as index:
        have = set() if seeded else index.ids()  # imported: the config lists them all anyway
        for game_id, idx, status, transcript in index.brief():
            indexed += 1
            # Rows and plan both go by index: planned games before this row have no row.
            while pending is not None and pending[0] < idx:
                missing.append(pending[1])
                pending = next(plan, None)
            if pending is not None and pending[0] == idx:
                if pending[1] != game_id:
                    missing.append(pending[1])
                pending = next(plan, None)
            if verify and not is_complete(folder / transcript):
                broken.append(game_id)
            else:
                counts[status] += 1
    if pending is not None:
        missing.append(pending[1])
    missing += [p_id for _, p_id, _ in plan if seeded or p_id not in have]
    return Results(folder, config, missing, broken, indexed, dict(counts))


def is_complete(path: Path) -> bool:
    """The result line is last; reading only the tail keeps verification cheap."""
    return result_line(path) is not None


def result_line(path: Path) -> dict[str, Any] | None:
    """The transcript's last line if it is its result line, else None (missing, cut
    off, or damaged at the end)."""
    try:
        # A raw descriptor and one pread: four system calls, where a buffered file took
        # ten (an isatty ioctl, five lseeks); the end-of-run summary reads every game's.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
        try:
            size = os.fstat(fd).st_size
            start = max(0, size - 65536)
            if hasattr(os, "pread"):
                data = os.pread(fd, size - start, start)
            else:  # Windows
                os.lseek(fd, start, os.SEEK_SET)
                data = os.read(fd, size - start)
        finally:
            os.close(fd)
        tail = data.decode("utf-8", errors="replace").rstrip("\n").rsplit("\n", 1)[-1]
        line = json.loads(tail)
    except (OSError, ValueError, RecursionError):
        return None
    return line if isinstance(line, dict) and line.get("kind") == "result" else None


# The reason of a game aborted because its transcript could not be written (a full
# disk, a read-only folder): the game did nothing wrong, so a resume replays it.
IO_FAILURE = "I/O failure"


def is_io_failure(reason: object) -> bool:
    return isinstance(reason, str) and reason.startswith(IO_FAILURE)


def verify_for_resume(out: Path, index: GameIndex) -> list[str]:
    """Check every indexed game against its transcript before a resume, and forget the
    rows whose game must be played again; returns their ids.

    - a transcript that is missing, cut off, or whose result line disagrees with its
      row: the row goes and the file, if any, is moved aside as `<id>.jsonl.damaged-N`
      (evidence, never deleted), so the game is replayed;
    - a game aborted by an I/O failure: the row and its placeholder transcript go."""
    replay: list[str] = []
    for row in index.rows():
        path = out / row.transcript
        result = result_line(path)
        if row.status == "aborted" and is_io_failure(row.reason):
            if result is not None and is_io_failure(result.get("reason")):
                path.unlink()  # the placeholder the runner wrote, nothing of the game
            elif path.exists():
                _move_aside(path)
            replay.append(row.id)
        elif result is None or result.get("status") != row.status:
            if path.exists():
                _move_aside(path)
            replay.append(row.id)
    index.drop(replay)
    return replay


def _move_aside(path: Path) -> None:
    n = 1
    while (aside := path.with_name(f"{path.name}.damaged-{n}")).exists():
        n += 1
    os.replace(path, aside)


# --- the foundation's aggregate (`tournament --json`) -----------------------------------

def _outcomes(row: IndexRow) -> dict[str, str]:
    """seat -> won | eliminated | survived, from the game's summary when it has one."""
    s = row.summary
    winners = {str(x) for x in s.get("winners", [])}
    eliminated = {str(x) for x in s.get("eliminated", [])}
    out: dict[str, str] = {}
    for seat, rank in row.placements.items():
        won = seat in winners if "winners" in s else rank == 1
        out[seat] = "won" if won else "eliminated" if seat in eliminated else "survived"
    return out


def aggregate(results: Results) -> dict[str, Any]:
    """One streamed pass over the index rows."""
    seats: dict[str, Counter[str]] = {}
    players: dict[str, Counter[str]] = {}
    seat_players: dict[str, set[str]] = {}
    bad = set(results.broken)
    tokens = 0

    def feed(row: IndexRow) -> float:
        nonlocal tokens
        tokens += row.input_tokens + row.output_tokens
        if row.status == "completed" and row.id not in bad:
            for seat, outcome in _outcomes(row).items():
                label = row.players.get(seat, "?")
                for key, table in ((seat, seats), (label, players)):
                    c = table.setdefault(key, Counter())
                    c["games"] += 1
                    c[outcome] += 1
                seat_players.setdefault(seat, set()).add(label)
        return row.dollars

    # `sum` itself adds the dollars, in row order, as it did over the list of rows.
    dollars = sum(feed(row) for row in results.rows)

    def block(c: Counter[str]) -> dict[str, Any]:
        g = c["games"]
        return {"games": g, "wins": c["won"], "eliminations": c["eliminated"],
                "survivals": c["survived"], "win_rate": c["won"] / g if g else 0.0,
                "elimination_rate": c["eliminated"] / g if g else 0.0,
                "survival_rate": c["survived"] / g if g else 0.0}

    cfg = results.config
    return {
        "game": cfg.game,
        "games": results.planned,
        "seed": cfg.seed,
        "shard": str(cfg.shard) if cfg.shard else None,
        "status": results.status_counts,
        "seats": {s: {"players": sorted(seat_players[s]), **block(c)}
                  for s, c in sorted(seats.items(), key=lambda kv: int(kv[0]))},
        "players": {p: block(c) for p, c in sorted(players.items())},
        "tokens": tokens,
        "dollars": round(dollars, 6),
        "out": str(results.folder),
    }


# --- merge ---------------------------------------------------------------------------------

def merge(out: Path, shards: Sequence[Path]) -> int:
    """Combine shard folders into one results folder equal to a single run's. Returns the
    number of games added. Games already in `out` are kept, never duplicated."""
    if not shards:
        raise ConfigError("merge needs at least one shard folder")
    configs = [TournamentConfig.load(s) for s in shards]
    for shard, cfg in zip(shards, configs, strict=True):
        ensure_index(shard, cfg).close()  # a shard's lost index is rebuilt, not trusted
    base = configs[0].without_shard()
    for path, cfg in zip(shards, configs, strict=True):
        if cfg.without_shard().identity() != base.identity():
            raise ConfigError(f"{path} is a shard of a different tournament")
    if (out / CONFIG_FILE).exists() and \
            TournamentConfig.load(out).identity() != base.identity():
        raise ConfigError(f"{out} holds a different tournament")
    if base.source is not None:  # imported games: the merged plan is every folder's games
        ids = {i for cfg in configs for i in cfg.imported or ()}
        if (out / CONFIG_FILE).exists():
            ids |= set(TournamentConfig.load(out).imported or ())
        base = base.with_imported(ids)
    (out / GAMES_DIR).mkdir(parents=True, exist_ok=True)
    base.save(out)
    added = 0
    with ensure_index(out, base) as index:
        have = index.ids()
        for shard in shards:
            with GameIndex.open(shard) as source:
                rows = [r for r in source.rows() if r.id not in have]
            for r in rows:
                src = shard / r.transcript
                if not is_complete(src):
                    raise ConfigError(f"{src}: indexed but incomplete; resume that shard first")
                # Copy to a temporary name first: a crash mid-copy must not leave a
                # half file under a final name that a later row could point at.
                dst = out / r.transcript
                tmp = dst.with_name(dst.name + ".part")
                shutil.copyfile(src, tmp)
                tmp.replace(dst)
            index.add_many(rows)  # one transaction per shard: all its games or none
            have |= {r.id for r in rows}
            added += len(rows)
    return added
