"""How many processes `stille-post tournament` uses without `--workers`
(cli/tournament.py `workers_for`): every core, unless the run needs one tally."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stille_post.cli.tournament import workers_for
from stille_post.providers.inflight import in_flight_caps
from stille_post.tournament.caps import Caps
from stille_post.tournament.runner import process_slots
from stille_post.tournament.settings import TournamentSettings

MODELS = ["openai:gpt-4.1", "openai:gpt-4.1-mini", "random", "detective"]
CORES = 8


@pytest.fixture(autouse=True)
def _eight_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: CORES)  # 1 and "every core" differ here


def _settings(**fields: object) -> TournamentSettings:
    return TournamentSettings(game="stille-post", players=MODELS, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("calls_models", [False, True])
def test_every_core_when_nothing_needs_one_tally(calls_models: bool) -> None:
    # Model seats too: against a fast server one process runs out of CPU first.
    assert workers_for(_settings(), calls_models, Caps()) == CORES


def test_rate_limits_caps_and_a_replayed_cassette_need_one_process() -> None:
    assert workers_for(_settings(rate_limits={"openai": "60"}), True, Caps()) == 1
    assert workers_for(_settings(), True, Caps(budget_usd=1.0)) == 1
    assert workers_for(_settings(), True, Caps(max_tokens=1000)) == 1
    assert workers_for(_settings(), True, Caps(), replay=True) == 1
    with in_flight_caps({"openai": 8}, {}):  # --max-in-flight, or an alias's own cap
        assert workers_for(_settings(), True, Caps()) == 1
        assert workers_for(_settings(), False, Caps()) == CORES  # bots make no calls
    with in_flight_caps({}, {"small": 2}):
        assert workers_for(_settings(), True, Caps()) == 1


def test_workers_given_are_workers_used() -> None:
    assert workers_for(_settings(workers=3), True, Caps()) == 3
    assert workers_for(_settings(workers=1), False, Caps()) == 1


def test_never_more_processes_than_games_at_once() -> None:
    # `--concurrency 1` means one game at a time, in one process
    assert workers_for(_settings(concurrency=1), True, Caps()) == 1
    assert workers_for(_settings(concurrency=3), False, Caps()) == 3
    assert workers_for(_settings(concurrency=64), True, Caps()) == CORES


@pytest.mark.parametrize(("concurrency", "workers"),
                         [(64, 3), (64, 2), (2, 4), (1, 8), (7, 7), (10, 4), (5, 1)])
def test_the_processes_share_exactly_the_games_at_once(concurrency: int, workers: int) -> None:
    """`--concurrency` is a bound (a user may set it for a server's sake): the processes'
    shares add up to it, none is empty, and they differ by one at most."""
    slots = process_slots(concurrency, workers)
    assert sum(slots) == concurrency
    assert len(slots) == min(workers, concurrency) and min(slots) >= 1
    assert max(slots) - min(slots) <= 1


def test_workers_above_concurrency_play_no_more_games_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--workers 4 --concurrency 2` starts 2 processes of one game at a time each (before:
    4 processes, 4 games at once); every game is still played once."""
    import asyncio

    from stille_post.tournament import TournamentConfig, run_tournament, runner
    from stille_post.tournament.results import load_results

    log = tmp_path / "slots"
    real = runner._worker_process

    def recording(*args: object) -> None:
        with open(log, "a") as f:  # a forked process: the file is the way back
            f.write(f"{args[5]}\n")
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "_worker_process", recording)
    config = TournamentConfig(game="stille-post", games=6, seed=1,
                              players=["random", "random", "detective", "detective"])
    stats = asyncio.run(run_tournament(config, tmp_path / "t", concurrency=2, workers=4,
                                       progress=False, durable=False))
    assert sorted(int(x) for x in log.read_text().split()) == [1, 1]
    results = load_results(tmp_path / "t")
    assert stats.played == 6 and results.indexed == 6 and not results.missing
