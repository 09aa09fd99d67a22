"""Bad input: every problem is a named, counted skip; the command never shows a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.importers.eg import import_logs

GOOD = "game_1754984898827689.jsonl"


def test_every_fixture_problem_is_a_named_skip(do_import: Any, tmp_path: Path) -> None:
    stats = do_import(tmp_path / "out")
    assert stats.files == 8 and stats.read == 9 and stats.imported == 4
    assert dict(stats.skipped) == {"duplicate game id": 1, "malformed line": 1,
                                   "no final_results": 1, "non-UTF-8 bytes": 1,
                                   "truncated last line": 1}
    why = {s["game_id"]: s["reason"] for s in stats.skips}
    assert why == {"1754984898827689": "duplicate game id",
                   "1754990000000003": "malformed line",
                   "1754990000000004": "non-UTF-8 bytes",
                   "1754990000000001": "no final_results",
                   "1754990000000002": "truncated last line"}
    detail = {s["reason"]: s["detail"] for s in stats.skips}
    assert detail["malformed line"].endswith("game_malformed.jsonl:2")
    assert detail["truncated last line"].endswith("game_truncated.jsonl:11")
    assert dict(stats.warnings) == {"games with no model keys (seats labelled unknown)": 1}
    assert dict(stats.unknown_types) == {"debug_note": 1}
    names = sorted(p.name for p in (tmp_path / "out" / "games").iterdir())
    assert names == ["eg-1754984898827689.jsonl", "eg-1754990000000005.jsonl",
                     "eg-1754990000000006.jsonl", "eg-bare-001.jsonl"]


def test_strict_skips_bare_ids(do_import: Any, tmp_path: Path) -> None:
    stats = do_import(tmp_path / "out", strict=True)
    assert stats.skipped["no model keys (--strict)"] == 1
    assert stats.imported == 3 and not stats.warnings


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n"
                            for x in lines), encoding="utf-8")
    return path


def _game(logs: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (logs / GOOD).read_text().splitlines()]


DAMAGES: dict[str, tuple[Any, str | None]] = {
    "round-without-elimination": (
        lambda g: [x for x in g if x["type"] != "elimination" or x["round"] != 1],
        "inconsistent log"),
    "second-final-results": (lambda g: [*g, g[-1]], "duplicate game id"),
    "seat-9-of-4": (lambda g: [{**x, "player_id": "Player9_Game1_x"} if i == 0 else x
                               for i, x in enumerate(g)], "inconsistent log"),
    "unknown-seat-eliminated": (
        lambda g: [{**x, "eliminated_player": "P7"} if x["type"] == "elimination" else x
                   for x in g], "inconsistent log"),
    "final-ranks-not-a-mapping": (  # ranks then come from the eliminations: imported
        lambda g: [{**x, "final_ranks": "first"} if x["type"] == "final_results" else x
                   for x in g], None),
    "final-rank-out-of-range": (
        lambda g: [{**x, "final_ranks": {"P1": 9}} if x["type"] == "final_results" else x
                   for x in g], "inconsistent log"),
    "winner-not-a-finalist": (
        lambda g: [{**x, "winners": ["P2"], "winners_full": []}
                   if x["type"] == "final_results" else x for x in g], "inconsistent log"),
    "pair-of-one": (
        lambda g: [{**x, "matched_pairs": [["P1"]]} if x["type"] == "preference_result"
                   else x for x in g], "inconsistent log"),
    "message-not-text": (  # an odd message shape is text, not a crash
        lambda g: [{**x, "message": {"nested": [1, 2]}} if x["type"] == "conversation"
                   else x for x in g], None),
    "line-without-game-id": (
        lambda g: [{k: v for k, v in x.items() if k != "game_id"} if i == 3 else x
                   for i, x in enumerate(g)], "line without a game_id or type"),
    "no-final-results": (lambda g: [x for x in g if x["type"] != "final_results"],
                         "no final_results"),
    "stray-array-line": (lambda g: ["[1, 2, 3]", *g], None),  # of no game: counted only
    "outcome-without-proposal": (
        lambda g: [x for x in g if x["type"] != "preference_proposal"], "inconsistent log"),
    "jury-reason-too-early": (
        lambda g: [*g[:4], g[-2], *g[4:]], "inconsistent log"),
}


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_damaged_game_is_a_named_skip(logs: Path, tmp_path: Path, name: str) -> None:
    damage, reason = DAMAGES[name]
    src = _write(tmp_path / "g.jsonl", damage(_game(logs)))
    stats = import_logs([src], tmp_path / "out")
    if reason is None:
        assert stats.imported == 1 and not stats.skipped
    else:
        assert stats.imported == (1 if reason == "duplicate game id" else 0)
        assert dict(stats.skipped) == {reason: 1}, stats.skips


def test_stray_lines_are_counted(logs: Path, tmp_path: Path) -> None:
    """Damaged lines of no game in a log (a file with a game's lines) are counted..."""
    src = tmp_path / "g.jsonl"
    src.write_bytes(b"not json at all\n\xff\xfe\n[1]\n")
    with src.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(line) + "\n" for line in _game(logs))
    stats = import_logs([src], tmp_path / "out")
    assert stats.read == 1 and stats.imported == 1 and not stats.not_logs
    assert dict(stats.stray_lines) == {"malformed line": 2, "non-UTF-8 bytes": 1}


