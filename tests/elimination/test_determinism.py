"""Determinism (DESIGN.md): the same seed and answers give a byte-identical transcript,
whatever order concurrent answers (private chats, votes) arrive in."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from pathlib import Path

import pytest

from stille_post.core.transcript import canonical_text
from stille_post.players.base import Player, PromptBook
from stille_post.players.llm import LLMPlayer
from stille_post.session import play_game

from .conftest import ChaosProvider

MIXED = ["chaos", "loyal", "chaos", "sheep", "backstabber", "chaos", "random", "loyal"]


def _run(tmp: Path, name: str, seed: int, players: list[str] | None,
         jitter_seed: int | None = None, options: Mapping[str, object] | None = None) -> str:
    jitter = random.Random(jitter_seed) if jitter_seed is not None else None

    def factory(raw: str, prompts: PromptBook) -> Player:
        seat = int(raw.rsplit("-", 1)[1])
        return LLMPlayer(ChaosProvider(seat, seed, jitter), prompts, name=raw)

    specs = None if players is None else [
        f"openai:chaos-{i}" if s == "chaos" else s for i, s in enumerate(players, 1)]
    out = tmp / f"{name}.jsonl"
    asyncio.run(play_game("elimination", seed=seed, out=out, players=specs,
                          options=dict(options or {}), llm_factory=factory))
    return canonical_text(out)


def test_bots_same_seed_same_transcript(tmp_path: Path) -> None:
    a, b, c = (_run(tmp_path, n, s, None) for n, s in (("a", 5), ("b", 5), ("c", 6)))
    assert a == b
    assert a != c


@pytest.mark.parametrize("policy", ["truncate", "reask"])
def test_concurrent_arrival_order_does_not_matter(tmp_path: Path, policy: str) -> None:
    """Chaotic LLM seats, answered with different scheduling noise each run: the private
    chats and the votes come back in different orders, the transcript does not change."""
    opts = {"limit_policy": policy}
    texts = {_run(tmp_path, f"j{j}", 11, MIXED, jitter_seed=j, options=opts)
             for j in (None, 1, 2, 3)}
    assert len(texts) == 1
    assert _run(tmp_path, "other", 12, MIXED, options=opts) not in texts
