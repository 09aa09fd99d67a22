"""Figure 2's points: theory games grouped by (class, N, K, α, l, chameleon), each with
its measured non-chameleon win rate, a Wilson 95% interval and the paper's bound.

`holds` (the sweep's verdict): for an upper bound (Propositions 1 and 2) the whole
interval lies at or below the bound; for a lower bound (Proposition 3) at or above it.
A row is `resolvable: false` when a sample of its size cannot separate the bound
from the rate the strategy plays: an upper bound below the top of the interval of zero
wins (z²/(games + z²), about 3.84/games), or, where the proof gives the exact rate, a
bound inside the interval a sample at exactly that rate would have (the trivial
strategy's 1/N bound is 1/(NK) above its rate: at N = 10, K = 33 that needs ~40,000
games). Such a row holds when the bound is not refuted (ci_low <= bound for an upper
bound, ci_high >= bound for a lower one), and says so. The sweep plays more games
where a small bound needs them (benchmarks/bench_chameleon_theory.py). `slack` is how
loose the bound is: bound - measured for an upper bound, measured - bound for a lower
one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from stille_post.games.chameleon.theory import model
from stille_post.games.kit.stats import wilson

COLUMNS = ["strategy", "chameleon", "N", "K", "alpha", "l", "games", "wins", "measured",
           "ci_low", "ci_high", "bound", "bound_kind", "holds", "resolvable", "slack",
           "exact"]
EPS = 1e-12
STRATEGY = {"concealing": "concealing", "revealing": "revealing", "amb": "pi_amb"}


def bound_of(t: model.Theory) -> tuple[float, str, float | None]:
    """(bound, "upper"|"lower", the exact rate when the proof gives it)."""
    if t.kind == "concealing":
        exact = model.trivial(t.n, t.k) if not t.alpha else None
        return model.prop1_upper(t.n, t.k, float(t.alpha or 0.0)), "upper", exact
    if t.kind == "revealing":
        return model.prop2_upper(t), "upper", None
    l = int(t.l or 1)  # noqa: E741
    return model.prop3_lower(t.n, l), "lower", model.amb_exact(t.n, l)


def resolution(games: int) -> float:
    """The smallest upper bound a sample of `games` can show a rate to be under: the top
    of the 95% interval of zero wins."""
    return (wilson(0, games) or [0.0, 1.0])[1]


def resolvable_at(games: int, bound: float, kind: str, exact: float | None) -> bool:
    """Whether `games` games can show the bound (see the module docstring)."""
    if kind == "upper" and bound < resolution(games):
        return False
    if exact is None or not games:
        return True
    lo, hi = wilson(round(exact * games), games) or [0.0, 1.0]
    return hi <= bound + EPS if kind == "upper" else lo >= bound - EPS


def row(t: model.Theory, chameleon: str, games: int, wins: int) -> dict[str, Any]:
    measured = wins / games if games else 0.0
    lo, hi = wilson(wins, games) or [0.0, 1.0]
    bound, kind, exact = bound_of(t)
    resolvable = resolvable_at(games, bound, kind, exact)
    if kind == "upper":
        # EPS: Wilson's lower end of zero wins is 0 up to rounding, and a bound of 0
        # (unique responses) is then met exactly.
        holds = hi <= bound + EPS if resolvable else lo <= bound + EPS
        slack = bound - measured
    else:
        holds = lo >= bound - EPS if resolvable else hi >= bound - EPS
        slack = measured - bound
    return {"strategy": STRATEGY[t.kind], "chameleon": chameleon, "N": t.n, "K": t.k,
            "alpha": t.alpha, "l": t.l, "games": games, "wins": wins, "measured": measured,
            "ci_low": lo, "ci_high": hi, "bound": bound, "bound_kind": kind,
            "holds": bool(holds), "resolvable": resolvable, "slack": slack, "exact": exact}


class Points:
    """Counts per point, fed one game at a time (metrics.py streams transcripts)."""

    def __init__(self) -> None:
        self.games: Counter[tuple[Any, ...]] = Counter()
        self.wins: Counter[tuple[Any, ...]] = Counter()

    def add(self, mark: Mapping[str, Any], chameleon: str, valid: bool, won: bool) -> None:
        key = (str(mark["kind"]), int(mark["n"]), int(mark["k"]), mark.get("alpha"),
               chameleon)
        if valid:
            self.games[key] += 1
            self.wins[key] += won

    def add_summary(self, summary: Mapping[str, Any], players: Mapping[str, str]) -> None:
        """One game from its tournament index row (summary JSON and seat labels)."""
        details = summary.get("details") or {}
        mark = details.get("theory")
        if isinstance(mark, dict):
            label = players.get(str(details.get("chameleon")), "?")
            self.add(mark, label, bool(summary.get("valid")),
                     details.get("outcome") == "IdentifiedWin")

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for key in sorted(self.games, key=lambda k: (k[0], k[1], k[2], k[3] or 0, k[4])):
            kind, n, k, alpha, chameleon = key
            t = model.theory_of(kind, n, k, alpha)
            out.append(row(t, chameleon, self.games[key], self.wins[key]))
        return out


def table(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    return {"columns": list(COLUMNS), "rows": [[r[c] for c in COLUMNS] for r in rows]}


def rows_of(tbl: Mapping[str, Any]) -> list[dict[str, Any]]:
    cols = list(tbl.get("columns") or [])
    return [dict(zip(cols, r, strict=False)) for r in tbl.get("rows") or []]
