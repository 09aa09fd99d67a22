"""The Chameleon's own report chart: Figure 2 of seed 003 as curves over N.

`charts(report)` reads the theory table of the report's metrics (theory/figure.py) and,
when there is one, draws three panels: Proposition 1 (concealing, upper bound),
Proposition 2 (revealing, upper bound, capped at 1 where it says nothing) and
Proposition 3 (π^amb, lower bound), each with the measured non-chameleon win rate and
its 95% interval per N beside the bound's curve. π^amb shows the worst chameleon per
point. A report without theory games gets no chart.
"""

from __future__ import annotations

import base64
import io
from collections import defaultdict
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: reports are written by CLIs and CI jobs

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from stille_post.games.chameleon.theory import model
from stille_post.games.chameleon.theory.figure import rows_of

TITLE = "Figure 2: measured win rates beside the three bounds"
PANELS = (("concealing", "Prop. 1: α-KL concealing (upper)"),
          ("revealing", "Prop. 2: α-L1 revealing (upper)"),
          ("pi_amb", "Prop. 3: π^amb (lower)"))


def _uri(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _k_rule(n: int, k: int) -> tuple[int, int]:
    """(l, 0) when K = l(N+1) with l >= 2 (K grows with N, as π^amb's and the ratio's
    trivial points do), else (0, K): one series per rule, not one per point."""
    return (k // (n + 1), 0) if k % (n + 1) == 0 and k // (n + 1) >= 2 else (0, k)


def _curve(strategy: str, n: int, k: int, param: float) -> float:
    if strategy == "concealing":
        return model.prop1_upper(n, k, param)
    if strategy == "revealing":
        return min(1.0, model.prop2_upper(model.theory_of("revealing", n, k, param)))
    return model.prop3_lower(n, int(param))


def _series(rows: list[dict[str, Any]], strategy: str
            ) -> dict[tuple[float, tuple[int, int]], list[dict[str, Any]]]:
    """The rows of one panel by (α or l, K rule), each the worst chameleon per N (the
    bound is over every chameleon, so the lowest measured rate is the one to compare)."""
    worst: dict[tuple[float, tuple[int, int]], dict[int, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        if r["strategy"] != strategy:
            continue
        param = float(r["l"] if strategy == "pi_amb" else r["alpha"])
        key = (param, (0, 0) if strategy == "pi_amb" else _k_rule(r["N"], r["K"]))
        here = worst[key]
        if r["N"] not in here or r["measured"] < here[r["N"]]["measured"]:
            here[r["N"]] = r
    return {key: [by_n[n] for n in sorted(by_n)] for key, by_n in sorted(worst.items())}


def _label(strategy: str, param: float, rule: tuple[int, int]) -> str:
    if strategy == "pi_amb":
        return f"l={param:g}"
    l, k = rule  # noqa: E741
    return f"α={param:g}, K={k}" if k else f"α={param:g}, K={l}(N+1)"


def figure2(rows: list[dict[str, Any]]) -> str | None:
    if not rows:
        return None
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    for ax, (strategy, title) in zip(axes, PANELS, strict=True):
        series = _series(rows, strategy)
        for idx, ((param, rule), pts) in enumerate(series.items()):
            color, label = f"C{idx}", _label(strategy, param, rule)
            xs = [p["N"] for p in pts]
            ax.errorbar(xs, [p["measured"] for p in pts],
                        yerr=[[max(0.0, p["measured"] - p["ci_low"]) for p in pts],
                              [max(0.0, p["ci_high"] - p["measured"]) for p in pts]],
                        fmt="o", color=color, capsize=3, label=f"measured {label}")
            ns = list(range(min(xs), max(xs) + 1))
            if strategy == "pi_amb":
                ks = [int(param) * (n + 1) for n in ns]
            elif rule[1]:
                ks = [rule[1]] * len(ns)
            else:
                ks = [rule[0] * (n + 1) for n in ns]
            ax.plot(ns, [_curve(strategy, n, k, param) for n, k in zip(ns, ks, strict=True)],
                    "--" if strategy == "pi_amb" else "-", color=color,
                    label=f"bound {label}")
            if strategy == "pi_amb":  # the proof's exact rate: how loose the bound is
                ax.plot(ns, [model.amb_exact(n, int(param)) for n in ns], ":",
                        color=color, label=f"exact {label}")
        ax.set_title(title)
        ax.set_xlabel("N (players)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if strategy == "revealing":
            # Its bound falls like exp(-N): a linear axis would hide every small value.
            ax.set_yscale("symlog", linthresh=1e-3)
            ax.set_ylim(0, 1.05)
        else:
            ax.set_ylim(0, 1)
        if series:
            ax.legend(fontsize="x-small")
        else:
            ax.text(0.5, 0.5, "no games", ha="center", transform=ax.transAxes)
    axes[0].set_ylabel("non-chameleon win rate")
    fig.suptitle(TITLE)
    return _uri(fig)


def charts(report: dict[str, Any]) -> dict[str, str]:
    table = (report.get("metrics") or {}).get("tables", {}).get("theory")
    if not table:
        return {}
    uri = figure2(rows_of(table))
    return {TITLE: uri} if uri else {}
