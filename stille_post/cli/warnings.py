"""Warnings for a game in which nothing real happened at an LLM seat.

A live game against a server that never answers, or a replay from an empty or mismatched
cassette, still "completes": every LLM turn is a forfeit. The summary must say so. The
LLM player counts, per provider, the calls that came back with a usable reply
(`players.llm.answer_stats`); a seat whose provider never gave one gets a warning.

Wiring (cli/play.py): keep the `SeatFactory` from `llm_session`, and after the game
`warnings = llm_seat_warnings(factory.providers)`; print each as `warning: ...` on stderr,
add `"warnings": warnings` to the `--json` summary when non-empty, and exit 1 under
`--strict` when there is any.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def llm_seat_warnings(providers: Iterable[Any]) -> list[str]:
    """One line per provider that was asked and never returned a usable reply."""
    from stille_post.players.llm import answer_stats, safe_text

    out: list[str] = []
    for provider in providers:
        stats = answer_stats(provider)
        if stats is None or stats.calls == 0 or stats.usable > 0:
            continue
        why = f"; last failure: {stats.last_failure}" if stats.last_failure else ""
        # What the calls came to: a server that answered with replies that could not be
        # read is not a model that could not be reached (issue 36, item 13).
        kinds = [f"{n} {what}" for n, what in ((stats.malformed, "unreadable replies"),
                                               (stats.failed, "failed calls")) if n]
        got = f"; {', '.join(kinds)}" if kinds else ""
        # The label is the seat spec as typed: its URL may carry a password or a key.
        out.append(safe_text(f"{stats.label} never got a valid answer in {stats.calls} "
                             f"calls (every turn of that seat was forfeited{got}){why}")[:500])
    return out
