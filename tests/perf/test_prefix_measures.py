"""The benchmarks' prefix measures (benchmarks/prefix.py):
- the stable-prefix bound: what follows a request's newest own answer is new whatever
  the layout, so no request sequence whose answers are new shares more than the bound
  with earlier requests;
- Anthropic's bill: a change of tool_choice keeps the tools and system cache and loses
  the messages cache."""

from __future__ import annotations

from typing import Literal

import pytest

from benchmarks.prefix import (
    CacheRule,
    PrefixIndex,
    bill,
    billed,
    common_prefix,
    own_answer_tail,
    serialise_blocks,
    serialise_request,
    stable_prefix_bound,
)
from stille_post.providers.base import ChatRequest, Message

Role = Literal["user", "assistant", "tool"]


def _request(*messages: tuple[Role, str], system: str = "rules",
             tool_choice: str | None = None) -> ChatRequest:
    return ChatRequest(system=system, messages=[Message(r, c) for r, c in messages], tools=[],
                       tool_choice=tool_choice)


def test_the_tail_starts_at_the_newest_assistant_message() -> None:
    r = _request(("user", "question 1"), ("assistant", "answer one"), ("user", "next"),
                 ("assistant", "answer two"), ("user", "question 3"))
    text = serialise_request(r)
    tail = text[len(text) - own_answer_tail(r):]
    # The tail is the newest answer's block and what follows, and nothing before it.
    assert tail.startswith(', ["assistant", "answer two"')
    assert "answer one" not in tail and tail.endswith('"question 3", [], null]]]')


def test_no_answer_no_tail() -> None:
    assert own_answer_tail(_request(("user", "question"))) == 0
    assert stable_prefix_bound([_request(("user", "question"))]) == 1.0


def test_a_conversation_of_new_answers_never_shares_more_than_the_bound() -> None:
    # Two seats over five turns, each request the seat's previous one extended by its
    # own (new) answer, the other seat's line and a question. Their first lines differ
    # (a seat's role), as in every game.
    history: dict[int, list[tuple[Role, str]]] = {1: [], 2: []}
    requests = []
    for turn in range(5):
        for seat in (1, 2):
            h = history[seat]
            if turn:
                h.append(("assistant", f"seat {seat} says {turn * 7919 % 1000}"))
                h.append(("user", f"[Player {3 - seat}] spoke. Turn {turn}: your move"))
            else:
                h.append(("user", f"You are Player {seat}. Turn 0: your move"))
            requests.append(_request(*h))
    index, shared, total = PrefixIndex(), 0, 0
    for r in requests:
        text = serialise_request(r)
        shared += index.longest(text)
        index.add(text)
        total += len(text)
    bound = stable_prefix_bound(requests)
    assert 0 < shared / total <= bound < 1
    # The bound is tight here: besides the tails, only the seats' first requests are
    # new, less the system prompt that seat 2's shares with seat 1's.
    first = [serialise_request(r) for r in requests[:2]]
    new_first = len(first[0]) + len(first[1]) - common_prefix(*first)
    assert bound - shared / total == pytest.approx(new_first / total, abs=1e-12)


# --- Anthropic and tool_choice ---------------------------------------------------------------

SONNET = CacheRule("claude-sonnet-4-5", "anthropic", min_tokens=8, read=0.1, write=1.25,
                   explicit=True)
GPT = CacheRule("gpt-5", "openai", min_tokens=8, read=0.1)
SYSTEM = "the rules of the game, long enough to be cached on their own " * 4
HISTORY: list[tuple[Role, str]] = [
    ("user", "Round 1. " + "what happened so far " * 8),
    ("assistant", "my statement, which is kept " * 4),
]


def _second_read(rule: CacheRule, first: str | None, second: str | None) -> int:
    """Tokens the second of two requests reads from the cache: the same system prompt
    and history, each ending with a question, under the tool_choices given."""
    a = _request(*HISTORY, ("user", "Question one?"), system=SYSTEM, tool_choice=first)
    b = _request(*HISTORY, ("user", "Question two?"), system=SYSTEM, tool_choice=second)
    return bill([billed("all", a), billed("all", b)], rule).cached_tokens


def test_anthropic_reads_the_history_only_under_the_same_tool_choice() -> None:
    r = _request(*HISTORY, system=SYSTEM)
    ends = serialise_blocks(r.system, r.messages, r.tools)[1]
    system_only, history = ends[0] // 4, ends[-1] // 4
    assert _second_read(SONNET, "auto", "auto") == history
    assert _second_read(SONNET, "none", "cast_vote") == system_only < history
    assert _second_read(SONNET, None, "auto") == system_only


def test_implicit_caches_ignore_tool_choice() -> None:
    assert _second_read(GPT, "none", "cast_vote") == _second_read(GPT, "auto", "auto") > 0
