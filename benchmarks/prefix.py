"""The stable-prefix measure every benchmark shares: a request serialised in the order
the APIs cache it (tools, system, messages), its length in tokens (characters / 4), and
how much of it an earlier request already had."""

from __future__ import annotations

import json
from typing import Any


def tokens(text: str) -> int:
    return (len(text) + 3) // 4


def serialise(system: str, messages: list[Any], tools: list[Any]) -> str:
    return json.dumps([[[t.name, t.description, t.parameters] for t in tools], system,
                       [[m.role, m.content, [[c.name, c.arguments, c.id] for c in m.tool_calls],
                         m.tool_call_id] for m in messages]], ensure_ascii=False)


def serialise_request(request: Any) -> str:
    return serialise(request.system, request.messages, request.tools)


def common_prefix(a: str, b: str) -> int:
    """Length of the shared prefix; compared in blocks first, as requests share long ones."""
    n = min(len(a), len(b))
    i = 0
    step = 256
    while i + step <= n and a[i:i + step] == b[i:i + step]:
        i += step
    while i < n and a[i] == b[i]:
        i += 1
    return i
