"""`stille-post leaderboard` (tournament/crossboard.py): one page, JSON and CSV across
four results folders, one per game; models matched by label (`--labels` renames)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from stille_post.tournament import TournamentConfig, run_tournament
from stille_post.tournament.crossboard import _overall, _ranks
from tests import clirun

pytestmark = pytest.mark.heavy

GAMES = {
    "stille-post": (("random", "gambler", "cautious", "detective"), {"max_rounds": 1}, 6),
    "chameleon": (("trivial", "revealing", "copycat", "heuristic"), {}, 6),
    "elimination": (("random", "loyal", "backstabber", "sheep"), {"num_players": 4}, 4),
    "connections": (("frequency", "oracle-p30", "oracle-p60"), {}, 2),
}
# One name per strength across games, so that a row spans the four columns.
LABELS = """
"bot:random" = "Alpha"
"bot:trivial" = "Alpha"
"bot:frequency" = "Alpha"
"bot:detective" = "Beta"
"bot:heuristic" = "Beta"
"bot:loyal" = "Beta"
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("boards")
    out = []
    for game, (players, options, n) in GAMES.items():
        folder = root / game
        asyncio.run(run_tournament(TournamentConfig(game=game, games=n, seed=3,
                                                    players=players, options=options),
                                   folder, durable=False))
        out.append(folder)
    (root / "labels.toml").write_text(LABELS, encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def board(folders: list[Path]) -> tuple[Path, dict[str, Any]]:
    root = folders[0].parent
    done = clirun.run_cli("leaderboard", *map(str, folders), "--out", "lb", "--labels",
                          "labels.toml", "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    return root / "lb", json.loads(done.stdout)


def test_a_row_per_model_and_a_column_per_game(board: tuple[Path, dict[str, Any]]) -> None:
    out, data = board
    assert [g["column"] for g in data["games"]] == list(GAMES)
    rows = {r["model"]: r for r in data["rows"]}
    assert set(rows["Alpha"]["games"]) == set(GAMES)  # matched across folders by label
    assert set(rows["Beta"]["games"]) == {"stille-post", "chameleon", "elimination"}
    assert "bot:gambler" in rows and set(rows["bot:gambler"]["games"]) == {"stille-post"}
    assert sorted(r["rank"] for r in data["rows"]) == list(range(1, len(rows) + 1))
    for r in data["rows"]:
        lo, hi = r["rank_interval"]
        assert lo <= hi and lo >= 1 and hi <= len(rows)
    table = list(csv.reader(io.StringIO((out / "leaderboard.csv").read_text())))
    assert table[0][:5] == ["model", "rank", "rank_low", "rank_high", "score"]
    assert {c.split(":")[0] for c in table[0][5:]} == set(GAMES)
    assert len(table) == len(rows) + 1
    assert json.loads((out / "leaderboard.json").read_text()) == data
    for g in data["games"]:
        assert (out / g["report"]).is_file()


def test_the_overall_rank_is_the_mean_percentile() -> None:
    # A wins one game and is second of three in the other: mean percentile 0.25;
    # B is last then first: 0.5; C: (0.5 + 1) / 2 = 0.75.
    scores = _overall([{"A": 3.0, "B": 1.0, "C": 2.0}, {"A": 2.0, "B": 3.0, "C": 1.0}])
    assert scores == {"A": 0.25, "B": 0.5, "C": 0.75}
    assert _ranks(scores) == {"A": 1, "B": 2, "C": 3}


def test_the_page_opens_in_a_browser(board: tuple[Path, dict[str, Any]], browser: Any) -> None:
    out, data = board
    browser.get((out / "index.html").as_uri())
    heads = [h.text.split("\n")[0] for h in browser.find_elements("css selector", "th.game")]
    assert heads == list(GAMES)
    names = [r.find_element("css selector", "td").text
             for r in browser.find_elements("css selector", "tr.model")]
    assert names == [r["model"] for r in data["rows"]]
    assert "percentile" in browser.find_element("id", "method").text
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


@pytest.mark.parametrize("make, expect", [
    (lambda root: root / "empty", "is not a tournament results folder"),
    (lambda root: root / "foreign", "is not a tournament results folder"),
    (lambda root: root / "nowhere", "is not a folder"),
])
def test_empty_or_foreign_folders_are_one_line_and_exit_2(
        tmp_path: Path, make: Any, expect: str) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("not a tournament", encoding="utf-8")
    done = clirun.run_cli("leaderboard", str(make(tmp_path)), "--out", "lb", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert expect in done.stderr
    assert not (tmp_path / "lb").exists()
    assert sorted(p.name for p in (tmp_path / "foreign").iterdir()) == ["notes.txt"]
