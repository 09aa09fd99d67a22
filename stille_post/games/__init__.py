"""One folder per game. `get_game(name)` returns a game's definition (see base.py)."""

from __future__ import annotations

from importlib import import_module

from stille_post.core.errors import UsageError
from stille_post.games.base import GameDefinition

# game name -> module that exposes GAME. Later games add one line here.
GAME_MODULES: dict[str, str] = {
    "stille-post": "stille_post.games.stille_post",
    "chameleon": "stille_post.games.chameleon",
}


def get_game(name: str) -> GameDefinition:
    module = GAME_MODULES.get(name)
    if module is None:
        raise UsageError(f"unknown game {name!r}; known games: {', '.join(sorted(GAME_MODULES))}")
    game: GameDefinition = import_module(module).GAME
    return game


__all__ = ["GAME_MODULES", "GameDefinition", "get_game"]
