"""Tournaments: many games of one game, run concurrently and resumably, rated and reported.

Layers inside this package (top imports bottom):
    runner        asyncio scheduling, rate limits, progress, the results folder
    results       the results folder read back: config, index, transcripts, merge
    report        ratings + per-game metrics + charts -> terminal / JSON / CSV / HTML
    ratings       TrueSkill passes, partial points, bootstrap CIs (pure functions)
    plan/config   which games a run plays (seeds and seats), as data
"""

from __future__ import annotations

import sys
import types
from typing import Any

from stille_post.tournament.config import GameSpec, TournamentConfig
from stille_post.tournament.runner import RunStats, run_tournament


class _CallablePackage(types.ModuleType):
    """The public API's `stille_post.tournament(...)` has this package's name, and the
    package is what `stille_post.tournament` is once anything imports it: so the package
    answers the call (tournament/public.py)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from stille_post.tournament.public import tournament

        return tournament(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage

__all__ = ["GameSpec", "RunStats", "TournamentConfig", "run_tournament"]
