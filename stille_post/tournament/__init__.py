"""Tournaments: many games of one game, run concurrently and resumably, rated and reported.

Layers inside this package (top imports bottom):
    runner        asyncio scheduling, rate limits, progress, the results folder
    results       the results folder read back: config, index, transcripts, merge
    report        ratings + per-game metrics + charts -> terminal / JSON / CSV / HTML
    ratings       TrueSkill passes, partial points, bootstrap CIs (pure functions)
    plan/config   which games a run plays (seeds and seats), as data
"""

from __future__ import annotations

from stille_post.tournament.config import GameSpec, TournamentConfig
from stille_post.tournament.runner import RunStats, run_tournament

__all__ = ["GameSpec", "RunStats", "TournamentConfig", "run_tournament"]
