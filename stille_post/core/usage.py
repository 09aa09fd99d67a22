"""Tokens a seat spent: what a provider bills and what a game's outcome counts.

It lives in core because outcomes and transcripts count it as much as providers report it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        # Usage is immutable, so a zero side can hand back the other (a seat's first
        # answer, a bot's empty usage): no new object on the hot path.
        if not (other.input_tokens or other.output_tokens or other.cached_input_tokens):
            return self
        if not (self.input_tokens or self.output_tokens or self.cached_input_tokens):
            return other
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
        )

    def to_json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
        }

    @classmethod
    def from_json(cls, row: Mapping[str, Any] | None) -> Usage:
        """A transcript's usage row (extra keys such as `cost_usd` are ignored)."""
        d = row or {}
        return cls(int(d.get("input_tokens", 0)), int(d.get("output_tokens", 0)),
                   int(d.get("cached_input_tokens", 0)))
