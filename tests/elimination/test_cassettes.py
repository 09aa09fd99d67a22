"""Replays of the Elimination Game cassettes (cassettes/providers/<kind>/elimination_game.*)
for all four provider kinds, offline (`--block-network`): emulated OpenAI, Anthropic and
Google 8-seat games with LLM and bot seats, and a REAL SmolLM2 game with two LLM seats
(PROVENANCE.md in each folder). Re-record with `python -m tests.elimination.record_cassettes`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from stille_post.cli.llm_seats import llm_session
from stille_post.session import play_game
from tests.elimination.record_cassettes import cassette_path, setup_path, transcript_path
from tests.emulators import scenarios as S
from tests.providers._helpers import comparable

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

RERECORD = ("the {kind} Elimination cassette no longer matches the game's requests (a prompt "
            "changed?): python -m tests.elimination.record_cassettes {kind}")


def _game_lines(path: Path) -> list[dict[str, Any]]:
    """The canonical lines without the header's file-format version, which says how the
    file is written, not what was played (a format bump must not void a recording)."""
    lines = comparable(path)
    lines[0].pop("format", None)
    return lines


def _replay(kind: str, out: Path) -> Any:
    path = cassette_path(kind)
    if not path.exists():
        pytest.skip(f"{path} is not recorded")
    setup = json.loads(setup_path(kind).read_text(encoding="utf-8"))
    with llm_session(online=False, record=None, replay=path) as factory:
        return asyncio.run(play_game("elimination", seed=setup["seed"], out=out,
                                     players=setup["players"], options=setup["options"],
                                     llm_factory=factory)), setup


@pytest.mark.parametrize("kind", S.KINDS)
def test_elimination_game_replays_as_recorded(kind: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    first, setup = _replay(kind, tmp_path / "a.jsonl")
    assert first.outcome.status == "completed", (first.outcome.reason, RERECORD.format(kind=kind))
    # The replay is the game that was recorded, byte for byte (timing aside).
    a = _game_lines(first.transcript)
    assert a == _game_lines(transcript_path(kind)), RERECORD.format(kind=kind)
    events = [e for e in a if e["kind"] == "event"]
    llm_seats = [i for i, p in enumerate(setup["players"], 1) if ":" in p]
    assert len(llm_seats) >= 2 and len(setup["players"]) == (8 if kind != "openai-compatible"
                                                             else 4)
    spoke = {e["actor"] for e in events if e["type"] == "public_message"}
    voted = {e["actor"] for e in events if e["type"] == "vote"}
    assert set(llm_seats) <= spoke and set(llm_seats) <= voted  # every LLM seat played
    assert any(e["type"] == "private_message" for e in events)
    for e in events:  # the limits hold for real model output too
        if e["type"].endswith("_message"):
            assert e["data"]["words"] <= e["data"]["limit_words"]
    usage = a[-1]["usage"]
    assert all(usage[str(s)]["input_tokens"] > 0 for s in llm_seats)
