"""Per-call generation settings, with one stated precedence:

    provider default  <  seat (models.toml, CLI)  <  game phase

A phase can ask for a short answer (a one-word clue, a vote) without knowing which model
answers; a seat can set its temperature or reasoning effort without knowing the game.
`None` means "not set here": the lower level's value stands.

`structured` is the seat's constrained decoding ("off" | "schema" | "legal", from its
alias or the run's `--structured`): with "schema" each request carries the decision's
legal moves for the API to decode under, and "legal" also narrows free vocabularies
(players/llm.py). A phase may set "off" for a decision of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class GenerationConfig:
    max_output_tokens: int | None = None
    temperature: float | None = None
    reasoning_effort: str | None = None  # "low" | "medium" | "high", where the API has it
    extra: Mapping[str, Any] = field(default_factory=dict)  # passed to the API as is
    structured: str | None = None  # "off" | "schema" | "legal"

    def over(self, lower: GenerationConfig | None) -> GenerationConfig:
        """These settings laid over `lower`: ours win where set."""
        if lower is None:
            return self
        return replace(
            lower,
            max_output_tokens=self.max_output_tokens if self.max_output_tokens is not None
            else lower.max_output_tokens,
            temperature=self.temperature if self.temperature is not None
            else lower.temperature,
            reasoning_effort=self.reasoning_effort if self.reasoning_effort is not None
            else lower.reasoning_effort,
            extra={**lower.extra, **self.extra},
            structured=self.structured if self.structured is not None
            else lower.structured,
        )


def effective(*levels: GenerationConfig | None) -> GenerationConfig:
    """Lowest precedence first: effective(provider, seat, phase)."""
    out = GenerationConfig()
    for level in levels:
        if level is not None:
            out = level.over(out)
    return out
