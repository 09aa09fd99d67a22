"""Hypothesis strategies for answers of any shape, shared by the adapters' JSON-reading
tests (test_openai_answer_json.py, test_anthropic_answer_json.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from stille_post.providers._common import read_completion
from stille_post.providers.base import Completion, MalformedReply

SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**12), st.text(max_size=8),
                   st.floats(allow_nan=False, allow_infinity=False))
JSON = st.recursive(SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8)


def maybe(key: str, value: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """{key: value}, or nothing: a field present or absent."""
    return st.one_of(st.just({}), value.map(lambda v: {key: v}))


def merge(*parts: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.tuples(*parts).map(lambda ds: {k: v for d in ds for k, v in d.items()})


def reading(parse: Callable[[Any, str], Completion], answer: Any, label: str) -> tuple[str, Any]:
    """What an adapter's parser makes of an answer, through `read_completion`: the
    completion's fields, the re-ask's reason, or the type of anything else raised
    (compared, not hidden: two readings must raise alike)."""
    try:
        c = read_completion(parse, answer, "m", label)
    except MalformedReply as exc:
        return "re-ask", str(exc)
    except Exception as exc:
        return "raised", type(exc).__name__
    return "completion", (c.text, [(t.name, t.arguments, t.id, t.malformed, t.provider_data)
                                   for t in c.tool_calls],
                          c.usage, c.model, c.finish_reason, c.provider_data)
