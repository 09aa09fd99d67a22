"""The one-file HTML report (a jinja2 template with the charts inlined as data URIs), its
games page (every game, linked to its replay) and the shared template environment.

Every value a template prints goes through `core.exports.html_finalize` (direction
overrides and control characters made visible), then jinja2's escaping; numbers and
intervals through `present.cell`, machine names through `present.heading`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2

from stille_post.core.exports import html_finalize
from stille_post.tournament.charts import all_charts
from stille_post.tournament.present import cell, heading

TEMPLATES = Path(__file__).parent / "templates"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined, finalize=html_finalize)
    env.filters["fmt"] = cell
    env.filters["heading"] = heading
    return env


def standings(board: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Rank (1 = best) of each leaderboard row that played another player at least once;
    a player that only ever met itself has no standing (absent here)."""
    rated = [r for r in board if r.get("games_vs_others", 1)]
    return {str(r["player"]): i for i, r in enumerate(rated, start=1)}


def render_html(report: dict[str, Any], games_page: str | None = None) -> str:
    """The report page; `games_page` is the games page's file name, linked from it."""
    per_player = report["metrics"]["per_player"]
    # Adherence has its own table beside the leaderboard.
    metric_names = sorted({k for v in per_player.values() for k in v} - {"adherence"})
    charts = all_charts(report["leaderboard"])
    charts.update(game_charts(report))
    return environment().get_template("report.html.j2").render(
        r=report, charts=charts, metric_names=metric_names,
        ranks=standings(report["leaderboard"]), games_page=games_page)


def render_games(report: dict[str, Any], rows: Sequence[Mapping[str, Any]],
                 report_page: str) -> str:
    """The games page: a row per planned game, each finished one linked to its replay."""
    return environment().get_template("games.html.j2").render(
        r=report, rows=rows, report_page=report_page)


def game_charts(report: dict[str, Any]) -> dict[str, str]:
    """The game's own charts (declared by its definition), after the shared ones. A game
    that is not installed here simply has none."""
    from stille_post.games import all_games

    definition = all_games().get(str(report.get("game")))
    fn = definition.charts_fn() if definition is not None else None
    return fn(report) if fn is not None else {}
