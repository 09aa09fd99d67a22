"""Model text is data: one sanitiser for everything a model (or a server) writes.

A model's text reaches the engine, the other models' prompts, the JSONL transcript and
the operator's terminal. Two kinds of characters break one of those:
- a lone surrogate (half an emoji, `"\\ud83d"`) cannot be encoded as UTF-8, so the
  transcript writer fails on it;
- C0/C1 control characters (ESC, NUL, BEL, CSI, ...) drive the operator's terminal:
  clear the screen, set the window title, hide text.

`clean_text` replaces each of them with U+FFFD (newline and tab are kept; CRLF becomes a
newline). It runs once, where model output enters the package (`players/llm.py` and the
provider error messages), so nothing downstream has to care.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"

# C0 controls except \t (09) and \n (0a), DEL, the C1 block, and every surrogate code point
# (a str holding a surrogate can only hold a lone one: valid pairs decode to one char).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` with lone surrogates and control characters (but \\n and \\t) replaced."""
    if _UNSAFE.search(text) is None:
        return text  # the common case: no copy
    return _UNSAFE.sub(REPLACEMENT, text.replace("\r\n", "\n"))


def is_clean(text: str) -> bool:
    return _UNSAFE.search(text) is None


def clean_data(value: Any, *, _depth: int = 0) -> Any:
    """`clean_text` applied to every string (keys too) inside JSON-like data.

    Nesting deeper than 64 levels is cut to a placeholder: a model's tool arguments are
    data, and data this deep is an attack on the JSON encoder, not an argument."""
    if isinstance(value, str):
        return clean_text(value)
    if _depth >= 64:
        return "[nested too deeply]"
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_data(v, _depth=_depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_data(v, _depth=_depth + 1) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        # A 5,000-digit integer is valid JSON but breaks int->str later (Python's limit
        # of 4,300 digits): keep such a number as text.
        return value if value.bit_length() <= 1024 else "[integer too large]"
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) \
            else None
    return clean_text(str(value))


# What must not reach a terminal raw in a line we print ourselves: every control
# character (newline and tab too: one line stays one line), lone surrogates, and the
# bidirectional overrides that make text read backwards.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029"
                          "\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """Untrusted text (a game id, a file name, a server's message) for one line on the
    operator's terminal: each unsafe character shown as its escape (`\\x1b`), so it is
    visible and inert."""
    if _UNPRINTABLE.search(text) is None:
        return text
    return _UNPRINTABLE.sub(_escape, text)


def common_prefix(a: str, b: str) -> int:
    """The length of the common prefix of two texts, by bisection on slice comparisons
    (C speed: a character loop made a long game's requests quadratic in Python)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo
