"""The bots' incremental record (observation.RecordReader) equals reading the whole view
on every decision (PublicRecord.read), which is what the bots did before."""

from __future__ import annotations

from typing import Any

import pytest

from stille_post.core.events import Event, Visibility
from stille_post.games.elimination.observation import PublicRecord, RecordReader
from tests.elimination.conftest import play

BOTS = ["loyal", "backstabber", "sheep", "random", "loyal", "backstabber", "sheep", "random"]


def test_every_bot_decision_reads_the_same_record(monkeypatch: pytest.MonkeyPatch) -> None:
    real = RecordReader.read
    checked: list[int] = []

    def checking(self: RecordReader, events: Any) -> PublicRecord:
        got = real(self, events)
        assert got == PublicRecord.read(self.seat, events)
        checked.append(len(events))
        return got

    monkeypatch.setattr(RecordReader, "read", checking)
    for seed in (1, 2):
        play(BOTS, seed)
    assert len(checked) > 200 and max(checked) > 100  # whole games, long views


def test_previews_and_channel_views_read_like_a_full_read() -> None:
    """A channel's view is the main view plus the channel's own events (kit/channels.py):
    the reader alternates between the two, and previews (seq 0) come last."""
    _, events, _ = play(BOTS, 3)
    view = [e for e in events if e.visibility.allows(2)]
    own = [e for e in events if e.type == "public_message"][:6]  # stand-in channel lines
    preview = Event(0, "public_message", view[-1].round, 0, 5, Visibility.public(),
                    {"text": "Player 2 is next"})
    reader = RecordReader(2)
    for n in (10, 40, 40, 60, len(view)):
        main = view[:n]
        for seen in (main, (*main, *own[:2]), (*main, *own[:5]), main,
                     (*main, *own, preview), (*main, *own)):
            assert reader.read(seen) == PublicRecord.read(2, seen), (n, len(seen))
