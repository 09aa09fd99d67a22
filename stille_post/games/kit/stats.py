"""Small statistics every game's metrics use: a safe ratio and the Wilson interval."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def ratio(a: float, b: float) -> float | None:
    """a / b, or None when there is nothing to divide by (shown as "–", not 0)."""
    return a / b if b else None


def wilson(successes: int, n: int, z: float = Z95) -> list[float] | None:
    """Wilson score interval: sound near 0 and 1, where the normal approximation is not."""
    if n == 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [max(0.0, centre - half), min(1.0, centre + half)]
