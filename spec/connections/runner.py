"""Runs one Connections spec scenario: `run(scenario) -> (events, result)`.

Scenario keys this runner reads:

    given:
      config: {word: cat, max_attempts: 5, guessers: 2, ...}   # ConnectionsConfig
      words: [cat, car, carpet, ...]   # the scenario's own dictionary (a temp file);
                                       # without it, the shipped wordfreq list
      seed: 0
    when:
      seats: {1: {script: [...]}, 2: {bot: frequency}, ...}   # setter is seat 1
      setter: {script: [...]}          # or per role; a guesser script is copied to each
      guessers: {bot: semantic}

A `script` seat is a real LLMPlayer with the game's PromptBook over a ScriptedProvider,
so prompts, tool calls and re-asks are exercised. Script shorthands:
`{guess: WORD}`, `{clue: [WORD, CLUE]}`, `{choose: WORD}` become the matching tool call;
any other mapping is a ScriptedProvider entry, and a string is a bare-text reply.
The game goes through the kit's `prepare`, as `stille-post play` does.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stille_post.core.errors import ScenarioError
from stille_post.core.events import Event
from stille_post.games.connections import GAME
from stille_post.games.kit import prepare
from stille_post.games.kit.scenarios import scenario_seats
from stille_post.players.base import Player, PromptBook
from stille_post.players.llm import LLMPlayer
from stille_post.providers.scripted import ScriptedProvider

_GIVEN = {"config", "words", "seed"}
_WHEN = {"seats", "setter", "guessers"}


def expand(entry: Any) -> Any:
    if isinstance(entry, Mapping) and len(entry) == 1:
        (key, value), = entry.items()
        if key == "guess":
            return {"tool": {"name": "guess", "arguments": {"word": value}}}
        if key == "choose":
            return {"tool": {"name": "choose_word", "arguments": {"word": value}}}
        if key == "clue":
            word, clue = value
            return {"tool": {"name": "give_clue", "arguments": {"word": word, "clue": clue}}}
    return entry


def run(scenario: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    given = dict(scenario.get("given") or {})
    when = dict(scenario.get("when") or {})
    for section, known, where in ((given, _GIVEN, "given"), (when, _WHEN, "when")):
        unknown = set(section) - known
        if unknown:
            raise ScenarioError(f"{where} has unknown keys {sorted(unknown)}; "
                                f"known: {sorted(known)}")
    with tempfile.TemporaryDirectory() as tmp:
        options = dict(given.get("config") or {})
        if "words" in given:
            path = Path(tmp) / "words.txt"
            path.write_text("\n".join(str(w) for w in given["words"]) + "\n", encoding="utf-8")
            options["dictionary"] = path
        n = int(options.get("num_players") or int(options.get("guessers", 2)) + 1)
        scripts: dict[str, list[Any]] = {}
        players, roles = _seats(when, n, scripts)

        def factory(raw: str, prompts: PromptBook) -> Player:
            provider = ScriptedProvider([expand(e) for e in scripts[raw]],
                                        model=raw.partition(":")[2])
            return LLMPlayer(provider, prompts, name=raw)

        seed = int(given.get("seed", 0))
        prepared = prepare(GAME, seed=seed, rng=random.Random(seed), players=players,
                           options=options, roles=roles, llm_factory=factory)
        events: list[Event] = []
        outcome = asyncio.run(prepared.play(events.append))
    result: dict[str, Any] = {
        "status": outcome.status,
        "reason": outcome.reason,
        "placements": {str(s): p for s, p in outcome.placements.items()},
        "seats": prepared.seats_json(),
        **outcome.summary.to_json(),
        **dict(outcome.summary.details),
    }
    return [e.to_json() for e in events], result


def _seats(when: Mapping[str, Any], n: int,
           scripts: dict[str, list[Any]]) -> tuple[list[str] | None, dict[str, str]]:
    return scenario_seats(when, n, {"setter": "setter", "guessers": "guesser"}, scripts)
