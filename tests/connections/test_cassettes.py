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
# The real SmolLM2 recording was made while the game still announced the secret's length
# ("The first letter is G (8 letters in all)."), which docs/rules.md §4 forbids: today's
# requests differ from the recorded ones, so it no longer replays. A real model's answers
# cannot be re-recorded without its llama.cpp server (PROVENANCE.md), and rewriting the
# recorded requests would fake the recording: it stays, as the record of what the model
# did, and fails strictly here until it is recorded again (then this mark must go).
STALE = pytest.mark.xfail(strict=True, reason="recorded with the old prompt that told the "
                          "secret's length; re-record against the real model "
                          "(cassettes/providers/openai-compatible/PROVENANCE.md)")
KINDS = ("openai", "anthropic", "google",
         pytest.param("openai-compatible", marks=STALE))


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
