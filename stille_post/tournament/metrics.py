"""Per-game metrics discovery: `stille_post/games/<game>/metrics.py`, if the game has one.

Contract of such a module:
    compute_metrics(transcripts: Iterable[Transcript]) -> dict
returning JSON-safe {"overall": {...}, "per_player": {label: {...}}, "tables":
{name: {"columns": [...], "rows": [[...]]}}}. A game without the module simply has no
game-specific section in the report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import import_module
from typing import Any

from stille_post.core.transcript import Transcript
from stille_post.games import GAME_MODULES

MetricsFn = Callable[[Iterable[Transcript]], dict[str, Any]]
EMPTY: dict[str, Any] = {"overall": {}, "per_player": {}, "tables": {}}


def metrics_for(game: str) -> MetricsFn | None:
    base = GAME_MODULES.get(game)
    if base is None:
        return None
    name = f"{base}.metrics"
    try:
        module = import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:  # the game has no metrics module; anything else is a bug
            return None
        raise
    fn = getattr(module, "compute_metrics", None)
    return fn if callable(fn) else None


def normalise(data: dict[str, Any] | None) -> dict[str, Any]:
    """Fill in missing sections so the report can rely on the shape."""
    data = dict(data or {})
    return {key: dict(data.get(key) or {}) for key in EMPTY}
