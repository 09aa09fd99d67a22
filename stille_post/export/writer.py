"""Streaming the rows to part files: Parquet (pyarrow) or JSON Lines.

Rows arrive one game at a time and leave in row groups of at most `ROW_GROUP_ROWS` rows
(fewer when a group's requests grow past `ROW_GROUP_BYTES` of text), so an export holds
one row group in memory whatever the number of games. A part file is written under a
hidden temporary name beside data/ and renamed into data/ when it is complete: a reader
never sees a part file under its final name that is not whole.

The requests' messages are the bulk of the decisions table: a seat's history recurs in
each of its later requests. The renderer shares those `Message` objects between requests
(kit/incremental.py), so here each distinct message of a row group is converted once,
and the column is assembled from indices by Arrow (`take`) instead of once per row in
Python. JSON Lines converts each distinct message once too (`message_json`, cached by
identity for the row group).
"""

from __future__ import annotations

import importlib.abc
import json
import os
import sys
from collections.abc import Callable, Mapping
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from stille_post.export.rows import call_json, json_text, message_json, tool_json

if TYPE_CHECKING:
    import pyarrow as pa

Format = Literal["parquet", "jsonl"]
FORMATS: tuple[Format, ...] = ("parquet", "jsonl")

DATA_DIR = "data"  # the part files, alone in their folder (the Hugging Face hub's layout)
ROW_GROUP_ROWS = 4096
ROW_GROUP_BYTES = 64 << 20  # characters of message text a row group may assemble
ROWS_PER_FILE = 1_000_000

# The columns that hold shared objects, and how one object becomes a struct.
_RAW_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}
_INTERNED: Mapping[str, Callable[[Any], dict[str, Any]]] = {
    "messages": message_json, "tools": tool_json}


def part_name(n: int, fmt: Format) -> str:
    return f"part-{n:05d}.{fmt}"


class Sink(Protocol):
    rows: int  # written so far, in all parts

    def add(self, row: dict[str, Any]) -> None: ...
    def close(self) -> list[str]: ...  # the part files written, by name
    def abort(self) -> None: ...


class _Parts:
    """Part files in `folder`/data, numbered from `first`, each written under a hidden
    name in `folder` (never in data/, which readers list) and renamed when complete."""

    def __init__(self, folder: Path, fmt: Format, first: int) -> None:
        self.folder, self.fmt, self.next, self.first = folder, fmt, first, first
        self.done: list[str] = []
        self.current: tuple[Path, Path] | None = None  # (temporary, final)

    def open(self) -> Path:
        final = self.folder / DATA_DIR / part_name(self.next, self.fmt)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{final.name}.tmp"
        self.next += 1
        self.current = (tmp, final)
        return tmp

    def finish(self) -> None:
        assert self.current is not None
        tmp, final = self.current
        os.replace(tmp, final)
        self.done.append(final.name)
        self.current = None

    def discard(self) -> None:
        if self.current is not None:
            self.current[0].unlink(missing_ok=True)
            self.current = None


class _NoPandas(importlib.abc.MetaPathFinder):
    """A finder that says pandas cannot be imported (`skip_pandas_probe`)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas":
            raise ImportError("pandas is not needed to write Parquet")


def skip_pandas_probe() -> None:
    """pyarrow's `pa.array` asks once per process whether pandas can be imported (to
    accept pandas objects), and imports it to find out: ~0.4 s of CPU in every export,
    for rows that are Python lists. When pandas is not imported yet, that first question
    is answered "no" here. pyarrow asks again, and imports pandas, when something does
    need it (`Table.to_pandas`), but until then it takes no pandas object for an array:
    so only the `stille-post export` command calls this, in a process of its own, never
    `run_export` in a caller's process (a notebook's)."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    blocker = _NoPandas()
    sys.meta_path.insert(0, blocker)
    try:
        pa.array([], type=pa.null())
    finally:
        sys.meta_path.remove(blocker)


