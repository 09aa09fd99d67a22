"""Transcripts and a headless Chromium for the HTML viewer's tests.

The seed-7 game is played fresh through the CLI, so the viewer is tested against what the
engine writes today. Two transcripts are written by hand: one with planted markup, and
one from a game the viewer has no layout for (a Chameleon-like event stream with a
private secret word and log-only votes).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.events import Event
from stille_post.core.transcript import TranscriptWriter

from .helpers import PLANTED, chameleon_events, run_cli


@pytest.fixture(scope="session")
def viewer_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("viewer")


@pytest.fixture(scope="session")
def seed7(viewer_tmp: Path) -> Path:
    out = viewer_tmp / "seed7.jsonl"
    proc = run_cli("play", "--seed", "7", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="session")
def planted(seed7: Path, viewer_tmp: Path) -> Path:
    """Seed 7 with markup planted in the first message and in a seat's header fields."""
    lines = [json.loads(line) for line in seed7.read_text(encoding="utf-8").splitlines()]
    lines[0]["seats"]["2"]["player"] = "<b>bot</b></title><script>window.__pwned = 5</script>"
    first = next(o for o in lines if o.get("type") == "message")
    first["data"]["text"] = PLANTED
    out = viewer_tmp / "planted.jsonl"
    out.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines),
                   encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def chameleon(viewer_tmp: Path) -> Path:
    out = viewer_tmp / "chameleon.jsonl"
    seats = {str(s): {"model": f"model-{s}", "player": "bot:random"} for s in range(1, 5)}
    with TranscriptWriter(out) as w:
        w.header(game="chameleon", config={"num_players": 4}, seed=3, seats=seats)
        for seq, (type_, actor, vis, data) in enumerate(chameleon_events(), start=1):
            w.event(Event(seq, type_, 0 if seq < 4 else 1, 0, actor, vis, data))
        w.result(status="completed", placements={1: 1, 2: 1, 4: 1, 3: 4},
                 summary={"winners": [1, 2, 4], "causes": {"3": "voted out"}})
    return out


# --- the browser -------------------------------------------------------------------------

def _find(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name) or (name if os.path.isfile(name) else None)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium is not installed (pip install 'selenium>=4.20')")
    from selenium.webdriver.chrome.service import Service

    chromium = _find("chromium", "/usr/bin/chromium", "chromium-browser", "google-chrome")
    driver_path = _find("chromedriver", "/usr/bin/chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip("no headless browser: install Debian's chromium and chromium-driver "
                    "(apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    profile = tempfile.mkdtemp(prefix="viewer-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                 "--window-size=1280,1100"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path keeps Selenium Manager (which would download drivers) out.
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
