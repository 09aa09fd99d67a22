"""Tokens a seat spent: what a provider bills and what a game's outcome counts.

It lives in core because outcomes and transcripts count it as much as providers report it.

Token counts are untrusted numbers: a server may report a negative count, a float, NaN,
infinity, a string or 10**30, and a transcript on disk may hold any of those. So every
count is read here, once (`token_count`): a whole number from 0 to a bound, or nothing.

- A count a *server* reports for one call is bounded by `MAX_CALL_TOKENS`. A reply whose
  input or output count is missing or unreadable keeps its text; its usage is *unknown*:
  the adapter counts it by an estimate from the texts (`estimate`, 4 characters a token)
  and marks it (`unknown_calls`), so a cap never stops counting and a transcript says
  which figures are estimates.
- A count a *transcript* records for a seat is bounded by `MAX_RECORDED_TOKENS`; a row
  that breaks the bound, or is not a number, counts as 0 with `unknown_calls` set, so a
  folder stays readable (SQLite INTEGER holds it) and its ledger never goes negative.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The most tokens one call may report for its input or its output. The longest context
# windows on sale hold 10M tokens; a larger count is a server's error, not a bill.
MAX_CALL_TOKENS = 10_000_000
# The most tokens a transcript's usage row may hold for one seat of one game: 10**15 is
# far past any game (10**8 calls at the bound above), inside SQLite's INTEGER and exact
# as a float (2**53 is about 9.0e15).
MAX_RECORDED_TOKENS = 10**15
# The estimate of a text's tokens, where nothing better is known (no offline tokenizer
# ships for the providers): the rule of thumb for English text and JSON.
CHARS_PER_TOKEN = 4.0


def token_count(value: Any, limit: int = MAX_CALL_TOKENS) -> int | None:
    """`value` as a token count: a whole number in [0, limit] (an int, or a float with no
    fraction), else None. A numeric string is not a count. (A JSON `false` or `true` reads
    as 0 or 1, as the SDKs' own models read it.)"""
    if isinstance(value, int):
        n = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        n = int(value)
    else:
        return None
    return n if 0 <= n <= limit else None


def approx_tokens(chars: int) -> int:
    """Tokens of a text of `chars` characters, at `CHARS_PER_TOKEN`."""
    return math.ceil(chars / CHARS_PER_TOKEN) if chars > 0 else 0


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    # Calls whose usage the server did not report, or reported unreadably: the tokens
    # above count them by an estimate from their texts (see the module's docstring).
    unknown_calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        # Usage is immutable, so a zero side can hand back the other (a seat's first
        # answer, a bot's empty usage): no new object on the hot path.
        if not (other.input_tokens or other.output_tokens or other.cached_input_tokens
                or other.unknown_calls):
            return self
        if not (self.input_tokens or self.output_tokens or self.cached_input_tokens
                or self.unknown_calls):
            return other
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.unknown_calls + other.unknown_calls,
        )

    @classmethod
    def reported(cls, input_tokens: Any, output_tokens: Any, cached_input_tokens: Any = 0
                 ) -> Usage | None:
        """The usage a server reported for one call, or None when it is unknown: an
        input or output count that is missing or unreadable (see `token_count`). A
        missing cached count is 0 (older models and local servers send none); an
        unreadable one makes the whole usage unknown. Cached input is part of the input
        for some providers and not for others, so it is bounded on its own."""
        i, o = token_count(input_tokens), token_count(output_tokens)
        c = 0 if cached_input_tokens is None else token_count(cached_input_tokens)
        if i is None or o is None or c is None:
            return None
        return cls(i, o, c)

    @classmethod
    def estimate(cls, input_chars: int, output_chars: int) -> Usage:
        """One call of unknown usage, counted by the characters of its texts."""
        return cls(approx_tokens(input_chars), approx_tokens(output_chars), 0, 1)

    def to_json(self) -> dict[str, int]:
        row = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
        }
        if self.unknown_calls:  # absent when every call reported its usage, as before
            row["unknown_calls"] = self.unknown_calls
        return row

    @classmethod
    def from_json(cls, row: Mapping[str, Any] | None) -> Usage:
        """A transcript's usage row (extra keys such as `cost_usd` are ignored). Counts
        that are not whole numbers in [0, MAX_RECORDED_TOKENS] read as 0, and the row
        then counts as having an unknown call: a damaged or hostile row never makes a
        folder unreadable, and never counts negative."""
        d = row if isinstance(row, Mapping) else {}
        bad = 0
        counts: list[int] = []
        for key in ("input_tokens", "output_tokens", "cached_input_tokens"):
            raw = d.get(key, 0)
            n = token_count(raw, MAX_RECORDED_TOKENS)
            if n is None:
                bad += 1
                n = 0
            counts.append(n)
        unknown = token_count(d.get("unknown_calls", 0), MAX_RECORDED_TOKENS) or 0
        if bad:
            unknown = max(unknown, 1)
        return cls(counts[0], counts[1], counts[2], unknown)
