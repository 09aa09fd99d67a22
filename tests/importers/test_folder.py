"""The imported folder is a results folder: resumable, and read by report, view and merge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.errors import ConfigError
from stille_post.tournament.config import TournamentConfig
from stille_post.tournament.index import GameIndex
from stille_post.tournament.results import check_folder, load_results, merge, row_from_transcript
from tests.importers.eg import import_logs

IDS = ["eg-1754984898827689", "eg-1754990000000005", "eg-1754990000000006", "eg-bare-001"]


def test_config_plan_is_the_imported_ids(imported: Path) -> None:
    cfg = TournamentConfig.load(imported)
    assert (cfg.game, cfg.source, cfg.games, cfg.imported) == (
        "elimination", "elimination-logs", 4, tuple(IDS))
    assert [g.id for g in cfg.plan()] == IDS
    res = load_results(imported)
    assert res.missing == [] and res.broken == [] and res.planned == 4
    assert res.status_counts["completed"] == 4


def test_index_rows_equal_a_rebuild(imported: Path) -> None:
    """The rows the importer writes are the rows `ensure_index` rebuilds from disk."""
    cfg = TournamentConfig.load(imported)
    spec = {g.id: (g.index, g.seed) for g in cfg.plan()}
    with GameIndex.open(imported) as index:
        rows = {r.id: r for r in index.rows()}
    assert sorted(rows) == IDS
    for _gid, row in rows.items():
        assert row_from_transcript(imported, spec, imported / row.transcript) == row


def test_rerun_skips_and_never_overwrites(imported: Path, logs: Path) -> None:
    path = imported / "games" / "eg-bare-001.jsonl"
    text = path.read_text()
    mark = text.replace('"lines":25', '"lines":25,"touched":true', 1)
    path.write_text(mark)  # a complete transcript someone edited: still never rewritten
    stats = import_logs([logs], imported)
    assert (stats.imported, stats.already) == (0, 4)
    assert path.read_text() == mark


def test_resume_after_an_interrupted_run(imported: Path, logs: Path) -> None:
    """A lost index, a lost game list, a half-written transcript and a .part file: the
    next run rewrites only what was incomplete and adopts the rest."""
    games = imported / "games"
    torn = games / "eg-1754990000000005.jsonl"
    torn.write_text("\n".join(torn.read_text().splitlines()[:10]) + "\n")  # no result
    (games / "eg-1754990000000006.jsonl.part").write_text("half")
    (imported / "index.sqlite").unlink()
    cfg = TournamentConfig.load(imported)
    cfg.with_imported(set()).save(imported)
    stats = import_logs([logs], imported)
    assert (stats.imported, stats.already) == (1, 3)
    assert not list(games.glob("*.part"))
    res = load_results(imported)
    assert [r.id for r in res.rows if r.id in IDS] and res.missing == [] and res.broken == []
    assert sorted(r.id for r in res.rows) == IDS


def test_deleted_transcript_is_missing_then_reimported(imported: Path, logs: Path) -> None:
    (imported / "games" / "eg-bare-001.jsonl").unlink()
    res = load_results(imported)
    assert res.broken == ["eg-bare-001"]
    stats = import_logs([logs], imported)
    assert stats.imported == 1
    assert load_results(imported).broken == []


def test_tournament_resume_refuses_an_imported_folder(imported: Path) -> None:
    with pytest.raises(ConfigError, match="imported games"):
        check_folder(imported, TournamentConfig(game="elimination", games=2, seed=1),
                     resume=True)


def test_merge_two_imported_folders(logs: Path, tmp_path: Path, cli: Any) -> None:
    a, b = tmp_path / "in_a", tmp_path / "in_b"
    a.mkdir()
    b.mkdir()
    shutil.copy(logs / "game_1754984898827689.jsonl", a)
    shutil.copy(logs / "two_games.jsonl", b)
    shutil.copy(logs / "game_bare_ids.jsonl", b)
    import_logs([a], tmp_path / "A")
    import_logs([b], tmp_path / "B")
    code, out, err = cli("merge", str(tmp_path / "M"), str(tmp_path / "A"), str(tmp_path / "B"),
                         "--json")
    assert code == 0, err
    assert json.loads(out)["added"] == 4
    res = load_results(tmp_path / "M")
    assert sorted(r.id for r in res.rows) == IDS and res.missing == []
    assert TournamentConfig.load(tmp_path / "M").imported == tuple(IDS)
    # merging again adds nothing; a played tournament is refused
    assert merge(tmp_path / "M", [tmp_path / "A"]) == 0
    (tmp_path / "T").mkdir()
    TournamentConfig(game="elimination", games=2, seed=1).save(tmp_path / "T")
    with pytest.raises(ConfigError):
        merge(tmp_path / "M", [tmp_path / "T"])


def test_report_on_imported_folder(imported: Path, cli: Any, tmp_path: Path) -> None:
    labels = tmp_path / "labels.toml"
    labels.write_text('[labels]\n"o1-mini" = "o1-mini (medium reasoning)"\n', encoding="utf-8")
    code, out, err = cli("report", str(imported), "--passes", "3", "--json",
                         "--labels", str(labels))
    assert code == 0, err
    data = json.loads(out)
    assert data["game"] == "elimination" and data["games"]["rated"] == 4
    models = {m["model"]: m for m in data["ratings"]["models"]}
    assert set(models) == {"o1-mini", "gpt-4o", "claude-3-5-sonnet_20241022",
                           "gemini-2.0-flash", "deepseek-r1", "grok-2", "unknown"}
    o1 = models["o1-mini"]
    assert o1["name"] == "o1-mini (medium reasoning)" and o1["games"] == 3
    # ranks 2 of 4, 3 of 3 and 3 of 3: (4-2)/3 + 0 + 0
    assert o1["partial_points_sum"] == pytest.approx(2 / 3)
    assert {"mu", "sigma"} <= set(o1)
    assert (data["ratings"]["mu"], data["ratings"]["sigma"], data["ratings"]["beta"]) == \
        (5.0, 8.3333, 4.1667)
    assert "o1-mini (medium reasoning)" in data["metrics"]["per_player"]
    assert data["metrics"]["overall"]["games"] == 4
    code, out, err = cli("report", str(imported), "--passes", "2", "--labels", str(labels))
    assert code == 0 and "o1-mini (medium reasoning)" in out and "Σ points" in out


def test_report_html_has_the_game_charts(imported: Path, cli: Any, tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    code, _, err = cli("report", str(imported), "--passes", "2", "--html", str(html))
    assert code == 0, err
    page = html.read_text(encoding="utf-8")
    assert "Buddy betrayal rate" in page and "data:image/png;base64," in page


@pytest.mark.parametrize("content, message", [
    ('"o1-mini" = 3\n', "must be a string"),
    ("not toml ===\n", "not valid TOML"),
])
def test_report_bad_labels_exit_2(imported: Path, cli: Any, tmp_path: Path, content: str,
                                  message: str) -> None:
    labels = tmp_path / "labels.toml"
    labels.write_text(content, encoding="utf-8")
    code, _, err = cli("report", str(imported), "--labels", str(labels))
    assert code == 2 and message in err and "Traceback" not in err


def test_view_imported_game(imported: Path, cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "g.html"
    code, _, err = cli("view", str(imported / "games" / "eg-1754984898827689.jsonl"),
                       "-o", str(out))
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    for text in ("P1, alliance? I will not vote for you.", "P4 will go anyway",
                 "Keep me: P2 only accuses.", "P1 broke our deal."):
        assert text in page or json.dumps(text)[1:-1] in page
