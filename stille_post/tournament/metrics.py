"""Per-game metrics: the function a game's definition declares (`metrics=`), if any.

Contract of such a module:
    compute_metrics(transcripts: Iterable[Transcript]) -> dict
returning JSON-safe {"overall": {...}, "per_player": {label: {...}}, "tables":
{name: {"columns": [...], "rows": [[...]]}}}. A game without the module simply has no
game-specific section in the report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from stille_post.core.transcript import Transcript
from stille_post.games import all_games

MetricsFn = Callable[[Iterable[Transcript]], dict[str, Any]]
EMPTY: dict[str, Any] = {"overall": {}, "per_player": {}, "tables": {}}


def metrics_for(game: str) -> MetricsFn | None:
    """The game's metrics function, as its definition declares it (None: no section)."""
    definition = all_games().get(game)
    return definition.metrics_fn() if definition is not None else None


def normalise(data: dict[str, Any] | None) -> dict[str, Any]:
    """Fill in missing sections so the report can rely on the shape."""
    data = dict(data or {})
    out: dict[str, Any] = {key: dict(data.get(key) or {}) for key in EMPTY}
    # One row per game (Connections' Table 1 columns), when the game gives them.
    out["per_game"] = list(data.get("per_game") or [])
    return out
