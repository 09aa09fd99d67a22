"""pytest-recording with the root conftest's shared VCR configuration: a test marked
`vcr` replays its cassette from the top-level cassettes/ (record mode from the command
line only; `none` by default), and --block-network keeps everything else offline."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stille_post.providers import create_provider
from stille_post.providers.recording import vcr_config as shared_vcr_config
from tests.emulators import scenarios as S


@pytest.fixture(scope="module")
def vcr_cassette_dir() -> str:
    return str(S.CASSETTES / "openai")


@pytest.fixture(scope="module")
def vcr_config() -> dict[str, Any]:
    # The shared filters, matching as the single-call replays do (see test_provider_replay).
    return {**shared_vcr_config(), "match_on": ["method", "scheme", "host", "port", "path"]}


@pytest.fixture
def default_cassette_name() -> str:
    return "tool_call_turn"


@pytest.mark.vcr
def test_marked_test_replays_from_the_cassettes_folder(vcr: Any) -> None:
    provider = create_provider("openai", "gpt-5-mini", api_key="test-key", max_retries=0)
    got = asyncio.run(provider.complete(S.tool_request()))
    assert vcr.play_count == 1
    assert got.tool_calls[0].name == "guess_model"
    assert vcr.record_mode == "none"
