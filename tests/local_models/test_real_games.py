"""The proving ground's real recordings: one whole game of each game with
Qwen2.5-Coder-1.5B-Instruct (the strongest local model) in one seat beside the game's
bots, recorded with `stille-post local-models --record`, free (`qwen/`) and with
constrained decoding (`qwen-schema/`, `--structured schema`)
(cassettes/providers/openai-compatible/, PROVENANCE.md), replayed offline
(`--block-network`). Each replay must rebuild the recorded transcript exactly, and the
model's seat must have asked the server and be tallied by the kit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from stille_post.cli.llm_seats import llm_session
from stille_post.cli.local_models import trials
from stille_post.games.kit.definition import MODEL_SEAT
from stille_post.session import play_game
from tests.providers._helpers import comparable

ROOT = Path(__file__).resolve().parents[2] / "cassettes" / "providers" / "openai-compatible"
GAMES = ("stille-post", "elimination", "connections", "chameleon")
FOLDERS = ("qwen", "qwen-schema")
RERECORD = ("the {game} cassette of {folder} no longer matches the game's requests (a prompt "
            "changed?): record it again as PROVENANCE.md says")


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("game", GAMES)
def test_a_real_qwen_game_replays_as_recorded(game: str, folder: str, tmp_path: Path) -> None:
    here = ROOT / folder
    setup = json.loads((here / f"{game}.json").read_text(encoding="utf-8"))
    # The recording is the game's own trial: the model's seat where the trial puts it.
    trial = trials([game])[game]
    seat = trial.players.index(MODEL_SEAT) + 1
    assert setup["players"][seat - 1].startswith("openai-compatible:qwen2.5-coder-1.5b@")
    out = tmp_path / "replay.jsonl"
    structured = setup.get("structured")  # the recording's constrained decoding
    assert (structured == "schema") == (folder == "qwen-schema")
    with llm_session(online=False, record=None, replay=here / f"{game}.yaml",
                     structured=structured) as factory:
        run = asyncio.run(play_game(game, seed=setup["seed"], out=out,
                                    players=setup["players"], options=setup["options"],
                                    llm_factory=factory))
    assert run.outcome.usage[seat].input_tokens > 0  # the seat really asked the server
    replay, recorded = comparable(out), comparable(here / f"{game}.transcript.jsonl")
    assert replay == recorded, RERECORD.format(game=game, folder=here)
    tally = replay[-1]["adherence"][str(seat)]
    assert tally["decisions"] >= 1
    # A structured seat is marked, and its decisions under a schema are counted.
    assert (replay[0]["seats"][str(seat)].get("structured") == "schema") == bool(structured)
    assert (tally.get("structured", 0) > 0) == bool(structured)
