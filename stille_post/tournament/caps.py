"""Caps on what a results folder spends: the folder's (tournament settings: `--budget-usd`,
`--max-tokens`, `--hard-cap`, also in the tournament file and kept in tournament.json's
run section, so `--resume` with a higher cap continues) and each alias's (`budget_usd`,
`max_tokens` on a `[models.ALIAS]` entry of models.toml). tournament/budget.py keeps a
run within them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stille_post.core.errors import ConfigError
from stille_post.providers.pricing import default_prices, model_of
from stille_post.tournament.config import TournamentConfig

if TYPE_CHECKING:
    from stille_post.tournament.settings import TournamentSettings


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


@dataclass(frozen=True)
class ModelCap:
    budget_usd: float | None = None
    max_tokens: int | None = None


@dataclass(frozen=True)
class Caps:
    budget_usd: float | None = None
    max_tokens: int | None = None
    hard: bool = False
    models: Mapping[str, ModelCap] = field(default_factory=dict)  # alias name -> caps

    @property
    def active(self) -> bool:
        return bool(self.budget_usd or self.max_tokens or self.models)

    def to_json(self) -> dict[str, Any]:
        return {"budget_usd": self.budget_usd, "max_tokens": self.max_tokens,
                "hard_cap": self.hard,
                "models": {k: {"budget_usd": v.budget_usd, "max_tokens": v.max_tokens}
                           for k, v in sorted(self.models.items())}}

    def run_settings(self) -> dict[str, Any]:
        """What `tournament.json` keeps, so `--resume --out FOLDER` keeps the caps."""
        return {k: v for k, v in (("budget_usd", self.budget_usd),
                                  ("max_tokens", self.max_tokens),
                                  ("hard_cap", self.hard or None)) if v is not None}


def caps_of(settings: TournamentSettings) -> Caps:
    """The settings' caps (already validated there) and the active model registry's
    per-alias caps."""
    from stille_post.providers.models import active_models

    models = {a.name: ModelCap(a.budget_usd, a.max_tokens)
              for a in active_models().aliases.values()
              if a.budget_usd is not None or a.max_tokens is not None}
    return Caps(settings.budget_usd, settings.max_tokens, settings.hard_cap, models)


def alias_of_label(label: str) -> str | None:
    """The registry alias a seat label spends under ("model:X" -> X; a plain
    `PROVIDER:NAME` seat whose NAME is an alias of that provider -> NAME; an agent seat
    "python:module:attr+MODEL" spends under its MODEL's)."""
    from stille_post.providers.models import active_models

    label = label.rpartition("+")[2]
    kind, sep, rest = label.partition(":")
    if not sep:
        return None
    if kind == "model":
        return rest
    alias = active_models().for_seat(kind, rest.partition("@")[0])
    return alias.name if alias is not None else None


def has_price(label: str) -> bool:
    """Whether a seat label is priced by an alias's `price` or a prices.toml entry (a
    model priced only by the table's [default] has no price of its own)."""
    from stille_post.providers.models import active_models

    model = model_of(label)
    if model is None:
        return True  # a bot spends nothing
    table = default_prices()
    alias = active_models().get(model)
    if alias is not None and alias.price is not None:
        return True
    if table.price(model) is not table.default:
        return True
    return alias is not None and table.price(alias.model) is not table.default


def seat_labels(config: TournamentConfig) -> list[str]:
    """Every seat spec the tournament can seat, as player labels (bots included)."""
    from stille_post.games import get_game
    from stille_post.players.specs import parse_seat_spec

    bots = get_game(config.game).bot_names
    specs = [*(config.players or ()), *(config.pool or ()), *config.roles.values()]
    labels = []
    for text in specs:
        if text.strip() in ("bot", "bot:"):
            continue
        labels.append(parse_seat_spec(text, bots).label)
    return sorted(set(labels))


def check_caps(config: TournamentConfig, caps: Caps, workers: int | None) -> None:
    """Refuse caps no run can keep: a dollar cap over a model without a price, or more
    than one process (each would keep its own tally)."""
    if not caps.active:
        return
    if workers is not None and workers > 1:
        raise ConfigError(f"a budget needs --workers 1 (got {workers}): each process would "
                          "count only its own spend")
    labels = seat_labels(config)
    dollar_caps = caps.budget_usd is not None or any(
        c.budget_usd is not None for c in caps.models.values())
    if dollar_caps:
        for label in labels:
            if not has_price(label):
                raise ConfigError(
                    f"a dollar cap needs a price for every model, and {label} has none: "
                    "add `price = { input = ..., cached_input = ..., output = ... }` (USD "
                    "per 1M tokens) to its entry in models.toml")


__all__ = ["Caps", "ModelCap", "alias_of_label", "caps_of", "check_caps", "has_price",
           "seat_labels"]
