"""Spending caps, declared once.

`CapFields` is the one definition of a cap: the tournament file and the model registry
inherit it (pydantic models), and the CLI's `--budget-usd` / `--max-tokens` /
`--hard-cap` flags are generated from the same fields (tournament/budget.py), so a new
cap is one field here, not three edits.

- In a tournament file or on the command line, a cap bounds the whole results folder:
  every game it holds, across runs and resumes.
- On a `[models.ALIAS]` entry of `models.toml`, it bounds what the folder spends on that
  alias (its seats in every game).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CapFields(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    budget_usd: float | None = Field(
        default=None, gt=0,
        description="stop starting games when the next one would cross this many US "
                    "dollars (priced with prices.toml and models.toml)")
    max_tokens: int | None = Field(
        default=None, gt=0,
        description="stop starting games when the next one would cross this many tokens "
                    "(input + output)")


class TournamentCaps(CapFields):
    hard_cap: bool | None = Field(
        default=None,
        description="cut running games at the cap (recorded as aborted, reason budget) "
                    "instead of letting them finish")


__all__ = ["CapFields", "TournamentCaps"]
