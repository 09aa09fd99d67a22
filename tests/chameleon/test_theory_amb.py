"""π^amb's rules (seed 003, §4.2) as scenarios, and the subset response space.

N = 3 players, l = 2, so K = l(N+1) = 8 words and the consistent sizes are
|r_1| = 6, |r_2| = 4, |r_3| = 2."""

from __future__ import annotations

import random

import pytest

from stille_post.core.errors import ParseError
from stille_post.games.chameleon.theory import amb
from stille_post.games.chameleon.theory.model import card_words
from stille_post.games.chameleon.theory.space import SubsetSpace, TokenSpace

N, L = 3, 2
WORDS = card_words(8)
SECRET = "w3"


def fs(*names: str) -> frozenset[str]:
    return frozenset(names)


def test_consistent_responses_nest_and_keep_the_secret() -> None:
    rng = random.Random(5)
    for _ in range(200):
        previous: amb.Subset = frozenset(WORDS)
        for i in range(1, N + 1):
            r = amb.respond(previous, SECRET, N, L, i, WORDS, rng)
            assert r is not None and SECRET in r and r <= previous
            assert len(r) == L * (N + 1 - i)
            previous = r


def test_each_consistent_subset_is_drawn_uniformly() -> None:
    """r_1 holds w3 and 5 of the other 7 words: 21 subsets, each ~1/21 (4,200 seeded
    draws: 200 expected each; bound ±5 standard deviations, ±68)."""
    rng = random.Random(11)
    counts: dict[frozenset[str], int] = {}
    for _ in range(4200):
        r = amb.respond(frozenset(WORDS), SECRET, N, L, 1, WORDS, rng)
        assert r is not None
        counts[r] = counts.get(r, 0) + 1
    assert len(counts) == 21
    assert all(abs(c - 200) <= 68 for c in counts.values()), counts


@pytest.mark.parametrize(("previous", "why"), [
    (None, "the previous speaker said null"),
    (fs("w1", "w2", "w4", "w5", "w6", "w7"), "w* was eliminated"),
    (fs("w1", "w2", "w3", "w4", "w5"), "a size other than l(N+1-1) = 6"),
    (fs("w1", "w2", "w3", "w4", "w5", "w6", "w7"), "too large"),
])
def test_null_after_a_deviation(previous: amb.Subset, why: str) -> None:
    assert amb.says_null(previous, SECRET, N, L, 2), why
    assert amb.respond(previous, SECRET, N, L, 2, WORDS, random.Random(0)) is None, why


def test_null_propagates_to_every_later_speaker() -> None:
    assert amb.respond(None, SECRET, N, L, 3, WORDS, random.Random(0)) is None


def test_vote_for_player_1_when_everyone_is_consistent() -> None:
    rs = [fs("w1", "w2", "w3", "w4", "w5", "w6"), fs("w1", "w2", "w3", "w4"),
          fs("w2", "w3")]
    assert amb.vote(rs, SECRET, N, L) == 1


@pytest.mark.parametrize(("responses", "first_bad"), [
    ([fs("w1", "w2", "w4", "w5", "w6", "w7"), None, None], 1),  # lost w* at once
    ([fs("w1", "w2", "w3", "w4", "w5", "w6"), fs("w1", "w2", "w3"), None], 2),  # size 3 ≠ 4
    ([fs("w1", "w2", "w3", "w4", "w5", "w6"), None, None], 2),  # a null
    ([fs("w1", "w2", "w3", "w4", "w5", "w6"), fs("w1", "w2", "w3", "w4"),
      fs("w1", "w2")], 3),
])
def test_vote_for_the_first_inconsistent_player(responses: list[amb.Subset],
                                                first_bad: int) -> None:
    assert amb.vote(responses, SECRET, N, L) == first_bad


def test_chameleon_posterior_is_l_words_after_a_consistent_game() -> None:
    """The chameleon speaks third (last) and keeps r_2's first 2 words: every response
    is consistent, the others vote for player 1, and w* is one of l = 2 words."""
    rs = [fs("w1", "w2", "w3", "w4", "w5", "w6"), fs("w1", "w3", "w5", "w6"),
          fs("w1", "w3")]
    found = amb.candidates(rs, 3, [1, 1], WORDS, N, L)
    assert found == ["w1", "w3"]


def test_chameleon_posterior_uses_the_vote() -> None:
    """The chameleon speaks first and keeps w1..w6; the second speaker's r_2 lies inside
    it. A vote for player 1 says w* is in r_1, a vote for the chameleon says it is not:
    of the remaining words only those whose nulls and sizes fit the rest survive."""
    r1 = fs("w1", "w2", "w3", "w4", "w5", "w6")
    rs = [r1, fs("w2", "w3", "w4", "w5"), fs("w3", "w4")]
    assert amb.candidates(rs, 1, [1, 1], WORDS, N, L) == ["w3", "w4"]
    # Had w* been outside r_1, the two others would both have said null.
    assert amb.candidates(rs, 1, [2, 2], WORDS, N, L) == []
    nulls: list[amb.Subset] = [r1, None, None]
    assert amb.candidates(nulls, 1, [1, 1], WORDS, N, L) == ["w7", "w8"]


def test_subset_space_parses_into_card_order() -> None:
    space = SubsetSpace(WORDS)
    assert space.parse(" W5+w2 ") == "w2+w5"
    assert space.parse("NULL") == "null"
    assert space.decode("w2+w5") == fs("w2", "w5") and space.decode("null") is None
    for bad in ("w9", "w2+w2", "", "w1,w2", "apple"):
        with pytest.raises(ParseError):
            space.parse(bad)


def test_token_space() -> None:
    space = TokenSpace(("t0", "t1", "t2"))
    assert space.parse(" T2 ") == "t2"
    for bad in ("t3", "", "t1 t2"):
        with pytest.raises(ParseError):
            space.parse(bad)
