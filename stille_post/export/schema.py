"""The tables' schema, declared once (docs/data.md documents every column).

Importing this module needs pyarrow (the `data` extra); the rows themselves
(export/rows.py) and the JSON Lines output do not.
"""

from __future__ import annotations

import pyarrow as pa

from stille_post.export.rows import EXPORT_VERSION, Table

_str, _i32, _i64, _f64, _bool = pa.string(), pa.int32(), pa.int64(), pa.float64(), pa.bool_()

TOOL_CALL = pa.struct([
    ("id", _str),
    ("name", _str),
    ("arguments", _str),  # JSON text: a JSON object of the tool's own shape
    ("malformed", _str),  # why the call could not be read (then it is a refused reply)
    ("provider_data", _str),  # JSON text: opaque data the provider wants sent back
])

MESSAGE = pa.struct([
    ("role", _str),  # "user" | "assistant" | "tool"
    ("content", _str),
    ("tool_calls", pa.list_(TOOL_CALL)),
    ("tool_call_id", _str),  # on a tool message: the call it answers
    ("provider_data", _str),
])

TOOL = pa.struct([
    ("name", _str),
    ("description", _str),
    ("parameters", _str),  # JSON text: the arguments' JSON Schema
])

SETTINGS = pa.struct([
    ("max_output_tokens", _i64),
    ("temperature", _f64),
    ("reasoning_effort", _str),
    ("extra", _str),  # JSON text: extra body parameters
])

REPLY = pa.struct([
    ("text", _str),
    ("tool_calls", pa.list_(TOOL_CALL)),
    ("model", _str),  # the model name the provider answered with
    ("provider_data", _str),
    ("input_tokens", _i64),
    ("output_tokens", _i64),
    ("cached_input_tokens", _i64),
])

REASK = pa.struct([
    ("system", _str),
    ("messages", pa.list_(MESSAGE)),
    ("reply", REPLY),
    ("error", _str),
    ("reason", _str),
])

DECISIONS = pa.schema([
    ("export_version", _i32),
    ("game", _str),
    ("game_id", _str),
    ("seed", _i64),
    ("seat", _i32),
    ("player", _str),
    ("role", _str),
    ("decision", _i32),
    ("seat_decision", _i32),
    ("kind", _str),
    ("round", _i32),
    ("turn", _i32),
    ("seq", _i64),
    ("system", _str),
    ("messages", pa.list_(MESSAGE)),
    ("tools", pa.list_(TOOL)),
    ("tool_choice", _str),
    ("settings", SETTINGS),
    ("phase_settings", SETTINGS),
    ("structured", _str),  # a structured seat's decoding mode: "schema" | "legal"
    ("legal", _str),  # JSON text: the legal-move schemas its request carried
    ("reply", REPLY),
    ("error", _str),
    ("reason", _str),
    ("reasks", pa.list_(REASK)),
    ("asks", _i32),
    ("valid_first_try", _bool),
    ("forfeited", _str),
    ("failure", _str),
    ("marks", pa.list_(_str)),
    ("input_tokens", _i64),
    ("output_tokens", _i64),
    ("cached_input_tokens", _i64),
    ("cost_usd", _f64),
    ("placement", _i32),
    ("reward", _f64),
    ("reward_scheme", _str),
    ("game_status", _str),
    ("game_valid", _bool),
    ("prompt_source", _str),
    ("prompt_problem", _str),
])

SEAT = pa.struct([
    ("seat", _i32),
    ("player", _str),
    ("role", _str),
    ("model", _str),
    ("provider", _str),
    ("info", _str),  # JSON text: the header's other facts about the seat
    ("placement", _i32),
    ("reward", _f64),
    ("input_tokens", _i64),
    ("output_tokens", _i64),
    ("cost_usd", _f64),
    ("decisions", _i32),
    ("valid_first_try", _i32),
    ("forfeits", _i32),
    ("note", _str),
])

GAMES = pa.schema([
    ("export_version", _i32),
    ("game", _str),
    ("game_id", _str),
    ("seed", _i64),
    ("seed_text", _str),
    ("format", _i32),
    ("package_version", _str),
    ("started_at", _str),
    ("seconds", _f64),
    ("status", _str),
    ("reason", _str),
    ("valid", _bool),
    ("turns", _i32),
    ("winners", pa.list_(_i32)),
    ("eliminated", pa.list_(_i32)),
    ("config", _str),
    ("facts", _str),
    ("details", _str),
    ("seats", pa.list_(SEAT)),
    ("imported_from", _str),
    ("decisions", _i32),
    ("reward_scheme", _str),
])

EVENTS = pa.schema([
    ("export_version", _i32),
    ("game", _str),
    ("game_id", _str),
    ("seq", _i64),
    ("type", _str),
    ("round", _i32),
    ("turn", _i32),
    ("actor", _i32),
    ("public", _bool),
    ("audience", pa.list_(_i32)),
    ("text", _str),
    ("data", _str),  # JSON text: the event's data, the game's own shape
])

SCHEMAS: dict[Table, pa.Schema] = {"decisions": DECISIONS, "games": GAMES, "events": EVENTS}


def schema(table: Table) -> pa.Schema:
    """The table's schema, with the export version in its metadata."""
    return SCHEMAS[table].with_metadata({"stille_post.export_version": str(EXPORT_VERSION),
                                         "stille_post.table": table})
