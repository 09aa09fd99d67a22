"""The report of a results folder: leaderboard, game metrics, bookkeeping, exports.

Everything is computed from the transcripts (the index only says which games finished).
Each transcript is read once, as a stream that feeds the game's metrics function and
collects what the ratings need on the way, so memory stays flat in the number of games.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from stille_post.core.rewards import partial_points
from stille_post.core.transcript import Transcript
from stille_post.providers.base import Usage
from stille_post.providers.pricing import recorded_cost_usd
from stille_post.tournament import ratings
from stille_post.tournament.adherence import AdherenceReport
from stille_post.tournament.metrics import metrics_for, normalise
from stille_post.tournament.results import Results, load_results


def build_report(folder: Path, *, passes: int = ratings.DEFAULT_PASSES, seed: int = 0,
                 workers: int | None = None, labels: Mapping[str, str] | None = None,
                 cache: bool = True, progress: bool = False,
                 clean_only: bool = False) -> dict[str, Any]:
    """`labels` maps a player label (a model key) to the name to show: the leaderboard's
    `player`, the metrics' players and the charts then use it, and `model` keeps the key.

    `workers` (None: every core when games x passes is large, see
    `ratings.auto_workers`) never changes the result. With `cache`, the report is kept
    in the folder's `.report-cache/`, keyed by everything it depends on (`_cache_key`),
    and a second report of the same games and settings is read back instead of being
    recomputed. `progress` shows a progress bar with an estimated time on stderr.
    `clean_only` rates only the games in which no seat forfeited a decision
    (tournament/adherence.py); the metrics still cover every game."""
    results = load_results(folder)
    key = _cache_key(folder, results, passes, seed, labels, clean_only) if cache else None
    if key is not None:
        hit = _read_cache(folder, key)
        if hit is not None:
            hit["folder"] = str(folder)
            return hit
    with _Bar(progress) as bar:
        data = _compute(folder, results, passes, seed, workers, labels, bar, clean_only)
    if key is not None:
        data = _write_cache(folder, key, data)
    return data


def _compute(folder: Path, results: Results, passes: int, seed: int, workers: int | None,
             labels: Mapping[str, str] | None, bar: _Bar, clean_only: bool = False
             ) -> dict[str, Any]:
    # Every rated game, compactly, with its clean flag; `clean_only` rates the clean ones.
    table = ratings.GameTable()
    adherence = AdherenceReport()
    spend: defaultdict[str, float] = defaultdict(float)
    tokens: Counter[str] = Counter()
    bar.start("reading games", results.status_counts["completed"])

    def stream() -> Iterator[Transcript]:
        for t in results.transcripts(completed_only=True):
            bar.advance()
            g = _rated(t)
            clean = adherence.feed(t, g)
            if g is not None:
                table.append(g, clean)
            for seat, info in t.seats.items():
                label = str(info.get("player", f"seat {seat}"))
                row = t.usage_row(seat)
                u = Usage.from_json(row)
                tokens[label] += u.input_tokens + u.output_tokens
                spend[label] += recorded_cost_usd(label, row)
            yield t

    fn = metrics_for(results.config.game)
    if fn is not None:
        metrics = normalise(fn(stream()))
    else:
        for _ in stream():
            pass
        metrics = normalise(None)
    bar.start("rating passes", passes)
    board = ratings.leaderboard(table, passes=passes, seed=seed, workers=workers,
                                on_pass=bar.advance, clean_only=clean_only)
    points_sum: defaultdict[str, float] = defaultdict(float)
    # Seat-games (as `games` counts them) in which a player met at least one other
    # player: its standing comes from those alone (a game whose seats are all one player
    # says nothing about it).
    vs_others: Counter[str] = Counter()
    rated = 0
    for g in table.games(clean_only=clean_only):  # the sum, as the anchor's table gives it
        rated += 1
        for label, rank in g.seats:
            points_sum[label] += partial_points(rank, g.n)
        if len({label for label, _ in g.seats}) > 1:
            vs_others.update(label for label, _ in g.seats)
    for row in board:
        row["tokens"] = tokens[row["player"]]
        row["dollars"] = spend[row["player"]]
        row["dollars_per_game"] = spend[row["player"]] / row["games"] if row["games"] else 0.0
        row["partial_points_sum"] = points_sum[row["player"]]
        row["games_vs_others"] = vs_others[row["player"]]
        row["model"] = row["player"]
    for label, row in adherence.per_player().items():
        metrics["per_player"].setdefault(label, {})["adherence"] = row
    if adherence.players:
        metrics["tables"]["rule adherence: refused replies by kind"] = adherence.errors_table()
    survival = adherence.survival(board, lambda: ratings.leaderboard(
        table, passes=passes, seed=seed, workers=workers, clean_only=True))
    survival["clean_only"] = clean_only
    if labels:
        _display(board, metrics, labels)
        survival["players"] = {labels.get(k, k): v for k, v in survival["players"].items()}
        for key in ("top", "clean_top"):
            if survival[key] is not None:
                survival[key] = [labels.get(k, k) for k in survival[key]]
    return {
        "game": results.config.game,
        "folder": str(folder),
        "config": results.config.to_json(),
        "games": {"planned": results.planned, **results.status_counts,
                  "rated": rated},
        "missing": results.missing,
        "broken": results.broken,
        "aborted": [{"id": r.id, "reason": r.reason} for r in results.rows
                    if r.status != "completed"],
        "ratings": {"passes": passes, "seed": seed, "mu": ratings.MU, "sigma": ratings.SIGMA,
                    "beta": ratings.BETA, "tau": ratings.TAU,
                    "draw_probability": ratings.DRAW_PROBABILITY,
                    "models": [{"model": r["model"], "name": r["player"], "games": r["games"],
                                "partial_points_sum": r["partial_points_sum"],
                                "partial_points": r["partial_points"], "mu": r["mu"],
                                "sigma": r["sigma"]} for r in board]},
        "leaderboard": board,
        "metrics": metrics,
        "error_survival": survival,
    }


# --- the report cache ------------------------------------------------------------------------

CACHE_DIR = ".report-cache"
CACHE_KEEP = 8  # newest cached reports kept per folder
# Bump when the report's content changes for the same inputs without a version change.
CACHE_FORMAT = 2


def _stamp(path: Path) -> list[int]:
    """What changes when a file is rewritten: size, times, inode (-1s if it is gone)."""
    try:
        st = path.stat()
    except OSError:
        return [-1, -1, -1, -1]
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _cache_key(folder: Path, results: Results, passes: int, seed: int,
               labels: Mapping[str, str] | None, clean_only: bool = False) -> str:
    """Everything the report depends on: each indexed game (its index row, and its
    transcript's size, times and inode), the missing and broken lists, the tournament's
    config, the rating settings, the display names, the package version and the code
    that computes the report. A different set of games is a different key, always."""
    from stille_post import __version__

    fn = metrics_for(results.config.game)
    from stille_post.games.kit import adherence as kit_adherence
    from stille_post.tournament import adherence as report_adherence

    code = [Path(__file__), Path(ratings.__file__),
            Path(ratings.__file__).with_name("passes.py"),  # not imported here: numba
            Path(report_adherence.__file__), Path(kit_adherence.__file__)]
    source = inspect.getsourcefile(fn) if fn is not None else None
    if source:
        code.append(Path(source))
    h = hashlib.sha256()
    h.update(json.dumps({
        "format": CACHE_FORMAT, "version": __version__,
        "code": [_stamp(p) for p in code],
        "config": results.config.to_json(), "passes": passes, "seed": seed,
        "ratings": [ratings.MU, ratings.SIGMA, ratings.BETA, ratings.TAU,
                    ratings.DRAW_PROBABILITY, ratings.DEFAULT_BOOTSTRAP],
        "labels": sorted(labels.items()) if labels else None, "clean_only": clean_only,
        "missing": results.missing, "broken": results.broken,
    }, sort_keys=True, default=str).encode())
    for row in results.rows:
        h.update(json.dumps([row.values(), _stamp(folder / row.transcript)],
                            default=str).encode())
        h.update(b"\n")
    return h.hexdigest()


def _read_cache(folder: Path, key: str) -> dict[str, Any] | None:
    path = folder / CACHE_DIR / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # none yet, or damaged: recompute
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    report = data.get("report")
    return report if isinstance(report, dict) else None


def _write_cache(folder: Path, key: str, report: dict[str, Any]) -> dict[str, Any]:
    """Keep `report` for next time (best effort: a read-only folder just is not cached).
    Returns it as it reads back from JSON, so a cached and a fresh report are equal."""
    try:
        text = json.dumps({"key": key, "report": report})
    except (TypeError, ValueError):
        return report  # something only Python can hold: not cacheable
    cached: dict[str, Any] = json.loads(text)["report"]
    where = folder / CACHE_DIR
    try:
        where.mkdir(exist_ok=True)
        tmp = where / f"{key}.json.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(where / f"{key}.json")
        old = sorted(where.glob("*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for p in old[CACHE_KEEP:]:
            p.unlink(missing_ok=True)
    except OSError:
        pass
    return cached


class _Bar:
    """A rich progress bar with an estimated time on stderr, one phase at a time (or
    nothing at all when disabled)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _Bar:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                console=Console(stderr=True), transient=True)
            self._progress.start()
        return self

    def start(self, what: str, total: int) -> None:
        if self._progress is not None:
            if self._task is not None:
                self._progress.remove_task(self._task)
            self._task = self._progress.add_task(what, total=total)

    def advance(self, n: int = 1) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, n)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()


