"""Shared helpers for the provider tests: cassette locations and transcript comparison."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.emulators import scenarios as S


def cassette_or_skip(kind: str, name: str) -> Path:
    path = S.cassette_path(kind, name)
    if not path.exists():
        pytest.skip(f"{path.relative_to(S.ROOT)} is not recorded: python -m "
                    f"tests.emulators.record {kind}")
    return path


def comparable(transcript: Path) -> list[dict[str, Any]]:
    """A transcript without its wall-clock and version fields (core's canonical form)."""
    from stille_post.core.transcript import canonical_text

    return [json.loads(line) for line in canonical_text(transcript).splitlines()]
