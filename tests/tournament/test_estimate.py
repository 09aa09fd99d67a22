"""`tournament --estimate` (tournament/estimate.py) against every recorded game cassette:
the estimate of the recorded game's configuration (its players and options, games from
its seed) is within ±25% of the tokens the cassette billed (input, cached input
included, plus output; read from the reference transcript its replay wrote)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.bench_estimate import billed_tokens, game_cassettes
from stille_post.tournament.config import TournamentConfig
from stille_post.tournament.estimate import estimate
from tests import clirun

pytestmark = pytest.mark.heavy

# Every whole-game cassette: 4 providers x 3 games, the real SmolLM2 Chameleon game, and
# the proving ground's four real Qwen games (openai-compatible/qwen/).
CASSETTES = game_cassettes()
BOUND = 0.25

# Elimination: how long a seat stays in depends on how it plays, and one recorded game
# is one draw; SmolLM2's Connections game re-asked half its requests, against a share of
# 0.17 over its recorded games. These fall outside the bound (docs/campaigns.md gives
# every figure); the test fails loudly if one comes inside it.
# Qwen's recorded Stille Post game ended its seat on its first turn (it wrote a
# russian_roulette call as text, and lost), and its Connections game re-asked 3 of 4
# guesses: one draw each, far from the mean of the configuration.
OUTSIDE = {"anthropic/elimination_game", "openai-compatible/connections_game",
           "qwen/stille-post", "qwen/connections"}


def _case(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def _marks(path: Path) -> list[pytest.MarkDecorator]:
    # One provider per game in the fast suite (openai's cassette of each game, and the
    # Chameleon's); every cassette in `nox -s slow`.
    marks = [] if path.parent.name == "openai" or "chameleon" in path.stem else \
        [pytest.mark.slow]
    if _case(path) in OUTSIDE:
        marks.append(pytest.mark.xfail(strict=True, reason="outside ±25%: docs/campaigns.md"))
    return marks


@pytest.mark.parametrize("path", [pytest.param(p, id=_case(p), marks=_marks(p))
                                  for p in CASSETTES])
def test_the_estimate_is_within_a_quarter_of_what_the_cassette_billed(path: Path) -> None:
    recorded = json.loads(path.read_text(encoding="utf-8"))
    transcript = path.with_name(path.stem + ".transcript.jsonl")
    game = json.loads(transcript.read_text(encoding="utf-8").splitlines()[0])["game"]
    config = TournamentConfig(game=game, games=10, seed=recorded["seed"], seating="fixed",
                              players=tuple(recorded["players"]),
                              options=recorded["options"])
    # Connections' bots embed words (~0.4 s of CPU a game) and its games vary little in
    # length (the samples' range is within 2%): two sampled games are enough there.
    plan = estimate(config, sample=2 if game == "connections" else 10)
    per_game = plan["tokens"]["expected"] / plan["games"]
    billed = billed_tokens(transcript)
    assert abs(per_game / billed - 1) <= BOUND, (per_game, billed)


def test_there_is_a_game_cassette_per_provider_and_game() -> None:
    # 4 providers x 3 games, SmolLM2's Chameleon game and Qwen's four: a lost cassette
    # fails here
    assert len(CASSETTES) == 17


def test_a_dollar_estimate_uses_the_prices_and_the_caps(tmp_path: Path) -> None:
    args = ["tournament", "stille-post", "--players", "openai:gpt-5-mini,openai:gpt-4.1,"
            "detective,random", "--games", "40", "--seed", "5", "--max-rounds", "1",
            "--estimate", "--json", "--rate-limit", "openai=60", "--budget-usd", "0.05",
            "--out", "never"]
    done = clirun.run_cli(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert set(plan["models"]) == {"openai:gpt-5-mini", "openai:gpt-4.1"}
    mini, big = plan["models"]["openai:gpt-5-mini"], plan["models"]["openai:gpt-4.1"]
    assert mini["seat_games"] == big["seat_games"] == 40
    # gpt-4.1 costs more per token than gpt-5-mini (prices.toml), at similar tokens
    assert big["dollars"]["expected"] > mini["dollars"]["expected"] > 0
    low, mid, high = (plan["dollars"][k] for k in ("low", "expected", "high"))
    assert low <= mid <= high
    # one request per minute... 60 requests/min: the wall time is requests / 60
    assert plan["wall_minutes"]["total"] == pytest.approx(plan["requests"]["expected"] / 60,
                                                          rel=0.01)
    assert plan["within_caps"] == min(40, int(0.05 // plan["per_game"]["dollars"]))
    assert not (tmp_path / "never").exists()  # an estimate plays and writes nothing


@pytest.mark.parametrize("args, expect", [
    (["--resume", "--out", "x"], "--estimate plans a new tournament"),
    (["--budget-usd", "1", "--players",
      "openai-compatible:unpriced@http://127.0.0.1:9/v1,detective,random,detective"],
     "has none"),
])
def test_bad_estimates_are_one_line_and_exit_2(tmp_path: Path, args: list[str],
                                               expect: str) -> None:
    base = ["tournament", "stille-post", "--estimate", "--seed", "3"]
    done = clirun.run_cli(*base, *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert expect in done.stderr


def test_every_model_of_a_large_pool_is_estimated() -> None:
    pool = (*(f"openai:gpt-5-mini-{i}" for i in range(12)), "detective", "random")
    config = TournamentConfig(game="stille-post", games=30, seed=2, seating="balanced",
                              pool=pool, seats=4, options={"num_players": 4, "max_rounds": 1})
    plan = estimate(config, sample=2)  # two games seat 8 of the 14
    assert set(plan["models"]) == set(pool[:12])
    assert sum(m["seat_games"] for m in plan["models"].values()) == \
        sum(1 for g in config.plan() for p in g.players or () if p.startswith("openai:"))
