"""The tournament file (`stille-post tournament --config FILE.toml`), validated at load.

    game = "chameleon"            # or preset = "..." with the game
    games = 40
    seed = 1
    players = ["heuristic", "heuristic", "heuristic", "heuristic"]   # or pool + seats
    concurrency = 8
    out = "runs/chameleon-40"     # relative paths are relative to this file's folder
    models = "models.toml"        # a model registry (providers/models.py), likewise
    budget_usd = 20.0             # caps (providers/caps.py): the folder's spend in dollars,
    max_tokens = 5_000_000        # in tokens, and whether running games are cut at the cap
    hard_cap = false

    [roles]                       # role -> seat spec, for every seat of that role
    chameleon = "copycat"

    [options]                     # the game's own options; the game validates the values
    words = 16

    [rate_limits]                 # provider -> "RPM[:TPM]"
    openai = "500:200000"

Every error is one `ConfigError` line, `FILE:LINE: KEY: PROBLEM`, so the CLI exits 2
before any game starts. What this file does not check (seat specs against a game's
bots, option values) the game checks when the tournament is validated, still before any
game is played. The command line overrides the file; the CLI does that merge.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from stille_post.core.errors import ConfigError
from stille_post.core.tomlfile import key_line, known_model, read_toml, validate
from stille_post.players.specs import LLM_KINDS
from stille_post.providers.caps import TournamentCaps

# Paths are written as TOML strings; everything else must have its TOML type exactly.
PathField = Annotated[Path, Field(strict=False)]
SeatList = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


@known_model
class TournamentFile(TournamentCaps):  # budget_usd, max_tokens, hard_cap
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    game: str | None = None
    preset: str | None = None
    games: int | None = Field(default=None, ge=1)
    seed: int | None = None
    players: SeatList | None = None
    pool: SeatList | None = None
    seating: Literal["balanced", "sampled"] | None = None
    seats: int | None = Field(default=None, ge=2)
    roles: dict[str, str] | None = None
    options: dict[str, Any] | None = None
    concurrency: int | None = Field(default=None, ge=1)
    rate_limits: dict[str, str] | None = None
    out: PathField | None = None
    models: PathField | None = None


def load_tournament_file(path: Path) -> TournamentFile:
    """The file, validated; `out` and `models` resolved against the file's folder."""
    data, text = read_toml(path, "tournament file")
    parsed = validate(TournamentFile, data, text, path)

    def fail(loc: tuple[str, ...], problem: str) -> ConfigError:
        line = key_line(text, loc)
        return ConfigError(f"{path}:{line}: {'.'.join(loc)}: {problem}" if line
                           else f"{path}: {'.'.join(loc)}: {problem}")

    _check_seats(parsed, fail)
    _check_rate_limits(parsed, fail)
    if parsed.game is not None:
        _check_game(parsed, parsed.game, fail)
    update: dict[str, Path] = {}
    if parsed.out is not None:
        update["out"] = _beside(path, parsed.out)
    if parsed.models is not None:
        update["models"] = _beside(path, parsed.models)
        if not update["models"].is_file():
            raise fail(("models",), f"no models file at {update['models']}")
    return parsed.model_copy(update=update)


def _beside(file: Path, relative: Path) -> Path:
    # normpath, not resolve(): "examples/../runs/x" reads better as "runs/x", and a
    # symlinked folder stays as the user wrote it.
    return Path(os.path.normpath(file.parent / relative.expanduser()))


def _check_seats(f: TournamentFile, fail: Any) -> None:
    if f.players and f.pool:
        raise fail(("pool",), "give either players (fixed seats) or pool, not both")
    for key in ("players", "pool"):
        for spec in getattr(f, key) or ():
            if "," in spec:
                raise fail((key,), f"{spec!r}: one seat per list item, no commas")
    if f.pool and f.seats is not None and f.seats > len(f.pool):
        raise fail(("seats",), f"{f.seats} seats per game but the pool has {len(f.pool)}")


def _check_rate_limits(f: TournamentFile, fail: Any) -> None:
    from stille_post.tournament.limits import ProviderLimit

    for kind, value in (f.rate_limits or {}).items():
        if kind not in LLM_KINDS:
            raise fail(("rate_limits", kind),
                       f"unknown provider; providers: {', '.join(LLM_KINDS)}")
        try:
            ProviderLimit.parse(f"{kind}={value}")
        except ConfigError:
            raise fail(("rate_limits", kind),
                       f"{value!r}: write \"RPM[:TPM]\", e.g. \"500:200000\"") from None


def _check_game(f: TournamentFile, name: str, fail: Any) -> None:
    """Names the file can check without playing: the game, its preset, roles, options."""
    from stille_post.games import all_games

    games = all_games()
    definition = games.get(name)
    if definition is None:
        raise fail(("game",), f"unknown game {name!r}; games: {', '.join(sorted(games))}")
    if f.preset is not None and f.preset not in definition.presets:
        known = ", ".join(definition.presets) or "none"
        raise fail(("preset",), f"{name} has no preset {f.preset!r}; presets: {known}")
    roles = [r.name for r in definition.roles]
    for role in f.roles or {}:
        if role not in roles:
            raise fail(("roles", role), f"{name} has no role {role!r}; roles: {', '.join(roles)}")
    fields = definition.config.model_fields
    for option in f.options or {}:
        if option not in fields:
            raise fail(("options", option),
                       f"{name} has no option {option!r}; options: {', '.join(fields)}")


__all__ = ["TournamentFile", "load_tournament_file"]
