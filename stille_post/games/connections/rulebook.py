"""Connections' hooks for the kit's rulebook runner (spec/*.yaml in this folder).

    given:
      config: {word: cat, max_attempts: 5, guessers: 2, ...}   # ConnectionsConfig
      words: [cat, car, carpet, ...]   # the scenario's own dictionary (a temp file);
                                       # without it, the shipped wordfreq list
    when:
      seats: {1: {script: [...]}, 2: {bot: frequency}, ...}   # setter is seat 1
      setter: {script: [...]}          # or per role; a guesser script is copied to each
      guessers: {bot: semantic}

Script shorthands: `{guess: WORD}`, `{clue: [WORD, CLUE]}`, `{choose: WORD}` become the
matching tool call; any other entry is a ScriptedProvider entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stille_post.games.kit.scenarios import RulebookHooks


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


def words_file(given: Mapping[str, Any], options: dict[str, Any], tmp: Path) -> None:
    if "words" in given:
        path = tmp / "words.txt"
        path.write_text("\n".join(str(w) for w in given["words"]) + "\n", encoding="utf-8")
        options["dictionary"] = path


HOOKS = RulebookHooks(given=frozenset({"words"}),
                      roles={"setter": "setter", "guessers": "guesser"},
                      options=words_file, script_entry=expand)