def test_a_file_of_no_game_is_not_a_log_and_nothing_is_written(tmp_path: Path) -> None:
    """...but a file in which no line is a game's is named as not a log, whatever its
    lines are, and the folder is not made."""
    src = tmp_path / "g.jsonl"
    src.write_bytes(b"not json at all\n\xff\xfe\n[1]\n")
    stats = import_logs([src], tmp_path / "out")
    assert stats.read == 0 and not stats.stray_lines
    assert stats.not_logs == [{"file": str(src), "why": "not UTF-8 text: binary, or UTF-16",
                               "named": True}]
    assert not (tmp_path / "out").exists()


def test_game_split_across_files(logs: Path, tmp_path: Path, read_jsonl: Any) -> None:
    """Lines of one game in two files (several games per file elsewhere): one game."""
    game = _game(logs)
    (tmp_path / "in").mkdir()
    a = _write(tmp_path / "in" / "a.jsonl", game[:30])
    _write(tmp_path / "in" / "b.jsonl", game[30:])
    stats = import_logs([tmp_path / "in"], tmp_path / "out")
    assert stats.imported == 1 and stats.read == 1
    header = read_jsonl(tmp_path / "out" / "games" / "eg-1754984898827689.jsonl")[0]
    assert header["imported_from"]["sources"] == [str(a), str(tmp_path / "in" / "b.jsonl")]
    whole = import_logs([logs / GOOD], tmp_path / "whole")
    assert whole.imported == 1
    ours = (tmp_path / "out" / "games" / "eg-1754984898827689.jsonl").read_text()
    theirs = (tmp_path / "whole" / "games" / "eg-1754984898827689.jsonl").read_text()
    assert ours.splitlines()[1:] == theirs.splitlines()[1:]  # the same events and result


@pytest.mark.parametrize("spelling", [("elimination", "logs"), ("elimination-logs",)])
def test_cli_summary_and_exit_codes(cli: Any, logs: Path, tmp_path: Path,
                                    spelling: tuple[str, ...]) -> None:
    """`import elimination logs` (generated from the game's `importers` hook) and the
    older `import elimination-logs` are one command."""
    code, out, err = cli("import", *spelling, str(logs), "--out", str(tmp_path / "o"))
    assert code == 0 and "Traceback" not in err
    assert "9 games read from 8 files: 4 imported, 0 already imported, 5 skipped" in err
    assert "5 games skipped: 1 duplicate game id; 1 malformed line; 1 no final_results; " \
           "1 non-UTF-8 bytes; 1 truncated last line" in err
    code, out, err = cli("import", *spelling, str(logs), "--out", str(tmp_path / "o"),
                         "--json")
    data = json.loads(out)
    assert code == 0 and data["already_imported"] == 4 and data["imported"] == 0
    assert data["skipped_by_reason"]["malformed line"] == 1 and len(data["skips"]) == 5


