"""The Chameleon's hooks for the kit's rulebook runner (spec/*.yaml in this folder).

    given:
      config: {num_players: 4, tie_rule: dealer, repair_attempts: 1, ...}  # ChameleonConfig
      card: {category: Fruit, words: [...], hints: {...},   # optional; else the shipped
             traits: {...}}
      category: Fruit                                       #   cards and this category
      chameleon: 2          # forced draws, in the engine's order (rules.deal):
      secret: apple         #   card, chameleon seat, secret word, dealer, speaking order
      dealer: 1             # default 1
      order: [1, 2, 3, 4]   # default ascending
      rng: {seed: 0, random: [...], choice: [...]}   # later draws (a random tie-break)
    when:
      seats: {1: {script: [...]}, 2: {bot: copycat}}   # per seat; or per role:
      chameleon: {script: [...]}
      others: {bot: revealing}     # every non-chameleon; a script is copied to each
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stille_post.core.errors import ScenarioError
from stille_post.core.rng import ForcedRng
from stille_post.games.chameleon.cards import load_cards
from stille_post.games.kit.scenarios import RNG_KEYS, RulebookHooks, known_keys


def card_options(given: Mapping[str, Any], options: dict[str, Any], tmp: Path) -> None:
    """A scenario's own card goes to a temp file; the card's words are all in play."""
    card = given.get("card")
    if card is not None:
        path = tmp / "cards.toml"
        path.write_text(_card_toml(card), encoding="utf-8")
        options["cards"] = path
    options.setdefault("num_players", 4)
    options.setdefault("words", len(_card(given, options.get("cards"),
                                          options.get("category"))[1]))


def _card(given: Mapping[str, Any], cards: Any, category: Any = None
          ) -> tuple[str, list[str]]:
    """The category to force and its words."""
    card = given.get("card")
    if card is not None:
        return str(card["category"]), [str(w) for w in card["words"]]
    category = given.get("category") or category
    if category is None:
        raise ScenarioError("given needs a `card` or a `category` of the shipped cards")
    for c in load_cards(cards):
        if c.category.casefold() == str(category).casefold():
            return c.category, list(c.words)
    raise ScenarioError(f"no shipped card has the category {category!r}")


def _card_toml(card: Mapping[str, Any]) -> str:
    # TOML strings and arrays of strings are valid JSON literals
    lines = ["[[card]]", f"category = {json.dumps(card['category'])}",
             f"words = {json.dumps(list(card['words']))}"]
    hints = card.get("hints") or {}
    if hints:
        lines.append("[card.hints]")
        lines += [f"{json.dumps(k)} = {json.dumps(list(v))}" for k, v in hints.items()]
    traits = card.get("traits") or {}
    if traits:
        lines.append("[card.traits]")
        lines += [f"{json.dumps(k)} = {json.dumps(list(v))}" for k, v in traits.items()]
    return "\n".join(lines) + "\n"


def deal_rng(given: Mapping[str, Any], config: Any) -> ForcedRng:
    if "chameleon" not in given or "secret" not in given:
        raise ScenarioError("given needs `chameleon` (a seat) and `secret` (a card word)")
    n = int(config.num_players)
    order = [int(s) for s in given.get("order") or range(1, n + 1)]
    if sorted(order) != list(range(1, n + 1)):
        raise ScenarioError(f"order {order} is not a permutation of the {n} seats")
    extra = dict(given.get("rng") or {})
    known_keys("given.rng", extra, RNG_KEYS)
    category = _card(given, config.cards, config.category)[0]
    # The deal's draws, in rules.deal's order; the last speaker is not a draw.
    choices = [category, int(given["chameleon"]), given["secret"],
               int(given.get("dealer", 1)), *order[:-1], *(extra.get("choice") or [])]
    return ForcedRng(extra.get("seed", 0), forced_random=extra.get("random") or [],
                     forced_choices=choices)


HOOKS = RulebookHooks(
    given=frozenset({"card", "category", "chameleon", "secret", "dealer", "order"}),
    options=card_options, rng=deal_rng)
