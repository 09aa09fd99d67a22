"""The simulated provider: a fixed latency per call and canned, always-valid answers.

It stands in for a remote API in benchmarks (how close does the tournament runner get to
the latency-bound ideal?) and in tests of the runner's scheduling and rate limits. No
network, no randomness that could shift a game: the answers depend only on the request.
The latency is waited as a network would be waited for, woken by a file descriptor, not
by a loop timer that epoll rounds up to a millisecond (providers/wire.py).

- A turn (tool_choice "auto") gets a short message; with `tool_every=k`, every k-th turn
  also calls `proclaim_superiority`, which never changes the game state.
- An identity guess (the Game Master's "Identity guess #" prompt) gets `guess`, which by
  default names no roster model: valid, wrong, so every game runs its full length.
- Anything else (the introduction) gets a greeting.
Usage is a rough 4-characters-per-token count of the request and the answer.
"""

from __future__ import annotations

from stille_post.providers.base import ChatRequest, Completion, ToolCall, Usage
from stille_post.providers.wire import network_delay

IDENTITY_PROMPT = "Identity guess #"


class SimulatedProvider:
    def __init__(
        self,
        model: str,
        *,
        latency_s: float = 0.02,
        guess: str = "unknown-model",
        tool_every: int = 0,
        text: str = "I will listen for a while before I say more.",
    ) -> None:
        if latency_s < 0:
            raise ValueError("latency_s must not be negative")
        self.model = model
        self.latency_s = latency_s
        self.guess = guess
        self.tool_every = tool_every
        self.text = text
        self.calls = 0
        self._turns = 0

    async def complete(self, request: ChatRequest) -> Completion:
        self.calls += 1
        await network_delay(self.latency_s)
        calls: list[ToolCall] = []
        if request.tool_choice == "auto":
            self._turns += 1
            text = self.text
            if self.tool_every and self._turns % self.tool_every == 0:
                calls = [ToolCall("proclaim_superiority",
                                  {"statement": "My latency is remarkably consistent."},
                                  id=f"sim_{self.calls}")]
        elif _last_user_text(request).find(IDENTITY_PROMPT) >= 0:
            text = self.guess
        else:
            text = f"Hello everyone, I am {self.model}'s stand-in. Nice to meet you."
        size = len(request.system) + sum([len(m.content) for m in request.messages])
        return Completion(text=text, tool_calls=calls,
                          usage=Usage(input_tokens=size // 4, output_tokens=len(text) // 4 + 1),
                          model=self.model, finish_reason="tool_calls" if calls else "stop")


def _last_user_text(request: ChatRequest) -> str:
    for m in reversed(request.messages):
        if m.role == "user":
            return m.content
    return ""
