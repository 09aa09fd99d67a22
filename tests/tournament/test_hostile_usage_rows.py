"""Readers of a transcript's usage rows (report, viewer, the games' metrics) take any
shape an edited or damaged result line may hold: a row that is a list, a count that is
Infinity, 10**30 or text, a usage that is not a mapping at all. Each reads as absent or
bounded, never as a crash (issue 36's leftovers: the viewer's OverflowError, the
report's AttributeError)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from stille_post.core.transcript import Transcript
from stille_post.games import get_game
from stille_post.tournament import TournamentConfig, run_tournament
from stille_post.tournament.report import build_report
from stille_post.viewer import write_html

# What the result line's `usage` may be made to hold, one per game of the folder.
HOSTILE = [
    {"1": [1, 2, 3]},
    {"1": {"input_tokens": float("inf"), "output_tokens": 10**30}},
    ["not", "a", "mapping"],
    {"1": {"input_tokens": "many", "output_tokens": None}},
]


@pytest.mark.parametrize("game,players", [
    ("stille-post", ("detective", "random", "gambler", "cautious")),
    ("chameleon", ("heuristic",) * 4),
])
def test_hostile_usage_rows_read_as_absent(game: str, players: tuple[str, ...],
                                           tmp_path: Path) -> None:
    folder = tmp_path / game
    options = {"max_rounds": 1} if game == "stille-post" else {}
    asyncio.run(run_tournament(TournamentConfig(game=game, games=len(HOSTILE), seed=3,
                                                players=players, options=options),
                               folder, durable=False))
    paths = sorted((folder / "games").glob("*.jsonl"))
    assert len(paths) == len(HOSTILE)
    for path, usage in zip(paths, HOSTILE, strict=True):
        lines = path.read_text(encoding="utf-8").splitlines()
        result = json.loads(lines[-1])
        result["usage"] = usage
        lines[-1] = json.dumps(result)  # Infinity as Python writes it
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "index.sqlite").unlink()

    for path in paths:
        t = Transcript.load(path)
        assert t.usage(1).input_tokens == 0 and t.usage(1).output_tokens == 0
        page = write_html(path, tmp_path / f"{path.stem}.html")
        assert page.is_file()
    report = build_report(folder, passes=2, cache=False)
    assert all(row["tokens"] == 0 for row in report["leaderboard"])
    metrics = get_game(game).metrics_fn()
    assert metrics is not None
    metrics(Transcript.load(p) for p in paths)
