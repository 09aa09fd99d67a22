"""The Elimination Game's own report charts (seed 001), after the shared TrueSkill
leaderboard, rank distribution and win-rate charts: betrayal from both sides, first
places, earliest outs, final 2 → win, wordiness and partial points.

`charts(report)` reads `report["metrics"]["per_player"]` (metrics.py) and returns
{title: PNG data URI}; a chart with nothing to show is left out.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: reports are written by CLIs and CI jobs

import matplotlib.pyplot as plt


def _uri(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _bars(values: Mapping[str, float], title: str, xlabel: str, *, pct: bool = False) -> str:
    items = sorted(values.items(), key=lambda kv: kv[1])  # barh: best on top
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.45 * len(items) + 1.2)))
    ax.barh([k for k, _ in items], [v * (100 if pct else 1) for _, v in items],
            color="#4c72b0")
    for i, (_, v) in enumerate(items):
        ax.text(v * (100 if pct else 1), i, f" {v:.0%}" if pct else f" {v:.3g}",
                va="center", fontsize="small")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    return _uri(fig)


def charts(report: Mapping[str, Any]) -> dict[str, str]:
    per = (report.get("metrics") or {}).get("per_player") or {}
    out: dict[str, str] = {}

    def series(key: str) -> dict[str, float]:
        return {p: float(m[key]) for p, m in per.items()
                if isinstance(m, Mapping) and isinstance(m.get(key), int | float)}

    specs = [
        ("betrayal_rate", "Buddy betrayal rate (betrayer's side)",
         "votes against the round's chat partner / private chats", True),
        ("betrayed_rate", "Buddy betrayal rate (victim's side)",
         "votes received from the round's chat partner / private chats", True),
        ("first_place", "First-place finishes", "games won", False),
        ("earliest_out", "Earliest-out finishes", "games eliminated first", False),
        ("final2_win_rate", "Final 2 → win rate", "wins / games reached as a finalist", True),
        ("words_per_message", "Average words per message",
         "public, tie-break and final statements", False),
        ("partial_points", "Partial points", "mean of (n − rank) / (n − 1)", False),
    ]
    for key, title, xlabel, pct in specs:
        values = series(key)
        if values:
            out[title] = _bars(values, title, xlabel, pct=pct)
    return out
