"""The generic view: a game without a layout is drawn from its event vocabulary alone
(speech, heading, notice, private, elimination, game over, reveal, silent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stille_post.core.events import Event, Visibility
from stille_post.core.transcript import Transcript, TranscriptWriter

from .helpers import UNKNOWN_GAME, Page, handmade_events, render

pytestmark = [
    pytest.mark.browser,
    pytest.mark.block_network(allowed_hosts=[r"127\.0\.0\.1$", r"localhost$", r"::1$"]),
]

Row = tuple[str, int | None, Visibility, dict[str, Any]]

VOCABULARY = {
    "game_start": {"generic": "notice", "text_key": "text"},
    "phase": {"generic": "heading", "text_key": "text"},
    "secret": {"generic": "private", "text_key": "text"},
    "role": {"generic": "private", "text_key": "text"},
    "clue": {"generic": "speech", "text_key": "word"},
    "whisper": {"generic": "speech", "text_key": "text"},
    "vote": {"generic": "silent", "text_key": "reason"},
    "vote_result": {"generic": "notice", "text_key": "text"},
    "eliminated": {"generic": "elimination", "text_key": "text"},
    "game_over": {"generic": "game_over", "text_key": "text"},
    "reveal": {"generic": "reveal", "text_key": "text"},
}


@pytest.fixture(scope="module")
def vocab_game(viewer_tmp: Path) -> Path:
    """The hand-made game, with a heading, a game over and a reveal added."""
    pub = Visibility.public()
    extra: list[Row] = [("phase", None, pub, {"text": "Voting begins"})]
    tail: list[Row] = [
        ("game_over", None, pub, {"text": "Game over: Players 1, 2 and 4 win."}),
        ("reveal", None, pub, {"secret": "mango", "text": "The secret word was mango."})]
    rows = handmade_events()
    rows = rows[:8] + extra + rows[8:] + tail
    out = viewer_tmp / "vocab.jsonl"
    seats = {str(s): {"model": f"model-{s}", "player": "bot:random"} for s in range(1, 5)}
    with TranscriptWriter(out) as w:
        w.header(game=UNKNOWN_GAME, config={"num_players": 4}, seed=3, seats=seats)
        for seq, (type_, actor, vis, data) in enumerate(rows, start=1):
            w.event(Event(seq, type_, 1, 0, actor, vis, data))
        w.result(status="completed", placements={1: 1, 2: 1, 4: 1, 3: 4},
                 summary={"winners": [1, 2, 4]})
    return out


def texts(page: Page, selector: str) -> list[str]:
    return [str(t) for t in page.js(
        "return [...document.querySelectorAll(arguments[0])].map((n) => n.textContent)", selector)]


def test_every_generic_kind_has_its_look(browser: Any, vocab_game: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("stille_post.viewer.data.vocabulary", lambda game: VOCABULARY)
    transcript = Transcript.load(vocab_game)
    page = Page(browser, render(vocab_game), "#view=all&seq=999&ids=0")
    assert page.shown() == [e.seq for e in transcript.events]
    # Speech: "[Player X] words", in the speaker's colour, the words from text_key.
    clues = page.js("return [...document.querySelectorAll('.ev.kind-speech[data-type=clue]')]"
                    ".map((n) => [n.querySelector('.who').innerText, "
                    "n.querySelector('.text').textContent, n.className])")
    assert [c[:2] for c in clues] == [["Player 1", "sweet"], ["Player 2", "tropical"],
                                      ["Player 3", "yellow"], ["Player 4", "pit"]]
    assert all("msg" in c[2] and "seat-c" in c[2] for c in clues)
    whisper = browser.find_element("css selector", '[data-type="whisper"]')
    assert "private" in whisper.get_attribute("class") and "PRIVATE → P2, P4" in whisper.text
    # Headings are dividers; notices and private lines are Game Master lines.
    assert texts(page, ".ev.divider") == ["Voting begins"]
    gm_lines = texts(page, ".ev.kind-notice, .ev.kind-private")
    assert gm_lines and all(t.startswith("GAME MASTER") for t in gm_lines)
    secret = browser.find_element("css selector", '[data-type="secret"]')
    assert "PRIVATE → P1, P2, P4" in secret.text and "gm" in secret.get_attribute("class")
    # Silent: one quiet line, with the words of its text_key.
    assert texts(page, ".ev.kind-silent") == ["votevague clue"]
    # Elimination: the OUT badge, and the seat card follows it.
    out = browser.find_element("css selector", '[data-type="eliminated"]')
    assert out.text.startswith("OUT") and "Player 3" in out.text
    card = browser.find_element("css selector", '.seat-card[data-seat="3"]')
    assert "eliminated (voted out)" in card.text and "gone" in card.get_attribute("class")
    for kind in ("game_over", "reveal"):
        node = browser.find_element("css selector", f'[data-type="{kind}"]')
        assert "end" in node.get_attribute("class").split()
    assert not page.js("return document.querySelectorAll('.ev.generic').length")
    page.screenshot("generic-vocabulary.png")
    assert page.errors() == []


def test_toy_game_renders_from_its_vocabulary(browser: Any, toy_game: Path,
                                              toy_registered: None) -> None:
    transcript = Transcript.load(toy_game)
    page = Page(browser, render(toy_game), "#view=all&seq=999&ids=0")
    assert page.shown() == [e.seq for e in transcript.events]
    throws = [e for e in transcript.events if e.type == "throw"]
    assert texts(page, ".ev.kind-speech .text") == [e.data["throw"] for e in throws]
    rounds = sum(e.type == "round_start" for e in transcript.events)
    assert len(texts(page, ".ev.divider")) == rounds
    assert not page.js("return document.querySelectorAll('.ev.generic').length")
    assert page.errors() == []
