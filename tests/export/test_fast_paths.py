"""The data export's fast paths (docs/performance.md) give what the plain ones give:
every line of a transcript decoded at once and compared with the re-play as JSON values,
with the byte and text comparisons behind them; a bot's reply of text alone read at once;
the seat specs of a line-up parsed once; pyarrow's pandas probe answered without
importing pandas."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stille_post.core.events import Event, Visibility
from stille_post.core.transcript import Transcript, dumps
from stille_post.export import ExportRequest, run_export
from stille_post.export import replay as replay_module
from stille_post.export.records import RecordError, record_of
from stille_post.export.replay import ReplayError, replay
from stille_post.games import get_game
from stille_post.session import play_game
from tests.export.conftest import Folder, transcripts


def _play(tmp_path: Path, game: str, name: str = "t.jsonl", seed: int = 3,
          players: list[str] | None = None) -> Path:
    out = tmp_path / name
    asyncio.run(play_game(game, seed=seed, out=out, players=players))
    return out


def _replay(path: Path, game: str) -> replay_module.Replay:
    return asyncio.run(replay(Transcript.load(path, keep_lines=True), get_game(game)))


def test_lines_spelled_otherwise_but_equal_as_json_replay(tmp_path: Path) -> None:
    """An older or another writer's spelling (spaces, another key order, escaped
    non-ASCII) is the same JSON: the game re-plays with its prompts, in the export too."""
    path = _play(tmp_path, "chameleon")
    lines = path.read_text(encoding="utf-8").splitlines()
    spelled = [lines[0]]
    for line in lines[1:-1]:
        obj = json.loads(line)
        spelled.append(json.dumps(dict(reversed(list(obj.items()))), ensure_ascii=True))
    spelled.append(lines[-1])
    assert spelled[1:-1] != lines[1:-1]
    other = tmp_path / "spelled.jsonl"
    other.write_text("\n".join(spelled) + "\n", encoding="utf-8")
    got = _replay(other, "chameleon")
    assert got.problem is None and got.prompts is not None
    assert got.prompts == _replay(path, "chameleon").prompts
    folder = tmp_path / "spelled"
    folder.mkdir()
    other.rename(folder / other.name)
    result = run_export(ExportRequest((folder,), tmp_path / "out", fmt="jsonl"))
    assert not result.problems and result.games == 1


def test_a_re_played_line_equal_only_as_text_or_bytes_passes(tmp_path: Path) -> None:
    """Values that are not equal as Python values but are the same JSON: a NaN (never
    equal to itself) and a tuple (written as a list), in the writer's spelling and in
    another. They pass; a real difference is named with its seq."""
    event = Event(7, "note", 1, 2, 3, Visibility.public(),
                  {"x": math.nan, "pair": (1, 2), "text": "é"})
    line = '{"kind":"event",' + dumps(event.to_json())[1:]
    t = Transcript(header={}, events=[], result={}, event_lines=[line])
    written = replay_module._Written(t, None)
    mine = replay_module._as_written([event], True)
    assert mine[0] != written.values[0]  # the values alone would call them different
    replay_module._check_events(written, mine)
    pair = Event(8, "note", 1, 2, 3, Visibility.public(), {"pair": (1, 2)})
    spaced = json.dumps({"kind": "event", **pair.to_json()})  # another writer's spelling
    t1 = Transcript(header={}, events=[], result={}, event_lines=[spaced])
    replay_module._check_events(replay_module._Written(t1, None),
                                replay_module._as_written([pair], True))
    t2 = Transcript(header={}, events=[], result={},
                    event_lines=[line.replace('"é"', '"e"')])
    with pytest.raises(ReplayError, match=r"event #1 \(seq 7\) differs"):
        replay_module._check_events(replay_module._Written(t2, None), mine)


def test_a_line_holding_two_values_is_damaged_and_named(bot_folder: Folder,
                                                        tmp_path: Path) -> None:
    folder = bot_folder("chameleon", 2)
    path = transcripts(folder)[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2:4] = [lines[2] + "," + lines[3]]  # two events on one line, as one JSON text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_export(ExportRequest((folder,), tmp_path / "out"))
    assert [s.path for s in result.skipped] == [path]
    assert result.skipped[0].reason.startswith("damaged: line 3")
    assert result.games == 1


def test_a_reply_of_text_alone_reads_as_the_full_reader_reads_it() -> None:
    event = Event(5, "decision", 0, 0, 2, Visibility.log_only(), {})
    alone = record_of(2, {"decision": "vote", "attempts": [{"text": "Player 3"}]}, 5, event)
    full = record_of(2, {"decision": "vote", "attempts": [
        {"text": "Player 3", "tool_calls": [], "provider_data": None}]}, 5, event)
    assert alone == full
    assert alone.replies[0].action.provider_data == {}
    with pytest.raises(RecordError, match="reply 1: text is not text"):
        record_of(2, {"decision": "vote", "attempts": [{"text": 3}]}, 5, event)
    with pytest.raises(RecordError, match="reply 2: not an object"):
        record_of(2, {"decision": "vote", "attempts": [{"text": "a"}, ["b"]]}, 5, event)


def test_games_of_other_line_ups_replay_in_one_process(tmp_path: Path) -> None:
    """Seat specs are parsed once per line-up: a game with other seats gets its own."""
    a = _play(tmp_path, "stille-post", "a.jsonl")
    b = _play(tmp_path, "stille-post", "b.jsonl",
              players=["bot:random", "bot:random", "bot:gambler", "bot:detective"])
    for path in (a, b, a, b):
        got = _replay(path, "stille-post")
        assert got.problem is None, (path.name, got.problem)


def _run(code: str, *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return out


@pytest.mark.slow
def test_a_parquet_export_does_not_import_pandas_and_pandas_still_reads_it(
        bot_folder: Folder, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    pytest.importorskip("pandas")
    folder = bot_folder("stille-post", 2)
    out = tmp_path / "out"
    got = _run(
        "import json, sys\n"
        "from pathlib import Path\n"
        "from stille_post.cli import main\n"
        "folder, out = sys.argv[1:3]\n"
        "sys.argv = ['stille-post', 'export', folder, '--out', out]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as stop:\n"
        "    assert not stop.code, stop.code\n"
        "before = 'pandas' in sys.modules\n"
        "import pyarrow.parquet as pq\n"
        "table = pq.read_table(Path(out) / 'data')\n"
        "frame = table.to_pandas()\n"
        "print(json.dumps({'rows': table.num_rows, 'pandas_before': before,\n"
        "                  'frame': len(frame), 'finders': len(sys.meta_path)}))\n",
        str(folder), str(out))
    assert got["pandas_before"] is False
    assert got["frame"] == got["rows"] > 0
