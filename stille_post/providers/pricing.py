"""Usage -> US dollars, from the shipped providers/data/prices.toml (USD per 1M tokens).

`cost_usd(model, usage)` is what the game summary and the tournament call. The model is
a roster id or an API model name (aliases and dated OpenAI names such as
"gpt-5-mini-2025-08-07" resolve to the roster entry); anything unknown costs the table's
default (0: a local model is free).
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from stille_post.core.errors import ConfigError
from stille_post.providers.base import Usage
from stille_post.providers.models import active_models
from stille_post.providers.price import Price

_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")  # OpenAI's dated snapshots


@dataclass(frozen=True)
class PriceTable:
    models: dict[str, Price]
    default: Price

    def price(self, model: str) -> Price:
        for name in (model, _DATED.sub("", model)):
            if name in self.models:
                return self.models[name]
        return self.default

    def cost_usd(self, model: str, usage: Usage) -> float:
        return self.price(model).cost(usage)


def _price(raw: dict[str, Any], where: str) -> Price:
    try:
        price = Price(float(raw["input"]), float(raw["cached_input"]), float(raw["output"]),
                      bool(raw.get("cached_included", True)))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(
            f"{where}: needs numeric input, cached_input and output ({exc})") from None
    if not all(math.isfinite(v) and v >= 0
               for v in (price.input, price.cached_input, price.output)):
        raise ConfigError(f"{where}: prices must be finite numbers, 0 or more")
    return price


def load_prices(path: Path | str | None = None) -> PriceTable:
    # The shipped table is package data (importlib.resources), so a wheel has it too.
    file: Any = Path(path) if path is not None else \
        resources.files("stille_post.providers").joinpath("data", "prices.toml")
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read the price table {file}: {exc}") from None
    models: dict[str, Price] = {}
    for name, raw in (data.get("models") or {}).items():
        price = _price(raw, f"{file} [models.{name!r}]")
        for key in (name, *raw.get("aliases", [])):
            models[key] = price
    return PriceTable(models, _price(data.get("default") or {"input": 0, "cached_input": 0,
                                                               "output": 0}, f"{file} [default]"))


@lru_cache(maxsize=1)
def default_prices() -> PriceTable:
    return load_prices()


def cost_usd(model: str, usage: Usage) -> float:
    """Dollars for one model's usage, with the shipped price table. A name that is an
    alias of the active model registry (providers/models.py) is priced by the alias's
    `price` when it has one, else as its own name or, failing that, its API model."""
    table = default_prices()
    alias = active_models().get(model)
    if alias is not None:
        if alias.price is not None:
            return alias.price.cost(usage)
        if table.price(model) is table.default:
            model = alias.model
    return table.cost_usd(model, usage)


def model_of(label: str) -> str | None:
    """The API model a seat label names ("openai:gpt-5-mini" -> "gpt-5-mini",
    "openai-compatible:MODEL@URL" -> "MODEL", "inspect:openai/gpt-5-mini" -> "gpt-5-mini",
    "openai:gpt-5 (schema)" -> "gpt-5"); None for bots. An agent seat
    ("python:module:attr+openai:gpt-5-mini") is priced by its model, after the `+`."""
    if "+" in label:
        label = label.rpartition("+")[2]
    label = label.partition(" (")[0]  # a structured seat's mark ("... (schema)")
    kind, sep, model = label.partition(":")
    if not sep or kind == "bot" or not model:
        return None
    if kind == "inspect":  # "inspect:openai/gpt-5-mini": priced as gpt-5-mini
        return model.rpartition("/")[2]
    return model.partition("@")[0]


def seat_cost_usd(label: str, usage: Usage) -> float | None:
    """Dollars for one seat, or None when the seat is no priced LLM call (a bot, or no
    tokens spent)."""
    model = model_of(label)
    if model is None or not (usage.input_tokens or usage.output_tokens):
        return None
    return cost_usd(model, usage)


# The most dollars one seat's usage row may record for one game: far past any real game,
# and what keeps a hand-edited or hostile `cost_usd` from ruling a folder's ledger.
MAX_RECORDED_USD = 1e9


def recorded_cost_usd(label: str, row: Mapping[str, Any] | None) -> float:
    """A seat's dollars from its transcript usage row. The `cost_usd` priced at play time
    wins, so a later price change does not rewrite old results; older rows are priced now.
    A `cost_usd` that is not a number from 0 to `MAX_RECORDED_USD` (negative, NaN,
    infinite, a string) is not trusted: the row's tokens are priced now instead, so a
    ledger read from transcripts never goes down and never becomes infinite."""
    if isinstance(row, Mapping) and "cost_usd" in row:
        cost = row["cost_usd"]
        if isinstance(cost, int | float) and not isinstance(cost, bool) \
                and 0 <= cost <= MAX_RECORDED_USD:  # (NaN fails both comparisons)
            return float(cost)
    usage = Usage.from_json(row if isinstance(row, Mapping) else None)
    return seat_cost_usd(label, usage) or 0.0
