"""The stable-prefix measure every benchmark shares: a request serialised in the order
the APIs cache it (tools, system, messages), its length in tokens (characters / 4), and
how much of it an earlier request already had."""

from __future__ import annotations

import json
from dataclasses import dataclass
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


# --- blocks, the longest earlier prefix, and what a provider bills ---------------------------

def serialise_blocks(system: str, messages: list[Any], tools: list[Any]) -> tuple[str, list[int]]:
    """`serialise(...)` and where its cacheable blocks end: the tools and system prompt
    (one block: Anthropic's first breakpoint covers both), then each message. The
    closing brackets after the last block belong to no block, so a block boundary of one
    request is one of the next request's when that request extends it."""
    head = "[" + json.dumps([[t.name, t.description, t.parameters] for t in tools],
                            ensure_ascii=False) + ", " + json.dumps(system, ensure_ascii=False)
    parts = [head]
    ends = [len(head)]
    for i, m in enumerate(messages):
        part = (", [" if i == 0 else ", ") + json.dumps(
            [m.role, m.content, [[c.name, c.arguments, c.id] for c in m.tool_calls],
             m.tool_call_id], ensure_ascii=False)
        parts.append(part)
        ends.append(ends[-1] + len(part))
    parts.append("]]" if messages else ", []]")  # closes the JSON, not a block
    return "".join(parts), ends


class PrefixIndex:
    """The longest prefix a text shares with any text added before: in a sorted list, the
    best match is one of the text's two neighbours, so a lookup is a bisection and two
    comparisons, not one comparison per earlier text."""

    def __init__(self) -> None:
        self._texts: list[str] = []

    def longest(self, text: str) -> int:
        import bisect

        i = bisect.bisect_left(self._texts, text)
        near = self._texts[max(0, i - 1):i + 1]
        return max((common_prefix(p, text) for p in near), default=0)

    def add(self, text: str) -> None:
        import bisect

        bisect.insort(self._texts, text)


def own_answer_tail(request: Any) -> int:
    """Characters of `request` (serialised as `serialise_blocks`) from its newest
    assistant message to the end. That message is the seat's answer to its previous
    request, so no request sent before it holds it at that place after the same
    history: whatever the layout, this tail is new, and `1 - tail / length` bounds the
    stable prefix of any layout that keeps a seat's own answers as assistant turns
    (RULES.md §1). The one way past it is chance: an earlier request with the same
    history whose answer began with the same characters (deterministic test policies
    repeat their answers across games; real models rarely do)."""
    text, ends = serialise_blocks(request.system, request.messages, request.tools)
    newest = max((i for i, m in enumerate(request.messages) if m.role == "assistant"),
                 default=None)
    # Block i + 1 is message i, and it begins where block i ends.
    return 0 if newest is None else len(text) - ends[newest]


def stable_prefix_bound(requests: list[Any]) -> float:
    """The highest stable-prefix share any prompt layout could reach on these requests
    (see `own_answer_tail`): one minus the share of their characters that follow each
    request's newest own answer."""
    total = tail = 0
    for r in requests:
        total += len(serialise_request(r))
        tail += own_answer_tail(r)
    return 1 - tail / total if total else 1.0


@dataclass(frozen=True)
class CacheRule:
    """One model's prompt-caching rule, as the provider documents it (benchmarks read it;
    nothing here is sent anywhere).

    - implicit (OpenAI, Gemini): the longest prefix shared with any earlier request is
      read from the cache, if it is at least `min_tokens`, counted in `increment`s above
      the minimum (OpenAI: 1,024 tokens, then steps of 128);
    - explicit (Anthropic): only prefixes ending at a `cache_control` breakpoint are
      written (at `write` x the input price, when at least `min_tokens` long), and a
      request reads the longest written prefix that ends at one of its block boundaries
      at most `lookback` blocks before a breakpoint. Our adapter
      (providers/anthropic_api.py) puts breakpoints after the system prompt, on the last
      block, and, when the newest message is a user turn, on the block before it
      (`breakpoint="both"`: three of the four the API allows; the adapter marks content
      blocks, here each message is one block). What-if: the placement before issue 15,
      the system prompt and the last block only (`"last"`), whose write is never read
      where the newest user turn ends with a question the history does not keep.
      A change of `tool_choice` keeps the tools and system cache and loses the messages
      cache (Anthropic's "what invalidates the cache"), so a written message prefix is
      read only under the tool_choice it was written with.
    Cache reads cost `read` x the input price."""

    model: str
    provider: str
    min_tokens: int
    read: float
    increment: int = 1
    write: float = 1.0
    explicit: bool = False
    lookback: int = 20
    breakpoint: str = "both"


