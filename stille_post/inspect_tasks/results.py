"""Our own transcripts of an Inspect run, in a results folder beside Inspect's log, so
that `stille-post view`, `report` and `leaderboard` read Inspect runs as they read a
tournament:

    logs/2026-..._<task>_<id>.eval           Inspect's log
    logs/2026-..._<task>_<id>.<package>/     ours: tournament.json, index.sqlite,
                                             games/<sample>-e<epoch>.jsonl

The folder is an imported collection (`source = "inspect"`, like the Elimination Game's
imported logs): its games are the transcripts it holds, not a seed plan. A transcript is
played into `<id>.jsonl.part` and renamed when whole; an id already taken (a retried
sample) gets a suffix, so no recorded game is ever overwritten.

Samples of one task run concurrently on one event loop; the folder's bookkeeping
(`adopt`) has no await inside, so two samples never interleave in it.
"""

from __future__ import annotations

from pathlib import Path

from stille_post.tournament.config import CONFIG_FILE, TournamentConfig
from stille_post.tournament.results import GAMES_DIR, ensure_index

SOURCE = "inspect"
SUFFIX = "." + __name__.partition(".")[0]  # the package's name


def folder_beside(log_location: str | None, fallback: Path) -> Path:
    """`<log without .eval/.json>` + SUFFIX for a local log; `fallback` for a log
    that is not a local file (an S3 log dir) or when no log is being written."""
    if not log_location or "://" in log_location:
        return fallback
    log = Path(log_location)
    return log.with_name(log.name.removesuffix(log.suffix) + SUFFIX)


def open_folder(folder: Path, game: str) -> None:
    """Create the folder (or check an existing one holds this game's Inspect games)."""
    if (folder / CONFIG_FILE).exists():
        config = TournamentConfig.load(folder)
        if config.source != SOURCE or config.game != game:
            from stille_post.core.errors import ConfigError

            raise ConfigError(f"{folder} holds other games ({config.game}, "
                              f"{config.source or 'a tournament'}); give another out=")
        return
    (folder / GAMES_DIR).mkdir(parents=True, exist_ok=True)
    TournamentConfig(game=game, games=0, seed=0, source=SOURCE, imported=()).save(folder)


def new_transcript(folder: Path, game_id: str) -> tuple[str, Path]:
    """A free id (the sample's, or with a suffix) and its `.part` path."""
    games = folder / GAMES_DIR
    candidate, n = game_id, 1
    while (games / f"{candidate}.jsonl").exists() or (games / f"{candidate}.jsonl.part").exists():
        n += 1
        candidate = f"{game_id}-{n}"
    part = games / f"{candidate}.jsonl.part"
    part.touch(exist_ok=False)  # claimed before the game's first await
    return candidate, part


def adopt(folder: Path, game_id: str, part: Path) -> Path:
    """The finished transcript under its name, listed in the config and indexed."""
    final = part.with_name(f"{game_id}.jsonl")
    part.replace(final)
    config = TournamentConfig.load(folder)
    config = config.with_imported({*(config.imported or ()), game_id})
    config.save(folder)
    ensure_index(folder, config).close()  # adds the row of the new transcript
    return final
