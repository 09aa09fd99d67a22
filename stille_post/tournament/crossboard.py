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
1 = last); the overall score is the mean over the games it played, and models are
ranked by it. Its interval is a parametric bootstrap: each replicate draws every
model's skill in every game from N(μ, σ²), re-ranks each game and the overall, and the
page gives the 5th-95th percentile of the overall rank over `RESAMPLES` replicates
(seeded, so a page is reproducible).
"""

from __future__ import annotations

import csv
import io
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
    """0 for the best of a game, 1 for the last (a lone model: 0)."""
    order = sorted(mus, key=lambda m: (-mus[m], m))
    n = len(order)
    return {m: i / (n - 1) if n > 1 else 0.0 for i, m in enumerate(order)}


def _overall(per_game: Sequence[Mapping[str, float]]) -> dict[str, float]:
    scores: dict[str, list[float]] = {}
    for mus in per_game:
        for m, p in _percentiles(mus).items():
            scores.setdefault(m, []).append(p)
    return {m: sum(v) / len(v) for m, v in scores.items()}


def _ranks(scores: Mapping[str, float]) -> dict[str, int]:
    order = sorted(scores, key=lambda m: (scores[m], m))
    return {m: i + 1 for i, m in enumerate(order)}


def build(boards: Sequence[GameBoard], *, seed: int = 0,
          resamples: int = RESAMPLES) -> dict[str, Any]:
    """The cross-game leaderboard as JSON: rows (one per model, best first) with a cell
    per game."""
    mus = [{r["player"]: float(r["mu"]) for r in b.rows} for b in boards]
    sigmas = [{r["player"]: float(r["sigma"]) for r in b.rows} for b in boards]
    overall = _overall(mus)
    rank = _ranks(overall)
    rng = random.Random(f"{seed}:leaderboard")
    drawn: dict[str, list[int]] = {m: [] for m in overall}
    for _ in range(resamples):
        sample = [{m: rng.gauss(mu[m], sigma[m]) for m in sorted(mu)}
                  for mu, sigma in zip(mus, sigmas, strict=True)]
        for m, r in _ranks(_overall(sample)).items():
            drawn[m].append(r)
    rows = []
    for model in sorted(overall, key=lambda m: rank[m]):
        draws = sorted(drawn[model])
        cells: dict[str, Any] = {}
        for b, mu in zip(boards, mus, strict=True):
            row = next((r for r in b.rows if r["player"] == model), None)
            if row is None:
                continue
            game_rank = sorted(mu, key=lambda m: (-mu[m], m)).index(model) + 1
            cells[b.column] = {
                "mu": row["mu"], "sigma": row["sigma"], "rank": game_rank,
                "of": len(mu), "games": row["games"], "win_rate": row["win_rate"],
                "win_rate_ci": row["win_rate_ci"],
                "dollars_per_game": row.get("dollars_per_game", 0.0),
                **({"adherence": row["adherence"]} if "adherence" in row else {})}
        rows.append({
            "model": model, "rank": rank[model], "score": round(overall[model], 4),
            "rank_interval": [draws[int(0.05 * (len(draws) - 1))],
                              draws[int(0.95 * (len(draws) - 1))]] if draws else None,
            "games": cells})
    return {
        "games": [{"column": b.column, "game": b.game, "folder": str(b.folder),
                   "report": f"reports/{_file_name(b.column)}.html",
                   "rated_games": b.report["games"]["rated"]} for b in boards],
        "method": ("overall score: the mean, over the games a model played, of its rank's "
                   "percentile in that game (0 best, 1 last), ranked low to high; interval: "
                   f"5th-95th percentile of the overall rank over {resamples} draws of every "
                   "model's skill in every game from N(μ, σ²), seed "
                   f"{seed}"),
        "rows": rows,
    }


def _file_name(column: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in column)


def to_csv(board: Mapping[str, Any]) -> str:
    """A row per model; per game the columns GAME:mu, :sigma, :rank, :games, :win_rate,
    :dollars_per_game (empty where the model did not play that game)."""
    fields = ("mu", "sigma", "rank", "games", "win_rate", "dollars_per_game")
    columns = [g["column"] for g in board["games"]]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["model", "rank", "rank_low", "rank_high", "score",
                     *(f"{c}:{f}" for c in columns for f in fields)])
    for row in board["rows"]:
        lo, hi = row["rank_interval"] or (None, None)
        cells = [row["games"].get(c, {}).get(f, "") for c in columns for f in fields]
        writer.writerow([row["model"], row["rank"], lo, hi, row["score"], *cells])
    return out.getvalue()


def write(board: dict[str, Any], boards: Sequence[GameBoard], out: Path) -> list[Path]:
    """index.html, leaderboard.json, leaderboard.csv and reports/ in `out`."""
    import jinja2

    from stille_post.tournament.html import TEMPLATES, _fmt
    from stille_post.tournament.report import write_html

    (out / "reports").mkdir(parents=True, exist_ok=True)
    for b in boards:
        write_html(b.report, out / "reports" / f"{_file_name(b.column)}.html")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined)
    env.filters["fmt"] = _fmt
    page = env.get_template(TEMPLATE).render(b=board)
    paths = [out / "index.html", out / "leaderboard.csv"]
    for path, text in zip(paths, (page, to_csv(board)), strict=True):
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    write_json_atomic(out / "leaderboard.json", board)
    return [*paths, out / "leaderboard.json"]


__all__ = ["GameBoard", "build", "load_boards", "to_csv", "write"]
