"""The Elimination Game and Connections render their prompts incrementally: every
request of every seat, over whole seeded games (private chats in channels and repair
previews included), equals a full re-render of the seat's view."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from stille_post.core.rng import make_rng
from stille_post.games import get_game
from stille_post.games.connections import prompts as CP
from stille_post.games.elimination import prompts as EP
from stille_post.games.kit.framing import GM_TO_YOU
from stille_post.games.kit.incremental import render_full
from stille_post.games.kit.setup import prepare
from stille_post.players.base import Action, Decision, Player
from stille_post.providers.base import Message
from tests.slowparams import fast_only


def _elimination(decision: Decision[Any]) -> list[Message]:
    obs = decision.observation
    return render_full(EP.render_into, obs.events, obs.seat,
                       f"{GM_TO_YOU}: {EP.instruction(decision.kind, obs)}")


def _connections(decision: Decision[Any]) -> list[Message]:
    obs = decision.observation
    return render_full(CP.render_event, obs.events, obs.seat,
                       f"{GM_TO_YOU}: {CP.instruction(decision)}")


class Compare:
    """Plays as the wrapped bot and checks the request an LLM seat would have been sent."""

    def __init__(self, inner: Player, game: str,
                 reference: Callable[[Decision[Any]], list[Message]], seen: list[int]) -> None:
        self.inner, self.reference, self.seen = inner, reference, seen
        self.prompts = get_game(game).prompts
        self.name = getattr(inner, "name", "compare")

    async def decide(self, decision: Decision[Any]) -> Action:
        got = self.prompts.render(decision).messages
        assert got == self.reference(decision), (decision.kind, decision.seat)
        self.seen.append(1)
        return await self.inner.decide(decision)


@pytest.mark.parametrize(("game", "reference", "options"), [
    ("elimination", _elimination, {}),
    ("elimination", _elimination, {"num_players": 5, "limit_policy": "reask"}),
    ("connections", _connections, {"max_attempts": 12}),
])
@pytest.mark.parametrize("seed", fast_only([1, 2], {1}))  # seed 2: nox -s slow
def test_every_request_equals_a_full_render(game: str, reference: Any,
                                            options: dict[str, Any], seed: int) -> None:
    prepared = prepare(get_game(game), seed=seed, rng=make_rng(seed), options=options)
    table = prepared.engine.table
    seen: list[int] = []
    table.players = {s: Compare(p, game, reference, seen) for s, p in table.players.items()}
    outcome = asyncio.run(prepared.play())
    assert outcome.status == "completed", outcome.reason
    assert len(seen) >= 10  # the comparison really ran, many times