class ParquetSink:
    def __init__(self, folder: Path, schema: pa.Schema, *, first_part: int = 0) -> None:
        self.schema = schema
        self.parts = _Parts(folder, "parquet", first_part)
        self.group_rows, self.group_bytes = ROW_GROUP_ROWS, ROW_GROUP_BYTES
        self.rows_per_file = ROWS_PER_FILE
        self.rows = 0
        self._writer: Any = None
        self._in_file = 0
        self._batch = _ArrowBatch(schema)

    def add(self, row: dict[str, Any]) -> None:
        self._batch.add(row)
        self.rows += 1
        if len(self._batch) >= self.group_rows or self._batch.text >= self.group_bytes:
            self._flush()

    def _flush(self) -> None:
        if not len(self._batch):
            return
        import pyarrow.parquet as pq

        if self._writer is None:
            self._writer = pq.ParquetWriter(self.parts.open(), self.schema,
                                            compression="zstd")
        self._writer.write_table(self._batch.table(), row_group_size=len(self._batch))
        self._in_file += len(self._batch)
        self._batch = _ArrowBatch(self.schema)
        if self._in_file >= self.rows_per_file:
            self._close_file()

    def _close_file(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
            self._in_file = 0
            self.parts.finish()

    def close(self) -> list[str]:
        self._flush()
        if self.rows == 0 and self.parts.next == self.parts.first == 0:
            # A new export with no rows is still a table: one part, the schema, no rows.
            import pyarrow.parquet as pq

            self._writer = pq.ParquetWriter(self.parts.open(), self.schema,
                                            compression="zstd")
        self._close_file()
        return self.parts.done

    def abort(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()
            finally:
                self._writer = None
        self.parts.discard()


class _ArrowBatch:
    """One row group being gathered, column by column."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.rows: list[dict[str, Any]] = []
        self.text = 0  # characters of message text the group will assemble
        # per interned column: distinct objects, their index by id, flat indices, offsets
        self._unique: dict[str, list[Any]] = {k: [] for k in _INTERNED if k in schema.names}
        self._index: dict[str, dict[int, int]] = {k: {} for k in self._unique}
        self._sizes: list[int] = []  # content length of each distinct message
        self._flat: dict[str, list[int]] = {k: [] for k in self._unique}
        self._offsets: dict[str, list[int]] = {k: [0] for k in self._unique}
        self._nulls: dict[str, list[bool]] = {k: [] for k in self._unique}

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        for name, unique in self._unique.items():
            objs = row.get(name)
            flat = self._flat[name]
            if objs is None:
                self._nulls[name].append(True)
            else:
                self._nulls[name].append(False)
                index = self._index[name]
                get = index.get
                messages = name == "messages"
                for obj in objs:
                    at = get(id(obj))
                    if at is None:  # new to this row group (the last turn, mostly)
                        at = index[id(obj)] = len(unique)
                        unique.append(obj)
                        if messages:
                            self._sizes.append(len(obj.content))
                    flat.append(at)
                if messages:
                    self.text += sum(map(self._sizes.__getitem__, flat[-len(objs):])) \
                        if objs else 0
            self._offsets[name].append(len(flat))

    def table(self) -> pa.Table:
        import pyarrow as pa

        # The plain columns, transposed from the rows at once (a list per column).
        plain = [name for name in self.schema.names if name not in self._unique]
        columns = dict(zip(plain, zip(*map(itemgetter(*plain), self.rows), strict=True),
                           strict=True)) if self.rows else {name: () for name in plain}
        arrays = []
        for field in self.schema:
            name = field.name
            if name in self._unique:
                item = field.type.value_type
                unique = self._unique[name]
                distinct = _messages(unique, item) if name == "messages" else pa.array(
                    [_INTERNED[name](o) for o in unique], type=item)
                values = distinct.take(pa.array(self._flat[name], type=pa.int32()))
                arrays.append(pa.ListArray.from_arrays(
                    pa.array(self._offsets[name], type=pa.int32()), values,
                    type=field.type, mask=pa.array(self._nulls[name], type=pa.bool_())))
            else:
                arrays.append(pa.array(columns[name], type=field.type))
        return pa.Table.from_arrays(arrays, schema=self.schema)


def _messages(unique: list[Any], item: pa.StructType) -> pa.Array:
    """The distinct messages as one struct array, built field by field (what
    `message_json` says each message becomes, without a dict per message)."""
    import pyarrow as pa

    calls = pa.array([[call_json(c) for c in m.tool_calls] if m.tool_calls else []
                      for m in unique], type=item.field("tool_calls").type)
    fields = {
        "role": pa.array([m.role for m in unique], type=pa.string()),
        "content": pa.array([m.content for m in unique], type=pa.string()),
        "tool_calls": calls,
        "tool_call_id": pa.array([m.tool_call_id for m in unique], type=pa.string()),
        "provider_data": pa.array([json_text(m.provider_data) if m.provider_data else None
                                   for m in unique], type=pa.string()),
    }
    return pa.StructArray.from_arrays([fields[f.name] for f in item], fields=list(item))


class JsonlSink:
    def __init__(self, folder: Path, *, first_part: int = 0) -> None:
        self.parts = _Parts(folder, "jsonl", first_part)
        self.rows_per_file = ROWS_PER_FILE
        self.rows = 0
        self._file: Any = None
        self._in_file = 0
        self._cache: dict[int, tuple[Any, dict[str, Any]]] = {}

    def add(self, row: dict[str, Any]) -> None:
        if self._file is None:
            self._file = self.parts.open().open("w", encoding="utf-8", newline="\n")
        out = dict(row)
        for name, convert in _INTERNED.items():
            objs = out.get(name)
            if objs is not None:
                out[name] = [self._converted(o, convert) for o in objs]
        # UTF-8 as is: a lone surrogate, which UTF-8 cannot hold, never gets here (the
        # exporter refuses a transcript that holds one: export/sources.py). The line
        # breaks JSON leaves raw are escaped, so that a reader splitting on any line
        # break (Python's str.splitlines) still sees one row per line.
        line = json.dumps(out, ensure_ascii=False)
        if "\u2028" in line or "\u2029" in line or "\x85" in line:
            line = line.translate(_RAW_BREAKS)
        self._file.write(line + "\n")
        self.rows += 1
        self._in_file += 1
        if len(self._cache) > 200_000:
            self._cache.clear()
        if self._in_file >= self.rows_per_file:
            self._close_file()

    def _converted(self, obj: Any, convert: Callable[[Any], dict[str, Any]]
                   ) -> dict[str, Any]:
        hit = self._cache.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = convert(obj)
        self._cache[id(obj)] = (obj, value)
        return value

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            self._in_file = 0
            self.parts.finish()

    def close(self) -> list[str]:
        if self.rows == 0 and self.parts.next == self.parts.first == 0:
            self._file = self.parts.open().open("w", encoding="utf-8")  # an empty table
        self._close_file()
        return self.parts.done

    def abort(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self.parts.discard()
