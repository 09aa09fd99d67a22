"""LLM seats for the CLI: --online / --record / --replay.

Placeholder until the providers issue lands: without a provider layer every LLM seat is
refused before the game starts, with one clear line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stille_post.core.errors import UsageError
from stille_post.games.base import LLMFactory


@contextmanager
def llm_session(
    *, online: bool, record: Path | None, replay: Path | None
) -> Iterator[LLMFactory | None]:
    if record is not None or replay is not None or online:
        raise UsageError("LLM seats are not available in this build yet")
    yield None
