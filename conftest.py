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

# Secrets never reach a cassette: these headers and query parameters are filtered.
FILTER_HEADERS = ["authorization", "x-api-key", "x-goog-api-key", "openai-organization",
                  "openai-project", "cookie"]
_DROP_RESPONSE_HEADERS = {"set-cookie", "openai-organization", "openai-project", "request-id",
                          "x-request-id", "anthropic-organization-id", "cf-ray"}


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


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers") or {}
    for name in list(headers):
        if name.lower() in _DROP_RESPONSE_HEADERS:
            del headers[name]
    return response


@pytest.fixture(scope="module")
def vcr_config() -> dict[str, Any]:
    return {
        "filter_headers": FILTER_HEADERS,
        "filter_query_parameters": ["key"],
        "before_record_response": _scrub_response,
        "decode_compressed_response": True,
        "match_on": ["method", "scheme", "host", "port", "path", "body"],
    }


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    return str(ROOT / "cassettes" / request.module.__name__.split(".")[-1])