@dataclass
class Bill:
    """Input tokens of a run of requests, and their billable equivalent: uncached tokens
    plus cached ones weighted by their price (reads at `read`, writes at `write`)."""

    input_tokens: int = 0
    cached_tokens: int = 0
    billable: float = 0.0


# A request as `bill` reads it: (cache scope, serialised text, block ends, whether the
# last message is a user turn, its tool_choice).
Billed = tuple[str, str, list[int], bool, str | None]


def billed(scope: str, request: Any) -> Billed:
    text, ends = serialise_blocks(request.system, request.messages, request.tools)
    return (scope, text, ends, bool(request.messages) and request.messages[-1].role == "user",
            request.tool_choice)


def _implicit(rule: CacheRule, index: PrefixIndex, text: str) -> tuple[int, float]:
    total = tokens(text)
    shared = index.longest(text) // 4
    index.add(text)
    if shared < rule.min_tokens:
        return 0, float(total)
    cached = rule.min_tokens + (shared - rule.min_tokens) // rule.increment * rule.increment
    return cached, total - cached + rule.read * cached


def _explicit(rule: CacheRule, written: set[tuple[str | None, str]], text: str,
              ends: list[int], closing_user: bool, tool_choice: str | None
              ) -> tuple[int, float]:
    total = tokens(text)
    last = len(ends) - 1
    points = [0, last]
    if closing_user and last >= 2 and rule.breakpoint == "both":
        points = [0, last - 1, last]

    def entry(i: int) -> tuple[str | None, str]:
        # Anthropic: a change of tool_choice keeps the tools and system cache (block 0)
        # and invalidates the messages cache, so a message prefix is cached per
        # tool_choice ("What invalidates the cache", the prompt-caching docs).
        return (None if i == 0 else tool_choice), text[:ends[i]]

    # Block boundaries a breakpoint's lookback reaches: the system breakpoint's own, and
    # those up to `lookback` blocks before the last breakpoint.
    candidates = sorted({0, *range(max(0, last - rule.lookback), last + 1)}, reverse=True)
    read_at = next((ends[i] for i in candidates if entry(i) in written), 0)
    read = read_at // 4
    cacheable = [i for i in points if ends[i] // 4 >= rule.min_tokens]
    for i in cacheable:
        written.add(entry(i))
    write = max(0, ends[cacheable[-1]] // 4 - read) if cacheable else 0
    return read, rule.read * read + rule.write * write + (total - read - write)


def bill(requests: list[Billed], rule: CacheRule) -> Bill:
    """Bill `requests` in the order they were sent, under `rule`; requests of one scope
    share a cache (within its lifetime: the benchmarks send everything within seconds,
    well inside every provider's TTL)."""
    out = Bill()
    indexes: dict[str, PrefixIndex] = {}
    written: dict[str, set[tuple[str | None, str]]] = {}
    for scope, text, ends, closing_user, tool_choice in requests:
        if rule.explicit:
            cached, billable = _explicit(rule, written.setdefault(scope, set()), text, ends,
                                         closing_user, tool_choice)
        else:
            cached, billable = _implicit(rule, indexes.setdefault(scope, PrefixIndex()), text)
        out.input_tokens += tokens(text)
        out.cached_tokens += cached
        out.billable += billable
    return out
