"""The report's charts, drawn with matplotlib and returned as PNG data URIs so the HTML
report is one self-contained file that opens offline."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: the report is written by a CLI or a CI job

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

Row = dict[str, Any]


def _uri(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _height(n: int) -> float:
    return max(2.5, 0.45 * n + 1.2)


def trueskill_bars(board: Sequence[Row]) -> str:
    rows = sorted(board, key=lambda r: r["mu"])  # barh draws bottom-up: best on top
    fig, ax = plt.subplots(figsize=(8, _height(len(rows))))
    ax.barh([r["player"] for r in rows], [r["mu"] for r in rows],
            xerr=[r["sigma"] for r in rows], color="#4c72b0", capsize=4)
    ax.set_xlabel("TrueSkill μ (error bar: σ)")
    ax.set_title("TrueSkill leaderboard (μ ± σ), sorted by μ")
    ax.axvline(0, color="grey", lw=0.8)
    return _uri(fig)


def rank_distribution(board: Sequence[Row]) -> str:
    ranks = sorted({int(k) for r in board for k in r["ranks"]})
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(board) + 2), 4))
    width = 0.8 / max(1, len(ranks))
    xs = range(len(board))
    for i, rank in enumerate(ranks):
        shares = [r["ranks"].get(str(rank), 0) / r["games"] for r in board]
        ax.bar([x + i * width for x in xs], shares, width, label=f"rank {rank}")
    ax.set_xticks([x + width * (len(ranks) - 1) / 2 for x in xs])
    ax.set_xticklabels([r["player"] for r in board], rotation=20, ha="right")
    ax.set_ylabel("share of games")
    ax.set_title("Rank distribution per player")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _uri(fig)


def win_rates(board: Sequence[Row]) -> str:
    rows = sorted(board, key=lambda r: r["win_rate"])
    fig, ax = plt.subplots(figsize=(8, _height(len(rows))))
    rates = [r["win_rate"] for r in rows]
    lo = [r["win_rate"] - r["win_rate_ci"][0] for r in rows]
    hi = [r["win_rate_ci"][1] - r["win_rate"] for r in rows]
    ax.barh([r["player"] for r in rows], rates, xerr=[lo, hi], color="#55a868", capsize=4)
    ax.set_xlim(0, 1)
    ax.set_xlabel("win rate (error bar: 95% bootstrap interval)")
    ax.set_title("Win rate with confidence intervals")
    return _uri(fig)


def cost_vs_strength(board: Sequence[Row]) -> str:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = [r["dollars_per_game"] for r in board]
    ys = [r["mu"] for r in board]
    ax.scatter(xs, ys, s=60, color="#c44e52")
    for r, x, y in zip(board, xs, ys, strict=True):
        ax.annotate(r["player"], (x, y), textcoords="offset points", xytext=(5, 4),
                    fontsize="small")
    ax.set_xlabel("dollars per game")
    ax.set_ylabel("TrueSkill μ")
    ax.set_title("Cost versus strength")
    if not any(xs):
        ax.set_title("Cost versus strength (no priced usage: bots, or no price table)")
    return _uri(fig)


def all_charts(board: Sequence[Row]) -> dict[str, str]:
    if not board:
        return {}
    return {
        "TrueSkill μ ± σ": trueskill_bars(board),
        "Rank distribution": rank_distribution(board),
        "Win rate with 95% CI": win_rates(board),
        "Cost versus strength": cost_vs_strength(board),
    }
