"""The HTML page without a browser: self-contained, escaped, and the JS visibility rule
equal to the engine's (run under node when it is installed)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import Transcript
from stille_post.viewer.data import script_json, view_data

from .helpers import PLANTED, ROOT, render, run_cli

DATA_BLOCK = re.compile(
    r'<script type="application/json" id="game-data">(.*?)</script>', re.DOTALL)
VIEWER_JS = ROOT / "stille_post" / "viewer" / "static" / "viewer.js"


def embedded(page: str) -> dict[str, Any]:
    match = DATA_BLOCK.search(page)
    assert match, "no data block"
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def test_default_output_is_next_to_the_transcript(seed7: Path, tmp_path: Path) -> None:
    copy = tmp_path / "game.jsonl"
    shutil.copy(seed7, copy)
    proc = run_cli("view", str(copy))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "game.html").is_file()
    assert "game.html" in proc.stdout
    assert not list(tmp_path.glob("*.tmp")), "the temporary file must be renamed away"


def test_open_flag_opens_the_written_page(
    seed7: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from stille_post.cli import app

    opened: list[str] = []

    def fake_open(url: str, *args: object, **kwargs: object) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr("webbrowser.open", fake_open)
    out = tmp_path / "g.html"
    result = CliRunner().invoke(app, ["view", str(seed7), "-o", str(out), "--open"])
    assert result.exit_code == 0, result.output
    assert opened == [out.resolve().as_uri()]


@pytest.mark.parametrize("content", [None, "not json\n", '{"kind": "event"}\n', "[1, 2]\n"])
def test_bad_input_is_one_line_exit_2(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "x.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    proc = run_cli("view", str(path), "-o", str(tmp_path / "x.html"))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_page_needs_no_network(seed7: Path) -> None:
    page = render(seed7).read_text(encoding="utf-8")
    outside_data = DATA_BLOCK.sub("", page)
    # Nothing outside the game data may name a URL, and nothing may load a resource.
    assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", outside_data, re.IGNORECASE)
    assert not re.search(r"<(link|iframe|object|embed|img)\b", outside_data, re.IGNORECASE)
    assert not re.search(r"<script[^>]*\bsrc=|@import|url\(", outside_data, re.IGNORECASE)
    assert "default-src 'none'" in html.unescape(page)  # and the CSP forbids any fetch


def test_all_markup_from_the_transcript_is_escaped(planted: Path) -> None:
    page = render(planted).read_text(encoding="utf-8")
    # Our two script blocks and no others: every planted tag stayed text.
    assert len(re.findall(r"<script", page, re.IGNORECASE)) == 2
    assert len(re.findall(r"</script", page, re.IGNORECASE)) == 2
    assert "<!--" not in page and "window.__pwned" not in DATA_BLOCK.sub("", page).replace(
        html.escape("window.__pwned = 5</script>"), "")
    assert "&lt;b&gt;bot&lt;/b&gt;" in page  # jinja autoescaped the seat's player name
    data = embedded(page)
    assert data["events"][next(i for i, e in enumerate(data["events"])
                               if e["type"] == "message")]["data"]["text"] == PLANTED


def test_script_json_round_trips_and_never_closes_a_tag() -> None:
    obj = {"t": PLANTED, "k<": ["</script>", "<!--", "\u2029"]}
    text = script_json(obj)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == obj


def test_embedded_data_is_the_whole_transcript(seed7: Path) -> None:
    page = render(seed7).read_text(encoding="utf-8")
    transcript = Transcript.load(seed7)
    data = embedded(page)
    assert data == json.loads(json.dumps(view_data(transcript)))
    assert [e["seq"] for e in data["events"]] == [e.seq for e in transcript.events]
    assert [e["visibility"] for e in data["events"]] == [
        e.visibility.to_json() for e in transcript.events]
    assert data["placements"][0]["place"] == 1


def test_incomplete_game_renders_without_placements(seed7: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(seed7.read_text(encoding="utf-8").splitlines(True)[:20]),
                   encoding="utf-8")
    page = render(cut).read_text(encoding="utf-8")
    assert "incomplete" in page
    assert embedded(page)["placements"] == []


@pytest.mark.parametrize("name", ["seed7", "unknown_game", "chameleon_seed3"])
def test_js_visibility_equals_python_view(name: str, request: pytest.FixtureRequest) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the browser test checks the same parity")
    path: Path = request.getfixturevalue(name)
    transcript = Transcript.load(path)
    data = embedded(render(path).read_text(encoding="utf-8"))
    seats = sorted(transcript.seats)
    script = (
        "const v = require(process.argv[1]);"
        "const data = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = {all: v.eventsFor(data.events, null).map(e => e.seq)};"
        "for (const s of JSON.parse(process.argv[2])) "
        "  out[s] = v.eventsFor(data.events, s).map(e => e.seq);"
        "console.log(JSON.stringify(out));"
    )
    proc = subprocess.run([node, "-e", script, str(VIEWER_JS), json.dumps(seats)],
                          input=json.dumps(data), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    js = json.loads(proc.stdout)
    assert js["all"] == [e.seq for e in transcript.events]
    for seat in seats:
        assert js[str(seat)] == [e.seq for e in transcript.view(seat)], f"seat {seat}"
    # The cases that matter: someone saw less than everything.
    assert any(len(js[str(s)]) < len(js["all"]) for s in seats)
