"""Where the Anthropic adapter puts its `cache_control` breakpoints
(providers/anthropic_api.py): the system prompt, the last block, and, when the newest
message is a user turn, the last block before it. The API allows 4 per request and
refuses them on thinking blocks (docs: prompt caching, "What cannot be cached")."""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
from collections import defaultdict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stille_post.providers import ChatRequest, Message, Tool, ToolCall, create_provider
from stille_post.providers.anthropic_api import THINKING_KEY, to_anthropic_messages

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)

MARK = {"type": "ephemeral"}
TOOL = Tool("cast_vote", "vote", {"type": "object", "properties": {}})
THINKING = [{"type": "thinking", "thinking": "hm", "signature": "sig"},
            {"type": "redacted_thinking", "data": "xx"}]


@functools.cache
def _provider(caching: bool) -> Any:
    return create_provider("anthropic", "claude-sonnet-4-5-20250929", api_key="k",
                           prompt_caching=caching)


def _params(request: ChatRequest, caching: bool = True) -> dict[str, Any]:
    params: dict[str, Any] = _provider(caching)._params(request)
    return params


def _blocks(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every block that may carry a breakpoint, in the API's cache order."""
    return [*params.get("tools", []), *params.get("system", []),
            *(b for m in params["messages"] for b in m["content"])]


def _marked(params: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in _blocks(params) if "cache_control" in b]


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [b.get("text") or b.get("content") or b.get("name") or b["type"] for b in blocks]


def test_a_closing_question_marks_the_history_before_it() -> None:
    req = ChatRequest("rules", [Message("user", "[GAME MASTER]: begin"),
                                Message("assistant", "hello"),
                                Message("user", "[Player 2]: hi\n\n[GAME MASTER → you]: vote")],
                      [TOOL])
    params = _params(req)
    assert _texts(_marked(params)) == ["rules", "hello",
                                       "[Player 2]: hi\n\n[GAME MASTER → you]: vote"]
    assert all(b["cache_control"] == MARK for b in _marked(params))
    assert "cache_control" not in params["tools"][0]


def test_one_message_gets_only_the_system_and_the_last_block() -> None:
    for messages in ([Message("user", "go")], [Message("user", ""), Message("user", "go")]):
        assert _texts(_marked(_params(ChatRequest("rules", messages)))) == ["rules", "go"]
    # no system prompt: only the last block
    assert _texts(_marked(_params(ChatRequest("", [Message("user", "go")])))) == ["go"]


def test_merged_user_turn_marks_the_last_tool_result_not_the_tool_use() -> None:
    """The question shares its merged user turn with tool results the history keeps, so
    the breakpoint goes on the last result (the end of what the next request repeats),
    not on the previous merged (assistant) message."""
    calls = [ToolCall("cast_vote", {"player": 2}, "c1"), ToolCall("cast_vote", {}, "c2")]
    req = ChatRequest("rules", [Message("user", "begin"), Message("assistant", "", calls),
                                Message("tool", "recorded", tool_call_id="c1"),
                                Message("tool", "refused", tool_call_id="c2"),
                                Message("user", "next question")], [TOOL])
    params = _params(req)
    msgs = params["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert [b["type"] for b in msgs[2]["content"]] == ["tool_result", "tool_result", "text"]
    assert _marked(params) == [params["system"][0], msgs[2]["content"][1],
                               msgs[2]["content"][2]]
    assert not any("cache_control" in b for b in msgs[1]["content"])


def test_consecutive_user_messages_mark_the_one_before_the_newest() -> None:
    req = ChatRequest("rules", [Message("user", "events"), Message("user", "question")])
    msgs = _params(req)["messages"]
    assert len(msgs) == 1 and [b.get("cache_control") for b in msgs[0]["content"]] == [MARK,
                                                                                       MARK]


@pytest.mark.parametrize("newest", [Message("tool", "ok", tool_call_id="c1"),
                                    Message("assistant", "prefill")])
def test_only_a_newest_user_turn_earns_the_extra_breakpoint(newest: Message) -> None:
    before = [Message("user", "go"), Message("assistant", "", [ToolCall("cast_vote", {}, "c1")])]
    if newest.role == "assistant":
        before = [Message("user", "go")]
    params = _params(ChatRequest("rules", [*before, newest]))
    assert _marked(params) == [params["system"][0], _blocks(params)[-1]]


def test_thinking_blocks_never_carry_a_breakpoint() -> None:
    thinking_only = Message("assistant", "", provider_data={THINKING_KEY: THINKING})
    # the turn before the question is thinking only: the breakpoint goes further back
    params = _params(ChatRequest("rules", [Message("user", "begin"), thinking_only,
                                           Message("user", "question")]))
    assert _texts(_marked(params)) == ["rules", "begin", "question"]
    # thinking then a tool call: the call carries it
    call = ToolCall("cast_vote", {}, "c1", provider_data={THINKING_KEY: THINKING})
    params = _params(ChatRequest("rules", [Message("user", "begin"),
                                           Message("assistant", "", [call]),
                                           Message("tool", "ok", tool_call_id="c1"),
                                           Message("user", "question")]))
    assert [b["type"] for b in _marked(params)] == ["text", "tool_result", "text"]
    # a request that ends on thinking: no last breakpoint at all
    params = _params(ChatRequest("rules", [Message("user", "begin"), thinking_only]))
    assert _texts(_marked(params)) == ["rules"]
    # ... and nothing before the question but thinking: only the system and the question
    params = _params(ChatRequest("", [thinking_only, Message("user", "question")]))
    assert _texts(_marked(params)) == ["question"]


def test_prompt_caching_off_sends_no_breakpoint() -> None:
    req = ChatRequest("rules", [Message("user", "begin"), Message("assistant", "hello"),
                                Message("user", "question")], [TOOL])
    assert "cache_control" not in json.dumps(_params(req, caching=False))
    assert "cache_control" not in json.dumps(to_anthropic_messages(req, cache=False))


# --- any history ----------------------------------------------------------------------------

_text = st.sampled_from(["", "a", "events", "question"])


@st.composite
def _message(draw: st.DrawFn) -> Message:
    role = draw(st.sampled_from(["user", "assistant", "tool"]))
    if role == "user":
        return Message("user", draw(_text))
    if role == "tool":
        return Message("tool", draw(_text) or "ok", tool_call_id="c")
    calls = [ToolCall("cast_vote", {}, f"c{i}") for i in range(draw(st.integers(0, 2)))]
    data = {THINKING_KEY: THINKING[:draw(st.integers(0, 2))]}
    return Message("assistant", draw(_text), calls, provider_data=data)


@settings(deadline=None)
@given(st.lists(_message(), max_size=8), st.booleans())
def test_any_history_at_most_four_and_at_the_end_of_what_is_kept(
        messages: list[Message], system: bool) -> None:
    params = _params(ChatRequest("rules" if system else "", messages, [TOOL]))
    blocks = _blocks(params)
    marked = _marked(params)
    assert len(marked) <= 4
    assert not any(b["type"] in ("thinking", "redacted_thinking") for b in marked)
    expected: list[int] = []  # indexes into `blocks`
    first = 1 + system  # the tool, then the system prompt
    if system:
        expected.append(1)
    rendered = [i for i, m in enumerate(messages)
                if to_anthropic_messages(ChatRequest("", [m]), cache=False)]
    if rendered and messages[rendered[-1]].role == "user":
        # what the history without the newest message renders to, block for block
        kept = sum(len(m["content"]) for m in to_anthropic_messages(
            ChatRequest("", messages[:rendered[-1]]), cache=False))
        before = [i for i in range(first, first + kept)
                  if blocks[i]["type"] not in ("thinking", "redacted_thinking")]
        expected += before[-1:]
    if len(blocks) > first and blocks[-1]["type"] not in ("thinking", "redacted_thinking"):
        expected.append(len(blocks) - 1)
    assert [i for i, b in enumerate(blocks) if "cache_control" in b] == expected


# --- whole games ----------------------------------------------------------------------------

def _seat_requests(game: str) -> dict[str, list[ChatRequest]]:
    from benchmarks import bench_efficiency as B

    play = {"stille-post": B.stille_post_requests, "chameleon": B.chameleon_requests,
            "elimination": B.elimination_requests,
            "connections": B.connections_requests}[game]
    seats: dict[str, list[ChatRequest]] = defaultdict(list)
    for _, key, request in play(1):
        seats[key].append(request)
    return seats


def _stripped(params: dict[str, Any]) -> list[str]:
    """Each block with its role and without its marker, as the cache compares them (a
    change of `tool_choice` invalidates the cached messages, not the tools or system)."""
    out = [json.dumps(["tool", t], sort_keys=True) for t in params.get("tools", [])]
    out += [json.dumps(["system", b], sort_keys=True) for b in params.get("system", [])]
    choice = params.get("tool_choice")
    for m in params["messages"]:
        out += [json.dumps([choice, m["role"],
                            {k: v for k, v in b.items() if k != "cache_control"}],
                           sort_keys=True) for b in m["content"]]
    return out


@pytest.mark.parametrize("game", ["stille-post", "chameleon", "elimination", "connections"])
def test_each_request_writes_the_cache_where_the_seats_next_request_stops_repeating_it(
        game: str) -> None:
    """Issue 15: in the Elimination Game and Connections the newest user turn ends with a
    closing question the history does not keep, so a breakpoint only on the last block
    is written (1.25x) and never read. Every request of every seat must carry a
    breakpoint on the last block its seat's next request repeats (tools, system and
    messages compared block by block, markers aside; Connections changes its tool list
    between decisions, and then nothing is repeated, wherever the breakpoints are)."""
    checked = 0
    for requests in _seat_requests(game).values():
        for now, later in itertools.pairwise(requests):
            sent = _params(now)
            assert len(_marked(sent)) <= 4
            a, b = _stripped(sent), _stripped(_params(later))
            repeated = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                            min(len(a), len(b)))
            if repeated == 0:
                continue
            assert "cache_control" in _blocks(sent)[repeated - 1], (game, repeated, len(a))
            checked += 1
    assert checked > 0


# --- on the wire: the emulator bills as the API documents it --------------------------------

def _last_only(params: dict[str, Any]) -> dict[str, Any]:
    """The placement before issue 15: the system prompt and the last block only."""
    params = json.loads(json.dumps(params))
    blocks = [b for m in params["messages"] for b in m["content"]]
    for b in blocks[:-1]:
        b.pop("cache_control", None)
    return params


def _cache_reads(requests: list[ChatRequest], placement: str) -> list[int]:
    """Each request's cache reads, sent in order to a fresh Anthropic emulator."""
    from tests.emulators.server import running

    async def go(provider: Any) -> list[int]:
        got = []
        try:
            for r in requests:
                params = provider._params(r)
                if placement == "last only":
                    params = _last_only(params)
                resp = await provider.client.messages.create(**params)
                got.append(resp.usage.cache_read_input_tokens or 0)
        finally:
            await provider.aclose()
        return got

    with running("anthropic") as emu:
        return asyncio.run(go(create_provider("anthropic", "claude-sonnet-4-5-20250929",
                                              api_key="dummy", base_url=emu.base_url,
                                              max_retries=0)))


@pytest.mark.block_network(allowed_hosts=["127\\.0\\.0\\.1"])
def test_a_seats_next_request_reads_its_history_from_the_cache() -> None:
    """Through the real SDK against the Anthropic emulator (which, as the API, writes a
    prefix only at a breakpoint): the third request of an Elimination-like seat, whose
    closing questions are not kept, reads the history up to its previous reply. With a
    breakpoint only on the last block it reads the system prompt alone, as the second
    request does."""
    rules = "The rules of the game. " * 300  # ~1,700 tokens: above the 1,024 minimum
    events = ["[GAME MASTER]: " + "Player 3 speaks at length. " * 80 for _ in range(3)]
    question = "\n\n[GAME MASTER → you]: your statement, at most 40 words."
    history: list[Message] = []
    requests = []
    for k, e in enumerate(events):
        requests.append(ChatRequest(rules, [*history, Message("user", e + question)],
                                    tool_choice="none", max_output_tokens=100))
        history += [Message("user", e), Message("assistant", f"My statement {k}.")]
    cached = {placement: _cache_reads(requests, placement)
              for placement in ("adapter", "last only")}
    first, second, third = cached["adapter"]
    assert first == 0 and second > 1000  # the system prompt, written by the first
    assert third > second + 400  # ... and now the first event and reply too
    first, second, third = cached["last only"]
    assert first == 0 and second > 1000 and abs(third - second) < 50  # the system alone
