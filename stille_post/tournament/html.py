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
    metric_names = sorted({k for v in per_player.values() for k in v})
    return env.get_template("report.html.j2").render(
        r=report, charts=all_charts(report["leaderboard"]), metric_names=metric_names)
