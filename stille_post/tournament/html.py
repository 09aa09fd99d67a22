"""The one-file HTML report: a jinja2 template with the charts inlined as data URIs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from stille_post.tournament.charts import all_charts

TEMPLATES = Path(__file__).parent / "templates"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if value is None:
        return "–"
    return str(value)


def render_html(report: dict[str, Any]) -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined)
    env.filters["fmt"] = _fmt
    per_player = report["metrics"]["per_player"]
    # Adherence has its own table beside the leaderboard.
    metric_names = sorted({k for v in per_player.values() for k in v} - {"adherence"})
    charts = all_charts(report["leaderboard"])
    charts.update(game_charts(report))
    return env.get_template("report.html.j2").render(
        r=report, charts=charts, metric_names=metric_names)


def game_charts(report: dict[str, Any]) -> dict[str, str]:
    """The game's own charts (declared by its definition), after the shared ones. A game
    that is not installed here simply has none."""
    from stille_post.games import all_games

    definition = all_games().get(str(report.get("game")))
    fn = definition.charts_fn() if definition is not None else None
    return fn(report) if fn is not None else {}
