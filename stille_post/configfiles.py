"""The tournament file (`stille-post tournament --config FILE.toml`), validated at load.

    game = "chameleon"            # or preset = "..." with the game
    games = 40
    seed = 1
    players = ["heuristic", "heuristic", "heuristic", "heuristic"]   # or pool + seats
    concurrency = 8
    out = "runs/chameleon-40"     # relative paths are relative to this file's folder
    models = "models.toml"        # a model registry (providers/models.py), likewise
    budget_usd = 20.0             # caps (tournament/budget.py): the folder's spend in dollars,
    max_tokens = 5_000_000        # in tokens, and whether running games are cut at the cap
    hard_cap = false

    [roles]                       # role -> seat spec, for every seat of that role
    chameleon = "copycat"

    [options]                     # the game's own options; the game validates the values
    words = 16

    [rate_limits]                 # provider -> "RPM[:TPM]"
    openai = "500:200000"

    [max_in_flight]               # provider or model alias -> calls in flight at once
    openai = 32                   # (or `max_in_flight = 32` for every provider; no cap
                                  # by default: see providers/inflight.py)

Every error is one `ConfigError` line, `FILE:LINE: KEY: PROBLEM`, so the CLI exits 2
before any game starts. What this file does not check (seat specs against a game's
bots, option values) the game checks when the tournament is validated, still before any
game is played. The command line overrides the file; tournament/settings.py does that merge.
"""

from __future__ import annotations

import os
from pathlib import Path

from stille_post.core.tomlfile import read_toml, validate
from stille_post.tournament.settings import TournamentSettings


def load_tournament_file(path: Path) -> TournamentSettings:
    """The file, validated by the settings model; `out` and `models` resolved against
    the file's folder. Only the keys the file gives are set (`model_fields_set`)."""
    data, text = read_toml(path, "tournament file")
    for key in ("out", "models"):
        if isinstance(data.get(key), str):
            data[key] = _beside(path, Path(data[key]))
    return validate(TournamentSettings, data, text, path)


def _beside(file: Path, relative: Path) -> Path:
    # normpath, not resolve(): "examples/../runs/x" reads better as "runs/x", and a
    # symlinked folder stays as the user wrote it.
    return Path(os.path.normpath(file.parent / relative.expanduser()))


__all__ = ["load_tournament_file"]
