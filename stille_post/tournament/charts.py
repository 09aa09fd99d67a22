"""The report's charts, drawn with matplotlib and returned as PNG data URIs so the HTML
report is one self-contained file that opens offline."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")  # no display: the report is written by a CLI or a CI job

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from stille_post.core.exports import inert

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


def cost_vs_strength(board: Sequence[Row]) -> str | None:
    """Dollars per game against μ; None when nobody spent anything (bots, unpriced
    models): a scatter on a zero axis says nothing."""
    xs = [r["dollars_per_game"] for r in board]
    if not any(xs):
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ys = [r["mu"] for r in board]
    ax.scatter(xs, ys, s=60, color="#c44e52")
    for r, x, y in zip(board, xs, ys, strict=True):
        ax.annotate(inert(str(r["player"])), (x, y), textcoords="offset points",
                    xytext=(5, 4), fontsize="small")
    ax.set_xlabel("dollars per game")
    ax.set_ylabel("TrueSkill μ")
    ax.set_title("Cost versus strength")
    return _uri(fig)


def overall_standing(rows: Sequence[Row]) -> str | None:
    """The cross-game leaderboard: each ranked model's overall rank (dot) and its
    5th-95th percentile interval (bar), best on top; None when nobody is ranked."""
    ranked = [r for r in rows if r.get("rank") is not None]
    if not ranked:
        return None
    ranked.sort(key=lambda r: r["rank"], reverse=True)  # barh draws bottom-up
    names = [inert(str(r["model"])) for r in ranked]
    ranks = [r["rank"] for r in ranked]
    lows = [r["rank"] - (r.get("rank_interval") or [r["rank"]] * 2)[0] for r in ranked]
    highs = [(r.get("rank_interval") or [r["rank"]] * 2)[1] - r["rank"] for r in ranked]
    fig, ax = plt.subplots(figsize=(8, _height(len(ranked))))
    ax.errorbar(ranks, range(len(ranked)), xerr=[lows, highs], fmt="o", color="#4c72b0",
                ecolor="#4c72b0", capsize=4)
    ax.set_yticks(range(len(ranked)), names)
    ax.set_xlim(len(ranked) + 0.5, 0.5)  # rank 1 on the right: better is further right
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_xlabel("overall rank (bar: 5th-95th percentile over the resampled skills)")
    ax.set_title("Overall standing across games")
    return _uri(fig)


def all_charts(board: Sequence[Row]) -> dict[str, str]:
    """The shared charts of a report, by title; a chart with nothing to show is left
    out."""
    if not board:
        return {}
    board = [{**r, "player": inert(str(r["player"]))} for r in board]
    charts = {
        "TrueSkill μ ± σ": trueskill_bars(board),
        "Rank distribution": rank_distribution(board),
        "Win rate with 95% CI": win_rates(board),
        "Cost versus strength": cost_vs_strength(board),
    }
    return {title: uri for title, uri in charts.items() if uri is not None}
