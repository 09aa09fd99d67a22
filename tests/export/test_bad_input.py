"""Hostile and odd input: damaged, truncated and foreign files are skipped and named while
the rest is exported (exit 1); text UTF-8 cannot hold is refused and named; control
characters survive exactly; a game that no longer re-plays is exported without prompts
and named; imported games export the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.transcript import dumps
from stille_post.export import ExportRequest, run_export
from tests.clirun import run_cli
from tests.export.conftest import Folder, adherence_decisions, transcripts

pq = pytest.importorskip("pyarrow.parquet")


def _objs(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, objs: list[dict[str, Any]]) -> None:
    path.write_text("".join(dumps(o) + "\n" for o in objs), encoding="utf-8")


def _rows(out: Path) -> list[dict[str, Any]]:
    return list(pq.read_table(out / "data").to_pylist())


def _jsonl(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for p in sorted((out / "data").glob("*.jsonl"))
            for x in p.read_text(encoding="utf-8").splitlines()]


def test_damaged_and_cut_off_transcripts_are_skipped_and_named(bot_folder: Folder,
                                                               tmp_path: Path) -> None:
    folder = bot_folder("chameleon", 4)
    games = transcripts(folder)
    text = games[0].read_text(encoding="utf-8").splitlines()
    games[0].write_text("\n".join([text[0], "{not json", *text[1:]]) + "\n", encoding="utf-8")
    games[1].write_text("\n".join(text[:-1]) + "\n", encoding="utf-8")  # no result line
    raw = games[2].read_bytes()
    games[2].write_bytes(raw[: len(raw) - 40])  # the last line torn mid-write
    (folder / "games" / "notes.jsonl").write_text('{"hello": 1}\n', encoding="utf-8")
    out = tmp_path / "out"
    done = run_cli("export", str(folder), "--out", str(out))
    assert done.returncode == 1, done.stderr
    err = done.stderr
    assert f"skipped {games[0]}: damaged: line 2: not a JSON line" in err
    assert f"skipped {games[1]}: incomplete" in err
    assert f"skipped {games[2]}: " in err and "cut off" in err
    assert "notes.jsonl: damaged: line 1: not a transcript line" in err
    assert {r["game_id"] for r in _rows(out)} == {f"{folder.name}/{games[3].stem}"}
    assert len(_rows(out)) == sum(adherence_decisions(games[3]).values())
    manifest = [json.loads(x) for x in (out / ".export.jsonl").read_text(
        encoding="utf-8").splitlines()]
    assert len([m for m in manifest if "skipped" in m]) == 4
    assert [m["game"] for m in manifest if "game" in m] == [f"{folder.name}/{games[3].stem}"]


def test_a_damaged_decision_record_skips_its_game(bot_folder: Folder, tmp_path: Path) -> None:
    folder = bot_folder("chameleon", 4)
    path = transcripts(folder)[0]
    objs = _objs(path)
    next(o for o in objs if o.get("type") == "decision")["data"]["attempts"] = "oops"
    _write(path, objs)
    result = run_export(ExportRequest((folder,), tmp_path / "out"))
    assert [s.path for s in result.skipped] == [path]
    assert "attempts is not a list" in result.skipped[0].reason
    assert result.games == 3 and result.problems


def test_a_lone_surrogate_is_refused_and_named(bot_folder: Folder, tmp_path: Path) -> None:
    folder = bot_folder("chameleon", 4)
    path = transcripts(folder)[0]
    text = path.read_text(encoding="utf-8").splitlines()
    n = next(i for i, line in enumerate(text) if '"type":"word"' in line)
    text[n] = text[n].replace('"text":"', '"text":"\\ud800', 1)
    # A valid pair (one astral character) elsewhere is fine.
    other = transcripts(folder)[1]
    o_text = other.read_text(encoding="utf-8").replace('"text":"', '"text":"\\ud83d\\ude00', 1)
    other.write_text(o_text, encoding="utf-8")
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    for fmt in ("parquet", "jsonl"):
        result = run_export(ExportRequest((folder,), tmp_path / fmt, what="events",
                                          fmt=fmt))  # type: ignore[arg-type]
        assert [s.path for s in result.skipped] == [path]
        assert result.skipped[0].reason == (f"refused: line {n + 1} holds a lone surrogate "
                                            "(U+D800), which UTF-8 text cannot hold")
        assert result.games == 3


CONTROL = "a\x00b\x1b[31mred\x7f\u2028\u0085\ttab\r\nend"


def test_control_characters_survive_the_round_trip(bot_folder: Folder, tmp_path: Path) -> None:
    folder = bot_folder("chameleon", 4)
    path = transcripts(folder)[0]
    objs = _objs(path)
    word = next(o for o in objs if o.get("type") == "word")
    word["data"]["text"] = CONTROL
    record = next(o for o in objs if o.get("type") == "decision")
    record["data"]["attempts"][0]["text"] = CONTROL
    _write(path, objs)
    for fmt in ("parquet", "jsonl"):
        out = tmp_path / f"events-{fmt}"
        run_export(ExportRequest((folder,), out, what="events", fmt=fmt))  # type: ignore[arg-type]
        rows = _rows(out) if fmt == "parquet" else _jsonl(out)
        hit = [r for r in rows if r["seq"] == word["seq"] and path.stem in r["game_id"]]
        assert hit[0]["text"] == CONTROL
        assert json.loads(hit[0]["data"])["text"] == CONTROL
        # The decisions: the edited game no longer re-plays (named), and its rows come
        # from its records, the reply as written.
        out = tmp_path / f"decisions-{fmt}"
        result = run_export(ExportRequest((folder,), out, fmt=fmt))  # type: ignore[arg-type]
        assert [n.game_id for n in result.no_prompts] == [f"{folder.name}/{path.stem}"]
        rows = _rows(out) if fmt == "parquet" else _jsonl(out)
        mine = [r for r in rows if r["game_id"].endswith(path.stem)]
        assert mine[0]["reply"]["text"] == CONTROL
        assert all(r["messages"] is None and r["prompt_source"] is None for r in mine)
        assert all(r["prompt_problem"] for r in mine)
        others = [r for r in rows if not r["game_id"].endswith(path.stem)]
        assert others and all(r["prompt_source"] == "replayed" for r in others)


def test_a_game_that_no_longer_replays_exits_1_and_is_named(bot_folder: Folder,
                                                            tmp_path: Path) -> None:
    folder = bot_folder("chameleon", 4)
    path = transcripts(folder)[0]
    objs = _objs(path)
    next(o for o in objs if o.get("type") == "word")["data"]["word"] = "edited"
    _write(path, objs)
    done = run_cli("export", str(folder), "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    assert f"no prompts for {folder.name}/{path.stem}: event #" in done.stderr


def test_a_game_not_installed_here(bot_folder: Folder, tmp_path: Path) -> None:
    folder = bot_folder("chameleon", 4)
    path = transcripts(folder)[0]
    objs = _objs(path)
    objs[0]["game"] = "no-such-game"
    _write(path, objs)
    result = run_export(ExportRequest((folder,), tmp_path / "out"))
    assert [(n.reason, n.expected) for n in result.no_prompts] == [
        ("the game 'no-such-game' is not installed here", False)]
    rows = [r for r in _rows(tmp_path / "out") if r["game"] == "no-such-game"]
    assert len(rows) == sum(adherence_decisions(path).values())  # from its records


def test_imported_games_export_the_same_way(tmp_path: Path) -> None:
    from tests.importers.eg import import_logs

    logs = Path(__file__).resolve().parents[2] / "fixtures" / "elimination_logs"
    folder = tmp_path / "imported"
    import_logs([logs / "game_1754984898827689.jsonl"], folder)
    games = transcripts(folder)
    assert games
    done = run_cli("export", str(folder), "--out", str(tmp_path / "d"))
    assert done.returncode == 0, done.stderr  # expected: their transcripts cannot have them
    assert "have no prompts, as their transcripts cannot: imported" in done.stderr
    assert _rows(tmp_path / "d") == []  # no decision was asked here: none is made up
    run_export(ExportRequest((folder,), tmp_path / "g", what="games"))
    run_export(ExportRequest((folder,), tmp_path / "e", what="events"))
    (game,) = _rows(tmp_path / "g")
    assert json.loads(game["imported_from"])["format"]
    assert game["seed"] is None and game["status"] == "completed"
    assert all(s["player"] for s in game["seats"])
    events = _rows(tmp_path / "e")
    lines = [o for o in _objs(games[0]) if o["kind"] == "event"]
    assert len(events) == len(lines)
    spoken = [e for e in events if e["type"] == "public_message"]
    assert spoken and all(e["text"] is not None and e["actor"] for e in spoken)