def _display(board: list[dict[str, Any]], metrics: dict[str, Any],
             labels: Mapping[str, str]) -> None:
    """Show display names instead of player labels, in place (ratings stay per label)."""
    for row in board:
        row["player"] = labels.get(row["model"], row["model"])
    metrics["per_player"] = {labels.get(k, k): v for k, v in metrics["per_player"].items()}
    for table in metrics["tables"].values():
        rows = table.get("rows") if isinstance(table, dict) else None
        if isinstance(rows, list):
            table["rows"] = [[labels.get(c, c) if isinstance(c, str) else c for c in r]
                             if isinstance(r, list) else r for r in rows]


def load_labels(path: Path) -> dict[str, str]:
    """A display-name map (TOML): `"model-key" = "Display name"` lines, at the top level
    or under a `[labels]` table. Every problem is one ConfigError line (exit 2)."""
    from stille_post.core.errors import ConfigError
    from stille_post.core.tomlfile import key_line, read_toml

    data, text = read_toml(path, "labels file")
    table = data.get("labels", data)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [labels] must be a table of \"model-key\" = \"Name\"")
    for key, value in table.items():
        if not isinstance(value, str):
            line = key_line(text, [key] if table is data else ["labels", key])
            where = f"{path}:{line}" if line else str(path)
            raise ConfigError(f"{where}: {key}: the display name must be a string")
    return dict(table)


