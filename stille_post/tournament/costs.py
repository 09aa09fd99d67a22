"""Dollars for a seat's usage.

A transcript's result line records each LLM seat's `cost_usd`, priced when the game was
played; that figure wins, so a later price change does not rewrite old tournaments.
Older transcripts without it are priced now with `stille_post.providers.pricing`.
Bots, and models the table does not know, cost 0: a tournament must never fail over
the bookkeeping of money.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from importlib import import_module
from typing import Any

from stille_post.providers.base import Usage

BOT_PREFIX = "bot:"


@cache
def _pricer() -> Callable[[str, Usage], float] | None:
    try:
        module = import_module("stille_post.providers.pricing")
    except ImportError:
        return None
    fn = getattr(module, "cost_usd", None)
    return fn if callable(fn) else None


def usage_from_json(data: Mapping[str, Any] | None) -> Usage:
    d = data or {}
    return Usage(int(d.get("input_tokens", 0)), int(d.get("output_tokens", 0)),
                 int(d.get("cached_input_tokens", 0)))


def model_of(label: str) -> str | None:
    """The API model a seat label names ("openai:gpt-5-mini" -> "gpt-5-mini")."""
    if label.startswith(BOT_PREFIX) or ":" not in label:
        return None
    model = label.partition(":")[2]
    return model.partition("@")[0]  # openai-compatible:MODEL@URL


def recorded_dollars(label: str, usage_row: Mapping[str, Any] | None) -> float:
    """A seat's dollars from its transcript usage row (see the module docstring)."""
    row = usage_row or {}
    if "cost_usd" in row:
        try:
            return float(row["cost_usd"])
        except (TypeError, ValueError):
            return 0.0
    return seat_dollars(label, usage_from_json(row))


def seat_dollars(label: str, usage: Usage) -> float:
    model = model_of(label)
    pricer = _pricer()
    if model is None or pricer is None or (usage.input_tokens + usage.output_tokens) == 0:
        return 0.0
    try:
        return float(pricer(model, usage))
    except Exception:  # an unpriced model is worth 0, not a crashed tournament
        return 0.0
