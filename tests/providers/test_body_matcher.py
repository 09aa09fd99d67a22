"""The replay's body matcher (providers/recording.py `json_body`): the same answer as
vcrpy's own `body` matcher on every pair, without its cost."""

from __future__ import annotations

import json
from typing import Any

import pytest
from vcr.matchers import body as vcr_body
from vcr.request import Request

from stille_post.providers.recording import json_body

JSON = {"content-type": "application/json"}
URL = "https://api.openai.com/v1/chat/completions"
BASE: dict[str, Any] = {"model": "gpt-5", "messages": [{"role": "system", "content": "rules"},
                                       {"role": "user", "content": "your turn"}],
        "temperature": 1}


def _request(body: object, headers: dict[str, str] | None = None) -> Request:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return Request("POST", URL, raw, JSON if headers is None else headers)


def _matches(matcher: object, a: Request, b: Request) -> bool:
    try:
        matcher(a, b)  # type: ignore[operator]
    except AssertionError:
        return False
    return True


def _changed(path: list[str | int], value: object) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(BASE))
    node: Any = copy
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return copy


PAIRS = [
    ("same", BASE, BASE),
    ("keys in another order", BASE, dict(reversed(list(BASE.items())))),
    ("another message", BASE, _changed(["messages", 1, "content"], "not your turn")),
    ("a number", BASE, _changed(["temperature"], 0)),
    ("one message less", BASE, {**BASE, "messages": BASE["messages"][:1]}),
    ("a key more", BASE, {**BASE, "seed": 3}),
    ("1 and 1.0", {"a": 1}, {"a": 1.0}),
    ("not JSON both", b"plain text", b"plain text"),
    ("not JSON, differs", b"plain text", b"other text"),
    ("one JSON, one not", BASE, b"{not json"),
]


@pytest.mark.parametrize(("case", "a", "b"), PAIRS, ids=[p[0] for p in PAIRS])
def test_it_agrees_with_vcrpys_body_matcher(case: str, a: object, b: object) -> None:
    left, right = _request(a), _request(b)
    assert _matches(json_body, left, right) == _matches(vcr_body, left, right)


def test_a_difference_is_named_by_its_first_json_path() -> None:
    with pytest.raises(AssertionError, match=r"at \.messages\[1\]\.content$"):
        json_body(_request(BASE), _request(_changed(["messages", 1, "content"], "x")))
    with pytest.raises(AssertionError, match=r"at \.seed$"):
        json_body(_request(BASE), _request({**BASE, "seed": 3}))
    with pytest.raises(AssertionError, match=r"at \.messages$"):
        json_body(_request(BASE), _request({**BASE, "messages": []}))


def test_a_body_is_parsed_once_per_request_and_again_when_it_changes() -> None:
    new = _request(BASE)
    recorded = [_request(_changed(["temperature"], t)) for t in range(5)]
    for r in recorded:
        _matches(json_body, new, r)
    first = new._stille_post_json
    for r in recorded:
        _matches(json_body, new, r)
    assert new._stille_post_json is first
    new.body = json.dumps(recorded[2]._body and json.loads(recorded[2]._body)).encode()
    assert _matches(json_body, new, recorded[2])  # the new body, not the cached one
