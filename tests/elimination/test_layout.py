"""The Elimination Game layout in headless Chromium (skipped without selenium/Chromium):
every event type renders without a script error, the pairing is drawn as who chats with
whom, private chats appear only in their pair's perspectives, and the seat lists show
eliminations and final ranks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import Transcript
from tests.viewer.helpers import Page, every_event_timeline, render, run_cli

pytestmark = [
    pytest.mark.browser,
    pytest.mark.block_network(allowed_hosts=[r"127\.0\.0\.1$", r"localhost$", r"::1$"]),
]


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("elim") / "seed3.jsonl"
    proc = run_cli("play", "elimination", "--seed", "3", "--num-players", "6", "--quiet",
                   "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def test_every_event_renders(browser: Any, game: Path) -> None:
    text = every_event_timeline(browser, game)
    assert "⇄" in text  # the pairing drawn
    assert "rank 1" in text and "rank 6" in text  # the final seat list
    assert "OUT" in text


def test_private_chats_only_in_the_pairs_perspectives(browser: Any, game: Path) -> None:
    t = Transcript.load(game)
    chats = [e for e in t.events if e.type == "private_message"]
    assert chats
    pair = chats[0].data["pair"]
    outsider = next(s for s in sorted(t.seats) if s not in pair)
    for seat in (pair[0], outsider):
        page = Page(browser, render(game), f"#view={seat}&seq=999999")
        assert page.errors() == []
        shown = set(page.rendered())
        assert shown == {e.seq for e in t.view(seat)}
        assert (chats[0].seq in shown) == (seat in pair)
