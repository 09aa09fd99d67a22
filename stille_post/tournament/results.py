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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stille_post.core.errors import ConfigError
from stille_post.core.transcript import Transcript
from stille_post.providers.pricing import recorded_cost_usd
from stille_post.tournament.config import CONFIG_FILE, TournamentConfig
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
    usage = result.get("usage") or {}
    return IndexRow(
        id=game_id, idx=idx, seed=seed, status=str(result.get("status")),
        reason=result.get("reason"), transcript=f"{GAMES_DIR}/{path.name}",
        players=labels,
        placements={str(k): int(v) for k, v in (result.get("placements") or {}).items()},
        summary=dict(result.get("summary") or {}),
        input_tokens=sum(int(u.get("input_tokens", 0)) for u in usage.values()),
        output_tokens=sum(int(u.get("output_tokens", 0)) for u in usage.values()),
        dollars=sum(recorded_cost_usd(labels.get(str(s), ""), u) for s, u in usage.items()),
    )


def _open_index(folder: Path) -> GameIndex | None:
    """The index if it opens and answers a query; None if it is damaged."""
    try:
        index = GameIndex.open(folder)
    except sqlite3.DatabaseError:
        return None
    try:
        index.count()
        index.ids()
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
        have = index.ids()
        spec_by_id = {g.id: (g.index, g.seed) for g in config.shard_plan()}
        rows = [row for p in sorted(games.glob("*.jsonl"))
                if p.name.removesuffix(".jsonl") not in have
                and (row := row_from_transcript(folder, spec_by_id, p)) is not None]
        if rows:
            index.add_many(rows)
    return index


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


@dataclass
class Results:
    folder: Path
    config: TournamentConfig
    rows: list[IndexRow]  # finished games, in plan order
    missing: list[str]  # planned games with no index row
    broken: list[str]  # indexed, but the transcript is gone or incomplete

    @property
    def planned(self) -> int:
        return len(self.rows) + len(self.missing)

    @property
    def status_counts(self) -> dict[str, int]:
        counts = Counter(r.status for r in self.rows if r.id not in set(self.broken))
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
    config = TournamentConfig.load(folder)
    with ensure_index(folder, config) as index:
        rows = list(index.rows())
    have = {r.id for r in rows}
    missing = [g.id for g in config.shard_plan() if g.id not in have]
    broken = [r.id for r in rows if verify and not is_complete(folder / r.transcript)]
    return Results(folder, config, rows, missing, broken)


def is_complete(path: Path) -> bool:
    """The result line is last; reading only the tail keeps verification cheap."""
    return result_line(path) is not None


def result_line(path: Path) -> dict[str, Any] | None:
    """The transcript's last line if it is its result line, else None (missing, cut
    off, or damaged at the end)."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - 65536))
            tail = fh.read().decode("utf-8", errors="replace").rstrip("\n").rsplit("\n", 1)[-1]
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
    seats: dict[str, Counter[str]] = {}
    players: dict[str, Counter[str]] = {}
    seat_players: dict[str, set[str]] = {}
    bad = set(results.broken)
    for row in results.rows:
        if row.status != "completed" or row.id in bad:
            continue
        for seat, outcome in _outcomes(row).items():
            label = row.players.get(seat, "?")
            for key, table in ((seat, seats), (label, players)):
                c = table.setdefault(key, Counter())
                c["games"] += 1
                c[outcome] += 1
            seat_players.setdefault(seat, set()).add(label)

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
        "tokens": sum(r.input_tokens + r.output_tokens for r in results.rows),
        "dollars": round(sum(r.dollars for r in results.rows), 6),
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
