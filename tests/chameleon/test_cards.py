"""Cards: the shipped file, and clear errors for a user's malformed file (--cards)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stille_post.core.errors import ConfigError, UsageError
from stille_post.core.rng import make_rng
from stille_post.games.chameleon import GAME
from stille_post.games.chameleon.cards import (
    CardFileError,
    load_cards,
    traits_file,
    with_traits,
)
from stille_post.games.chameleon.rules import normalise, parse_response
from stille_post.games.kit.setup import prepare


def test_shipped_cards() -> None:
    """At least 20 categories of 16 one-word words, each word with hints that do not name
    it or another word of its card (docs/rules.md §3 Setup)."""
    cards = load_cards()
    assert len(cards) >= 20
    for card in cards:
        assert len(card.words) >= 16, card.category
        keys = {normalise(w) for w in card.words}
        for w in card.words:
            assert parse_response(w, 40) == w
            hints = card.hints_for(w)
            assert hints, (card.category, w)
            assert not {normalise(h) for h in hints} & keys, (card.category, w)


def test_shipped_traits() -> None:
    """Every shipped card has traits (data/traits.toml) that a person would give without
    naming the word: each trait fits at least 2 words of its card (so it never points at
    one), every word has at least 4 (so at N = 4 a fresh one is left for every
    non-chameleon, even after the chameleon took one), and
    no trait is a word of its card or contains one (a trait that spelled out a card word
    would give it away)."""
    for card in load_cards():
        with_them = with_traits(card, traits_file())
        assert with_them.traits, card.category
        keys = {normalise(w) for w in card.words}
        for trait, fits in with_them.traits.items():
            assert parse_response(trait, 40) == trait
            assert len(set(fits)) >= 2, (card.category, trait)
            assert not any(k in trait for k in keys), (card.category, trait)
        for w in card.words:
            assert len(with_them.traits_for(w)) >= 4, (card.category, w)
    import tomllib
    named = set(tomllib.loads(traits_file().text))
    assert named == {c.category for c in load_cards()}  # no stray or missing category


GOOD = '[[card]]\ncategory = "Mine"\nwords = ["alpha", "beta", "gamma", "delta"]\n'


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cards.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "message"), [
    ("[[card]\n", "not valid TOML"),
    ("title = 'no cards'\n", "no \\[\\[card\\]\\] entries"),
    ('[[card]]\nwords = ["a", "b"]\n', "non-empty string 'category'"),
    ('[[card]]\ncategory = "X"\nwords = "a, b"\n', "must be a list of strings"),
    ('[[card]]\ncategory = "X"\nwords = ["ice cream", "cake"]\n', "not a single word"),
    ('[[card]]\ncategory = "X"\nwords = ["Cake", "cake"]\n', "repeated words"),
    ('[[card]]\ncategory = "X"\nwords = ["a"]\n', "at least 2 words"),
    ('[[card]]\ncategory = "X"\nwords = ["a", "b"]\nhints = {c = ["d"]}\n',
     "not one of its words"),
    ('[[card]]\ncategory = "X"\nwords = ["a", "b"]\ncolour = "red"\n', "unknown keys"),
    ('[[card]]\ncategory = "X"\nwords = ["a", "b"]\ntraits = {c = ["a", "z"]}\n',
     "trait 'c' must list words of the card, not \\['z'\\]"),
    ('[[card]]\ncategory = "X"\nwords = ["a", "b"]\ntraits = {a = ["b"]}\n',
     "trait 'a' is a word of the card"),
    ('[[card]]\ncategory = "X"\nwords = ["a", "b"]\ntraits = {"two words" = ["a"]}\n',
     "not a single word"),
    ('[[card]]\ncategory = "X"\nwords = ["a", "b"]\ntraits = ["a"]\n',
     "'traits' must be a table"),
    (GOOD + GOOD, "appears twice"),
])
def test_malformed_card_files(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(CardFileError, match=message) as info:
        load_cards(_write(tmp_path, text))
    assert isinstance(info.value, UsageError)  # the CLI prints one line and exits 2


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CardFileError, match="not found"):
        load_cards(tmp_path / "nope.toml")


def test_own_cards_through_prepare(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD)
    prepared = prepare(GAME, seed=1, rng=make_rng(1), players=None,
                       options={"cards": path, "words": 4})
    assert prepared.header_extra()["category"] == "Mine"
    assert prepared.engine.deal.secret in ("alpha", "beta", "gamma", "delta")
    with pytest.raises(ConfigError, match="no card has that many words"):
        prepare(GAME, seed=1, rng=make_rng(1), players=None, options={"cards": path})
    with pytest.raises(ConfigError, match="category"):
        prepare(GAME, seed=1, rng=make_rng(1), players=None,
                options={"cards": path, "words": 4, "category": "Other"})
