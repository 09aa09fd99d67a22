"""H2 and M6: hostile text inside published logs.

H2: a valid-JSON lone surrogate (`"\\ud83d"`) in one line stopped the whole import with
exit 1, left a `.part` behind and failed the same way on every rerun. It is a named,
counted skip of that game; the games after it are imported.
M6: the summary printed game ids raw, so escape sequences reached the terminal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GOOD = "game_1754984898827689.jsonl"


def _game(logs: Path, gid: str) -> list[str]:
    """The good fixture game under another id, one JSON text per line."""
    lines = (logs / GOOD).read_text(encoding="utf-8").splitlines()
    return [json.dumps({**json.loads(x), "game_id": gid}) for x in lines]


def _with_surrogate(lines: list[str]) -> list[str]:
    # json.dumps writes the lone surrogate as the escape `\ud83d`: valid JSON.
    first = json.loads(lines[0])
    first["message"] = "half an emoji \ud83d here"
    return [json.dumps(first), *lines[1:]]


def test_a_lone_surrogate_is_a_named_skip_and_the_import_goes_on(
        tmp_path: Path, logs: Path, cli: Any) -> None:
    src = tmp_path / "logs"
    src.mkdir()
    (src / "a.jsonl").write_text("\n".join(_game(logs, "g-a")) + "\n", encoding="utf-8")
    bad = _with_surrogate(_game(logs, "g-b"))
    assert "\\ud83d" in bad[0]
    (src / "b.jsonl").write_text("\n".join(bad) + "\n", encoding="utf-8")
    (src / "c.jsonl").write_text("\n".join(_game(logs, "g-c")) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    code, stdout, _ = cli("import", "elimination-logs", str(src), "--out", str(out), "--json")
    assert code == 0
    summary = json.loads(stdout)
    assert summary["imported"] == 2
    assert summary["skipped_by_reason"] == {"lone surrogate in text": 1}
    assert summary["skips"][0]["game_id"] == "g-b"
    assert summary["skips"][0]["detail"].endswith("b.jsonl:1")
    assert not list(out.rglob("*.part"))
    # A rerun works: the two games are there, the bad one is skipped again, by name.
    code, stdout, _ = cli("import", "elimination-logs", str(src), "--out", str(out), "--json")
    again = json.loads(stdout)
    assert code == 0 and again["already_imported"] == 2
    assert again["skipped_by_reason"] == {"lone surrogate in text": 1}
    assert not list(out.rglob("*.part"))
    # The results folder is readable as a whole.
    code, stdout, err = cli("report", str(out), "--json")
    assert code == 0, err


def test_escape_sequences_in_game_ids_never_reach_the_terminal(
        tmp_path: Path, logs: Path, cli: Any) -> None:
    src = tmp_path / "logs"
    src.mkdir()
    hostile = "evil\x1b]0;pwned\x07\x1b[2J\u202e"
    lines = _game(logs, hostile)
    # Cut off its final_results so that the game is skipped and named in the summary.
    (src / "x.jsonl").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    code, _, err = cli("import", "elimination-logs", str(src), "--out", str(tmp_path / "o"))
    assert code == 0
    assert "no final_results" in err
    assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J\\u202e" in err  # shown, escaped
