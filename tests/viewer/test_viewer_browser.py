"""The replay page in a real headless Chromium (Debian's chromium + chromium-driver)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import Transcript
from stille_post.games import GAME_MODULES

from .helpers import ARTIFACTS, render, run_cli

pytestmark = [
    pytest.mark.browser,
    # Selenium drives chromedriver over loopback HTTP; every other host stays blocked.
    pytest.mark.block_network(allowed_hosts=[r"127\.0\.0\.1$", r"localhost$", r"::1$"]),
]


class Page:
    """One loaded replay and the few moves the tests make on it."""

    def __init__(self, driver: Any, html: Path, hash: str = "") -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver = driver
        driver.get("about:blank")  # a new hash on the same file would not reload it
        driver.get_log("browser")  # drop messages from the previous page
        driver.get(html.as_uri() + hash)
        WebDriverWait(driver, 10).until(lambda d: self.js("return window.StillePostViewer"))

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def by_id(self, element_id: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.ID, element_id)

    def shown(self) -> list[int]:
        """Seqs of the events on screen, in order."""
        return [int(s) for s in self.js(
            "return [...document.querySelectorAll('#timeline .ev')]"
            ".filter(n => n.offsetParent !== null).map(n => n.dataset.seq)")]

    def rendered(self) -> list[int]:
        """Seqs of every event in the DOM for this perspective, shown or not yet."""
        return [int(s) for s in self.js(
            "return [...document.querySelectorAll('#timeline .ev')].map(n => n.dataset.seq)")]

    def current(self) -> int:
        return int(self.js("return document.querySelector('#timeline .ev.current').dataset.seq"))

    def press(self, key: str) -> None:
        from selenium.webdriver.common.action_chains import ActionChains

        self.js("document.activeElement && document.activeElement.blur()")
        ActionChains(self.driver).send_keys(key).perform()

    def choose(self, select_id: str, value: str) -> None:
        from selenium.webdriver.support.ui import Select

        Select(self.by_id(select_id)).select_by_value(value)

    def errors(self) -> list[dict[str, Any]]:
        return [e for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / name
        self.driver.save_screenshot(str(path))
        return path


def until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def test_renders_recorded_game(browser: Any, seed7: Path) -> None:
    transcript = Transcript.load(seed7)
    page = Page(browser, render(seed7))
    assert "Stille Post · seed 7" in browser.title
    assert page.by_id("position").text == f"Step 1 / {len(transcript.events)}"
    assert page.shown() == [1]
    assert page.rendered() == [e.seq for e in transcript.events]
    # The Stille Post layout, not the generic fallback, drew the players' messages.
    assert page.js("return document.querySelectorAll('#timeline .ev.msg').length") == sum(
        e.type == "message" for e in transcript.events)
    # Opened from disk it fetched nothing, and nothing failed or was blocked by the CSP.
    assert page.js("return performance.getEntriesByType('resource').length") == 0
    assert page.errors() == []


def test_step_forward_and_back(browser: Any, seed7: Path) -> None:
    page = Page(browser, render(seed7))
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
    assert not page.by_id("placements").is_displayed()


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


def test_jump_to_round_and_play_pause(browser: Any, seed7: Path) -> None:
    transcript = Transcript.load(seed7)
    page = Page(browser, render(seed7))
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
    assert card.text.startswith("<b>bot</b></title><script>")
    assert page.errors() == []


def test_generic_layout_honours_perspective(browser: Any, chameleon: Path) -> None:
    transcript = Transcript.load(chameleon)
    page = Page(browser, render(chameleon))
    page.press("\ue010")
    assert page.shown() == [e.seq for e in transcript.events]
    assert page.js("return document.querySelectorAll('#timeline .ev.generic').length") == len(
        transcript.events)
    body = browser.find_element("tag name", "body")
    assert "The secret word is mango." in body.text and "vague clue" in body.text
    page.screenshot("chameleon-generic-omniscient.png")

    page.choose("perspective", "3")  # the chameleon
    page.press("\ue010")
    assert page.shown() == [e.seq for e in transcript.view(3)]
    assert "mango" not in body.text and "You are the chameleon." in body.text
    page.choose("perspective", "1")
    page.press("\ue010")
    assert "mango" in body.text and "vague clue" not in body.text  # votes are log-only
    assert page.errors() == []


@pytest.mark.parametrize("game", sorted(GAME_MODULES))
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
