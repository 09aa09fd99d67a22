"""Live rendering of a game in the terminal: a colour per seat, Game Master lines,
private events marked with a lock (the terminal shows the omniscient view).

It knows no game: each game maps its event types onto the kit's generic vocabulary
(speech, heading, notice, private, elimination, game_over, reveal, silent), and that is
all this module reads. An unmapped type with a `text` is shown as a Game Master line.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from stille_post.core.events import Event
from stille_post.games.kit.definition import EventKind

SEAT_COLOURS = ("cyan", "magenta", "green", "yellow", "blue", "red", "bright_cyan",
                "bright_magenta", "bright_green", "bright_yellow", "bright_blue", "bright_red")
_NOTICE = EventKind("notice")


class LiveRenderer:
    def __init__(self, console: Console, vocabulary: Mapping[str, EventKind]) -> None:
        self.console = console
        self.vocabulary = vocabulary

    def colour(self, seat: int | None) -> str:
        return "white" if seat is None else SEAT_COLOURS[(seat - 1) % len(SEAT_COLOURS)]

    def __call__(self, event: Event) -> None:
        kind = self.vocabulary.get(event.type, _NOTICE)
        if kind.generic == "silent":
            return
        text = str(event.data.get("text", ""))
        private = not event.visibility.is_public
        lock = "🔒 " if private else ""
        to = ""
        if private and event.visibility.seats:
            to = " → " + ",".join(f"P{s}" for s in sorted(event.visibility.seats))
        if kind.generic == "speech" and event.actor is not None:
            spoken = str(event.data.get(kind.text_key, text))
            label = Text(f"{lock}[Player {event.actor}{to}] ",
                         style=f"bold {self.colour(event.actor)}")
            self.console.print(label + Text(spoken))
        elif kind.generic == "heading":
            if text:
                self.console.rule(escape(text), style="dim")
        elif text:
            style = "bold"
            if kind.generic in ("elimination", "game_over"):
                style = "bold red"
            elif private or kind.generic == "private":
                style = "italic yellow"
            self.console.print(Text(f"{lock}[GAME MASTER{to}] ", style=style) + Text(text))
