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


def _curve(strategy: str, n: int, k: int, param: float | int | None) -> float:
    if strategy == "concealing":
        return model.prop1_upper(n, k, float(param or 0.0))
    if strategy == "revealing":
        return min(1.0, model.prop2_upper(model.theory_of("revealing", n, k, float(param or 0))))
    return model.prop3_lower(n, int(param or 1))


def figure2(rows: list[dict[str, Any]]) -> str | None:
    if not rows:
        return None
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), sharey=True)
    for ax, (strategy, title) in zip(axes, PANELS, strict=True):
        mine = [r for r in rows if r["strategy"] == strategy]
        series: dict[tuple[Any, int | None], list[dict[str, Any]]] = defaultdict(list)
        for r in mine:
            param = r["l"] if strategy == "pi_amb" else r["alpha"]
            k = None if strategy == "pi_amb" else r["K"]
            series[(param, k)].append(r)
        for idx, ((param, k), group) in enumerate(sorted(series.items(),
                                                         key=lambda kv: str(kv[0]))):
            worst: dict[int, dict[str, Any]] = {}
            for r in group:  # several chameleons at one point: the worst case for them
                if r["N"] not in worst or r["measured"] < worst[r["N"]]["measured"]:
                    worst[r["N"]] = r
            pts = [worst[n] for n in sorted(worst)]
            color = f"C{idx}"
            label = f"l={param}" if strategy == "pi_amb" else f"α={param:g}, K={k}"
            xs = [p["N"] for p in pts]
            ax.errorbar(xs, [p["measured"] for p in pts],
                        yerr=[[max(0.0, p["measured"] - p["ci_low"]) for p in pts],
                              [max(0.0, p["ci_high"] - p["measured"]) for p in pts]],
                        fmt="o", color=color, capsize=3, label=f"measured {label}")
            ns = list(range(min(xs), max(xs) + 1))
            ks = [(param * (n + 1) if strategy == "pi_amb" else k) for n in ns]
            ax.plot(ns, [_curve(strategy, n, kk, param) for n, kk in zip(ns, ks, strict=True)],
                    "-" if strategy != "pi_amb" else "--", color=color,
                    label=f"bound {label}")
        ax.set_title(title)
        ax.set_xlabel("N (players)")
        ax.set_ylim(0, 1)
        if mine:
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
