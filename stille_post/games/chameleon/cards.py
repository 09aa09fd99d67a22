"""Cards: a category, its possible secret words, and (optionally) hint words per word.

The shipped cards are `data/cards.toml` in this folder, written for this project (the
commercial cards are not free), loaded through the kit's data loader so an installed
wheel has them too. A user file has the same shape:

    [[card]]
    category = "Fruit"
    words = ["apple", "banana", ...]          # at least K of them, one word each
    [card.hints]                              # optional: what the `heuristic` bot says
    apple = ["orchard", "cider"]
    [card.traits]                             # optional: what the `subtle` bot says
    yellow = ["banana", "lemon", "pineapple"]

A hint points at one word. A trait is a clue a person would give: related to the secret
word but shared with other words of the card, so it does not give the word away. The
shipped cards keep their traits in `data/traits.toml` (one `[Category]` table each), read
only by games that seat a `subtle` bot, so the cards file and the games without one are
as they were. Every word, hint and trait must itself be a legal one-word reply
(rules.parse_response), so a bot that says the secret word, a hint or a trait can never
make its own game Fail.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from stille_post.core.errors import ConfigError, ParseError
from stille_post.core.tomlfile import TOML_ERRORS, toml_problem
from stille_post.games.chameleon.rules import normalise, parse_response
from stille_post.games.kit.data import DataFile, load_data

PACKAGE = "stille_post.games.chameleon"
CARDS_RESOURCE = "data/cards.toml"
MAX_WORD_CHARS = 40


class CardFileError(ConfigError):
    """A card file that is missing, not TOML, or not shaped like a card file."""


@dataclass(frozen=True)
class Card:
    category: str
    words: tuple[str, ...]
    hints: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # trait -> the card's words it fits (normalised), in the file's order
    traits: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def hints_for(self, word: str) -> tuple[str, ...]:
        return self.hints.get(normalise(word), ())

    def traits_for(self, word: str) -> tuple[str, ...]:
        key = normalise(word)
        return tuple(t for t, fits in self.traits.items() if key in fits)


def card_file(path: Path | str | None = None) -> DataFile:
    """The shipped card file, or the user's own (`--cards`)."""
    try:
        return load_data(PACKAGE, CARDS_RESOURCE, name="cards", override=path)
    except ConfigError as exc:
        raise CardFileError(str(exc).replace("cards file", "card file")) from None


def load_cards(path: Path | str | None = None) -> tuple[Card, ...]:
    return cards_of(card_file(path))


def cards_of(data: DataFile) -> tuple[Card, ...]:
    return _parse_cached(data.text, data.origin)


@lru_cache(maxsize=8)  # a tournament prepares thousands of games from one file
def _parse_cached(text: str, origin: str) -> tuple[Card, ...]:
    try:
        raw = tomllib.loads(text)
    except TOML_ERRORS as exc:
        raise CardFileError(f"card file {origin} is not valid TOML: {toml_problem(exc)}") from None
    return parse_cards(raw, source=origin)


def parse_cards(raw: Mapping[str, Any], *, source: str = "cards") -> tuple[Card, ...]:
    entries = raw.get("card")
    if not isinstance(entries, list) or not entries:
        raise CardFileError(f"{source}: no [[card]] entries; see {CARDS_RESOURCE} in the package")
    cards: list[Card] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries, start=1):
        card = _parse_card(entry, f"{source}: card {i}")
        key = card.category.casefold()
        if key in seen:
            raise CardFileError(f"{source}: category {card.category!r} appears twice")
        seen.add(key)
        cards.append(card)
    return tuple(cards)


def _parse_card(entry: Any, where: str) -> Card:
    if not isinstance(entry, Mapping):
        raise CardFileError(f"{where}: a card must be a table")
    unknown = set(entry) - {"category", "words", "hints", "traits"}
    if unknown:
        raise CardFileError(f"{where}: unknown keys {sorted(unknown)}")
    category = entry.get("category")
    if not isinstance(category, str) or not category.strip():
        raise CardFileError(f"{where}: needs a non-empty string 'category'")
    where = f"{where} ({category})"
    words = _word_list(entry.get("words"), f"{where}: words")
    if len(words) < 2:
        raise CardFileError(f"{where}: needs at least 2 words")
    keys = [normalise(w) for w in words]
    if len(set(keys)) != len(keys):
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        raise CardFileError(f"{where}: repeated words {dupes}")
    hints_raw = entry.get("hints", {})
    if not isinstance(hints_raw, Mapping):
        raise CardFileError(f"{where}: 'hints' must be a table of word = [hint, ...]")
    hints: dict[str, tuple[str, ...]] = {}
    for word, values in hints_raw.items():
        if normalise(word) not in keys:
            raise CardFileError(f"{where}: hints for {word!r}, which is not one of its words")
        hints[normalise(word)] = _word_list(values, f"{where}: hints.{word}")
    traits = _traits(entry.get("traits", {}), set(keys), where)
    return Card(category.strip(), words, hints, traits)


def _traits(raw: Any, keys: set[str], where: str) -> dict[str, tuple[str, ...]]:
    """trait -> the card words it fits, normalised; every trait a legal one-word reply
    that is not a word of the card, every word listed a word of the card."""
    if not isinstance(raw, Mapping):
        raise CardFileError(f"{where}: 'traits' must be a table of trait = [word, ...]")
    traits: dict[str, tuple[str, ...]] = {}
    for trait, values in raw.items():
        (said,) = _word_list([trait], f"{where}: traits")
        if normalise(said) in keys:
            raise CardFileError(f"{where}: trait {trait!r} is a word of the card")
        fits = tuple(normalise(w) for w in _word_list(values, f"{where}: traits.{trait}"))
        strays = [w for w in fits if w not in keys]
        if strays or not fits:
            raise CardFileError(f"{where}: trait {trait!r} must list words of the card"
                                + (f", not {strays}" if strays else ""))
        traits[normalise(said)] = fits
    return traits


# --- the shipped cards' traits (data/traits.toml) ---------------------------------------

TRAITS_RESOURCE = "data/traits.toml"


def traits_file() -> DataFile:
    return load_data(PACKAGE, TRAITS_RESOURCE, name="traits")


def with_traits(card: Card, data: DataFile) -> Card:
    """The card with its traits from a traits file (`[Category]` tables of trait = [word,
    ...]); a card the file does not name, or one with traits of its own, is unchanged."""
    if card.traits:
        return card
    table = _traits_tables(data.text, data.origin).get(card.category)
    if table is None:
        return card
    keys = {normalise(w) for w in card.words}
    return replace(card, traits=_traits(table, keys, f"{data.origin}: {card.category}"))


@lru_cache(maxsize=4)
def _traits_tables(text: str, origin: str) -> Mapping[str, Any]:
    try:
        raw = tomllib.loads(text)
    except TOML_ERRORS as exc:
        raise CardFileError(f"traits file {origin} is not valid TOML: {toml_problem(exc)}") \
            from None
    return raw


def _word_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise CardFileError(f"{where}: must be a list of strings")
    out: list[str] = []
    for w in value:
        if not isinstance(w, str):
            raise CardFileError(f"{where}: {w!r} is not a string")
        try:
            out.append(parse_response(w, MAX_WORD_CHARS))
        except ParseError as exc:
            raise CardFileError(f"{where}: {w!r} is not a single word ({exc.reason}); "
                                "join words with a hyphen, e.g. ice-cream") from None
    return tuple(out)
