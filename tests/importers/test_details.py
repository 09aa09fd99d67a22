"""An imported game's outcome `details` have the shape of a game played here: the engine
and the converter call one function (rules.outcome_details), and a report reads both."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from stille_post.core.rng import make_rng
from stille_post.games import get_game
from stille_post.games.kit.setup import prepare
from tests.importers.eg import import_logs

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "fixtures" / "elimination_logs" / "game_1754984898827689.jsonl"
# What only an import has: its mark, and what the log says beyond our rules.
IMPORT_ONLY = {"imported", "computed_ranks", "winners_full"}


def test_imported_details_have_the_engine_shape(tmp_path: Path) -> None:
    assert import_logs([GOOD], tmp_path / "out").imported == 1
    lines = (tmp_path / "out" / "games" / "eg-1754984898827689.jsonl").read_text().splitlines()
    imported = json.loads(lines[-1])["summary"]["details"]

    game = get_game("elimination")
    prepared = prepare(game, seed=3, rng=make_rng(3), players=None, options={"num_players": 8})
    played = asyncio.run(prepared.engine.play()).summary.details
    assert imported["imported"] is True
    assert set(imported) - IMPORT_ONLY == set(played)
    assert list(k for k in imported if k not in IMPORT_ONLY) == list(played)  # same order
    for key in ("ranks", "cumulative", "eliminated_in", "jury_votes"):
        assert all(isinstance(k, str) for k in imported[key]), key
        assert all(isinstance(k, str) for k in played[key]), key
