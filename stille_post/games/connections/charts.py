"""Connections' own report charts: the paper's Figure 1 (letters revealed over the
iterations, one line per game; the 30 longest games when there are more) and the three
attempt outcomes per player as clue-giver.

`charts(report)` reads `report["metrics"]` (metrics.py) and returns {title: PNG data
URI}; a chart with nothing to show is left out. The Table 1 rows themselves are the
metrics' `tables.table1`, which the report prints as a table.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: reports are written by CLIs and CI jobs

import matplotlib.pyplot as plt

MAX_LINES = 30


def _uri(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def curve_chart(per_game: list[Mapping[str, Any]]) -> str | None:
    games = [g for g in per_game if g.get("curve")]
    if not games:
        return None
    games = sorted(games, key=lambda g: -len(g["curve"]))[:MAX_LINES]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for g in games:
        curve = [1, *g["curve"]]  # the first letter is revealed before attempt 1
        label = f"{g.get('word')} (seed {g.get('seed')})"
        ax.step(range(len(curve)), curve, where="post", label=label, linewidth=1.2)
    ax.set_xlabel("attempts")
    ax.set_ylabel("letters revealed")
    ax.set_title("Letters revealed over the attempts (the paper's Figure 1)")
    if len(games) <= 12:
        ax.legend(fontsize="x-small", loc="lower right")
    return _uri(fig)


def outcome_chart(per_player: Mapping[str, Mapping[str, Any]]) -> str | None:
    rows = {p: m for p, m in per_player.items() if m.get("clues")}
    if not rows:
        return None
    names = sorted(rows)
    rate = [float(rows[p].get("clue_success_rate") or 0.0) for p in names]
    acc = [float(rows[p].get("guess_accuracy") or 0.0) for p in names]
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.6 * len(names) + 1.2)))
    ys = range(len(names))
    ax.barh([y + 0.2 for y in ys], rate, height=0.4, label="clue success rate")
    ax.barh([y - 0.2 for y in ys], acc, height=0.4, label="guess accuracy")
    ax.set_yticks(list(ys), names)
    ax.set_xlim(0, 1)
    ax.legend(fontsize="small")
    ax.set_title("Clue success and guess accuracy per player")
    return _uri(fig)


def charts(report: Mapping[str, Any]) -> dict[str, str]:
    metrics = report.get("metrics") or {}
    out: dict[str, str] = {}
    curve = curve_chart(list(metrics.get("per_game") or []))
    if curve:
        out["Letters revealed over attempts (Figure 1)"] = curve
    bars = outcome_chart(metrics.get("per_player") or {})
    if bars:
        out["Clue success and guess accuracy"] = bars
    return out
