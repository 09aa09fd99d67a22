"""Tie rules through the engine (docs/rules.md §3 Votes), over many seeded deals."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

from stille_post.games.chameleon import GAME, playable_cards, rules
from stille_post.games.chameleon.config import ChameleonConfig
from stille_post.games.chameleon.game import ChameleonGame
from stille_post.games.chameleon.observation import ChameleonObservation
from stille_post.players.base import Action, Decision
from tests.lazystats import binom_interval


class Fixed:
    """Says a fixed word, votes for a fixed seat; as dealer, picks the highest tied seat;
    records the tied seats it was shown."""

    def __init__(self, target: int) -> None:
        self.name = "fixed"
        self.target = target
        self.shown: list[tuple[int, ...]] = []

    async def decide(self, decision: Decision[Any]) -> Action:
        obs: ChameleonObservation = decision.observation
        if decision.kind == "word":
            return Action(text="same")
        if decision.kind == "vote":
            return Action(text=str(self.target))
        if decision.kind == "tie_break":
            self.shown.append(obs.tied)
            return Action(text=str(max(obs.tied)))
        return Action(text=obs.words[0])


# Seats 1 and 2 vote for 3; seats 3 and 4 vote for 1: a 2-2 tie between 1 and 3.
TARGETS = {1: 3, 2: 3, 3: 1, 4: 1}
CARDS = [(c.category, c.words) for c in playable_cards(ChameleonConfig.model_validate({}))]


async def _game(seed: int, tie_rule: str) -> tuple[rules.Deal, dict[str, Any], dict[int, Fixed]]:
    config = ChameleonConfig.model_validate({"tie_rule": tie_rule})
    rng = random.Random(seed)
    deal = rules.deal(rng, CARDS, 4, 16)
    players = {s: Fixed(t) for s, t in TARGETS.items()}
    outcome = await ChameleonGame(config, GAME.table(config, players, rng), deal=deal).play()
    return deal, outcome.summary.flat(), players


def _play_many(seeds: range, tie_rule: str) -> list[tuple[rules.Deal, dict[str, Any],
                                                         dict[int, Fixed]]]:
    async def run() -> list[tuple[rules.Deal, dict[str, Any], dict[int, Fixed]]]:
        return [await _game(seed, tie_rule) for seed in seeds]

    return asyncio.run(run())


def test_random_tie_break_is_uniform_among_the_tied() -> None:
    """1,000 seeded 2-2 ties: Player 1 is picked with rate 1/2, inside the exact 99.9%
    binomial interval (about 0.5 ± 0.052); only tied seats are ever picked."""
    picks: Counter[int] = Counter()
    for _, summary, _ in _play_many(range(1000), "random"):
        assert summary["tie"] and summary["tie_break"]["tied"] == [1, 3]
        picks[summary["tie_break"]["picked"]] += 1
    assert set(picks) == {1, 3}
    lo, hi = binom_interval(0.999, 1000, 0.5)
    assert lo <= picks[1] <= hi, picks


def test_dealer_decides_and_only_the_dealer_is_asked() -> None:
    for deal, summary, players in _play_many(range(200), "dealer"):
        assert summary["tie_break"] == {"rule": "dealer", "tied": [1, 3], "picked": 3,
                                        "dealer": deal.dealer}
        assert summary["accused"] == 3
        for seat, p in players.items():
            assert p.shown == ([(1, 3)] if seat == deal.dealer else [])


def test_chameleon_wins_every_tie() -> None:
    for _, summary, _ in _play_many(range(200), "chameleon_wins"):
        assert summary["accused"] is None
        assert summary["outcome"] == rules.MISIDENTIFIED_LOSS
        assert "guess" not in summary
