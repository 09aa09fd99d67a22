"""One simulated model for The Chameleon, used on both sides of `bench_peer`.

The same fixed latency per call and the same policy, read off the request the way a
model would read it: say a fixed clue word, vote for the next player, and, when caught,
name the first word of the card. Answers depend only on the request, so the games are
the same whichever harness asks. Input size is counted the same way on both sides: the
characters of every message of the request (system included), divided by 4.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from stille_post.providers.base import ChatRequest, Completion, Usage
from stille_post.providers.wire import network_delay

CLUE = "delicious"
_SEAT = re.compile(r"You are Player (\d+)")
_PLAYERS = re.compile(r"Players 1 to (\d+)")
_WORDS = re.compile(r"The card: ([^\n]+)\.")
_AGENT = re.compile(r"Your name is (Player \d+)\.")


def tokens(chars: int) -> int:
    return (chars + 3) // 4


@dataclass
class Meter:
    """Calls and input characters, per harness."""

    calls: int = 0
    input_chars: int = 0
    requests: list[list[str]] = field(default_factory=list)  # kept only when asked to
    keep: bool = False

    def record(self, texts: list[str]) -> None:
        self.calls += 1
        self.input_chars += sum(len(t) for t in texts)
        if self.keep:
            self.requests.append(texts)


class ChameleonSimProvider:
    """Our side: a `Provider` for LLM seats of stille_post's Chameleon."""

    def __init__(self, latency_s: float, meter: Meter) -> None:
        self.latency_s = latency_s
        self.meter = meter

    async def complete(self, request: ChatRequest) -> Completion:
        contents = [m.content for m in request.messages]
        self.meter.record([request.system, *contents])
        if self.latency_s:
            await network_delay(self.latency_s)  # woken as by a socket, as ChatArena's threads are
        return Completion(our_answer(request.system, contents), [], Usage(0, 1, 0), "sim")


def our_answer(system: str, contents: list[str]) -> str:
    """Our side, from the system prompt and the contents of the conversation."""
    # The question is the last line of the last user turn.
    last = contents[-1].rsplit("\n", 1)[-1] if contents else ""
    seat = next((int(m.group(1)) for text in contents if (m := _SEAT.search(text))), 1)
    n = int(m.group(1)) if (m := _PLAYERS.search(system)) else 4
    if "You are the dealer" in last:
        return re.findall(r"(\d+)", last.rsplit("one of", 1)[1])[0]
    if "Vote now" in last:
        return str(seat % n + 1)
    if "Guess the secret word" in last:
        words = _WORDS.search(system)
        return words.group(1).split(",")[0].strip() if words else CLUE
    return CLUE


def answer_for(messages: list[dict[str, str]]) -> str:
    """Either side's answer to a Chat Completions request (for the loopback server of
    `peer --real`): ChatArena's system prompt names its agent ("Your name is Player 2.")."""
    system = "\n".join(str(m.get("content")) for m in messages
                       if m.get("role") in ("system", "developer"))
    contents = [str(m.get("content")) for m in messages]
    if (agent := _AGENT.search(system)) is not None:
        return chatarena_answer(agent.group(1), contents)
    return our_answer(system, [c for m, c in zip(messages, contents, strict=True)
                               if m.get("role") not in ("system", "developer")])


def chatarena_answer(agent_name: str, contents: list[str]) -> str:
    """ChatArena's side, from the message contents its backend would send."""
    joined = "\n".join(contents[-3:])
    if "can guess the secret code" in joined:
        return 'I guess the code is "Apple"'
    if "Now vote which" in joined:
        seat = int(agent_name.rsplit(" ", 1)[1])
        return f"Player {seat % 4 + 1}"
    return CLUE


def sleep(latency_s: float) -> None:
    if latency_s:
        time.sleep(latency_s)