def _rated(t: Transcript) -> ratings.RatedGame | None:
    result = t.result or {}
    placements = result.get("placements") or {}
    if not placements or (result.get("summary") or {}).get("valid") is False:
        # A void game (its summary says valid: false) ranks nobody: rating it as a draw
        # would pull every rating toward the others for a game nobody played out.
        return None
    players = {str(s): str(info.get("player", f"seat {s}")) for s, info in t.seats.items()}
    winners = (result.get("summary") or {}).get("winners")
    return ratings.rated_game(str(t.header.get("seed")), players, placements,
                              [str(w) for w in winners] if winners is not None else None)


def leaderboard_of(folder: Path, *, passes: int = ratings.DEFAULT_PASSES,
                   seed: int = 0) -> list[dict[str, Any]]:
    """Only the leaderboard (what resume and shard tests compare)."""
    board: list[dict[str, Any]] = build_report(folder, passes=passes, seed=seed)["leaderboard"]
    return board


# --- exports -------------------------------------------------------------------------------

def write_csv(report: dict[str, Any], folder: Path) -> list[Path]:
    """The report as CSV files in `folder`: the leaderboard, the game metrics per player,
    rule adherence, each metrics table (`table_NAME.csv`, NAME in lower case letters,
    digits and `_`) and the game counts. Every cell goes through `core.exports.csv_cell`
    (no formula, no direction override, no Python repr)."""
    from stille_post.core.exports import file_slug
    from stille_post.core.exports import write_csv as write_rows

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    cols = ["player", "games", "mu", "sigma", "mu_spread", "wins", "win_rate", "ci_low",
            "ci_high", "partial_points", "mean_rank", "tokens", "dollars",
            "games_vs_others"]
    rows = [[r["player"], r["games"], r["mu"], r["sigma"], r["mu_spread"], r["wins"],
             r["win_rate"], r["win_rate_ci"][0], r["win_rate_ci"][1], r["partial_points"],
             r["mean_rank"], r["tokens"], r["dollars"], r.get("games_vs_others")]
            for r in report["leaderboard"]]
    written.append(write_rows(folder / "leaderboard.csv", cols, rows))
    per_player = report["metrics"]["per_player"]
    # Adherence is a nested record of its own: adherence.csv, one column per figure.
    names = sorted({k for v in per_player.values() for k in v} - {"adherence"})
    if names:
        written.append(write_rows(folder / "player_metrics.csv", ["player", *names],
                                  [[p, *(v.get(n) for n in names)]
                                   for p, v in per_player.items()]))
    adherence = {p: v["adherence"] for p, v in per_player.items()
                 if isinstance(v.get("adherence"), dict)}
    if adherence:
        kinds = ("valid_first_try", "reasks", "forfeits", "over_limit")
        header = ["player", "decisions",
                  *(f"{k}_{part}" for k in kinds for part in ("count", "rate", "ci_low",
                                                               "ci_high"))]
        body = []
        for p, a in adherence.items():
            row: list[Any] = [p, a.get("decisions")]
            for k in kinds:
                c: dict[str, Any] = a[k] if isinstance(a.get(k), dict) else {}
                ci: list[Any] = c["ci"] if isinstance(c.get("ci"), list) else [None, None]
                row += [c.get("count"), c.get("rate"), *ci[:2]]
            body.append(row)
        written.append(write_rows(folder / "adherence.csv", header, body))
    used = {"leaderboard", "player_metrics", "adherence", "games"}
    for name, table in report["metrics"]["tables"].items():
        slug = file_slug(f"table_{name}", used)
        written.append(write_rows(folder / f"{slug}.csv", table["columns"], table["rows"]))
    written.append(write_rows(folder / "games.csv", ["status", "count"],
                              [[k, v] for k, v in report["games"].items()]))
    return written


