"""The real-path benchmark (benchmarks/realpath.py) plays through every provider kind's SDK
adapter over loopback HTTP. Slow (a server process per kind); no timing is asserted."""

from __future__ import annotations

import pytest

from benchmarks.realpath import KINDS, real_tournament


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_plays_through_its_adapter(kind: str) -> None:
    row = real_tournament(kind, games=2, concurrency=2, latency_s=0.05)
    # every game finished (a failed call aborts its game, which then has no steps counted)
    assert row["critical_path_calls"] > 0
    assert row["peak_in_flight"] >= 1
    assert row["kind"] == kind and ".bench-real" in row["folder"]
