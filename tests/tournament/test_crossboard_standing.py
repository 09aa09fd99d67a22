"""The cross-game leaderboard ranks a model only by its games against other models
(issue 40, item 10): a model that met only itself in a game gets no standing from it,
and a model unrated in every game gets no overall rank."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from stille_post.tournament import TournamentConfig, run_tournament
from stille_post.tournament.crossboard import _overall, _percentiles, _ranks
from tests import clirun

pytestmark = pytest.mark.heavy

SP = ("detective", "random", "gambler", "cautious")


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    """Stille Post with four different bots; the Elimination Game with `bot:random` in
    every seat (it met only itself there); the Chameleon with `bot:heuristic` in every
    seat (its only game)."""
    root = tmp_path_factory.mktemp("standing")
    plans = {"sp": ("stille-post", SP, {"max_rounds": 1}, 8),
             "elim": ("elimination", ("random",) * 4, {"num_players": 4}, 3),
             "cham": ("chameleon", ("heuristic",) * 4, {}, 4)}
    for name, (game, players, options, n) in plans.items():
        asyncio.run(run_tournament(TournamentConfig(game=game, games=n, seed=2,
                                                    players=players, options=options),
                                   root / name, durable=False))
    done = clirun.run_cli("leaderboard", "sp", "elim", "cham", "--out", "lb", "--json",
                          cwd=root, env={**clirun.keyless_env(), "COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    terminal = clirun.run_cli("leaderboard", "sp", "elim", "cham", "--out", "lb2", cwd=root,
                              env={**clirun.keyless_env(), "COLUMNS": "100"})
    assert terminal.returncode == 0, terminal.stderr
    return root / "lb", json.loads(done.stdout), terminal.stdout


def test_a_model_that_only_met_itself_gets_no_rank_from_that_game(
        board: tuple[Path, dict[str, Any], str]) -> None:
    _, data, _ = board
    rows = {r["model"]: r for r in data["rows"]}
    random = rows["bot:random"]
    cell = random["games"]["elimination"]
    assert cell["rated"] is False and cell["rank"] is None and cell["games_vs_others"] == 0
    # Its overall score is its Stille Post standing alone: the self-play game adds nothing
    # (before, it counted as "#1 of 1", the best percentile).
    sp = random["games"]["stille-post"]
    assert sp["rated"] and sp["of"] == 4
    assert random["score"] == round((sp["rank"] - 1) / 3, 4)
    # Only the four Stille Post bots are ranked, 1..4.
    assert sorted(r["rank"] for r in data["rows"] if r["rank"] is not None) == [1, 2, 3, 4]


def test_a_model_unrated_in_every_game_has_no_overall_rank(
        board: tuple[Path, dict[str, Any], str]) -> None:
    out, data, terminal = board
    lone = next(r for r in data["rows"] if r["model"] == "bot:heuristic")
    assert lone["rank"] is None and lone["score"] is None and lone["rank_interval"] is None
    assert data["rows"][-1]["model"] == "bot:heuristic"  # listed after the ranked ones
    table = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    row = next(r for r in table if r["model"] == "bot:heuristic")
    assert row["rank"] == "" and row["score"] == "" and row["chameleon:rank"] == ""
    assert next(r for r in table if r["model"] == "bot:detective")["rank"] != ""
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "unrated" in page
    assert 'id="standing-chart"' in page and "data:image/png;base64," in page
    # The terminal shows the table, not only "wrote" lines.
    assert "leaderboard across games" in terminal
    assert "bot:heuristic" in terminal and "unrated" in terminal
    for model in SP:
        assert f"bot:{model}" in terminal


def test_percentiles_need_two_rated_models() -> None:
    assert _percentiles({"A": 5.0}) == {}
    assert _percentiles({"A": 5.0, "B": 3.0}) == {"A": 0.0, "B": 1.0}
    scores = _overall([{"A": 3.0, "B": 1.0}, {"C": 9.0}])
    assert scores == {"A": 0.0, "B": 1.0}  # C stood alone: no standing, no score
    assert _ranks(scores) == {"A": 1, "B": 2}


def test_in_a_folder_with_others_the_self_play_only_model_is_unrated() -> None:
    """A pool run that once seated X in every seat, and Y against Z otherwise: X has a
    leaderboard row (at the prior) but no standing."""
    from stille_post.tournament.crossboard import GameBoard, build, rated_rows

    def row(player: str, mu: float, vs: int) -> dict[str, Any]:
        return {"player": player, "mu": mu, "sigma": 1.0, "games": 3, "games_vs_others": vs,
                "win_rate": 0.5, "win_rate_ci": [0.1, 0.9]}

    report = {"leaderboard": [row("X", 9.0, 0), row("Y", 6.0, 3), row("Z", 4.0, 3)],
              "games": {"rated": 4}}
    b = GameBoard("g", "g", Path("f"), report)
    assert [r["player"] for r in rated_rows(b)] == ["Y", "Z"]
    data = build([b], resamples=20)
    ranks = {r["model"]: r["rank"] for r in data["rows"]}
    assert ranks == {"Y": 1, "Z": 2, "X": None}
