"""The Connections layout in headless Chromium (skipped without selenium/Chromium): every
event type renders without a script error, the secret word's tiles are masked in a
guesser's perspective (which never receives the setter's `secret` event nor another
seat's `clue_word`), and each attempt's outcome is shown."""

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
    out = tmp_path_factory.mktemp("cx") / "seed3.jsonl"
    proc = run_cli("play", "connections", "--seed", "3", "--players",
                   "frequency,frequency,frequency", "--word", "goldfish",
                   "--max-attempts", "8", "--quiet", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def test_every_event_renders(browser: Any, game: Path) -> None:
    text = every_event_timeline(browser, game)
    assert "GOLDFISH" in text.replace("\n", "").replace(" ", "")  # the final tiles
    assert any(w in text for w in ("Guesser Wrong", "Setter Blocked", "Connection"))


def test_guesser_sees_masked_tiles_only(browser: Any, game: Path) -> None:
    t = Transcript.load(game)
    page = Page(browser, render(game), "#view=2&seq=999999")
    assert page.errors() == []
    shown = set(page.rendered())
    assert shown == {e.seq for e in t.view(2)}
    assert not any(e.seq in shown for e in t.events if e.type == "secret")
    others = [e for e in t.events if e.type == "clue_word" and e.actor != 2]
    assert others and not any(e.seq in shown for e in others)


def test_public_tiles_never_show_the_length(browser: Any, game: Path) -> None:
    """A guesser's view shows the revealed letters and one open tile, never as many tiles
    as the secret has letters (goldfish: 8); the final reveal shows the whole word."""
    t = Transcript.load(game)
    first = next(e for e in t.events if e.type == "prefix")
    reveal = next(e for e in t.events if e.type == "reveal")
    page = Page(browser, render(game), "#view=2&seq=999999")
    tiles = page.js(
        "const n = document.querySelector(`#timeline .ev[data-seq='${arguments[0]}']`);"
        "return [...n.querySelectorAll('.cx-tile')].map((x) => x.textContent);", first.seq)
    assert tiles == ["G", "…"]
    final = page.js(
        "const n = document.querySelector(`#timeline .ev[data-seq='${arguments[0]}']`);"
        "return [...n.querySelectorAll('.cx-tile')].map((x) => x.textContent).join('');",
        reveal.seq)
    assert final == "GOLDFISH"
    assert page.errors() == []
