"""The replay page in a real headless Chromium (Debian's chromium + chromium-driver)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import Transcript
from stille_post.games import all_games
from tests.slowparams import fast_only

from .helpers import Page, render, run_cli, until

pytestmark = [
    pytest.mark.browser,
    pytest.mark.heavy,  # seconds in all: handed out first (conftest.py)
    # Selenium drives chromedriver over loopback HTTP; every other host stays blocked.
    pytest.mark.block_network(allowed_hosts=[r"127\.0\.0\.1$", r"localhost$", r"::1$"]),
]


def test_renders_recorded_game(browser: Any, seed7: Path) -> None:
    transcript = Transcript.load(seed7)
    page = Page(browser, render(seed7))
    assert "Stille Post · seed 7" in browser.title
    page.press("\ue011")  # Home
    assert page.by_id("position").text == f"Step 1 / {len(transcript.events)}"
    assert page.shown() == [1]
    # Nothing past the current step is in the document (hidden is not enough).
    assert page.rendered() == [1]
    assert page.js("return document.getElementById('game-data')") is None
    page.press("\ue010")  # End
    assert page.rendered() == [e.seq for e in transcript.events]
    # The Stille Post layout, not the generic fallback, drew the players' messages.
    assert page.js("return document.querySelectorAll('#timeline .ev.msg').length") == sum(
        e.type == "message" for e in transcript.events)
    # Opened from disk it fetched nothing, and nothing failed or was blocked by the CSP.
    assert page.js("return performance.getEntriesByType('resource').length") == 0
    assert page.errors() == []


@pytest.mark.parametrize("game", fast_only(sorted(all_games()), {"connections"}))
def test_the_replay_opens_on_the_whole_game(browser: Any, game: str, viewer_tmp: Path) -> None:
    """Opened without a step in its address, the page shows the last step: every event,
    the last one in view, the final table, the seat cards as the game ended; the step
    controls are there to go back."""
    out = viewer_tmp / f"opens-{game}.jsonl"
    proc = run_cli("play", game, "--seed", "2", "--quiet", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    transcript = Transcript.load(out)
    n = len(transcript.events)
    page = Page(browser, render(out))
    assert page.by_id("position").text == f"Step {n} / {n}"
    assert page.shown() == [e.seq for e in transcript.events]
    last = transcript.events[-1].seq
    assert page.current() == last
    assert page.js("const r = document.querySelector('#timeline .ev.current')"
                   ".getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight")
    assert page.by_id("placements").is_displayed()
    assert page.by_id("prev").is_enabled() and not page.by_id("next").is_enabled()
    # Each card says how its seat ended, as the final table does.
    outcomes = {int(k): v for k, v in (transcript.summary.notes or {}).items()}
    cards = {int(c.get_attribute("data-seat")): c.find_element("css selector", ".seat-status").text
             for c in browser.find_elements("css selector", ".seat-card")}
    assert "in the game" not in cards.values(), cards
    for seat, note in outcomes.items():
        if game != "chameleon":  # the Chameleon's layout says won / lost itself
            assert cards[seat] == note, (seat, cards)
    page.by_id("prev").click()
    assert page.current() < last and not page.present("placements")
    page.press("\ue011")  # Home: the first step, as before
    assert page.shown() == [1]
    assert page.errors() == []


def test_step_forward_and_back(browser: Any, seed7: Path) -> None:
    page = Page(browser, render(seed7))
    page.press("\ue011")  # Home
    for _ in range(3):
        page.press("\ue014")  # ArrowRight
    assert page.shown() == [1, 2, 3, 4]
    assert page.current() == 4
    assert "seq=4" in page.js("return location.hash")
    page.press("\ue012")  # ArrowLeft
    assert page.current() == 3
    page.by_id("next").click()
    page.by_id("next").click()
    assert page.current() == 5
    page.press("\ue010")  # End
    assert page.shown() == page.rendered()
    assert page.by_id("placements").is_displayed()
    page.press("\ue011")  # Home
    assert page.shown() == [1]
    assert not page.present("placements")  # the final table is not in the page before the end


def test_each_perspective_shows_exactly_the_engine_view(browser: Any, seed7: Path) -> None:
    transcript = Transcript.load(seed7)
    page = Page(browser, render(seed7))
    page.press("\ue010")
    for seat in sorted(transcript.seats):
        page.choose("perspective", str(seat))
        page.press("\ue010")
        assert page.shown() == [e.seq for e in transcript.view(seat)], f"Player {seat}"
        assert f"Viewing as Player {seat}" in page.by_id("viewing").text
        assert f"view={seat}" in page.js("return location.hash")
    page.choose("perspective", "all")
    assert page.shown() == [e.seq for e in transcript.events]
    assert not page.by_id("viewing").is_displayed()
    assert page.errors() == []


def test_private_hint_seen_by_its_owner_only(browser: Any, seed7: Path) -> None:
    transcript = Transcript.load(seed7)
    hint = next(e for e in transcript.events if e.type == "hint")
    owner = int(hint.data["seat"])
    other = next(s for s in sorted(transcript.seats) if s != owner)
    value = f"{hint.data['kind']}: {hint.data['value']}"
    page = Page(browser, render(seed7), f"#view={owner}&seq={hint.seq}&ids=1")
    node = browser.find_element("css selector", f'#timeline [data-seq="{hint.seq}"]')
    assert node.is_displayed() and value in node.text
    assert page.current() == hint.seq
    card = browser.find_element("css selector", f'.seat-card[data-seat="{owner}"]')
    assert value in card.text
    page.screenshot("seed7-hint-as-owner.png")

    page.choose("perspective", str(other))
    page.press("\ue010")
    assert hint.seq not in page.rendered()
    assert value not in browser.find_element("tag name", "body").text


def test_permalink_restores_perspective_step_and_identities(browser: Any, seed7: Path) -> None:
    transcript = Transcript.load(seed7)
    seq = 20
    page = Page(browser, render(seed7), f"#view=2&seq={seq}&ids=1")
    expected = max(e.seq for e in transcript.view(2) if e.seq <= seq)
    assert page.by_id("perspective").get_attribute("value") == "2"
    assert page.current() == expected
    assert page.by_id("show-ids").is_selected()
    page.press("\ue014")
    url = browser.current_url
    assert page.by_id("permalink").get_attribute("href") == url
    again = Page(browser, render(seed7), "#" + url.split("#", 1)[1])
    assert again.current() == page.current() and again.current() > expected


@pytest.mark.slow  # waits for the play timer
def test_jump_to_round_and_play_pause(browser: Any, seed7: Path) -> None:
    transcript = Transcript.load(seed7)
    page = Page(browser, render(seed7))
    page.press("\ue011")  # Home (the page opens on the last step, in round 2)
    page.choose("round", "2")
    first_of_round_2 = next(e.seq for e in transcript.events if e.round == 2)
    assert page.current() == first_of_round_2

    page.press("\ue011")
    page.choose("speed", "8")
    page.by_id("play").click()
    until(lambda: page.current() >= 4)
    page.by_id("play").click()  # pause
    stopped = page.current()
    time.sleep(0.5)
    assert page.current() == stopped
    assert "Play" in page.by_id("play").text
    page.press(" ")  # Space plays and pauses too
    until(lambda: page.current() > stopped)
    page.press(" ")
    assert "Play" in page.by_id("play").text


def test_identities_toggle(browser: Any, seed7: Path) -> None:
    transcript = Transcript.load(seed7)
    model = transcript.seats[1]["model"]
    page = Page(browser, render(seed7))
    card = browser.find_element("css selector", '.seat-card[data-seat="1"]')
    assert model not in card.text
    page.by_id("show-ids").click()
    assert model in card.text
    assert "ids=1" in page.js("return location.hash")


def test_planted_script_does_not_run(browser: Any, planted: Path) -> None:
    page = Page(browser, render(planted))
    page.press("\ue010")
    assert page.js("return window.__pwned") is None
    first_message = browser.find_element("css selector", '#timeline [data-type="message"] .text')
    assert "<script>window.__pwned = 1</script>" in first_message.text
    assert '<img src=x onerror="window.__pwned = 2">' in first_message.text
    card = browser.find_element("css selector", '.seat-card[data-seat="2"] .seat-kind')
    # hidden until "Show models and players": read its text, not its rendering
    assert card.get_attribute("textContent").startswith("<b>bot</b></title><script>")
    assert page.errors() == []


def test_unknown_game_shows_every_field_and_honours_perspective(
        browser: Any, unknown_game: Path) -> None:
    transcript = Transcript.load(unknown_game)
    page = Page(browser, render(unknown_game))
    page.press("\ue010")
    assert page.shown() == [e.seq for e in transcript.events]
    assert page.js("return document.querySelectorAll('#timeline .ev.generic').length") == len(
        transcript.events)
    body = browser.find_element("tag name", "body")
    assert "The secret word is mango." in body.text and "vague clue" in body.text
    page.screenshot("unknown-game-omniscient.png")

    page.choose("perspective", "3")  # the chameleon
    page.press("\ue010")
    assert page.shown() == [e.seq for e in transcript.view(3)]
    assert "mango" not in body.text and "You are the chameleon." in body.text
    page.choose("perspective", "1")
    page.press("\ue010")
    assert "mango" in body.text and "vague clue" not in body.text  # votes are log-only
    assert page.errors() == []


# Two games in the fast suite; the other two (seconds each: a CLI game, then the page) in
# `nox -s slow`.
@pytest.mark.parametrize("game", fast_only(sorted(all_games()), {"chameleon", "stille-post"}))
def test_every_game_renders(browser: Any, game: str, viewer_tmp: Path) -> None:
    out = viewer_tmp / f"every-{game}.jsonl"
    proc = run_cli("play", game, "--seed", "1", "--out", str(out))
    if proc.returncode != 0:
        pytest.skip(f"`stille-post play {game}` does not run here: {proc.stderr.strip()}")
    transcript = Transcript.load(out)
    page = Page(browser, render(out))
    page.press("\ue010")
    assert page.shown() == [e.seq for e in transcript.events]
    for seat in sorted(transcript.seats):
        page.choose("perspective", str(seat))
        page.press("\ue010")
        assert page.shown() == [e.seq for e in transcript.view(seat)]
    assert page.errors() == []


def test_screenshot_of_a_finished_game(browser: Any, seed7: Path) -> None:
    page = Page(browser, render(seed7), "#view=all&seq=999999&ids=1")
    assert page.by_id("placements").is_displayed()
    path = page.screenshot("seed7-final.png")
    assert path.stat().st_size > 10_000
