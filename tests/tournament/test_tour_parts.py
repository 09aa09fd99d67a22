"""Seating, rate limits, the simulated provider, and Stille Post's metrics."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.errors import ConfigError
from stille_post.games.stille_post.metrics import compute_metrics
from stille_post.games.stille_post.prompts import PROMPTS
from stille_post.players.base import Action, Decision, Player, PromptBook
from stille_post.players.llm import LLMPlayer
from stille_post.providers import create_provider
from stille_post.providers.base import Usage
from stille_post.providers.simulated import SimulatedProvider
from stille_post.session import play_game
from stille_post.tournament import RunStats, TournamentConfig
from stille_post.tournament.limits import ProviderLimit, RateLimits, TokenBucket
from stille_post.tournament.metrics import metrics_for
from stille_post.tournament.results import load_results
from stille_post.tournament.seating import seat_schedule

Play = Callable[..., RunStats]
POOL = tuple(f"m{i}" for i in range(7))


# --- seating ------------------------------------------------------------------------------

def test_balanced_seating_evens_out_plays_and_meetings() -> None:
    games = list(seat_schedule(POOL, 4, 210, seed=1, mode="balanced"))
    plays = Counter(m for g in games for m in g)
    assert max(plays.values()) - min(plays.values()) <= 1
    met = Counter(frozenset(p) for g in games for p in combinations(g, 2))
    assert len(met) == 21  # every pair met
    assert max(met.values()) - min(met.values()) <= 3, met
    firsts = Counter(g[0] for g in games)
    assert len(firsts) == len(POOL)  # the first seat rotates too
    assert all(len(set(g)) == 4 for g in games)


def test_seating_is_a_pure_function_of_the_seed() -> None:
    for mode in ("balanced", "sampled"):
        a = list(seat_schedule(POOL, 3, 20, seed=5, mode=mode))
        assert a == list(seat_schedule(POOL, 3, 20, seed=5, mode=mode))
        assert a != list(seat_schedule(POOL, 3, 20, seed=6, mode=mode))


def test_config_checks_the_pool() -> None:
    with pytest.raises(ConfigError):
        TournamentConfig(game="stille-post", games=3, seed=1, seating="balanced",
                         pool=("random",), seats=2)
    with pytest.raises(ConfigError):
        TournamentConfig(game="stille-post", games=3, seed=1, seating="balanced")
    with pytest.raises(ConfigError):
        TournamentConfig(game="stille-post", games=0, seed=1)
    cfg = TournamentConfig(game="stille-post", games=3, seed=1, seating="sampled",
                           pool=POOL, seats=3, options={"max_rounds": 2})
    assert TournamentConfig.from_json(json.loads(json.dumps(cfg.to_json()))) == cfg


# --- rate limits ----------------------------------------------------------------------------

class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_token_bucket_spaces_requests_at_the_rate() -> None:
    clock = FakeClock()
    bucket = TokenBucket(60, burst=2, clock=clock, sleep=clock.sleep)  # 1 per second

    async def go() -> list[float]:
        starts = []
        for _ in range(6):
            await bucket.acquire(1)
            starts.append(clock.now)
        return starts

    starts = asyncio.run(go())
    assert starts == pytest.approx([0, 0, 1, 2, 3, 4])  # a burst of 2, then 1/s


def test_token_bucket_settles_actual_usage_as_debt() -> None:
    clock = FakeClock()
    bucket = TokenBucket(600, burst=100, clock=clock, sleep=clock.sleep)  # 10 tokens/s

    async def go() -> float:
        await bucket.acquire(100)
        bucket.settle(200)  # the call used 300, not 100: 200 tokens of debt
        await bucket.acquire(10)
        return clock.now

    # Debt 200 then need 10 more -> 21 s at 10 tokens/s.
    assert asyncio.run(go()) == pytest.approx(21.0)


def test_limits_wrap_llm_seats_only_and_parse() -> None:
    assert ProviderLimit.parse("openai=500:20000") == ("openai", ProviderLimit(500, 20000))
    assert ProviderLimit.parse("google=:1000") == ("google", ProviderLimit(None, 1000))
    for bad in ("openai", "openai=", "openai=x", "openai=-1"):
        with pytest.raises(ConfigError):
            ProviderLimit.parse(bad)

    class Seat:
        name = "s"

        async def decide(self, decision: Decision[Any]) -> Action:
            return Action(text="hi", usage=Usage(7, 3))

    def factory(spec: str, prompts: PromptBook) -> Player:
        return Seat()

    limits = RateLimits({"openai": ProviderLimit(60, None)})
    wrapped = limits.wrap(factory)
    assert wrapped is not None
    assert type(wrapped("openai:gpt-5", PROMPTS)).__name__ == "LimitedPlayer"
    assert isinstance(wrapped("anthropic:claude-opus-4-6", PROMPTS), Seat)
    assert RateLimits().wrap(factory) is factory


# --- the simulated provider --------------------------------------------------------------

def test_simulated_seats_play_full_games_with_fixed_latency(tmp_path: Path) -> None:
    providers: list[SimulatedProvider] = []

    def factory(spec: str, prompts: PromptBook) -> Player:
        p = create_provider("simulated", spec.partition(":")[2], latency_s=0.001,
                            tool_every=3)
        assert isinstance(p, SimulatedProvider)
        providers.append(p)
        return LLMPlayer(p, prompts, name=spec)

    seats = ["openai:gpt-5-mini", "anthropic:claude-opus-4-6", "google:gemini-2.5-flash"]
    run = asyncio.run(play_game("stille-post", seed=3, out=tmp_path / "g.jsonl",
                                players=seats, llm_factory=factory,
                                options={"max_rounds": 2}))
    assert run.outcome.status == "completed"
    s = run.outcome.summary
    # Valid but wrong guesses, no roulette: everyone plays the whole game.
    assert s["winners"] == [] and s["eliminated"] == [] and s["turns"] == 6
    assert sum(p.calls for p in providers) == 3 + 6 + 2 * 3  # intros, turns, 2 guess phases
    assert all(u.input_tokens > 0 for u in run.outcome.usage.values())


# --- Stille Post metrics ----------------------------------------------------------------------

def test_stille_post_metrics_count_what_the_transcripts_say(tmp_path: Path,
                                                           play: Play) -> None:
    assert metrics_for("stille-post") is compute_metrics
    cfg = TournamentConfig(game="stille-post", games=20, seed=8,
                           players=("gambler", "detective", "random"))
    play(cfg, tmp_path)
    res = load_results(tmp_path)
    m = compute_metrics(res.transcripts())
    assert json.loads(json.dumps(m)) == m  # JSON-safe
    assert set(m) == {"overall", "per_player", "tables"}
    g, d = m["per_player"]["bot:gambler"], m["per_player"]["bot:detective"]
    wins = Counter(r.players[str(s)] for r in res.rows for s in r.summary["winners"])
    assert g["wins"] == wins["bot:gambler"] and d["wins"] == wins["bot:detective"]
    pulls = sum(1 for t in res.transcripts() for e in t.events
                if e.type == "tool_result" and e.data.get("tool") == "russian_roulette")
    assert m["overall"]["roulette_pulls"] == pulls > 0
    assert g["roulette_pulls"] + m["per_player"]["bot:random"]["roulette_pulls"] == pulls
    assert g["roulette_self_eliminated"] + g["roulette_kills"] == g["roulette_pulls"]
    assert d["hints"] == d["guess_model_correct"] - d["no_hints_left"]
    assert d["roulette_pulls"] == 0 and d["guess_model_calls"] > 0
    assert 0 <= d["identity_accuracy"] <= 1
    if d["wins"]:
        assert d["mean_win_turn"] >= cfg.options.get("guess_every", 3)
    causes = {row[1] for row in m["tables"]["elimination_causes"]["rows"]}
    assert causes <= {"roulette", "unresponsive"}


def test_a_bad_pool_member_fails_before_anything_is_written(tmp_path: Path,
                                                           play: Play) -> None:
    from stille_post.core.errors import UnknownPlayerError

    cfg = TournamentConfig(game="stille-post", games=40, seed=1, seating="balanced",
                           pool=("random", "gambler", "cautious", "nobot"), seats=2)
    with pytest.raises(UnknownPlayerError, match="nobot"):
        play(cfg, tmp_path / "never")
    assert not (tmp_path / "never").exists()


def test_tokens_and_dollars_reach_the_index_report_and_metrics(tmp_path: Path,
                                                               play: Play) -> None:
    from stille_post.tournament.report import build_report

    def factory(spec: str, prompts: PromptBook) -> Player:
        return LLMPlayer(SimulatedProvider(spec.partition(":")[2], latency_s=0), prompts,
                         name=spec)

    cfg = TournamentConfig(game="stille-post", games=3, seed=2,
                           players=("openai:gpt-5-mini", "anthropic:claude-opus-4-6",
                                    "detective"), options={"max_rounds": 1})
    stats = play(cfg, tmp_path, llm_factory=factory)
    recorded = [float(u.get("cost_usd", 0)) for t in load_results(tmp_path).transcripts()
                for u in (t.result or {})["usage"].values()]
    assert stats.tokens > 0 and sum(recorded) > 0
    assert stats.dollars == pytest.approx(sum(recorded))
    report = build_report(tmp_path, passes=1)
    board = {r["player"]: r for r in report["leaderboard"]}
    assert board["bot:detective"]["dollars"] == 0 and board["bot:detective"]["tokens"] == 0
    assert sum(r["dollars"] for r in board.values()) == pytest.approx(sum(recorded))
    per_player = report["metrics"]["per_player"]
    for label in ("openai:gpt-5-mini", "anthropic:claude-opus-4-6"):
        assert board[label]["dollars"] > 0
        assert per_player[label]["dollars"] == pytest.approx(board[label]["dollars"])
        assert per_player[label]["tokens"] == board[label]["tokens"] > 0
