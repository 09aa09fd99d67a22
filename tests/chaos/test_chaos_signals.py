"""The signal scenario of the chaos suite (tests/chaos/signals.py), a slice: one round of
SIGHUP, SIGTERM and SIGINT against `play` with a person seated. The tournament half runs
in `python -m tests.chaos`; its behaviour is pinned in tests/tournament/test_tour_interrupt.py."""

from __future__ import annotations

import pytest

from tests.chaos.signals import run_signals

pytestmark = pytest.mark.slow  # a dozen seconds of real processes in pseudo-terminals


def test_signals_during_play_leave_valid_transcripts_and_lose_nothing() -> None:
    f = run_signals(1, seed=3, tournaments=False)
    assert f.tried == 3 and f.ok, f.examples
