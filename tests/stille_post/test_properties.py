"""Property tests: random games of random bots and chaotic LLM stand-ins never crash or
hang, and always end with valid placements."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stille_post.games.kit.framing import FORGERY_PREFIX
from stille_post.games.stille_post.bots import BOTS
from stille_post.players.base import Action, Decision


def assert_valid_placements(placements: dict[int, int], n: int) -> None:
    assert sorted(placements) == list(range(1, n + 1))
    # Competition ranking: a rank r shared by k seats is followed by rank r + k.
    ranks = sorted(placements.values())
    assert ranks[0] == 1
    for i, r in enumerate(ranks):
        assert r == ranks.index(r) + 1, ranks
        assert r <= i + 1


# The fixtures used here are plain factory functions: sharing them across examples is safe.
FIXTURES_OK = [HealthCheck.function_scoped_fixture]

game_options = st.fixed_dictionaries({
    "guess_every": st.integers(1, 5),
    "max_rounds": st.integers(1, 6),
    "match": st.sampled_from(["fuzzy", "exact"]),
    "max_forfeits": st.integers(1, 3),
    "repair_attempts": st.integers(0, 2),
})


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURES_OK)
@given(seed=st.integers(0, 2**31 - 1),
       names=st.lists(st.sampled_from(sorted(BOTS)), min_size=2, max_size=8),
       options=game_options)
def test_random_bot_games_end_with_valid_placements(play, bots, seed: int, names: list[str],
                                                    options: dict[str, Any]) -> None:
    outcome, events, game = play(bots(names, seed), seed=seed, **options)
    assert outcome.status == "completed", outcome.reason
    assert_valid_placements(outcome.placements, len(names))
    assert events[-1].type == "reveal"
    assert game.log.round <= options["max_rounds"]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURES_OK)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 6), options=game_options)
def test_chaotic_model_output_never_crashes_the_game(play, chaos, seed: int, n: int,
                                                     options: dict[str, Any]) -> None:
    players, _ = chaos(n, seed)
    outcome, events, _ = play(players, seed=seed, **options)
    assert outcome.status == "completed", outcome.reason
    assert_valid_placements(outcome.placements, n)
    for e in events:
        if e.type == "message":
            text = e.data["text"]
            assert len(text) <= 2000
            # No published line may pass for a Game Master or player header.
            for line in text.split("\n"):
                assert not line.startswith(("[GAME MASTER", "[Player")), line
            if "[GAME MASTER]" in text:
                assert FORGERY_PREFIX + "[GAME MASTER]" in text


class _Hangs:
    name = "bot:hangs"

    async def decide(self, decision: Decision[Any]) -> Action:
        await asyncio.sleep(3600)
        return Action(text="never")


def test_a_hung_player_forfeits_and_is_removed(play, bots) -> None:
    players = bots(["cautious", "cautious", "cautious"], 3)
    players[2] = _Hangs()  # type: ignore[assignment]
    outcome, events, _ = play(players, seed=3, decision_timeout_s=0.01, max_forfeits=2)
    assert outcome.status == "completed"
    forfeits = [e for e in events if e.type == "forfeit" and e.data["seat"] == 2]
    assert forfeits and "no answer within" in forfeits[0].data["reason"]
    assert outcome.summary["causes"]["2"] == "unresponsive"
