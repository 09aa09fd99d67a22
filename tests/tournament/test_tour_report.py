"""The report: bookkeeping of missing/aborted games, exports, and the HTML in a browser."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from stille_post.tournament import RunStats, TournamentConfig
from stille_post.tournament.report import build_report, write_csv, write_html

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

Play = Callable[..., RunStats]
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import asyncio

    from stille_post.tournament import run_tournament

    out = tmp_path_factory.mktemp("report") / "res"
    asyncio.run(run_tournament(TournamentConfig(game="stille-post", games=16, seed=21), out,
                               durable=False))
    return out


def test_missing_and_broken_games_are_counted_not_dropped(results: Path) -> None:
    con = sqlite3.connect(results / "index.sqlite")
    con.execute("DELETE FROM games WHERE idx = 0")  # never finished: no row, no transcript
    con.commit()
    con.close()
    # (a complete transcript without a row would be indexed from disk: issue 11)
    (results / "games" / "g000000-s21.jsonl").unlink()
    victim = sorted((results / "games").iterdir())[1]
    lines = victim.read_text(encoding="utf-8").splitlines()
    victim.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # result line lost
    report = build_report(results, passes=2)
    g = report["games"]
    assert (g["planned"], g["completed"], g["missing"], g["rated"]) == (16, 14, 2, 14)
    assert report["missing"] == ["g000000-s21"] and report["broken"] == [victim.stem]
    assert sum(r["games"] for r in report["leaderboard"]) == 14 * 4
    assert report["metrics"]["overall"]["games"] == 14
    html = write_html(report, results / "r.html").read_text(encoding="utf-8")
    assert "2 missing" in html and "g000000-s21" in html


def test_report_json_is_json_safe_and_metrics_match_the_leaderboard(results: Path) -> None:
    report = json.loads(json.dumps(build_report(results, passes=2)))
    per_player = report["metrics"]["per_player"]
    for row in report["leaderboard"]:
        m = per_player[row["player"]]
        assert m["games"] == row["games"] and m["wins"] == row["wins"]
    files = write_csv(report, results / "csv")
    assert {f.name for f in files} >= {"leaderboard.csv", "player_metrics.csv", "games.csv"}


def test_html_report_is_one_self_contained_file(results: Path) -> None:
    html = write_html(build_report(results, passes=2), results / "out" / "r.html")
    text = html.read_text(encoding="utf-8")
    assert text.count('src="data:image/png;base64,') == 3
    assert "http://" not in text and "https://" not in text  # opens offline
    for title in ("TrueSkill μ ± σ", "Rank distribution", "Win rate with 95% CI"):
        assert title in text
    assert "Cost versus strength" not in text  # bots spend nothing: no empty chart


@pytest.mark.browser
@pytest.mark.slow  # the leaderboard page and the viewer keep a browser test in the fast suite
@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (CI installs "
                    "Debian's chromium package); the screenshot needs a real browser")
def test_headless_chromium_screenshot_shows_the_charts(results: Path, tmp_path: Path) -> None:
    import matplotlib.image as mpimg
    import numpy as np

    html = write_html(build_report(results, passes=2), tmp_path / "report.html")
    shot = tmp_path / "report.png"
    subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--hide-scrollbars",
         "--window-size=1200,2600", f"--screenshot={shot}", html.as_uri()],
        check=True, capture_output=True, timeout=120)
    artifacts = ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    shutil.copyfile(shot, artifacts / "tournament_report.png")
    pixels = mpimg.imread(shot)[..., :3]
    # The TrueSkill bars are drawn in #4c72b0; their pixels prove a chart was rendered,
    # not just the page's text.
    blue = np.array([0x4C, 0x72, 0xB0]) / 255
    assert (np.abs(pixels - blue).max(axis=-1) < 0.03).sum() > 2000
