"""Chameleon rules that mutation testing found unpinned (issue 11).

Each test fails when its rule is broken on purpose (the rulings: the game's README).
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.errors import ParseError
from stille_post.core.rng import make_rng
from stille_post.core.transcript import Transcript
from stille_post.games.chameleon import rules
from stille_post.games.chameleon.cards import load_cards
from stille_post.games.chameleon.metrics import compute_metrics
from stille_post.players.base import Action, Decision
from stille_post.session import play_game

CARDS = [(c.category, c.words) for c in load_cards()]


# --- a word of exactly max_word_chars -----------------------------------------------------


@pytest.mark.parametrize("limit", [5, 40, 200])
def test_a_word_of_exactly_max_word_chars_is_accepted(limit: int) -> None:
    word = "a" * limit
    assert rules.parse_response(f"**{word}.**", limit) == word
    with pytest.raises(ParseError, match="longer than"):
        rules.parse_response(word + "b", limit)


# --- the deal: canonical card order and rng draws, pinned by golden seeds -----------------


def test_golden_deal_all_words() -> None:
    d = rules.deal(make_rng(1), CARDS, 5, 16)
    assert (d.category, d.chameleon, d.secret, d.dealer, d.order) == \
        ("Countries", 5, "brazil", 3, (1, 5, 3, 4, 2))
    assert d.words[:4] == ("france", "japan", "brazil", "egypt") and len(d.words) == 16


def test_golden_deal_sampled_words_keep_card_order() -> None:
    d = rules.deal(make_rng(7), CARDS, 4, 8)
    assert d == rules.Deal("Hobbies", ("painting", "knitting", "chess", "photography",
                                       "cooking", "reading", "pottery", "birdwatching"),
                           1, "photography", 1, (1, 3, 4, 2))


@pytest.mark.parametrize("seed", [1, 7, 99, 2024])
def test_the_deal_does_not_depend_on_the_order_cards_are_given_in(seed: int) -> None:
    shuffled = list(CARDS)
    random.Random(seed).shuffle(shuffled)
    assert rules.deal(make_rng(seed), shuffled, 5, 12) == rules.deal(make_rng(seed), CARDS, 5, 12)


# --- the identification rate leaves Fail games out --------------------------------------


class _Garbage:
    """A seat whose every answer is illegal: the game Fails on its first word."""

    name = "openai:garbage"

    async def decide(self, decision: Decision[Any]) -> Action:
        return Action(text="two words")


def test_identification_rate_counts_valid_games_only(tmp_path: Path) -> None:
    paths = []
    for seed in range(1, 9):  # valid games: bots only
        run = asyncio.run(play_game("chameleon", seed=seed, out=tmp_path / f"v{seed}.jsonl"))
        paths.append(run.transcript)
    for seed in range(1, 4):  # Fail games: one seat can never answer
        run = asyncio.run(play_game(
            "chameleon", seed=seed, out=tmp_path / f"f{seed}.jsonl",
            players=["openai:garbage", "bot", "bot", "bot"],
            llm_factory=lambda spec, prompts: _Garbage()))
        paths.append(run.transcript)
    transcripts = [Transcript.load(p) for p in paths]
    summaries = [t.summary.flat() for t in transcripts]
    fails = [s for s in summaries if s.get("outcome") == rules.FAIL]
    valid = [s for s in summaries if s.get("outcome") != rules.FAIL]
    assert len(fails) == 3 and len(valid) == 8
    identified = sum(bool(s.get("identified")) for s in valid)
    assert identified > 0  # so leaving the Fail games in the denominator would show
    overall = compute_metrics(transcripts)["overall"]
    assert overall["fail"] == 3 and overall["valid"] == 8 and overall["games"] == 11
    assert overall["identification_rate"] == pytest.approx(identified / 8)
