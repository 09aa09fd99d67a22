"""A tournament from Python: `stille_post.tournament(game, **settings)` (the public API,
stille_post/api.py). It lives here, in the tournament layer, because the package
`stille_post.tournament` is also what the name `stille_post.tournament` means once
imported: the package answers the call with this function (tournament/__init__.py).

It runs what `stille-post tournament GAME` runs: the settings model of the CLI
(tournament/settings.py), validated once; the same runner, results folder and aggregate.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stille_post.core.blocking import run_blocking
from stille_post.core.errors import UsageError
from stille_post.games import get_game

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class TournamentResult:
    """What `tournament` returns: the results folder and its aggregate."""

    folder: Path
    played: int
    skipped: int
    aborted: int
    summary: dict[str, Any]  # what `stille-post tournament --json` prints


def tournament(game: str, *, out: PathLike | None = None, online: bool = False,
               replay: PathLike | None = None, resume: bool = False,
               **settings: Any) -> TournamentResult:
    """Play a tournament of `game` into a results folder, as `stille-post tournament`.

    `settings` are the fields of the CLI's settings model (tournament/settings.py
    `TournamentSettings`): `games`, `seed`, `players` or `pool`, `seats`, `seating`,
    `roles`, `options`, `preset`, `concurrency`, `workers` (default 1 here: one
    process), `budget_usd`, ... The folder is `out` (default
    runs/tournaments/GAME-seedS); `resume` continues it.
    """
    from stille_post.players.llm_seats import llm_session
    from stille_post.tournament.caps import caps_of, check_caps
    from stille_post.tournament.results import aggregate, check_folder, load_results
    from stille_post.tournament.runner import run_tournament, validate
    from stille_post.tournament.settings import Layer, TournamentSettings, resolve

    definition = get_game(game)
    unknown = sorted(set(settings) - set(TournamentSettings.model_fields) - {"game", "out"})
    if unknown:
        raise UsageError(f"tournament has no setting {unknown[0]!r}; settings: "
                         + ", ".join(k for k in TournamentSettings.model_fields
                                     if k not in ("game", "out")))
    values: dict[str, Any] = {k: v for k, v in settings.items() if v is not None}
    for key in ("players", "pool"):
        if key in values:
            values[key] = _seat_list(values[key])
    values.setdefault("workers", 1)
    values["game"] = definition.name
    if out is not None:
        values["out"] = Path(out)
    resolved: TournamentSettings = resolve(
        [Layer(values, lambda loc, problem: f"{'.'.join(map(str, loc))}: {problem}")],
        fresh_seed=lambda: secrets.randbelow(2**31))
    folder = resolved.folder()
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"out {folder} is a file; give a results folder")
    with llm_session(online=online, record=None,
                     replay=Path(replay) if replay is not None else None,
                     keep_providers=False, models=resolved.models,
                     max_in_flight=resolved.max_in_flight,
                     seats=[*(resolved.players or ()), *(resolved.pool or ()),
                            *(resolved.roles or {}).values()]) as factory:
        config = resolved.config()
        caps = caps_of(resolved)
        check_caps(config, caps, resolved.workers)
        validate(config, factory)
        check_folder(folder, config, resume=resume)

        async def run() -> Any:
            try:
                return await run_tournament(
                    config, folder, resume=resume, concurrency=resolved.concurrency,
                    limits=resolved.limits(), llm_factory=factory, progress=False,
                    durable=resolved.fsync, workers=resolved.workers or 1, caps=caps,
                    run_settings=resolved.run_settings())
            finally:
                if factory is not None:
                    await factory.aclose()

        stats = run_blocking(run())
    summary = aggregate(load_results(folder))
    return TournamentResult(folder, stats.played, stats.skipped, stats.aborted, summary)


def _seat_list(value: Any) -> Any:
    """One comma-separated string, as `--players` takes it, or a list as it is."""
    if isinstance(value, str):
        return [p.strip() for p in value.split(",") if p.strip()]
    return value


__all__ = ["TournamentResult", "tournament"]
