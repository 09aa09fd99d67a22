"""Live rendering of a game in the terminal: a colour per seat, Game Master lines,
private events marked with a lock (the terminal shows the omniscient view)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from stille_post.core.events import Event

SEAT_COLOURS = ("cyan", "magenta", "green", "yellow", "blue", "red", "bright_cyan",
                "bright_magenta", "bright_green", "bright_yellow", "bright_blue", "bright_red")

# Event types that only structure the log; their meaning is already in another line.
_SILENT = {"tool_calls", "eliminated"}
# What a player says, per game: event type -> the data key holding the words.
_SPEECH = {"message": "text", "word": "word"}


class LiveRenderer:
    def __init__(self, console: Console, seats: Mapping[str, Mapping[str, Any]]) -> None:
        self.console = console
        self.seats = {int(k): v for k, v in seats.items()}

    def colour(self, seat: int | None) -> str:
        return "white" if seat is None else SEAT_COLOURS[(seat - 1) % len(SEAT_COLOURS)]

    def __call__(self, event: Event) -> None:
        if event.type in _SILENT and "text" not in event.data:
            return
        text = str(event.data.get("text", ""))
        private = not event.visibility.is_public
        lock = "🔒 " if private else ""
        to = ""
        if private and event.visibility.seats:
            to = " → " + ",".join(f"P{s}" for s in sorted(event.visibility.seats))
        if event.type in _SPEECH and event.actor is not None:
            spoken = str(event.data.get(_SPEECH[event.type], text))
            label = Text(f"[Player {event.actor}] ", style=f"bold {self.colour(event.actor)}")
            self.console.print(label + Text(spoken))
        elif event.type == "identity_guess":
            self.console.print(Text(f"{lock}[Player {event.actor}{to}] guesses: {text}",
                                    style=f"dim {self.colour(event.actor)}"))
        elif event.type in ("turn_start", "intro_prompt"):
            self.console.rule(escape(text), style="dim")
        elif text:
            style = "bold red" if event.type in ("forfeit", "removed", "game_over") else "bold"
            if private:
                style = "italic yellow"
            self.console.print(Text(f"{lock}[GAME MASTER{to}] ", style=style) + Text(text))