@pytest.mark.parametrize("args, message", [
    (["MISSING"], "no such file or folder"),
    (["LOGS", "--out", "FILE"], "is a file"),
    (["EMPTY"], "no .jsonl log files"),
    (["LOGS", "--out", "TOURNAMENT"], "not an import of the published Elimination Game logs"),
])
def test_cli_usage_errors_exit_2(cli: Any, logs: Path, tmp_path: Path, args: list[str],
                                 message: str) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    tour = tmp_path / "tour"
    tour.mkdir()
    shutil.copy(logs / GOOD, tmp_path / "g.jsonl")
    (tour / "tournament.json").write_text(json.dumps(
        {"tournament": {"game": "elimination", "games": 2, "seed": 1}, "run": {}}))
    where = {"MISSING": str(tmp_path / "missing"), "LOGS": str(logs), "FILE":
             str(tmp_path / "file"), "EMPTY": str(tmp_path / "empty"), "TOURNAMENT": str(tour)}
    argv = [where.get(a, a) for a in args]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "o")]
    code, _out, err = cli("import", "elimination-logs", *argv)
    assert code == 2, err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_byte_order_mark_and_crlf_are_not_damage(logs: Path, tmp_path: Path) -> None:
    raw = (logs / GOOD).read_bytes().replace(b"\n", b"\r\n")
    (tmp_path / "g.jsonl").write_bytes(b"\xef\xbb\xbf" + raw)
    stats = import_logs([tmp_path / "g.jsonl"], tmp_path / "out")
    assert stats.imported == 1 and not stats.skipped


KNOWN_REASONS = {"duplicate game id", "malformed line", "truncated last line", "non-UTF-8 bytes",
                 "line without a game_id or type", "no final_results", "inconsistent log",
                 "no model keys (--strict)"}
ODD_VALUES: list[Any] = [None, True, 0, -1, 3.5, "", "P99", "Player2", [], {}, ["P1", "P2"],
                         {"a": 1}, "x" * 300, 10**30]


def test_random_damage_never_raises(logs: Path, tmp_path: Path) -> None:
    """Seeded random damage (lines dropped, repeated, swapped, fields given odd values):
    every game ends imported or skipped with a known reason, never with an exception."""
    import random

    game = _game(logs)
    rng = random.Random(14)
    for case in range(100):
        lines = [dict(x) for x in game]
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(lines))
            what = rng.choice(("drop", "repeat", "swap", "field", "field", "field"))
            if what == "drop":
                del lines[i]
            elif what == "repeat":
                lines.insert(i, dict(lines[i]))
            elif what == "swap" and i + 1 < len(lines):
                lines[i], lines[i + 1] = lines[i + 1], lines[i]
            else:
                key = rng.choice(sorted(lines[i]))
                lines[i][key] = rng.choice(ODD_VALUES)
        src = _write(tmp_path / f"g{case}.jsonl", lines)
        stats = import_logs([src], tmp_path / f"out{case}")
        assert set(stats.skipped) <= KNOWN_REASONS, stats.skips
        assert stats.imported + sum(stats.skipped.values()) == stats.read


def test_a_game_open_at_the_end_of_its_file_is_parked(logs: Path, tmp_path: Path) -> None:
    """Memory stays flat: a game still open when its file ends keeps only byte offsets
    and is read again from disk when a later file goes on with it (shown by changing the
    first file while the reader is in the second one)."""
    from stille_post.importers.reader import GameLines, read_games

    game = _game(logs)
    a = _write(tmp_path / "a.jsonl", game[:30])
    b = _write(tmp_path / "b.jsonl",
               [json.loads(x) for x in (logs / "game_bare_ids.jsonl").read_text().splitlines()]
               + game[30:])
    seen = []
    for item in read_games([a, b], closing_type="final_results"):
        assert isinstance(item, GameLines)
        seen.append(item.game_id)
        if item.game_id == "bare-001":  # the reader is inside b.jsonl; the game is parked
            a.write_text(a.read_text().replace("Hello all.", "HELLO ALL."), encoding="utf-8")
        else:
            assert item.lines[0]["message"].startswith("HELLO ALL.")
            assert len(item.lines) == len(game)
    assert seen == ["bare-001", "1754984898827689"]


def test_some_seats_without_a_model_key_warn(logs: Path, tmp_path: Path) -> None:
    """Only seat 4 never appears with a full id: it is `unknown`, with a warning; --strict
    skips only games with no model key at all."""
    lines = [json.dumps(x).replace("Player4_Game1754984898827689_gemini-2.0-flash", "P4")
             for x in _game(logs)]
    src = _write(tmp_path / "g.jsonl", lines)
    stats = import_logs([src], tmp_path / "out", strict=True)
    assert stats.imported == 1 and dict(stats.warnings) == {
        "games with some seats of no model key (labelled unknown)": 1}
    header = json.loads((tmp_path / "out" / "games" / "eg-1754984898827689.jsonl")
                        .read_text().splitlines()[0])
    assert header["seats"]["4"] == {"player": "unknown"}
    assert header["seats"]["1"] == {"player": "o1-mini", "model": "o1-mini"}
