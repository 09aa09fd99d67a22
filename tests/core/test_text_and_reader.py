"""Model text is data (core/text.py) and the transcript reader names garbage lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stille_post.core.text import REPLACEMENT, clean_data, clean_text, is_clean
from stille_post.core.transcript import Transcript, TranscriptError


@pytest.mark.parametrize(("raw", "clean"), [
    ("plain text\nwith a tab\t.", "plain text\nwith a tab\t."),
    ("\x1b[2Jclear", f"{REPLACEMENT}[2Jclear"),
    ("nul\x00bel\x07", f"nul{REPLACEMENT}bel{REPLACEMENT}"),
    ("c1 csi \x9b31m", f"c1 csi {REPLACEMENT}31m"),
    ("half \ud83d emoji", f"half {REPLACEMENT} emoji"),
    ("whole 😀 emoji", "whole 😀 emoji"),
    ("crlf\r\nline", "crlf\nline"),
    ("bare\rcarriage", f"bare{REPLACEMENT}carriage"),
])
def test_clean_text(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


@settings(derandomize=True, database=None)
@given(st.text())
def test_clean_text_is_always_encodable_and_terminal_safe(text: str) -> None:
    out = clean_text(text)
    out.encode("utf-8")  # never raises: no lone surrogates survive
    assert is_clean(out)
    assert clean_text(out) == out  # idempotent
    assert len(out) <= len(text)


def test_clean_data_cleans_keys_and_values_and_cuts_absurd_data() -> None:
    deep: object = 1
    for _ in range(100):
        deep = [deep]
    out = clean_data({"k\x00": ["v\ud800", 10**2000, deep, float("nan")]})
    items = out[f"k{REPLACEMENT}"]
    assert items[0] == f"v{REPLACEMENT}" and items[1] == "[integer too large]"
    assert items[3] is None
    assert "[nested too deeply]" in json.dumps(items[2])


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


HEADER = json.dumps({"kind": "header", "game": "stille-post", "seats": {}}).encode()
EVENT = json.dumps({"kind": "event", "seq": 1, "type": "message", "round": 1, "turn": 1,
                    "actor": 1, "visibility": "public", "data": {"text": "hi"}}).encode()
RESULT = json.dumps({"kind": "result", "status": "completed"}).encode()


def test_a_torn_last_line_is_an_incomplete_game_not_an_error(tmp_path: Path) -> None:
    t = Transcript.load(_write(tmp_path / "t.jsonl", [HEADER, EVENT, b'{"kind": "ev']))
    assert not t.complete and t.torn_lines == 1 and len(t.events) == 1


@pytest.mark.parametrize(("bad", "line"), [
    (b"}}garbage{{", 2), (b"\xff\xfe not utf-8", 2), (b"42", 2), (b'{"kind": "nope"}', 2),
])
def test_a_garbage_line_inside_is_reported_with_file_and_line(
        tmp_path: Path, bad: bytes, line: int) -> None:
    path = _write(tmp_path / "t.jsonl", [HEADER, bad, EVENT, RESULT])
    with pytest.raises(TranscriptError, match=rf"t\.jsonl:{line}: "):
        Transcript.load(path)
