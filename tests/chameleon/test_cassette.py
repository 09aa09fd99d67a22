"""The real-model Chameleon game (cassettes/providers/openai-compatible/chameleon_game.*),
replayed offline (`--block-network`): SmolLM2-135M-Instruct in one seat beside three
heuristic bots, recorded with `stille-post local-models --record` (PROVENANCE.md)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from stille_post.cli.llm_seats import llm_session
from stille_post.session import play_game
from tests.providers._helpers import comparable

FOLDER = Path(__file__).resolve().parents[2] / "cassettes" / "providers" / "openai-compatible"
RERECORD = ("the Chameleon cassette no longer matches the game's requests (a prompt changed?): "
            "record it again as PROVENANCE.md says")


def test_the_real_chameleon_game_replays_as_recorded(tmp_path: Path) -> None:
    setup = json.loads((FOLDER / "chameleon_game.json").read_text(encoding="utf-8"))
    out = tmp_path / "replay.jsonl"
    with llm_session(online=False, record=None, replay=FOLDER / "chameleon_game.yaml") as f:
        run = asyncio.run(play_game("chameleon", seed=setup["seed"], out=out,
                                    players=setup["players"], options=setup["options"],
                                    llm_factory=f))
    assert run.outcome.usage[1].input_tokens > 0  # the model's seat really asked the server
    replay, recorded = comparable(out), comparable(FOLDER / "chameleon_game.transcript.jsonl")
    for lines in (replay, recorded):
        lines[0].pop("format", None)
    assert replay == recorded, RERECORD
    adherence = replay[-1]["adherence"]["1"]
    assert adherence["decisions"] >= 1
