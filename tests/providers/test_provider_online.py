"""Live calls against the real APIs: `pytest --online` with the provider's key set.
Skipped otherwise (the root conftest skips `online` tests without --online)."""

from __future__ import annotations

import asyncio
import os

import pytest

from stille_post.providers import create_provider
from tests.emulators import scenarios as S

LIVE = {
    "openai": ("gpt-5-mini", ("OPENAI_API_KEY",)),
    "anthropic": ("claude-haiku-4-5-20251001", ("ANTHROPIC_API_KEY",)),
    "google": ("gemini-2.5-flash", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
}


@pytest.mark.online
@pytest.mark.parametrize("kind", sorted(LIVE))
def test_live_tool_call_turn(kind: str) -> None:
    model, keys = LIVE[kind]
    if not any(os.environ.get(k) for k in keys):
        pytest.skip(f"{' or '.join(keys)} is not set")
    provider = create_provider(kind, model, max_retries=2)
    got = asyncio.run(provider.complete(S.tool_request(tool_choice="guess_model",
                                                       max_output_tokens=2048)))
    assert got.tool_calls and got.tool_calls[0].name == "guess_model"
    assert got.tool_calls[0].malformed is None
    assert got.usage.input_tokens > 0 and got.usage.output_tokens > 0


@pytest.mark.online
@pytest.mark.parametrize("kind", sorted(LIVE))
def test_live_identity_guess_is_text(kind: str) -> None:
    model, keys = LIVE[kind]
    if not any(os.environ.get(k) for k in keys):
        pytest.skip(f"{' or '.join(keys)} is not set")
    provider = create_provider(kind, model, max_retries=2)
    got = asyncio.run(provider.complete(S.guess_request(max_output_tokens=2048)))
    assert got.text.strip()
