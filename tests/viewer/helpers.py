"""Shared pieces of the viewer tests: paths, planted markup, the CLI, a hand-made game."""

from __future__ import annotations

import itertools
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stille_post.core.events import Visibility
from stille_post.viewer import write_html
from tests import clirun

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "viewer"  # git-ignored (.gitignore: artifacts/)
UNKNOWN_GAME = "not-installed-game"  # no definition here: no layout, no vocabulary
TOY = "tests.toy_rps:GAME"  # registered the way a third-party game would be

# Markup a model might write. Each payload would set window.__pwned if it ever ran.
PLANTED = (
    "<script>window.__pwned = 1</script>"
    "<img src=x onerror=\"window.__pwned = 2\">"
    "</script><script>window.__pwned = 3</script>"
    "<!--<script>window.__pwned = 4//-->"
    "\u2028<b>bold?</b> & &amp;"
)


def run_cli(*args: str, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    """The real `stille-post` entry point (exit codes and one-line errors included)."""
    return clirun.run_cli(*args, cwd=ROOT, env={**os.environ, **env} if env else None,
                          timeout=120)


def render(transcript: Path) -> Path:
    """The page, written in-process (the CLI itself is tested separately: it is slower)."""
    return write_html(transcript, transcript.with_suffix(".html"))


def every_event_timeline(driver: Any, transcript: Path) -> str:
    """The whole game on one omniscient page: no script error, and every event of the
    transcript rendered. Returns the timeline's text, for each layout's own checks."""
    from stille_post.core.transcript import Transcript

    events = Transcript.load(transcript).events
    page = Page(driver, render(transcript), "#view=all&seq=999999")
    assert page.errors() == []
    assert sorted(page.rendered()) == [e.seq for e in events]
    return str(page.by_id("timeline").text)


def handmade_events() -> list[tuple[str, int | None, Visibility, dict[str, Any]]]:
    pub = Visibility.public()
    knowers = Visibility.only(1, 2, 4)  # seat 3 is the chameleon: no secret word
    return [
        ("game_start", None, pub, {"text": "Category: fruit."}),
        ("secret", None, knowers, {"word": "mango", "text": "The secret word is mango."}),
        ("role", None, Visibility.only(3), {"text": "You are the chameleon."}),
        ("clue", 1, pub, {"word": "sweet"}),
        ("clue", 2, pub, {"word": "tropical"}),
        ("clue", 3, pub, {"word": "yellow"}),
        ("clue", 4, pub, {"word": "pit"}),
        ("whisper", 2, Visibility.only(2, 4), {"text": "I suspect 3."}),
        ("vote", 1, Visibility.log_only(), {"target": 3, "reason": "vague clue"}),
        ("vote_result", None, pub, {"tally": {"3": 3, "1": 1}, "text": "Player 3 is accused."}),
        ("eliminated", None, pub, {"seat": 3, "cause": "voted out"}),
    ]


_LOADS = itertools.count()


class Page:
    """One loaded replay and the few moves the tests make on it."""

    def __init__(self, driver: Any, html: Path, hash: str = "") -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver = driver
        driver.get_log("browser")  # drop messages from the previous page
        # A new hash on the same file would not reload it; a new query does, in the same
        # renderer (a detour through about:blank cost a third of each load's CPU).
        driver.get(f"{html.as_uri()}?load={next(_LOADS)}{hash}")
        WebDriverWait(driver, 10, poll_frequency=0.02).until(
            lambda d: self.js("return window.StillePostViewer"))

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def by_id(self, element_id: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.ID, element_id)

    def present(self, element_id: str) -> bool:
        return bool(self.js("return document.getElementById(arguments[0]) !== null", element_id))

    def shown(self) -> list[int]:
        """Seqs of the events on screen, in order."""
        return [int(s) for s in self.js(
            "return [...document.querySelectorAll('#timeline .ev')]"
            ".filter(n => n.offsetParent !== null).map(n => n.dataset.seq)")]

    def rendered(self) -> list[int]:
        """Seqs of every event in the DOM (the viewer keeps later steps out of it)."""
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
