"""Runs one Chameleon spec scenario: `run(scenario) -> (events, result)`.

Scenario keys this runner reads (RULES.md §3 scenarios in this folder use them):

    given:
      config: {num_players: 4, tie_rule: dealer, repair_attempts: 1, ...}  # ChameleonConfig
      card: {category: Fruit, words: [...], hints: {...}}   # optional; else the shipped
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

A `script` seat is a real LLMPlayer with the game's PromptBook over a ScriptedProvider,
so the prompts and the parsing are exercised; script entries are ScriptedProvider
entries (a string is the completion's text). The game goes through GAME.prepare, as
`stille-post play` does. Forced draws that the game never used make the scenario wrong.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stille_post.core.errors import ScenarioError
from stille_post.core.events import Event
from stille_post.core.rng import ForcedRng
from stille_post.games.chameleon import GAME
from stille_post.games.chameleon.cards import load_cards
from stille_post.games.kit.scenarios import scenario_seats
from stille_post.players.base import Player, PromptBook
from stille_post.players.llm import LLMPlayer
from stille_post.providers.scripted import ScriptedProvider

_GIVEN = {"config", "card", "category", "chameleon", "secret", "dealer", "order", "rng"}
_WHEN = {"seats", "chameleon", "others"}


def run(scenario: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    given = dict(scenario.get("given") or {})
    when = dict(scenario.get("when") or {})
    _check_keys(given, _GIVEN, "given")
    _check_keys(when, _WHEN, "when")
    with tempfile.TemporaryDirectory() as tmp:
        options = dict(given.get("config") or {})
        category, words = _card(given, options, Path(tmp))
        n = int(options.setdefault("num_players", 4))
        options.setdefault("words", len(words))
        rng = _forced_rng(given, category, n)
        scripts: dict[str, list[Any]] = {}
        players, role_specs = _seats(when, n, scripts)

        def factory(raw: str, prompts: PromptBook) -> Player:
            provider = ScriptedProvider(list(scripts[raw]), model=raw.partition(":")[2])
            return LLMPlayer(provider, prompts, name=raw)

        prepared = GAME.prepare(seed=int((given.get("rng") or {}).get("seed", 0)), rng=rng,
                                players=players, options=options, roles=role_specs,
                                llm_factory=factory)
        events: list[Event] = []
        outcome = asyncio.run(prepared.play(events.append))
    unused = rng.unused
    if unused["random"] or unused["choice"]:
        raise ScenarioError(f"{scenario.get('name')}: forced rng values never drawn: {unused}")
    result: dict[str, Any] = {
        "status": outcome.status,
        "reason": outcome.reason,
        "placements": {str(s): p for s, p in outcome.placements.items()},
        "seats": prepared.seats_json(),
        **outcome.summary.flat(),
    }
    return [e.to_json() for e in events], result


def _check_keys(section: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = set(section) - known
    if unknown:
        raise ScenarioError(f"{where} has unknown keys {sorted(unknown)}; known: {sorted(known)}")


def _card(given: Mapping[str, Any], options: dict[str, Any], tmp: Path) -> tuple[str, list[str]]:
    """The category to force and its words; a scenario's own card goes to a temp file."""
    card = given.get("card")
    if card is not None:
        path = tmp / "cards.toml"
        path.write_text(_card_toml(card), encoding="utf-8")
        options["cards"] = path
        return str(card["category"]), [str(w) for w in card["words"]]
    category = given.get("category") or options.get("category")
    if category is None:
        raise ScenarioError("given needs a `card` or a `category` of the shipped cards")
    for c in load_cards(options.get("cards")):
        if c.category.casefold() == str(category).casefold():
            return c.category, list(c.words)
    raise ScenarioError(f"no shipped card has the category {category!r}")


def _card_toml(card: Mapping[str, Any]) -> str:
    import json  # TOML strings and arrays of strings are valid JSON literals

    lines = ["[[card]]", f"category = {json.dumps(card['category'])}",
             f"words = {json.dumps(list(card['words']))}"]
    hints = card.get("hints") or {}
    if hints:
        lines.append("[card.hints]")
        lines += [f"{json.dumps(k)} = {json.dumps(list(v))}" for k, v in hints.items()]
    return "\n".join(lines) + "\n"


def _forced_rng(given: Mapping[str, Any], category: str, n: int) -> ForcedRng:
    if "chameleon" not in given or "secret" not in given:
        raise ScenarioError("given needs `chameleon` (a seat) and `secret` (a card word)")
    order = [int(s) for s in given.get("order") or range(1, n + 1)]
    if sorted(order) != list(range(1, n + 1)):
        raise ScenarioError(f"order {order} is not a permutation of the {n} seats")
    extra = dict(given.get("rng") or {})
    _check_keys(extra, {"seed", "random", "choice"}, "given.rng")
    # The deal's draws, in rules.deal's order; the last speaker is not a draw.
    choices = [category, int(given["chameleon"]), given["secret"],
               int(given.get("dealer", 1)), *order[:-1], *(extra.get("choice") or [])]
    return ForcedRng(extra.get("seed", 0), forced_random=extra.get("random") or [],
                     forced_choices=choices)


def _seats(when: Mapping[str, Any], n: int,
           scripts: dict[str, list[Any]]) -> tuple[list[str] | None, dict[str, str]]:
    return scenario_seats(when, n, {"chameleon": "chameleon", "others": "others"}, scripts)
