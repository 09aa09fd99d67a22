"""What the page embeds: the transcript as plain JSON, plus a few derived tables.

The browser does all filtering itself from each event's `visibility`, so the data holds
every event (the omniscient record) and nothing is decided here about who sees what.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stille_post.core.exports import inert_data
from stille_post.core.outcome import OutcomeSummary
from stille_post.core.transcript import Transcript

# Opaque provider blobs (e.g. Gemini thought signatures) mean nothing to a reader and can
# be kilobytes per call, so the page leaves them out.
_DROPPED_KEYS = frozenset({"provider_data"})


def view_data(transcript: Transcript) -> dict[str, Any]:
    """The JSON object the page's script reads. Every string is made inert
    (core/exports.py): a direction override in a player id or a model's message shows as
    its escape instead of turning the page's text around."""
    return inert_data(_data(transcript))


def _data(transcript: Transcript) -> dict[str, Any]:
    result = transcript.result
    return {
        "game": transcript.game,
        "seed": transcript.header.get("seed"),
        "version": transcript.header.get("version"),
        "config": transcript.header.get("config", {}),
        "seats": seat_rows(transcript),
        "events": [_strip(e.to_json()) for e in transcript.events],
        "result": result,
        "complete": transcript.complete,
        "placements": placement_rows(transcript),
        "vocabulary": vocabulary(transcript.game),
        "title": _title(transcript.game),
    }


def vocabulary(game: str) -> dict[str, dict[str, str]]:
    """The game's event types mapped onto the generic kinds, for the generic view (empty
    for a game not installed here: every event is then shown as a card)."""
    from stille_post.games import all_games

    definition = all_games().get(game)
    if definition is None:
        return {}
    return {t: {"generic": k.generic, "text_key": k.text_key}
            for t, k in definition.events.items()}


def _title(game: str) -> str:
    from stille_post.games import all_games

    definition = all_games().get(game)
    return definition.title if definition is not None else game


def seat_rows(transcript: Transcript) -> list[dict[str, Any]]:
    rows = []
    for seat, info in sorted(transcript.seats.items()):
        rows.append({
            "seat": seat,
            "model": str(info.get("model", "")),
            "player": str(info.get("player", "")),
            "provider": str(info.get("provider", "")),
        })
    return rows


def placement_rows(transcript: Transcript) -> list[dict[str, Any]]:
    """The final table, best place first; empty for a game that was cut off."""
    result = transcript.result or {}
    placements: Mapping[str, Any] = result.get("placements") or {}
    summary = transcript.summary
    seats = transcript.seats
    rows = []
    for key, place in placements.items():
        seat = int(key)
        info = seats.get(seat, {})
        tokens = transcript.usage(seat)
        rows.append({
            "seat": seat,
            "place": place,
            "model": str(info.get("model", "")),
            "player": str(info.get("player", "")),
            "outcome": outcome(seat, summary),
            "input_tokens": tokens.input_tokens,
            "output_tokens": tokens.output_tokens,
        })
    rows.sort(key=lambda r: (r["place"], r["seat"]))
    return rows


def outcome(seat: int, summary: OutcomeSummary) -> str:
    """A one-phrase outcome: the game's own note for the seat, else won or blank."""
    if seat in summary.notes:
        return summary.notes[seat]
    return "won" if seat in summary.winners else ""


def script_json(obj: Any) -> str:
    """JSON that is safe inside `<script type="application/json">`.

    Escaping every `<` (not only `</`) also defuses `<!--`, which can switch the HTML
    parser into a state where the closing `</script>` no longer ends the block. `>` and
    `&` are escaped too so the text is inert in any HTML context. JSON.parse reads the
    \\u escapes back unchanged.
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _strip(event: dict[str, Any]) -> dict[str, Any]:
    data = _without_dropped(event.get("data") or {})
    calls = data.get("tool_calls")
    if isinstance(calls, list):
        data["tool_calls"] = [_without_dropped(c) if isinstance(c, dict) else c for c in calls]
    return {**event, "data": data}


def _without_dropped(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in _DROPPED_KEYS}
