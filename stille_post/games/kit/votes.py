"""Votes: reading a seat number from a reply, counting, and the steps of a tie chain.

The pure pieces every voting game needs. Which steps a tie chain takes, and in what
order, is each game's rule (RULES.md §2 for the Elimination Game, §3 for The Chameleon).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from stille_post.core.rng import Rng

_SEAT = re.compile(r"^\s*(?:player|seat|p)?\s*#?\s*(\d+)\s*$", re.IGNORECASE)


def parse_seat(value: Any) -> int | None:
    """A seat number from 3, 3.0, "3", "P3", "Player 3", "#3"; None for anything else.

    Booleans are refused although Python counts them as ints: `true` is not seat 1.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        m = _SEAT.match(value)
        return int(m.group(1)) if m else None
    return None


def tally(votes: Mapping[int, int]) -> dict[int, int]:
    """Votes received per target, in seat order (targets with no vote left out)."""
    counts = Counter(votes.values())
    return {seat: counts[seat] for seat in sorted(counts)}


def leaders(counts: Mapping[int, int]) -> list[int]:
    """The seats with the most votes, ascending: one seat, or a tie (empty: no votes)."""
    if not counts:
        return []
    best = max(counts.values())
    return sorted(s for s, n in counts.items() if n == best)


def narrow_by(tied: Sequence[int], score: Mapping[int, int]) -> list[int]:
    """The tied seats that score highest on `score` (e.g. cumulative votes received)."""
    return leaders({s: score.get(s, 0) for s in tied})


def rng_pick(rng: Rng, tied: Iterable[int]) -> int:
    """The last step of any chain: a uniform draw from the tied seats, sorted first so a
    seed always picks the same seat."""
    return rng.choice(sorted(tied))