def write_json(report: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(report, indent=2), encoding="utf-8")


DEFAULT_REPLAYS = 500  # replay pages a report writes unless told (about 60 KB each)


def write_html(report: dict[str, Any], path: Path, *,
               replays: int | None = DEFAULT_REPLAYS) -> Path:
    """The report page at `path`, and beside it the games page (`STEM-games.html`: every
    game, the first `replays` finished ones linked to their replay in `STEM-replays/`,
    written by the viewer; `None` for every game). Replays already written and newer than
    their transcript are kept, so a second report writes only the new games. A game
    without a replay shows its `stille-post view` command instead: a folder of 100,000
    games would otherwise mean 6 GB of pages. Returns the report's path."""
    from stille_post.tournament.html import render_games, render_html

    path.parent.mkdir(parents=True, exist_ok=True)
    games = games_page_path(path)
    folder = Path(str(report.get("folder", "")))
    has_games = (folder / "tournament.json").is_file()
    if has_games:
        rows = game_rows(report, folder, replay_dir(path) if replays != 0 else None,
                         limit=replays)
        _write_text(games, render_games(report, rows, path.name))
    _write_text(path, render_html(report, games.name if has_games else None))
    return path


def games_page_path(report_path: Path) -> Path:
    return report_path.with_name(f"{report_path.stem}-games.html")


def replay_dir(report_path: Path) -> Path:
    return report_path.with_name(f"{report_path.stem}-replays")


def game_rows(report: Mapping[str, Any], folder: Path, replays: Path | None, *,
              limit: int | None = None) -> list[dict[str, Any]]:
    """A row per game of the folder for the games page (missing games last), writing
    the replay of each finished game, the first `limit` of them (all for None), into
    `replays` when it is given."""
    from urllib.parse import quote

    from stille_post.core.exports import file_slug

    names = {str(r.get("model", r["player"])): str(r["player"])
             for r in report.get("leaderboard", [])}
    page_dir = replays.parent if replays is not None else folder
    stale_after = _viewer_stamp()
    used: set[str] = set()
    rows: list[dict[str, Any]] = []
    written = 0
    for row in load_results(folder).rows:
        summary = row.summary or {}
        winners = {str(w) for w in summary.get("winners") or []}
        notes = summary.get("notes") if isinstance(summary.get("notes"), dict) else {}
        seats = [{"seat": seat, "player": names.get(label, label), "won": seat in winners,
                  "note": str(notes.get(seat, "")) if notes else ""}
                 for seat, label in sorted(row.players.items(),
                                           key=lambda kv: int(kv[0]) if kv[0].isdigit()
                                           else 0)]
        transcript = folder / row.transcript
        replay = None
        if replays is not None and (limit is None or written < limit):
            written += 1
            target = replays / f"{file_slug(row.id, used)}.html"
            if _write_replay(transcript, target, stale_after):
                replay = quote(Path(os.path.relpath(target, page_dir)).as_posix())
        rows.append({"idx": row.idx, "id": row.id, "seed": row.seed, "status": row.status,
                     "reason": row.reason, "seats": seats,
                     "replay": replay,
                     "command": f"stille-post view {transcript}"})
    for game_id in [*report.get("missing", [])]:
        rows.append({"idx": "–", "id": game_id, "seed": "–", "status": "missing",
                     "reason": "never finished", "seats": [], "replay": None,
                     "command": None})
    return rows


def _viewer_stamp() -> int:
    """The newest change to the viewer's code: a replay older than it is written again."""
    from stille_post import viewer

    root = Path(viewer.__file__).parent
    return max((p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()), default=0)


def _write_replay(transcript: Path, target: Path, stale_after: int) -> bool:
    """Write one game's replay page unless an up-to-date one is there; False when the
    transcript cannot be read (the games page then shows no link)."""
    from stille_post.viewer import write_html as write_replay

    try:
        newest = max(transcript.stat().st_mtime_ns, stale_after)
        if target.is_file() and target.stat().st_mtime_ns >= newest:
            return True
        write_replay(transcript, target)
    except (OSError, ValueError):
        return False
    return True


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


__all__ = ["DEFAULT_REPLAYS", "Results", "build_report", "game_rows", "games_page_path",
           "leaderboard_of", "replay_dir", "write_csv", "write_html", "write_json"]
