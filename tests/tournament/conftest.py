"""Fixtures for the tournament tests (`--import-mode=importlib`: helpers come as fixtures,
since test folders are not importable packages)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stille_post.tournament import RunStats, TournamentConfig, run_tournament

ROOT = Path(__file__).resolve().parents[2]

Play = Callable[..., RunStats]
Cli = Callable[..., list[str]]


def _play(config: TournamentConfig, out: Path, **kwargs: Any) -> RunStats:
    kwargs.setdefault("durable", False)  # fsync only slows the tests; kill -9 needs none
    return asyncio.run(run_tournament(config, out, **kwargs))


@pytest.fixture
def play() -> Play:
    return _play


@pytest.fixture
def cli() -> Cli:
    """argv for the `stille-post` CLI in a subprocess (the installed script may be stale)."""
    def argv(*args: str) -> list[str]:
        return [sys.executable, "-c", "from stille_post.cli import main; main()", *args]
    return argv


@pytest.fixture
def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["COLUMNS"] = "200"
    return env


@pytest.fixture
def bots4() -> TournamentConfig:
    """The game's four default bots (detective, cautious, gambler, random), 24 games."""
    return TournamentConfig(game="stille-post", games=24, seed=11)
