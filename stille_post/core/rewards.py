"""Rewards from placements: the one definition shared by the report's partial points,
the environments' end-of-episode rewards and the data export's reward column.

Placements are competition ranks (1 = best, ties share a rank), as `GameOutcome`
records them. A void game (`valid` False) ranks nobody, so it rewards nobody.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

RewardScheme = Literal["win", "partial"]
REWARD_SCHEMES: tuple[RewardScheme, ...] = ("win", "partial")


def partial_points(rank: int, n: int) -> float:
    """Seed 001's partial points: 1 for first place, 0 for last, linear in between."""
    return (n - rank) / (n - 1) if n > 1 else 1.0


def reward(rank: int, n: int, scheme: RewardScheme = "win") -> float:
    """`win`: 1.0 for a seat ranked first (ties included), else 0.0.
    `partial`: `partial_points(rank, n)`, (n - rank) / (n - 1)."""
    if scheme == "win":
        return 1.0 if rank == 1 else 0.0
    if scheme == "partial":
        return partial_points(rank, n)
    raise ValueError(f"unknown reward scheme {scheme!r}; choose one of "
                     f"{', '.join(REWARD_SCHEMES)}")


def rewards(placements: Mapping[int, int], scheme: RewardScheme = "win", *,
            valid: bool = True) -> dict[int, float]:
    """Every seat's reward. A void game, or one with no placements, gives 0.0 to all."""
    n = len(placements)
    if not valid:
        return {seat: 0.0 for seat in placements}
    return {seat: reward(rank, n, scheme) for seat, rank in placements.items()}
