"""The conformance suite runs over every registered game, plus the toy game of
tests/toy_rps, which is registered the way a third-party game would be."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from stille_post.games import ENV_VAR, all_games, reload_registry
from stille_post.games.kit.definition import GameDefinition

TOY = "tests.toy_rps:GAME"


def registered_games() -> list[GameDefinition]:
    old = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = ",".join(x for x in (old, TOY) if x)
    reload_registry()
    try:
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
    """One game, with the toy game registered for the test's duration only."""
    old = os.environ.get(ENV_VAR)
    monkeypatch.setenv(ENV_VAR, ",".join(x for x in (old, TOY) if x))
    reload_registry()
    yield request.param
    monkeypatch.undo()
    reload_registry()
