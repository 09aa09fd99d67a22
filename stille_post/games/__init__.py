"""The game registry: `get_game(name)` and `all_games()`.

Games are found three ways, in this order:
1. the game folders shipped in this package (`stille_post/games/<folder>/`, each
   exposing `GAME`): adding a game here is adding a folder;
2. the `stille_post.games` entry-point group, the way pytest finds plugins: a
   third-party package declares `[project.entry-points."stille_post.games"]
   mygame = "mypkg.mygame:GAME"`;
3. `STILLE_POST_GAMES=module:attr[,module:attr]` in the environment, for a game that
   is not installed (the toy game of the test suite, a game under development).

A plugin that fails to load is reported on stderr and skipped; it never stops the
built-in games from working.
"""

from __future__ import annotations

import os
import pkgutil
import sys
import types
from functools import lru_cache
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

from stille_post.core.errors import UsageError
from stille_post.games.kit.definition import GameDefinition

ENTRY_POINT_GROUP = "stille_post.games"
DEFAULT_GAME = "stille-post"  # the flagship: what `stille-post play` plays
ENV_VAR = "STILLE_POST_GAMES"
_NOT_GAMES = {"kit"}


def _builtin() -> list[GameDefinition]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if not info.ispkg or info.name in _NOT_GAMES or info.name.startswith("_"):
            continue
        game = getattr(import_module(f"{__name__}.{info.name}"), "GAME", None)
        if isinstance(game, GameDefinition):
            found.append(game)
    return found


def _load_ref(ref: str) -> GameDefinition:
    module, _, attr = ref.strip().partition(":")
    obj = getattr(import_module(module), attr or "GAME")
    if not isinstance(obj, GameDefinition):
        raise TypeError(f"{ref} is not a GameDefinition")
    return obj


def _plugins() -> list[GameDefinition]:
    found = []
    refs = [(ep.name, ep.value) for ep in entry_points(group=ENTRY_POINT_GROUP)]
    refs += [(r, r) for r in os.environ.get(ENV_VAR, "").split(",") if r.strip()]
    for name, ref in refs:
        try:
            found.append(_load_ref(ref))
        except Exception as exc:  # a broken plugin must not break the built-in games
            print(f"warning: game plugin {name} ({ref}) did not load: "
                  f"{type(exc).__name__}: {exc}", file=sys.stderr)
    return found


@lru_cache(maxsize=1)
def _registry() -> dict[str, GameDefinition]:
    games: dict[str, GameDefinition] = {}
    for game in (*_builtin(), *_plugins()):
        games.setdefault(game.name, game)  # a built-in name cannot be taken over
    return games


def all_games() -> dict[str, GameDefinition]:
    return dict(_registry())


def get_game(name: str) -> GameDefinition:
    game = _registry().get(name)
    if game is None:
        raise UsageError(f"unknown game {name!r}; known games: {', '.join(_registry())}")
    return game


def reload_registry() -> None:
    """Forget the registry (tests that set STILLE_POST_GAMES)."""
    _registry.cache_clear()


def describe_all() -> dict[str, dict[str, Any]]:
    """Every registered game as data, by name (`stille-post games --json`'s entries)."""
    return {name: game.describe() for name, game in _registry().items()}


class _CallablePackage(types.ModuleType):
    """The public API's `stille_post.games()` (stille_post/api.py) has this package's
    name, and the package is what `stille_post.games` is once anything imports it: so
    the package answers the call."""

    def __call__(self) -> dict[str, dict[str, Any]]:
        return describe_all()


sys.modules[__name__].__class__ = _CallablePackage

__all__ = ["DEFAULT_GAME", "ENTRY_POINT_GROUP", "ENV_VAR", "GameDefinition", "all_games",
           "describe_all", "get_game", "reload_registry"]
