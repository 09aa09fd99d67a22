"""A 200 answer whose JSON body is not an object (a bare number, list, string or null)
is the server's bad answer: every adapter gives the seat a re-ask or an empty reply,
never a forfeit caused by an internal error. The full chaos run found google-genai
raising a TypeError inside its own response conversion on the bodies `4` and `6`."""

from __future__ import annotations

import asyncio

import pytest

from stille_post.players.base import Decision
from stille_post.players.llm import LLMPlayer
from tests.chaos.fuzz import BUGS, KINDS, MODELS, Served, _chain, _FixedPrompts, mock_provider


@pytest.mark.parametrize("body", [b"4", b"[]", b'"text"', b"null", b"[{}]"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_body_that_is_not_an_object_is_a_reask(kind: str, body: bytes) -> None:
    served = Served([(200, body)])
    player = LLMPlayer(mock_provider(kind, served), _FixedPrompts(), name=f"{kind}:{MODELS[kind]}")
    try:
        action = asyncio.run(player.decide(Decision("fuzz", "turn", 1, None)))
    except Exception as exc:  # what it must not be: a forfeit caused by our own bug
        bugs = [type(e).__name__ for e in _chain(exc) if isinstance(e, BUGS)]
        pytest.fail(f"{type(exc).__name__}: {exc} (programming errors in the chain: {bugs})")
    # A re-ask (the SDK could not read it) or an empty reply that the game's own validation
    # re-asks; never a tool call read out of nothing.
    assert [c.name for c in action.tool_calls] in ([], ["unreadable_reply"])
    assert action.tool_calls or not action.text.strip()
    assert served.count >= 1
