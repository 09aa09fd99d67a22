"""Token counts are untrusted numbers (issue 36, items 1, 2 and 13).

A server may report a negative count, a fraction, NaN, infinity, a string or 10**30.
Each adapter, through its real SDK, keeps the reply's text and counts such a reply by an
estimate from its texts, marked as an unknown call (core/usage.py); no count ever reaches
a seat negative or past `MAX_CALL_TOKENS`. A reply the server did send but that cannot be
read (nested too deep, a number no parser holds) is an unreadable reply (a re-ask), not a
model that "could not be reached".
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import httpx2
import pytest

from stille_post.core.usage import MAX_CALL_TOKENS, MAX_RECORDED_TOKENS, Usage, token_count
from stille_post.players.base import Decision
from stille_post.players.llm import UNREADABLE_REPLY, LLMPlayer
from stille_post.providers.google_api import ReadableUsage, without_unreadable_usage
from stille_post.providers.pricing import recorded_cost_usd
from tests.chaos.fuzz import CHAOS_KEY, KINDS, MODELS, Served, _FixedPrompts, mock_provider

# Raw JSON text, so that NaN and Infinity go on the wire as a server would send them.
HOSTILE = {
    "negative": "-1000000000",
    "absurd": str(10**30),
    "past the call bound": str(MAX_CALL_TOKENS + 1),
    "a fraction": "1.5",
    "NaN": "NaN",
    "infinity": "Infinity",
    "minus infinity": "-Infinity",
    "a string": '"12"',
    "a list": "[1, 2]",
    "an object": '{"n": 1}',
}


def _body(kind: str, count: str | None) -> bytes:
    """A good reply ("hello") whose input count is `count` (raw JSON), or no usage."""
    if kind == "openai":
        usage = "" if count is None else \
            f', "usage": {{"prompt_tokens": {count}, "completion_tokens": 5}}'
        return ('{"id": "x", "object": "chat.completion", "created": 1, "model": "m", '
                '"choices": [{"index": 0, "message": {"role": "assistant", "content": '
                f'"hello"}}, "finish_reason": "stop"}}]{usage}}}').encode()
    if kind == "anthropic":
        usage = "" if count is None else \
            f', "usage": {{"input_tokens": {count}, "output_tokens": 5}}'
        return ('{"id": "m", "type": "message", "role": "assistant", "model": "m", '
                '"content": [{"type": "text", "text": "hello"}], "stop_reason": "end_turn"'
                f'{usage}}}').encode()
    usage = "" if count is None else \
        f', "usageMetadata": {{"promptTokenCount": {count}, "candidatesTokenCount": 5}}'
    return ('{"candidates": [{"content": {"role": "model", "parts": [{"text": "hello"}]}, '
            f'"finishReason": "STOP", "index": 0}}], "modelVersion": "g"{usage}}}').encode()


def _player(kind: str, served: Served) -> LLMPlayer:
    provider = mock_provider(kind, served)
    if kind == "google":
        # The adapter's own transport (ReadableUsage) around the served answers, as in
        # GoogleProvider.__init__.
        from google import genai
        from google.genai import types

        client = httpx2.AsyncClient(transport=ReadableUsage(httpx2.MockTransport(served)))
        provider._http = client
        provider.client = genai.Client(
            api_key=CHAOS_KEY, vertexai=False, http_options=types.HttpOptions(
                api_version="v1beta", base_url=provider.base_url + "/",
                httpx_async_client=client, retry_options=types.HttpRetryOptions(attempts=1)))
    return LLMPlayer(provider, _FixedPrompts(), name=f"{kind}:{MODELS[kind]}")


_PLAYERS: dict[str, tuple[LLMPlayer, Served]] = {}


def _decide(kind: str, body: bytes) -> Any:
    """One decision of a seat of `kind` whose server answers `body`. One player (and SDK
    client) per kind serves every case: building a Gemini client takes most of a second."""
    if kind not in _PLAYERS:
        served = Served([])
        _PLAYERS[kind] = _player(kind, served), served
    player, served = _PLAYERS[kind]
    served.items, served.count = [(200, body)], 0
    return asyncio.run(player.decide(Decision("t", "turn", 1, None)))


@pytest.mark.parametrize("what", HOSTILE)
@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_count_keeps_the_reply_and_is_counted_by_an_estimate(kind: str,
                                                                   what: str) -> None:
    action = _decide(kind, _body(kind, HOSTILE[what]))
    assert action.text == "hello" and not action.tool_calls
    u = action.usage
    assert u.unknown_calls == 1
    # The estimate of _FixedPrompts' request (about 150 characters) and of "hello".
    assert 0 < u.input_tokens < 100 and u.output_tokens == 2


@pytest.mark.parametrize("kind", KINDS)
def test_a_reply_without_usage_is_counted_by_an_estimate(kind: str) -> None:
    action = _decide(kind, _body(kind, None))
    assert action.text == "hello"
    assert action.usage.unknown_calls == 1 and action.usage.input_tokens > 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_good_count_is_taken_as_it_is(kind: str) -> None:
    action = _decide(kind, _body(kind, "1234"))
    assert action.usage == Usage(1234, 5, 0, 0)


DEEP = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
LONG_NUMBER = b'{"usage": ' + b"9" * 5000 + b"}"


@pytest.mark.parametrize("body", [DEEP, LONG_NUMBER], ids=["nested too deep", "5000 digits"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_reply_that_cannot_be_read_is_labelled_unreadable(kind: str, body: bytes) -> None:
    """Item 13: the server answered; the seat gets the re-ask of an unreadable reply
    (never the forfeit of "the model could not be reached"), and the call counts."""
    action = _decide(kind, body)
    assert [c.name for c in action.tool_calls] == [UNREADABLE_REPLY]
    reason = action.tool_calls[0].malformed
    assert reason.startswith("the reply could not be read") and "could not be read" in reason
    assert "reached" not in reason
    assert action.usage is not None and action.usage.unknown_calls == 1
    assert action.usage.input_tokens > 0


@pytest.mark.parametrize("value, expected", [
    (0, 0), (12, 12), (12.0, 12), (True, 1), (MAX_CALL_TOKENS, MAX_CALL_TOKENS),
    (MAX_CALL_TOKENS + 1, None), (-1, None), (1.5, None), (math.nan, None), (math.inf, None),
    (-math.inf, None), ("12", None), (None, None), ([1], None), ({"a": 1}, None),
    (10**30, None),
])
def test_token_count(value: Any, expected: int | None) -> None:
    assert token_count(value) == expected


@pytest.mark.parametrize("row, expected", [
    ({"input_tokens": 5, "output_tokens": 2}, Usage(5, 2, 0, 0)),
    ({"input_tokens": 5, "output_tokens": 2, "unknown_calls": 3}, Usage(5, 2, 0, 3)),
    ({"input_tokens": -10**9, "output_tokens": 2}, Usage(0, 2, 0, 1)),
    ({"input_tokens": 10**30, "output_tokens": 2}, Usage(0, 2, 0, 1)),
    ({"input_tokens": MAX_RECORDED_TOKENS, "output_tokens": 0},
     Usage(MAX_RECORDED_TOKENS, 0, 0, 0)),
    ({"input_tokens": math.inf, "output_tokens": math.nan}, Usage(0, 0, 0, 1)),
    ({"input_tokens": "abc", "cached_input_tokens": [1]}, Usage(0, 0, 0, 1)),
    (None, Usage()), ([1, 2], Usage()), ("text", Usage()),
])
def test_a_transcript_row_is_read_within_bounds(row: Any, expected: Usage) -> None:
    assert Usage.from_json(row) == expected


@pytest.mark.parametrize("cost", [-164000.0, math.nan, math.inf, "12", None, True, 1e300])
def test_a_recorded_cost_that_is_not_a_price_is_priced_again(cost: Any) -> None:
    """A hand-edited or hostile `cost_usd` never lowers a ledger nor makes it infinite:
    the row's tokens are priced instead (gpt-5-mini: $0.25 / $2.00 per 1M)."""
    row = {"input_tokens": 1_000_000, "output_tokens": 0, "cost_usd": cost}
    assert recorded_cost_usd("openai:gpt-5-mini", row) == pytest.approx(0.25)


