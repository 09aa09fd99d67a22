"""Parameter lists whose first cases run in the fast suite and the rest under `slow`.

The fast suite (the README's command, CI) keeps one or two representatives of a feature
whose every case costs seconds (a browser, a pty, a subprocess with an SDK, a statistical
run); `nox -s slow` runs the others. docs/testing.md lists what is where.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import pytest


def fast_only(values: Iterable[Any], fast: Collection[Any]) -> list[Any]:
    """`values` for a one-name parametrize, with those not in `fast` marked slow."""
    return [v if v in fast else pytest.param(v, marks=pytest.mark.slow) for v in values]
