"""The typed outcome of a game: the one contract between an engine and everything that
reads results (the CLI summary, the tournament index, the report, the viewer).

Generic layers read only these fields. A game's own facts (the chameleon's seat, the
secret word, guess phases, ...) travel under `details`, which only the game's metrics,
charts and viewer layout interpret.

On disk the result line of a transcript holds `summary` = `OutcomeSummary.to_json()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from stille_post.core.usage import Usage

Status = Literal["completed", "aborted"]


@dataclass(frozen=True)
class OutcomeSummary:
    """What every game reports about how it ended."""

    winners: tuple[int, ...] = ()
    eliminated: tuple[int, ...] = ()  # in elimination order
    valid: bool = True  # False: a void game (nobody is ranked by it)
    turns: int = 0
    # One short phrase per seat for tables and the viewer ("won at guess #2", ...).
    notes: Mapping[int, str] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "winners": list(self.winners),
            "eliminated": list(self.eliminated),
            "valid": self.valid,
            "turns": self.turns,
            "notes": {str(k): v for k, v in sorted(self.notes.items())},
            "details": dict(self.details),
        }

    def flat(self) -> dict[str, Any]:
        """The game's details with the shared fields beside them, as one mapping: for
        readers that want everything (spec scenarios, a game's own tests)."""
        shared = self.to_json()
        return {**self.details, **{k: v for k, v in shared.items() if k != "details"}}

    def __getitem__(self, key: str) -> Any:
        return self.flat()[key]

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> OutcomeSummary:
        """Lenient on purpose: a transcript is untrusted input, and a field of the wrong
        shape must read as absent rather than crash a report."""
        d = data if isinstance(data, Mapping) else {}

        def seats(value: Any) -> tuple[int, ...]:
            if not isinstance(value, list):
                return ()
            return tuple(int(x) for x in value if isinstance(x, int) and not isinstance(x, bool))

        notes_raw = d.get("notes")
        notes = {int(k): str(v) for k, v in notes_raw.items() if str(k).isdigit()} \
            if isinstance(notes_raw, Mapping) else {}
        details = d.get("details")
        turns = d.get("turns")
        return cls(
            winners=seats(d.get("winners")),
            eliminated=seats(d.get("eliminated")),
            valid=d.get("valid") is not False,
            turns=turns if isinstance(turns, int) and not isinstance(turns, bool) else 0,
            notes=notes,
            details=dict(details) if isinstance(details, Mapping) else {},
        )


@dataclass
class GameOutcome:
    """What `play()` returns: the summary plus status, placements and spend."""

    status: Status
    reason: str | None
    placements: dict[int, int]
    summary: OutcomeSummary = field(default_factory=OutcomeSummary)
    usage: dict[int, Usage] = field(default_factory=dict)
