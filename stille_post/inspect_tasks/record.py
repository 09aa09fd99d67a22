"""What a sample's log shows of a game, for `inspect view`: the public record (every
public event as a line of markdown) and the evaluated seat's view (its conversation as
Inspect chat messages).

Generic: the game's event vocabulary (`GameDefinition.events`) says what each event
is; an unmapped event with a `text` is a Game Master line, as in the terminal renderer.
"""

from __future__ import annotations

from collections.abc import Mapping

from stille_post.core.events import Event
from stille_post.games.kit.definition import EventKind

_NOTICE = EventKind("notice")


def public_line(event: Event, vocabulary: Mapping[str, EventKind]) -> str | None:
    """One public event as markdown, or None (private, silent or empty)."""
    if not event.visibility.is_public:
        return None
    kind = vocabulary.get(event.type, _NOTICE)
    if kind.generic == "silent":
        return None
    text = str(event.data.get("text", "")).strip()
    if kind.generic == "speech" and event.actor is not None:
        spoken = str(event.data.get(kind.text_key, text)).strip()
        return f"**Player {event.actor}:** {spoken}" if spoken else None
    if not text:
        return None
    if kind.generic == "heading":
        return f"#### {text}"
    return f"*Game Master:* {text}"


class PublicRecord:
    """An event sink (play_game's `watch`) that keeps the public record."""

    def __init__(self, vocabulary: Mapping[str, EventKind]) -> None:
        self.vocabulary = vocabulary
        self.lines: list[str] = []

    def __call__(self, event: Event) -> None:
        line = public_line(event, self.vocabulary)
        if line is not None:
            self.lines.append(line)

    def markdown(self) -> str:
        return "\n\n".join(self.lines)
