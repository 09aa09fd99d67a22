"""Report values for people: headings in words and cells without Python reprs.

A game's metrics are keyed by machine names (`non_setter_win_rate_ci95`) and may hold
intervals (`[0.0, 0.16]`) or counts by kind (`{"IdentifiedWin": 0, ...}`). The JSON and
the CSV keep them as they are; the HTML page and the terminal show them through these
two functions. Nothing here knows a game: the rules are about the shape of a name or a
value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# Name parts that read better as a symbol or a phrase.
_PARTS = {"ci95": "(95% CI)", "ci": "(CI)", "mu": "μ", "sigma": "σ", "pct": "%",
          "usd": "($)"}
_MACHINE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")


def heading(name: Any) -> str:
    """`non_setter_win_rate_ci95` -> `non-setter win rate (95% CI)`, `final2` ->
    `final 2`. A name that is already words (it has a space or punctuation) is kept."""
    text = str(name)
    if not _MACHINE_NAME.fullmatch(text) or text.isupper():
        return text
    words = []
    for part in text.split("_"):
        part = _PARTS.get(part.lower(), part)
        words.append(re.sub(r"(?<=[a-z])(?=[0-9])", " ", part))
    return re.sub(r"\bnon ", "non-", " ".join(words))


def cell(value: Any) -> str:
    """One table cell: 3 decimals for a fraction, an interval as `low–high`, counts by
    kind as `kind: n · kind: n`, `–` for nothing."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list | tuple):
        if len(value) == 2 and all(isinstance(v, int | float) and not isinstance(v, bool)
                                   for v in value):
            return f"{cell(value[0])}–{cell(value[1])}"
        return ", ".join(cell(v) for v in value) or "–"
    if isinstance(value, Mapping):
        return " · ".join(f"{heading(k)}: {cell(v)}" for k, v in value.items()) or "–"
    return str(value)


__all__ = ["cell", "heading"]
