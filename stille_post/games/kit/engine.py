"""The engine base: every game's `play()` is the same three steps.

    start  ->  run (the game's rules)  ->  finish (closing events, placements, outcome)

The fixed part is what must never differ between games: a bug inside `run` becomes an
`aborted` game with its reason (the transcript is never lost), and so does a
`GameAborted` (a replay that misses its cassette); a `GameVoid` becomes a completed but
void game; and `finish` always runs, so every transcript ends with the game's closing
events and a result.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from stille_post.core.errors import GameAborted
from stille_post.core.events import Event, EventSink, Visibility
from stille_post.core.outcome import GameOutcome, OutcomeSummary, Status
from stille_post.games.kit.table import GameVoid, Table
from stille_post.players.specs import SeatSpec

C = TypeVar("C", bound=BaseModel)


class Engine(ABC, Generic[C]):
    name: ClassVar[str]

    def __init__(self, config: C, table: Table, specs: Sequence[SeatSpec] = ()) -> None:
        self.config = config
        self.table = table
        self.specs = list(specs)
        self.void: GameVoid | None = None

    # --- what the kit calls --------------------------------------------------------------

    async def play(self, sink: EventSink | None = None) -> GameOutcome:
        self.table.start(sink)
        status: Status = "completed"
        reason: str | None = None
        try:
            await self.run()
        except GameVoid as void:
            self.void = void
            reason = f"Player {void.seat}: {void.reason}"
        except GameAborted as exc:  # nothing real can happen any more (a replay miss)
            status, reason = "aborted", str(exc)
        except Exception as exc:  # a bug must not lose the game record: end it as aborted
            status = "aborted"
            reason = f"internal error: {type(exc).__name__}: {exc}"
        placements, summary = self.finish(status, reason)
        if self.void is not None:
            summary = OutcomeSummary(summary.winners, summary.eliminated, False, summary.turns,
                                     summary.notes, summary.details)
        return GameOutcome(status, reason, placements, summary, dict(self.table.usage),
                           self.table.adherence.to_json(self.table.log.events))

    def config_json(self) -> dict[str, Any]:
        return self.config.model_dump(mode="json")

    def seats_json(self) -> dict[str, dict[str, Any]]:
        """The header's seat table: who plays each seat, plus the game's own facts."""
        out: dict[str, dict[str, Any]] = {}
        for seat, spec in enumerate(self.specs, start=1):
            row: dict[str, Any] = {"player": spec.label}
            if spec.is_llm:
                row.update(model=spec.model, provider=spec.provider)
                if spec.structured:
                    row["structured"] = spec.structured
            row.update(self.seat_info(seat))
            out[str(seat)] = row
        return out

    # --- what each game writes --------------------------------------------------------------

    @abstractmethod
    async def run(self) -> None:
        """The game's rules, from the first event to the last decision."""

    @abstractmethod
    def finish(self, status: Status, reason: str | None
               ) -> tuple[dict[int, int], OutcomeSummary]:
        """Emit the closing events (game over, reveal) and say how the game ended. Runs
        after a normal end, a void game and a bug alike, so it must rely only on state
        that is valid at any point of `run`."""

    def seat_info(self, seat: int) -> Mapping[str, Any]:
        """Extra header facts per seat (an identity, a role)."""
        return {}

    def header_extra(self) -> dict[str, Any]:
        """Extra header facts for the whole game (only what any reader may see)."""
        return {}

    # --- shorthands -----------------------------------------------------------------------

    @property
    def seats(self) -> list[int]:
        return self.table.seats

    def emit(self, type: str, *, actor: int | None = None,
             visibility: Visibility | None = None, **data: Any) -> Event:
        return self.table.emit(type, actor=actor, visibility=visibility, **data)
