"""Root pytest configuration shared by spec/ and tests/.

- `--online` runs tests marked `online` against the real APIs (skipped without it, and
  skipped when the keys they need are missing).
- VCR cassettes live in the top-level `cassettes/`; pytest-recording's record mode comes
  only from the command line (`--record-mode=once|rewrite`), never from config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parent

# The VCR configuration (secret filters, header allow-lists, matching) is shared with the
# CLI's --record/--replay: one definition in stille_post.providers.recording.


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--online", action="store_true", default=False,
                     help="run tests marked 'online' against the live APIs (needs keys)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--online"):
        return
    skip = pytest.mark.skip(reason="live API test: run with --online and the provider's key")
    for item in items:
        if "online" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def vcr_config() -> dict[str, Any]:
    from stille_post.providers.recording import vcr_config as shared_vcr_config

    return shared_vcr_config()


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    return str(ROOT / "cassettes" / request.module.__name__.split(".")[-1])
