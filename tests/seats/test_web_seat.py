"""A person in the browser (`--players web,... --port P`): a whole Chameleon game played
through the page in headless Chromium, with the same validation as the terminal."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.viewer.helpers import until

# The page is served on loopback; --block-network (CI's command) allows only that.
pytestmark = [pytest.mark.heavy,
              pytest.mark.block_network(allowed_hosts=[r"127\.0\.0\.1$", r"localhost$", r"::1$"])]


ROOT = Path(__file__).resolve().parents[2]


def _start(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    # the repository on the path: a seat may be an agent of tests/ (python:tests....)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from stille_post.cli import main; main()", "play", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = re.search(r"web seat: open (http://127\.0\.0\.1:\d+/t/[\w-]+/)", line)
    if found is None:
        proc.kill()
        raise AssertionError(f"no URL: {line}{proc.stderr.read()}")
    return proc, found.group(1)


def _visible(driver: Any, element_id: str) -> bool:
    return bool(driver.execute_script(
        f"const e = document.getElementById('{element_id}'); return e && !e.hidden;"))


def test_a_person_plays_chameleon_to_the_end_in_the_browser(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    out = tmp_path / "game.jsonl"
    # Player 2 thinks 1.5 s per answer (a slow model): the page says whom it waits for.
    proc, url = _start(tmp_path, "chameleon", "--players",
                       "web,python:tests.seats.bad_agents:Slow,bot,bot", "--seed", "3",
                       "--port", "0", "--out", str(out))
    try:
        # Bound to 127.0.0.1 with a token: another token is a 404.
        assert url.startswith("http://127.0.0.1:")
        wrong = re.sub(r"/t/[\w-]+/", "/t/not-the-token/", url) + "api/state"
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(wrong, timeout=5)
        assert err.value.code == 404

        browser.get(url)
        refused = False
        voted_with_marks = False
        waited_for: set[str] = set()
        answered = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status = browser.find_element(By.ID, "status")
            if status.get_attribute("data-over") == "1" and not _visible(browser, "form"):
                break
            if not _visible(browser, "form"):
                waited_for.add(browser.find_element(By.ID, "waiting").text)
                time.sleep(0.05)
                continue
            instruction = browser.find_element(By.ID, "instruction").text
            if _visible(browser, "seat-choice"):
                choice = Select(browser.find_element(By.ID, "seat-choice"))
                # the page's own seat is marked, so that a vote for yourself is no slip
                labels = [o.text for o in choice.options]
                assert labels[1:] == ["Player 1 (you)", "Player 2", "Player 3", "Player 4"]
                voted_with_marks = True
                choice.select_by_index(2)
            else:
                box = browser.find_element(By.ID, "message")
                box.clear()
                if not refused:
                    box.send_keys("two words")  # refused with the reason, asked again
                elif "Guess the secret word" in instruction:
                    card = re.search(r"The card: ([a-z' ,-]+)\.",
                                     browser.find_element(By.ID, "rules").text)
                    assert card, "the rules show the card"
                    box.send_keys(card.group(1).split(",")[0])
                else:
                    box.send_keys("apple")
                    assert browser.find_element(By.ID, "count").text == "1 word"
            browser.execute_script("document.getElementById('error').textContent = ''")
            browser.find_element(By.ID, "send").click()
            # The button is disabled while the answer is sent: once it is back, the answer
            # was taken (the form hidden, perhaps already showing the next question) or
            # refused with the reason shown.
            until(lambda: browser.execute_script(
                "return !document.getElementById('send').disabled"))
            if not refused:
                error = browser.find_element(By.ID, "error").text
                assert "Not accepted: the reply has 2 words" in error, error
                refused = True
                continue
            answered += 1
        else:
            raise AssertionError("the game did not end in the browser")
        # Over: the panel says so (it said "Waiting for the other players…" before).
        waiting = browser.find_element(By.ID, "waiting").text
        assert waiting.startswith(("The game is over", "The game has ended")), waiting
        assert voted_with_marks
        # Only the slow seat is ever named: bots answer at once, and the page never
        # waits for itself.
        assert "Waiting for Player 2…" in waited_for, waited_for
        named = {w for w in waited_for if re.search(r"Player [134]", w)}
        assert not named, waited_for
        # Text from the game goes in inert: a direction override is shown as its escape.
        assert browser.execute_script(
            "return window.StillePostSeat.inert('bot:\\u202elivE\\u0007 ok\\n')") \
            == "bot:\\u202elivE\\x07 ok\n"
        feed = browser.find_element(By.ID, "feed").text
        assert "[you]: apple" in feed
        assert re.search(r"\[Player [234]\]: \S+", feed), "the others' words were shown"
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["seats"]["1"]["player"] == "human:web"
    assert lines[-1]["status"] == "completed"
    events = lines[1:-1]
    assert answered >= 2
    assert [e["data"]["word"] for e in events if e["type"] == "word" and e["actor"] == 1] \
        == ["apple"]
    assert not any(e["type"] in ("repair_request", "invalid") for e in events)
