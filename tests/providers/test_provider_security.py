"""No key-like string in any cassette, transcript or log under the repository, and the
scanner provably catches one (a planted key must fail it)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.errors import ProviderError
from stille_post.providers import ChatRequest, Message, ToolCall, create_provider
from stille_post.providers.recording import cassette, vcr_config
from stille_post.providers.secrets import find_keys

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".venv", ".git", ".nox", ".tox", "node_modules", "__pycache__", ".mypy_cache",
             ".ruff_cache", ".pytest_cache", "stille_post.egg-info"}
SCANNED = (".yaml", ".yml", ".jsonl", ".json", ".log")


def scanned_files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in filenames:
            if name.endswith(SCANNED) or ".log" in name:
                yield Path(dirpath) / name


def scan(root: Path) -> dict[str, list[str]]:
    """path -> key-like strings found (shortened, so a failure does not print a key)."""
    found: dict[str, list[str]] = {}
    for path in scanned_files(root):
        with path.open(encoding="utf-8", errors="replace") as fh:
            # Big transcripts are read in chunks that overlap by more than a key's length.
            tail = ""
            while chunk := fh.read(1 << 20):
                hits = find_keys(tail + chunk)
                if hits:
                    found.setdefault(str(path.relative_to(root)), []).extend(
                        h[:6] + "..." for h in hits)
                tail = chunk[-200:]
    return found


def test_no_key_like_string_in_cassettes_transcripts_or_logs() -> None:
    files = list(scanned_files(ROOT))
    assert any("cassettes" in p.parts for p in files), "the scan found no cassette at all"
    assert scan(ROOT) == {}


@pytest.mark.parametrize("planted", [
    "sk-proj-" + "Ab3dE" * 8,
    "sk-ant-api03-" + "Zz9_Yy8-" * 6,
    "AIza" + "SyD3x" * 7,
    "Bearer eyJhbGciOiJIUzI1NiJ9.payload",
])
def test_scanner_fails_on_a_planted_key(tmp_path: Path, planted: str) -> None:
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "x.yaml").write_text(f"headers:\n  x: {planted}\n")
    (tmp_path / "clean.jsonl").write_text(
        '{"text": "propose_task-and-desk-sketch ok; sk-learn-is-a-library; '
        'Bearer responsibilities"}\n')
    found = scan(tmp_path)
    assert list(found) == [os.path.join("cassettes", "x.yaml")]


# The loopback emulator is the only host this test talks to, even under --block-network.
@pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])
def test_recording_filters_the_auth_headers(tmp_path: Path) -> None:
    """Record through the real SDK (answered by a local emulator) with a realistic key:
    the cassette holds no key, and neither does the error for a bad request."""
    from tests.emulators.server import running

    key = "sk-proj-" + "Q7w8E9r0T1y2" * 3
    path = tmp_path / "c.yaml"
    with running("openai") as emu:
        provider = create_provider("openai", "gpt-4.1", api_key=key, base_url=emu.base_url,
                                   max_retries=0)
        # An assistant tool call without its result: the emulated API answers 400.
        bad = ChatRequest("s", [Message("user", "hi"),
                                Message("assistant", "", [ToolCall("t", {}, "c1")])])

        async def both() -> tuple[Any, BaseException | None]:
            ok = await provider.complete(ChatRequest("s", [Message("user", "hi")]))
            try:
                await provider.complete(bad)
            except ProviderError as exc:
                return ok, exc
            return ok, None

        with cassette(path, mode="record"):
            got, error = asyncio.run(both())
    assert got.text
    assert isinstance(error, ProviderError)
    assert error.status == 400 and key not in str(error)
    text = path.read_text()
    assert key not in text and "Q7w8E9r0" not in text
    assert find_keys(text) == []
    assert "authorization" not in text.lower()


def test_shared_config_filters_what_design_md_lists() -> None:
    config = vcr_config()
    assert {"authorization", "x-api-key", "x-goog-api-key", "openai-organization",
            "openai-project", "cookie"} <= set(config["filter_headers"])
    assert {"key", "api_key", "token", "access_token"} <= set(config["filter_query_parameters"])
    assert config["decode_compressed_response"] is True
    assert "record_mode" not in config  # the command line owns it
