from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stille_post.core.events import Event, EventLog, Visibility, visible_to
from stille_post.core.transcript import Transcript, TranscriptWriter, canonical_text


def _write_game(path: Path, *, finish: bool = True) -> None:
    log_events: list[Event] = []
    with TranscriptWriter(path) as w:
        w.header(game="g", config={"a": 1}, seed=3, seats={"1": {"player": "x"}})
        log = EventLog([1, 2], sink=lambda e: (w.event(e), log_events.append(e)))
        log.emit("message", actor=1, text="hi")
        log.emit("hint", visibility=Visibility.only(1), value="secret")
        log.emit("note", visibility=Visibility.log_only(), reason="analysis only")
        if finish:
            w.result(status="completed", placements={1: 1, 2: 2})


def test_roundtrip_and_views(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    _write_game(p)
    t = Transcript.load(p)
    assert t.complete and t.result is not None and t.result["placements"] == {"1": 1, "2": 2}
    assert [e.type for e in t.view(1)] == ["message", "hint"]
    assert [e.type for e in t.view(2)] == ["message"]
    assert t.view(2) == visible_to(t.events, 2)


def test_exception_inside_the_block_still_closes_the_record(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    with pytest.raises(RuntimeError), TranscriptWriter(p) as w:
        w.header(game="g", config={}, seed=1, seats={})
        raise RuntimeError("boom")
    t = Transcript.load(p)
    assert t.result is not None and t.result["status"] == "aborted"
    assert "boom" in t.result["reason"]


def test_torn_last_line_marks_the_game_incomplete(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    _write_game(p, finish=False)
    with p.open("a") as fh:
        fh.write('{"kind":"event","seq":9,"ty')  # a crash mid-write
    t = Transcript.load(p)
    assert not t.complete
    assert t.torn_lines == 1 and len(t.events) == 3


def test_canonical_text_ignores_wall_clock(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _write_game(a)
    _write_game(b)
    lines = b.read_text().splitlines()
    head = json.loads(lines[0])
    head["timing"] = {"started_at": "1999-01-01T00:00:00Z"}
    b.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n")
    assert canonical_text(a) == canonical_text(b)


def test_not_a_transcript(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text('{"kind":"event"}\n')
    with pytest.raises(ValueError, match="no header"):
        Transcript.load(p)


def test_visibility_json_roundtrip() -> None:
    for v in (Visibility.public(), Visibility.only(2, 1), Visibility.log_only()):
        assert Visibility.from_json(v.to_json()) == v
    with pytest.raises(ValueError):
        Visibility.from_json("everyone")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
    | st.text(), lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


@settings(deadline=None, derandomize=True, database=None)
@given(_JSON)
def test_the_built_once_encoder_writes_what_json_would(value: object) -> None:
    from stille_post.core import transcript as T

    assert T._ENCODE(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_an_event_line_is_the_event_as_to_json_gives_it(tmp_path: Path) -> None:
    event = Event(3, "message", 1, 2, 4, Visibility.only(4, 1),
                  {"text": "é \u2028 \x00 \"q\"", "n": 1.5, "nested": {"a": [1, None]}})
    path = tmp_path / "t.jsonl"
    with TranscriptWriter(path) as w:
        w.event(event)
        w.result(status="completed")
    line = path.read_text(encoding="utf-8").split("\n")[0]  # not splitlines: U+2028
    assert line == json.dumps({"kind": "event", **event.to_json()}, ensure_ascii=False,
                              separators=(",", ":"))
