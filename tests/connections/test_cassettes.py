"""Connections games replayed from their cassettes (run with --block-network): emulated
OpenAI, Anthropic and Google, and a real OpenAI-compatible one (SmolLM2-135M via
llama-cpp-python). Re-record: python -m tests.connections.record_cassettes KIND."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from stille_post.cli.llm_seats import llm_session
from stille_post.core.transcript import canonical_text
from stille_post.session import play_game

ROOT = Path(__file__).resolve().parents[2] / "cassettes" / "providers"
KINDS = ("openai", "anthropic", "google", "openai-compatible")


def _comparable(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in canonical_text(path).splitlines()]


@pytest.mark.parametrize("kind", KINDS)
def test_connections_game_replays_as_recorded(kind: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    cas = ROOT / kind / "connections_game.yaml"
    setup = json.loads(cas.with_suffix(".json").read_text(encoding="utf-8"))
    out = tmp_path / "replay.jsonl"
    with llm_session(online=False, record=None, replay=cas) as factory:
        run = asyncio.run(play_game("connections", seed=setup["seed"], out=out,
                                    players=setup["players"], options=setup["options"],
                                    llm_factory=factory))
    assert run.outcome.status == "completed", run.outcome.reason
    got = _comparable(out)
    assert got == _comparable(ROOT / kind / "connections_game.transcript.jsonl")
    llm = [i for i, p in enumerate(setup["players"], 1) if ":" in p]
    usage = got[-1]["usage"]
    assert all(usage[str(s)]["input_tokens"] > 0 for s in llm)
    moves = {e["actor"] for e in got if e.get("type") in ("clue_word", "guess", "secret",
                                                         "repair_request")}
    assert set(llm) <= moves  # every LLM seat was asked and answered
