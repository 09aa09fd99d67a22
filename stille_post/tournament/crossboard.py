"""The `leaderboard FOLDER... --out DIR` command: one leaderboard across games.

Each folder is a results folder (a tournament or an imported log) of one game; its own
report (tournament/report.py) rates it. Models are matched across folders by their
label (`--labels FILE.toml` renames, as `report --labels` does). DIR gets:

- `index.html`: one static page (no network), a row per model and a column per game
  (μ ± σ, the rank in that game, games, win rate with its interval, dollars per game),
  with the overall rank and how it is computed; links to each game's report;
- `reports/GAME.html`: each folder's own report, linked from the page;
- `leaderboard.json` and `leaderboard.csv`: the same rows.

The overall rank: in each game a model's standing is its rank's percentile (0 = best,
1 = last) among the models rated there; the overall score is the mean over the games it
is rated in, and models are ranked by it. A standing comes only from games against other
models: a model whose games in a folder all seated it alone (every seat) is unrated in
that game, and a model unrated in every game has no overall rank (an empty cell in the
CSV). Its interval is a parametric bootstrap: each replicate draws every
model's skill in every game from N(μ, σ²), re-ranks each game and the overall, and the
page gives the 5th-95th percentile of the overall rank over `RESAMPLES` replicates
(seeded, so a page is reproducible).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stille_post.core.errors import UsageError
from stille_post.tournament.config import write_json_atomic

RESAMPLES = 1000
TEMPLATE = "leaderboard.html.j2"


@dataclass(frozen=True)
class GameBoard:
    """One folder's report, as the cross-game board uses it."""

    column: str  # the game, or "game (folder)" when two folders hold the same game
    game: str
    folder: Path
    report: dict[str, Any]

    @property
    def rows(self) -> list[dict[str, Any]]:
        return list(self.report["leaderboard"])


def load_boards(folders: Sequence[Path], labels: Mapping[str, str] | None,
                *, seed: int = 0) -> list[GameBoard]:
    """Each folder's report; an empty or foreign folder is one UsageError line."""
    from stille_post.core.errors import ConfigError
    from stille_post.tournament.report import build_report

    if not folders:
        raise UsageError("give at least one results folder")
    boards: list[GameBoard] = []
    for folder in folders:
        if not folder.is_dir():
            raise UsageError(f"{folder} is not a folder")
        try:
            report = build_report(folder, seed=seed, labels=labels)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        if not report["leaderboard"]:
            raise UsageError(f"{folder} has no completed game to rate")
        boards.append(GameBoard(report["game"], report["game"], folder, report))
    games = [b.game for b in boards]
    return [GameBoard(f"{b.game} ({b.folder.name})" if games.count(b.game) > 1 else b.game,
                      b.game, b.folder, b.report) for b in boards]


def _percentiles(mus: Mapping[str, float]) -> dict[str, float]:
    """0 for the best of a game, 1 for the last. A game with fewer than two rated models
    ranks nobody (there is no one to be better than)."""
    order = sorted(mus, key=lambda m: (-mus[m], m))
    n = len(order)
    return {m: i / (n - 1) for i, m in enumerate(order)} if n > 1 else {}


def _overall(per_game: Sequence[Mapping[str, float]]) -> dict[str, float]:
    scores: dict[str, list[float]] = {}
    for mus in per_game:
        for m, p in _percentiles(mus).items():
            scores.setdefault(m, []).append(p)
    return {m: sum(v) / len(v) for m, v in scores.items()}


def _ranks(scores: Mapping[str, float]) -> dict[str, int]:
    order = sorted(scores, key=lambda m: (scores[m], m))
    return {m: i + 1 for i, m in enumerate(order)}


def rated_rows(board: GameBoard) -> list[dict[str, Any]]:
    """The rows of a game that have a standing: players that met another player in at
    least one rated game of it, when at least two such players exist. A player that sat
    only against itself (every seat of its games) is unrated in that game."""
    rows = [r for r in board.rows if r.get("games_vs_others", r["games"]) > 0]
    return rows if len(rows) > 1 else []