def test_the_gemini_transport_leaves_an_ordinary_answer_alone() -> None:
    body = _body("google", "12")
    assert without_unreadable_usage(body) is None
    fixed = without_unreadable_usage(_body("google", "NaN"))
    assert fixed is not None and "promptTokenCount" not in json.loads(fixed)["usageMetadata"]


def test_a_seat_of_unreadable_replies_forfeits_as_unreadable_not_unreachable() -> None:
    """What the engine and the warning say of a seat whose server only sends replies too
    deep to read: an invalid (unreadable) reply after the re-ask, and unreadable replies
    in the warning; never "the model could not be reached"."""
    from stille_post.cli.warnings import llm_seat_warnings
    from stille_post.core.errors import ParseError
    from stille_post.games.kit.asking import Pending, ask

    served = Served([(200, DEEP)])
    player = _player("openai", served)

    def validate(action: Any) -> Any:
        bad = [c.malformed for c in action.tool_calls if c.malformed]
        if bad:
            raise ParseError(bad[0])
        return action

    answer = asyncio.run(ask(
        player, decision_for=lambda pending, repair: Decision("t", "turn", 1, None),
        validate=validate, repair_attempts=1, timeout_s=60,
        repair_notice=lambda reason, action: Pending("notice", "public", {})))
    assert answer.failure is not None
    assert answer.failure.startswith("invalid reply (the reply could not be read")
    assert "nested too deeply" in answer.failure and "reached" not in answer.failure
    assert answer.usage.unknown_calls == 2  # the ask and its re-ask, each counted
    (warning,) = llm_seat_warnings([player.provider])
    assert "2 unreadable replies" in warning and "failed calls" not in warning


def test_a_thinking_block_that_holds_the_key_is_masked() -> None:
    """Found by the full chaos run (the fuzz of Anthropic games): a thinking block is
    opaque provider data that the Stille Post game writes to the transcript (as the
    seat's private `message_meta`); one that held the configured key put it there."""
    body = json.dumps({
        "id": "m", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "thinking", "thinking": f"key {CHAOS_KEY}", "signature": ""},
                    {"type": "text", "text": "hello"}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 2}}).encode()
    action = _decide("anthropic", body)
    assert action.text == "hello"
    assert CHAOS_KEY not in json.dumps(action.provider_data)
    assert action.provider_data["anthropic_thinking"][0]["thinking"].startswith("key ")
