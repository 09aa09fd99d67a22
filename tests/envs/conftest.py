"""The environments are tested on every kind of registered game: the four built-in
games, the toy game of tests/toy_rps (registered from outside the package, as a plugin
is, through STILLE_POST_GAMES) and the scratch game of tests/kit/scratch_game (a game
folder joining the package, written against the kit only)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from stille_post.games import ENV_VAR, reload_registry
from tests.kit.conftest import TOY, scratch_builtin

BUILT_IN = ("stille-post", "elimination", "connections", "chameleon")
PLUGINS = ("toy-rps", "highest-unique")
EVERY_GAME = (*BUILT_IN, *PLUGINS)


@pytest.fixture(autouse=True)
def plugin_games(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The toy and scratch games are registered (and known to Gymnasium) in every test."""
    old = os.environ.get(ENV_VAR)
    monkeypatch.setenv(ENV_VAR, ",".join(x for x in (old, TOY) if x))
    with scratch_builtin():
        import stille_post.envs

        stille_post.envs.register_games()
        yield
    reload_registry()
