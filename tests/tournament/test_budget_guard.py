"""The budget guard's rules, one at a time (tournament/budget.py; the loopback runs are
in test_tour_caps.py): games start one at a time until a game's cost is known, the
expected cost of a game is the dearest one seen, a hard cap reserves each call's worst
case while the call is in flight, and a charge never lowers the spend."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from stille_post.core.errors import GameAborted
from stille_post.providers.base import ChatRequest, Message, Usage
from stille_post.tournament.budget import BudgetGuard
from stille_post.tournament.caps import Caps
from stille_post.tournament.config import GameSpec, TournamentConfig
from stille_post.tournament.spend import FolderSpend, Spend

LABEL = "openai:gpt-5-mini"  # priced by the shipped table: $0.25 in, $2.00 out per 1M
PLAYERS = (LABEL, "detective", "random", "gambler")


def _guard(tmp_path: Path, caps: Caps, games: list[float] | None = None) -> BudgetGuard:
    """A guard over a folder whose completed games cost `games` (input tokens at $0.25
    per 1M: a game of $1 is 4M input tokens)."""
    config = TournamentConfig(game="stille-post", games=20, seed=1, players=PLAYERS)
    spent = FolderSpend(Spend(), Spend())
    for dollars in games or []:
        usage = {"1": {"input_tokens": round(dollars * 4_000_000), "output_tokens": 0}}
        spent.all.add_game({"1": LABEL}, usage)
        spent.completed.add_game({"1": LABEL}, usage)
    return BudgetGuard(tmp_path, config, caps, spent)


def _spec(i: int) -> GameSpec:
    return GameSpec(i, 1 + i, PLAYERS)


def test_games_start_one_at_a_time_until_a_game_cost_is_known(tmp_path: Path) -> None:
    guard = _guard(tmp_path, Caps(budget_usd=10.0))
    assert guard.may_start(_spec(0)) is True
    assert guard.may_start(_spec(1)) is None  # wait: the first game's cost is unknown

    async def second_waits_for_the_first() -> list[str]:
        order: list[str] = []

        async def second() -> None:
            assert await guard.admit(_spec(1))
            order.append("second started")

        task = asyncio.create_task(second())
        await asyncio.sleep(0)
        order.append("first finished")
        guard.spent.completed.add_game({"1": LABEL}, {"1": {"input_tokens": 4_000_000,
                                                             "output_tokens": 0}})
        guard.finished("g0", tmp_path)  # no transcript here: the spend is added above
        await task
        return order

    assert asyncio.run(second_waits_for_the_first()) == ["first finished", "second started"]


def test_a_known_cost_lets_games_start_together_while_the_dearest_fits(
        tmp_path: Path) -> None:
    # Games of $1 and $3 done ($4 spent): the next is expected at $3, the dearest.
    guard = _guard(tmp_path, Caps(budget_usd=12.0), games=[1.0, 3.0])
    assert guard.may_start(_spec(2)) is True  # 4 + 3 = 7
    assert guard.may_start(_spec(3)) is True  # 4 + 3 + 3 = 10
    assert guard.may_start(_spec(4)) is False  # 13 > 12: the mean ($2) would have let it
    assert guard.stop is not None and guard.stop.how == "next game"


def test_a_hard_cap_reserves_the_worst_case_of_the_calls_in_flight(tmp_path: Path) -> None:
    guard = _guard(tmp_path, Caps(budget_usd=1.0, hard=True))
    request = ChatRequest("system " * 10, [Message("user", "hello")],
                          max_output_tokens=200_000)
    worst = guard.worst_case(LABEL, request, "openai")
    estimated_input = worst.tokens - 200_000  # the request's characters / 4
    assert 0 < estimated_input < 50
    assert worst.dollars == pytest.approx((estimated_input * 0.25 + 200_000 * 2.0) / 1e6)
    guard.reserve(LABEL, worst)  # $0.40 in flight
    guard.reserve(LABEL, worst)  # $0.80 in flight
    with pytest.raises(GameAborted, match=r"^budget: the next call of openai:gpt-5-mini"):
        guard.reserve(LABEL, worst)  # $1.20 would pass $1.00
    assert guard.stopped is not None  # and no new game starts
    guard.release(LABEL, worst)


def test_a_request_without_an_output_limit_is_priced_at_the_documented_worst(
        tmp_path: Path) -> None:
    from stille_post.tournament.budget import WORST_OUTPUT_TOKENS

    guard = _guard(tmp_path, Caps(budget_usd=1.0, hard=True))
    request = ChatRequest("", [Message("user", "x")])
    assert guard.worst_case(LABEL, request, "openai").tokens == WORST_OUTPUT_TOKENS + 1
    assert guard.worst_case(LABEL, request, "anthropic").tokens == 2048 + 1


def test_a_charge_never_lowers_the_spend(tmp_path: Path) -> None:
    guard = _guard(tmp_path, Caps(budget_usd=10.0), games=[1.0])
    assert guard.may_start(_spec(1)) is True
    before = guard.spent_now()
    guard.charge(LABEL, Usage(-10**9, -5))  # a Usage built by hand: the guard clamps it
    assert guard.spent_now().dollars >= before.dollars
    assert guard.spent_now().tokens >= before.tokens


def test_the_warning_for_unknown_usage_is_one_line_per_model_and_recorded(
        tmp_path: Path) -> None:
    guard = _guard(tmp_path, Caps(budget_usd=10.0))
    said: list[str] = []
    guard.warn = said.append
    for _ in range(3):
        guard.charge(LABEL, Usage(10, 2, 0, unknown_calls=1))
    guard.charge("openai:gpt-4.1-mini", Usage(10, 2, 0, unknown_calls=1))
    assert len(said) == 2 and all("\n" not in w for w in said)
    assert said[0].startswith(f"warning: {LABEL} sent a reply without a usable token count")
    assert guard.warnings == said
