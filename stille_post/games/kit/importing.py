"""Games played elsewhere, as a game's own hook: `GameDefinition.importers`.

A game that can read another program's logs names a `LogFormat` for each format; the
generic importer (importers/logs.py) reads the files, groups their lines into games, and
writes a results folder. The game's part is only the conversion of one game's lines into
our transcript (header, events, result), so the game's event vocabulary and its outcome
`details` stay inside the game's folder, written by the same code as its engine's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stille_post.core.outcome import OutcomeSummary


class ConvertError(ValueError):
    """A game whose lines do not make a consistent game; the message says why."""


@dataclass(frozen=True)
class ImportedGame:
    """A converted game: the transcript's lines and what the results index needs."""

    game_id: str  # the original id
    lines: list[str]  # JSONL lines, without newlines
    seats: dict[str, dict[str, Any]]
    placements: dict[int, int]
    summary: OutcomeSummary
    bare_ids: bool  # no model keys anywhere: labels are `unknown`
    unlabelled: int = 0  # seats with no model key (labelled `unknown`)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


# (original game id, its lines in file order, the files they came from, import time)
Convert = Callable[[str, Sequence[Mapping[str, Any]], Sequence[str], str | None], ImportedGame]


@dataclass(frozen=True)
class LogFormat:
    """One format of JSONL logs that a game imports: `stille-post import GAME NAME`."""

    name: str  # the CLI's name: "logs"
    source: str  # recorded in the folder and in each header's `imported_from`
    description: str  # one line, for --help
    line_types: frozenset[str]  # the `type`s the format has; others are counted, not read
    closing_type: str  # the line type that ends a game
    transcript_prefix: str  # our transcript ids: PREFIX + a file-safe original id
    convert: Convert
