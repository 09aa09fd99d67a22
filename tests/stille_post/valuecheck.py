"""`close(actual, expected)`: the metric-value tests' comparison of a whole metrics output
with the values worked out by hand: keys and lists in full, types exact (1 is not 1.0,
None is not 0), floats to 1e-9 (sums such as 0.5 + 0.25 + 0.05)."""

from __future__ import annotations

import math
from typing import Any


def close(actual: Any, expected: Any, path: str = "") -> None:
    if isinstance(expected, float) and isinstance(actual, float):
        assert math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-12), (path, actual)
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected), (path, actual)
        for k in expected:
            close(actual[k], expected[k], f"{path}.{k}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), (path, actual)
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            close(a, e, f"{path}[{i}]")
    else:
        assert actual == expected and type(actual) is type(expected), (path, actual)
