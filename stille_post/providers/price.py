"""One model's price per 1M tokens: a leaf that both the price table (pricing.py) and the
model registry (models.py, an alias's own `price`) build on, so neither imports the other's
caller."""

from __future__ import annotations

from dataclasses import dataclass

from stille_post.providers.base import Usage

_PER = 1_000_000


@dataclass(frozen=True)
class Price:
    input: float
    cached_input: float
    output: float
    # True when the API counts cached tokens inside input_tokens (OpenAI, Google).
    cached_included: bool = True

    def cost(self, usage: Usage) -> float:
        cached = usage.cached_input_tokens
        uncached = usage.input_tokens - cached if self.cached_included else usage.input_tokens
        return (max(0, uncached) * self.input + cached * self.cached_input
                + usage.output_tokens * self.output) / _PER


__all__ = ["Price"]
