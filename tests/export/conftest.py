"""Fixtures for the export tests: small real results folders, made once per test process
(`--import-mode=importlib`: helpers come as fixtures)."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stille_post.tournament import TournamentConfig, run_tournament

Folder = Callable[[str, int], Path]


def play_tournament(out: Path, game: str, games: int, seed: int = 1,
                    players: tuple[str, ...] | None = None,
                    options: dict[str, Any] | None = None) -> Path:
    config = TournamentConfig(game=game, games=games, seed=seed, players=players,
                              options=options or {})
    asyncio.run(run_tournament(config, out, durable=False))
    return out


@pytest.fixture(scope="session")
def _made(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Path]:
    return {}


@pytest.fixture
def bot_folder(tmp_path_factory: pytest.TempPathFactory,
               _made: dict[tuple[str, int], Path], tmp_path: Path) -> Folder:
    """`bot_folder(game, n)`: a copy of an n-game bot tournament of `game` (its default
    seats, seeds 1..n), played once per test process."""

    def make(game: str, n: int) -> Path:
        key = (game, n)
        if key not in _made:
            base = tmp_path_factory.mktemp(f"t-{game}-{n}")
            _made[key] = play_tournament(base / f"{game}-{n}", game, n)
        copy = tmp_path / f"{game}-{n}"
        if not copy.exists():
            shutil.copytree(_made[key], copy)
        return copy
    return make


def transcripts(folder: Path) -> list[Path]:
    return sorted((folder / "games").glob("*.jsonl"))


def adherence_decisions(path: Path) -> dict[int, int]:
    """Decisions per seat, as the transcript's result line counts them."""
    result = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    return {int(s): int(a["decisions"]) for s, a in result["adherence"].items()}
