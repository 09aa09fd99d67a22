"""Where environment episodes are recorded: a results folder that `report`, `view` and
`merge` read like a tournament's (the layout of imported games, importers/logs.py):

    FOLDER/tournament.json     the game, the source `env`, the episodes' ids
    FOLDER/index.sqlite        one row per finished episode
    FOLDER/games/<id>.jsonl    one transcript per episode, id `<game>-seed-<S>[-k]`

An episode writes `<id>.jsonl.<pid>-<n>.part` while it runs and renames it when the game
is over; an episode abandoned midway removes its part, so only finished games are ever
in the folder, and none is ever overwritten. One folder holds one game.
"""

from __future__ import annotations

import os
from pathlib import Path

from stille_post.core.errors import ConfigError
from stille_post.tournament.config import CONFIG_FILE, TournamentConfig, imported_index
from stille_post.tournament.index import GameIndex
from stille_post.tournament.results import GAMES_DIR, ensure_index, row_from_transcript

SOURCE = "env"


def check_folder(folder: Path, game: str) -> None:
    """Refuse, before any episode, a folder that cannot hold this game's episodes."""
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"transcripts {folder}: not a folder")
    if (folder / CONFIG_FILE).exists():
        config = TournamentConfig.load(folder)
        if config.source != SOURCE or config.game != game:
            what = f"imported {config.source} games" if config.source else "a tournament"
            raise ConfigError(f"transcripts {folder} holds {what} of {config.game}, not "
                              f"{game} environment episodes; choose another folder")


def open_folder(folder: Path, game: str) -> None:
    check_folder(folder, game)
    (folder / GAMES_DIR).mkdir(parents=True, exist_ok=True)
    if not (folder / CONFIG_FILE).exists():
        config = TournamentConfig(game=game, games=0, seed=0, source=SOURCE, imported=())
        config.save(folder)
        ensure_index(folder, config).close()


def new_path(folder: Path, game: str, seed: int) -> Path:
    """The transcript path of a new episode (never one that exists)."""
    games = folder / GAMES_DIR
    path = games / f"{game}-seed-{seed}.jsonl"
    k = 2
    while path.exists():
        path = games / f"{game}-seed-{seed}-{k}.jsonl"
        k += 1
    return path


def record(folder: Path, path: Path, seed: int) -> None:
    """Add a finished episode's transcript to the folder's list and index."""
    game_id = path.name.removesuffix(".jsonl")
    config = TournamentConfig.load(folder)
    config.with_imported({*(config.imported or ()), game_id}).save(folder)
    row = row_from_transcript(folder, {game_id: (imported_index(game_id), seed)}, path)
    if row is not None:
        with GameIndex.open(folder) as index:
            if game_id not in index.ids():
                index.add_many([row])


def part_path(path: Path, n: int) -> Path:
    return path.with_name(f"{path.name}.{os.getpid()}-{n}.part")


__all__ = ["SOURCE", "check_folder", "new_path", "open_folder", "part_path", "record"]
