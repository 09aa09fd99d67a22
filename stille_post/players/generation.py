"""Per-call generation settings, with one stated precedence:

    provider default  <  seat (models.toml, CLI)  <  game phase

A phase can ask for a short answer (a one-word clue, a vote) without knowing which model
answers; a seat can set its temperature or reasoning effort without knowing the game.
`None` means "not set here": the lower level's value stands.
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
        )


def effective(*levels: GenerationConfig | None) -> GenerationConfig:
    """Lowest precedence first: effective(provider, seat, phase)."""
    out = GenerationConfig()
    for level in levels:
        if level is not None:
            out = level.over(out)
    return out
