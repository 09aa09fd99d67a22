"""From our outcome to Inspect's score: win, placement, partial points and rule
adherence of the evaluated seats, per sample, and their means with standard errors.

The numbers come from the one definition of rewards (core/rewards.py) and the kit's
adherence tally, applied to the game's `GameOutcome` exactly as `report` applies them to
a transcript:

- `win`: 1.0 when the evaluated seat is ranked first (ties included), else 0.0;
- `partial`: seed 001's partial points, (n - rank) / (n - 1);
- `placement`: the competition rank, 1 = best;
- `adherence`: decisions valid on the first try out of all the seat's decisions.

Several evaluated seats (self-play, `seats=1,3`) give each key's mean over those seats.
A void or aborted game ranks nobody: it rewards 0.0, and its placement is the last
place (n). A seat that was never asked has no adherence, and the metrics leave it out
rather than count it as 0 or 1. The metrics are Inspect's own `mean()` and `stderr()`
per key.

Pure: no inspect_ai here (the Inspect scorer and metrics are thin wrappers in task.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from stille_post.core.rewards import rewards

SCORE_KEYS = ("win", "partial", "placement", "adherence")


@dataclass(frozen=True)
class GameResult:
    """What the scorer needs of one played game (kept in the sample's store as JSON)."""

    status: str
    reason: str | None
    valid: bool
    placements: dict[int, int]
    evaluated: tuple[int, ...]
    adherence: dict[int, dict[str, Any]]
    labels: dict[int, str]
    transcript: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "valid": self.valid,
                "placements": {str(k): v for k, v in self.placements.items()},
                "evaluated": list(self.evaluated),
                "adherence": {str(k): v for k, v in self.adherence.items()},
                "labels": {str(k): v for k, v in self.labels.items()},
                "transcript": self.transcript}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameResult:
        def seats(m: Any) -> dict[int, Any]:
            return {int(k): v for k, v in (m or {}).items()}

        return cls(str(data["status"]), data.get("reason"), bool(data.get("valid")),
                   seats(data.get("placements")), tuple(int(s) for s in data["evaluated"]),
                   seats(data.get("adherence")), seats(data.get("labels")),
                   data.get("transcript"))


def seat_scores(result: GameResult) -> dict[int, dict[str, float | None]]:
    """Each evaluated seat's four numbers."""
    n = len(result.placements) or len(result.labels)
    ranked = result.status == "completed" and result.valid and bool(result.placements)
    wins = rewards(result.placements, "win", valid=ranked)
    partial = rewards(result.placements, "partial", valid=ranked)
    out: dict[int, dict[str, float | None]] = {}
    for seat in result.evaluated:
        row = result.adherence.get(seat) or {}
        decisions = int(row.get("decisions") or 0)
        out[seat] = {
            "win": wins.get(seat, 0.0),
            "partial": partial.get(seat, 0.0),
            "placement": float(result.placements[seat]) if ranked and seat in result.placements
            else float(n),
            "adherence": int(row.get("valid_first_try") or 0) / decisions if decisions
            else None,
        }
    return out


def sample_value(result: GameResult) -> dict[str, float]:
    """The sample's score: each key's mean over the evaluated seats. NaN where no seat
    has a value (adherence of a seat never asked): Inspect counts a NaN key as unscored
    for that key's metrics, so it is left out of the mean, not counted as 0."""
    per_seat = seat_scores(result).values()
    return {key: mean(v[key] for v in per_seat) for key in SCORE_KEYS}


def mean(values: Iterable[float | None]) -> float:
    present = [v for v in values if v is not None and not math.isnan(v)]
    return sum(present) / len(present) if present else math.nan


def explanation(result: GameResult) -> str:
    """One line per evaluated seat, for `inspect view`'s score panel."""
    scores = seat_scores(result)
    n = len(result.placements) or len(result.labels)
    head = f"game {result.status}" + ("" if result.valid else ", void") \
        + (f": {result.reason}" if result.reason else "")
    lines = [head]
    for seat, s in scores.items():
        adh = result.adherence.get(seat) or {}
        lines.append(
            f"Player {seat} ({result.labels.get(seat, '?')}): place {s['placement']:.0f} of "
            f"{n}, win {s['win']:.0f}, partial points {s['partial']:.2f}, valid first try "
            f"{adh.get('valid_first_try', 0)}/{adh.get('decisions', 0)}, forfeits "
            f"{adh.get('forfeits', 0)}")
    return "\n".join(lines)