def build(boards: Sequence[GameBoard], *, seed: int = 0,
          resamples: int = RESAMPLES) -> dict[str, Any]:
    """The cross-game leaderboard as JSON: rows (one per model: ranked ones best first,
    then the unrated ones by name, with `rank` None) with a cell per game."""
    rated = [rated_rows(b) for b in boards]
    mus = [{r["player"]: float(r["mu"]) for r in rows} for rows in rated]
    sigmas = [{r["player"]: float(r["sigma"]) for r in rows} for rows in rated]
    overall = _overall(mus)
    rank = _ranks(overall)
    rng = random.Random(f"{seed}:leaderboard")
    drawn: dict[str, list[int]] = {m: [] for m in overall}
    for _ in range(resamples if overall else 0):
        sample = [{m: rng.gauss(mu[m], sigma[m]) for m in sorted(mu)}
                  for mu, sigma in zip(mus, sigmas, strict=True)]
        for m, r in _ranks(_overall(sample)).items():
            drawn[m].append(r)
    everyone = {str(r["player"]) for b in boards for r in b.rows}
    unranked = sorted(everyone - set(overall))
    rows = []
    for model in [*sorted(overall, key=lambda m: rank[m]), *unranked]:
        draws = sorted(drawn.get(model, []))
        cells: dict[str, Any] = {}
        for b, mu in zip(boards, mus, strict=True):
            row = next((r for r in b.rows if r["player"] == model), None)
            if row is None:
                continue
            standing = sorted(mu, key=lambda m: (-mu[m], m))
            cells[b.column] = {
                "mu": row["mu"], "sigma": row["sigma"],
                "rank": standing.index(model) + 1 if model in mu else None,
                "of": len(mu), "rated": model in mu, "games": row["games"],
                "games_vs_others": row.get("games_vs_others", row["games"]),
                "win_rate": row["win_rate"], "win_rate_ci": row["win_rate_ci"],
                "dollars_per_game": row.get("dollars_per_game", 0.0),
                **({"adherence": row["adherence"]} if "adherence" in row else {})}
        rows.append({
            "model": model, "rank": rank.get(model),
            "score": round(overall[model], 4) if model in overall else None,
            "rank_interval": [draws[int(0.05 * (len(draws) - 1))],
                              draws[int(0.95 * (len(draws) - 1))]] if draws else None,
            "games": cells})
    return {
        "games": [{"column": b.column, "game": b.game, "folder": str(b.folder),
                   "report": f"reports/{_file_name(b.column)}.html",
                   "rated_games": b.report["games"]["rated"]} for b in boards],
        "method": ("a model's standing in a game comes from its games against other "
                   "models: a model that only met itself there is unrated in that game, "
                   "and a model unrated in every game has no overall rank; overall score: "
                   "the mean, over the games a model is rated in, of its rank's "
                   "percentile in that game (0 best, 1 last), ranked low to high; interval: "
                   f"5th-95th percentile of the overall rank over {resamples} draws of every "
                   "rated model's skill in every game from N(μ, σ²), seed "
                   f"{seed}"),
        "rows": rows,
    }


def _file_name(column: str) -> str:
    from stille_post.core.exports import file_slug

    return file_slug(column)


def to_csv(board: Mapping[str, Any]) -> str:
    """A row per model; per game the columns GAME:mu, :sigma, :rank, :games, :win_rate,
    :dollars_per_game (empty where the model did not play that game; `rank` is empty
    where it is unrated, and so is the overall rank of a model unrated everywhere).
    Every cell goes through `core.exports.csv_cell`."""
    from stille_post.core.exports import csv_text

    fields = ("mu", "sigma", "rank", "games", "win_rate", "dollars_per_game")
    columns = [g["column"] for g in board["games"]]
    body = []
    for row in board["rows"]:
        lo, hi = row["rank_interval"] or (None, None)
        cells = [row["games"].get(c, {}).get(f) for c in columns for f in fields]
        body.append([row["model"], row["rank"], lo, hi, row["score"], *cells])
    return csv_text(["model", "rank", "rank_low", "rank_high", "score",
                     *(f"{c}:{f}" for c in columns for f in fields)], body)


def write(board: dict[str, Any], boards: Sequence[GameBoard], out: Path) -> list[Path]:
    """index.html, leaderboard.json, leaderboard.csv and reports/ in `out` (each game's
    report with its games page and replays)."""
    from stille_post.tournament.charts import overall_standing
    from stille_post.tournament.html import environment
    from stille_post.tournament.report import write_html

    (out / "reports").mkdir(parents=True, exist_ok=True)
    for b in boards:
        write_html(b.report, out / "reports" / f"{_file_name(b.column)}.html")
    chart = overall_standing(board["rows"])
    page = environment().get_template(TEMPLATE).render(b=board, chart=chart)
    paths = [out / "index.html", out / "leaderboard.csv"]
    for path, text in zip(paths, (page, to_csv(board)), strict=True):
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    write_json_atomic(out / "leaderboard.json", board)
    return [*paths, out / "leaderboard.json"]


__all__ = ["GameBoard", "build", "load_boards", "to_csv", "write"]
