"""The `tournament`, `merge` and `report` commands as a user runs them."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import clirun
from tests.lazystats import binom_interval

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

Cli = Callable[..., list[str]]


def _run(cli: Cli, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return clirun.run_cli(*args, env=env)


def test_json_aggregate_shape(tmp_path: Path, cli: Cli, cli_env: dict[str, str]) -> None:
    done = _run(cli, cli_env, "tournament", "stille-post", "--games", "6", "--seed", "2",
                "--players", "detective,random,gambler", "--out", str(tmp_path / "t"),
                "--max-rounds", "2", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["games"] == 6 and data["seed"] == 2
    assert data["status"] == {"completed": 6, "aborted": 0, "missing": 0}
    assert set(data["seats"]) == {"1", "2", "3"}
    assert set(data["players"]) == {"bot:detective", "bot:random", "bot:gambler"}
    for block in [*data["seats"].values(), *data["players"].values()]:
        assert block["games"] == 6
        assert block["wins"] + block["eliminations"] + block["survivals"] == 6
        assert block["win_rate"] == block["wins"] / 6
    # The game option reached the engine: every transcript's config says 2 rounds.
    header = json.loads(next((tmp_path / "t" / "games").iterdir()).read_text().split("\n")[0])
    assert header["config"]["max_rounds"] == 2


def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path, cli: Cli,
                                              cli_env: dict[str, str]) -> None:
    for args in (["--shard", "3/2"], ["--players", "nobot,random"],
                 ["--pool", "random,gambler", "--num-players", "5"]):
        done = _run(cli, cli_env, "tournament", "stille-post", "--games", "2",
                    "--out", str(tmp_path / "x"), *args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.slow
def test_2000_gambler_games_eliminate_each_seat_about_half_the_time(
        tmp_path: Path, cli: Cli, cli_env: dict[str, str]) -> None:
    """Two gamblers: seat 1 pulls first and is eliminated iff rng.random() < 0.5, so each
    seat's eliminations are Binomial(2000, 1/2). Bound: scipy's central 99.9% interval,
    [926, 1074]; a correct engine lands outside it with probability <= 0.001, and the
    seed makes the run reproducible."""
    done = _run(cli, cli_env, "tournament", "stille-post", "--games", "2000", "--players",
                "gambler,gambler", "--seed", "1", "--json", "--no-fsync",
                "--concurrency", "4", "--out", str(tmp_path / "g"))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    lo, hi = binom_interval(0.999, 2000, 0.5)
    assert (lo, hi) == (926.0, 1074.0)
    assert data["status"]["completed"] == 2000
    for seat in ("1", "2"):
        assert lo <= data["seats"][seat]["eliminations"] <= hi, data["seats"][seat]
    assert data["seats"]["1"]["eliminations"] + data["seats"]["2"]["eliminations"] == 2000
    assert data["players"]["bot:gambler"]["games"] == 4000


def test_report_exports_and_merge_command(tmp_path: Path, cli: Cli,
                                          cli_env: dict[str, str]) -> None:
    for i in (1, 2):
        done = _run(cli, cli_env, "tournament", "stille-post", "--games", "8", "--seed", "4",
                    "--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}"), "--json")
        assert done.returncode == 0, done.stderr
    done = _run(cli, cli_env, "merge", str(tmp_path / "m"), str(tmp_path / "s1"),
                str(tmp_path / "s2"), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"]["completed"] == 8
    done = _run(cli, cli_env, "report", str(tmp_path / "m"), "--passes", "2", "--json",
                "--csv", str(tmp_path / "csv"), "--html", str(tmp_path / "r.html"))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["games"]["completed"] == 8 and report["games"]["missing"] == 0
    assert {r["player"] for r in report["leaderboard"]} == {
        "bot:detective", "bot:cautious", "bot:gambler", "bot:random"}
    assert (tmp_path / "csv" / "leaderboard.csv").read_text().startswith("player,games,mu")
    # four shared charts but "cost versus strength", empty for bots (issue 40, item 11)
    assert (tmp_path / "r.html").read_text().count("data:image/png;base64,") == 3
    text = _run(cli, cli_env, "report", str(tmp_path / "m"), "--passes", "1")
    assert text.returncode == 0 and "TrueSkill leaderboard" in text.stdout
