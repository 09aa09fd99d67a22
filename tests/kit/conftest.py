"""The conformance suite runs over every registered game, plus the toy game of
tests/toy_rps, which is registered the way a third-party game would be, and the scratch
built-in game of tests/kit/scratch_game, whose folder joins the `stille_post.games`
package the way a folder inside it does (test_scratch_game.py copies it there for real)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import stille_post.games
from stille_post.games import ENV_VAR, all_games, reload_registry
from stille_post.games.kit.definition import GameDefinition

TOY = "tests.toy_rps:GAME"
SCRATCH_GAMES = Path(__file__).resolve().parent / "scratch_game"  # holds highest_unique/


@contextmanager
def scratch_builtin(folder: Path = SCRATCH_GAMES) -> Iterator[None]:
    """The game folders in `folder` are found as built-in games while this lasts."""
    old = list(stille_post.games.__path__)
    stille_post.games.__path__[:] = [*old, str(folder)]
    reload_registry()
    try:
        yield
    finally:
        stille_post.games.__path__[:] = old
        reload_registry()


def registered_games() -> list[GameDefinition]:
    old = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = ",".join(x for x in (old, TOY) if x)
    try:
        with scratch_builtin():
            return list(all_games().values())
    finally:
        if old is None:
            del os.environ[ENV_VAR]
        else:
            os.environ[ENV_VAR] = old
        reload_registry()


GAMES = registered_games()


@pytest.fixture(params=GAMES, ids=[g.name for g in GAMES])
def game(request: pytest.FixtureRequest,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[GameDefinition]:
    """One game, with the toy and scratch games registered for the test's duration only."""
    old = os.environ.get(ENV_VAR)
    monkeypatch.setenv(ENV_VAR, ",".join(x for x in (old, TOY) if x))
    with scratch_builtin():
        yield request.param
    monkeypatch.undo()
    reload_registry()
