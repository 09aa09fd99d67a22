"""The pure rule functions of docs/rules.md §3 (rules.py), including property checks."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stille_post.core.errors import ParseError
from stille_post.core.rng import ForcedRng
from stille_post.games.chameleon import rules

WORDS = ("apple", "banana", "cherry", "grape", "ice-cream", "rubik's")


@pytest.mark.parametrize(("text", "word"), [
    ("Canopy", "Canopy"), ("**Canopy.**", "Canopy"), ('"jungle"', "jungle"),
    ("  (Dense)  ", "Dense"), ("x-ray", "x-ray"), ("rock’n’roll", "rock'n'roll"),
    ("7-up", "7-up"), ("42", "42"), ("Ñandú!", "Ñandú"), ("'tis", "tis"),
])
def test_one_word_replies(text: str, word: str) -> None:
    assert rules.parse_response(text, 40) == word


@pytest.mark.parametrize(("text", "why"), [
    ("", "no word"), ("...", "no word"), ("two words", "2 words"),
    ("My word is: canopy", "4 words"), ("pe@l", "only letters"), ("a--b", "only letters"),
    ("snake_case", "only letters"), ("x" * 41, "longer than 40"),
])
def test_invalid_replies_say_why(text: str, why: str) -> None:
    with pytest.raises(ParseError, match=why):
        rules.parse_response(text, 40)


@given(st.text(max_size=30))
def test_accepted_words_are_one_clean_word(text: str) -> None:
    try:
        word = rules.parse_response(text, 40)
    except ParseError:
        return
    assert word == rules.parse_response(word, 40)  # idempotent
    assert not any(c.isspace() for c in word) and word[0].isalnum() and word[-1].isalnum()


@pytest.mark.parametrize(("text", "seat"), [
    ("3", 3), ("Player 3", 3), ("player3.", 3), ("P3", 3), ("#3", 3), ("**4**", 4)])
def test_votes(text: str, seat: int) -> None:
    assert rules.parse_vote(text, 4) == seat


@pytest.mark.parametrize("text", ["0", "5", "three", "3 or 4", "", "Player"])
def test_bad_votes(text: str) -> None:
    with pytest.raises(ParseError):
        rules.parse_vote(text, 4)


def test_dealer_pick_must_be_tied() -> None:
    assert rules.parse_vote("2", 4, [2, 3]) == 2
    with pytest.raises(ParseError, match="not among the tied"):
        rules.parse_vote("1", 4, [2, 3])


@pytest.mark.parametrize(("text", "word"), [
    ("apple", "apple"), ("APPLE!", "apple"), ("'Apple'.", "apple"),
    ("I think it is apple.", "apple"), ("ICE-CREAM", "ice-cream"), ("Rubik’s", "rubik's"),
    ("the word: grape", "grape")])
def test_second_chance_matching(text: str, word: str) -> None:
    assert rules.parse_guess(text, WORDS) == word


@pytest.mark.parametrize(("text", "why"), [
    ("apple or banana", "names 2 words"), ("mango", "none"), ("grapefruit", "none"),
    ("", "none"), ("pineapple", "none")])
def test_second_chance_rejects(text: str, why: str) -> None:
    with pytest.raises(ParseError, match=why):
        rules.parse_guess(text, WORDS)


def test_tally_and_top() -> None:
    votes = {1: 2, 2: 3, 3: 2, 4: 3}
    assert rules.tally(votes) == {2: 2, 3: 2}
    assert rules.top_seats(rules.tally(votes)) == [2, 3]
    assert rules.top_seats(rules.tally({1: 4, 2: 4, 3: 1, 4: 4})) == [4]
    assert rules.top_seats({}) == []


def test_outcomes_and_placements() -> None:
    seats = [1, 2, 3, 4]
    assert rules.outcome_of(2, 2, False) == rules.IDENTIFIED_WIN
    assert rules.outcome_of(2, 2, True) == rules.IDENTIFIED_LOSS
    assert rules.outcome_of(3, 2, None) == rules.MISIDENTIFIED_LOSS
    assert rules.outcome_of(None, 2, None) == rules.MISIDENTIFIED_LOSS
    with pytest.raises(ValueError):
        rules.outcome_of(2, 2, None)
    # Competition ranks: the caught chameleon is beaten by three seats, so it is 4th.
    assert rules.placements(rules.IDENTIFIED_WIN, 2, seats) == {1: 1, 2: 4, 3: 1, 4: 1}
    assert rules.placements(rules.IDENTIFIED_LOSS, 2, seats) == {1: 2, 2: 1, 3: 2, 4: 2}
    assert rules.placements(rules.MISIDENTIFIED_LOSS, 2, seats) == {1: 2, 2: 1, 3: 2, 4: 2}
    assert rules.placements(rules.FAIL, 2, seats) == {1: 1, 2: 1, 3: 1, 4: 1}
    assert rules.winners(rules.FAIL, 2, seats) == []


def test_deal_draw_order_can_be_forced() -> None:
    """rules.deal draws card, chameleon, secret, dealer, then the order one seat at a time:
    the order the spec runner forces them in."""
    cards = [("B", ["x", "y"]), ("A", ["p", "q"])]
    rng = ForcedRng(0, forced_choices=["B", 3, "y", 1, 2, 3])
    d = rules.deal(rng, cards, 3, 2)
    assert (d.category, d.words, d.chameleon, d.secret, d.dealer, d.order) == \
        ("B", ("x", "y"), 3, "y", 1, (2, 3, 1))
    assert rng.unused == {"random": [], "choice": []}


def test_deal_skips_cards_that_are_too_small() -> None:
    d = rules.deal(random.Random(1), [("Small", ["a", "b"]), ("Big", list("cdefg"))], 4, 3)
    assert d.category == "Big" and len(d.words) == 3
    with pytest.raises(ValueError):
        rules.deal(random.Random(1), [("Small", ["a", "b"])], 4, 3)


def test_closed_form() -> None:
    assert rules.trivial_win_probability(4, 16) == pytest.approx(15 / 64)
    assert rules.trivial_win_probability(5, 16) == pytest.approx(0.1875)
