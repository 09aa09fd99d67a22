"""The CI slice of the chaos suite (the full run is `nox -s chaos` / `python -m tests.chaos`).

Small but real: chaos games against the hostile emulators at the full 20 % fault rate and
a few hundred fuzzed completions per adapter, all seeded (derandomised hypothesis, seeded
fault policies), so a failure reproduces. Every bound is the issue's: no crash, no lost
game, no leaked key, no internal error, no escaped exception.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.chaos.fuzz import KINDS, FuzzFigures, fuzz_completions, fuzz_games
from tests.chaos.harness import play_chaos_games
from tests.chaos.surface import run_surface
from tests.slowparams import fast_only

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

LOOPBACK = pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])


@LOOPBACK
def test_chaos_games_at_20_percent_faults_complete_or_abort_cleanly(tmp_path: Path) -> None:
    g = asyncio.run(play_chaos_games(16, rate=0.2, seed=3, out=tmp_path))
    assert g.tried == 16
    assert g.crashes == 0 and g.lost == 0 and g.leaked == 0 and g.unsafe_text == 0, \
        g.examples
    assert g.completed + g.aborted_clean == 16 and g.hangs == 0
    assert set(g.by_game) == {"stille-post", "chameleon", "connections", "elimination"}
    # The emulators were really reached (an LLM seat speaks several times a game), and
    # the policy really injected faults (seeded: the count is fixed, the bound is loose).
    assert g.requests >= 16 * 5
    assert sum(g.faults.values()) >= 0.1 * g.requests


@pytest.mark.parametrize("kind", fast_only(KINDS, {"openai"}))  # all four: nox -s slow
def test_fuzzed_completions_never_escape_or_leak(kind: str, tmp_path: Path) -> None:
    f = FuzzFigures()
    fuzz_completions(kind, 150, f)
    fuzz_games(kind, 6, f, tmp_path)
    assert f.completions >= 150
    assert f.internal == 0 and f.escaped == 0 and f.game_crashes == 0, f.examples
    assert f.leaked == 0 and f.unsafe == 0, f.examples
    # Every kind of outcome happened: the fuzz reaches the parser, not just the SDK.
    assert f.actions > 0 and f.reasks > 0 and f.forfeits > 0


def test_the_new_surface_never_crashes_leaks_loses_or_hangs() -> None:
    """Issue 27: damaged import logs, config files and scripts (seeded), each bounded."""
    for name, f in run_surface(5, imports=4, configs=8, scripts=10):
        assert f.tried > 0 and f.ok, (name, f.examples)


@LOOPBACK
def test_capped_runs_against_lying_usage_keep_the_ledger_and_the_bounds() -> None:
    """Issue 36: a soft and a hard capped run, 8 games at once, against a server whose
    replies lie about their usage (tests/chaos/money.py)."""
    from tests.chaos.money import run_money

    m = run_money(seed=2, runs=2)
    assert m.runs == 2 and m.soft == 1 and m.hard == 1 and m.lies > 0
    assert m.ok, m.examples
    assert m.ledger > 0 and m.billed > 0
