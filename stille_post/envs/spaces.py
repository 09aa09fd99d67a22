"""The environments' spaces: a chat observation and a reply (text or a tool call).

Neither fits a fixed-size array: an observation is a conversation, an action is what a
model would answer. Both are Gymnasium `Space`s of their own, so that `contains`, `sample`
and `seed` work as the checkers of Gymnasium and PettingZoo expect. `Reply.sample()` is a
random short text: an action of the right type whose content the rules will most often
refuse (a corrective re-ask, then a forfeit), which is what the API checkers need and
what a random policy is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gymnasium.spaces import Space

OBSERVATION_KEYS = {
    "seat": int, "kind": str, "attempt": int, "repair": str, "system": str,
    "messages": list, "tools": list, "tool_choice": str, "max_output_tokens": int,
    "text": str,
}
_WORDS = ("yes", "no", "rock", "paper", "maybe", "Player", "1", "2", "3", "4", "I", "think",
          "vote", "guess", "the", "word", "is", "hello", "pass", "apple")


class ChatObservation(Space[dict[str, Any]]):
    """A decision's request as plain data (envs/observation.py has the keys)."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(None, None, seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        return (isinstance(x, Mapping) and set(x) == set(OBSERVATION_KEYS)
                and all(isinstance(x[k], t) and not isinstance(x[k], bool)
                        for k, t in OBSERVATION_KEYS.items()))

    def sample(self, mask: Any | None = None, probability: Any | None = None
               ) -> dict[str, Any]:
        words = " ".join(self.np_random.choice(_WORDS, size=5))
        return {"seat": 1, "kind": "sample", "attempt": 0, "repair": "", "system": words,
                "messages": [{"role": "user", "content": words}], "tools": [],
                "tool_choice": "", "max_output_tokens": 0, "text": words}

    def __repr__(self) -> str:
        return "ChatObservation()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChatObservation)

    def __hash__(self) -> int:
        return hash(ChatObservation)


class Reply(Space[Any]):
    """A text reply (a string) or a tool call (`{"name": ..., "arguments": {...}}`, or
    `{"text": ..., "tool_calls": [...]}`)."""

    def __init__(self, max_words: int = 6, seed: int | None = None) -> None:
        self.max_words = max_words
        super().__init__(None, None, seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        if isinstance(x, str):
            return True
        if not isinstance(x, Mapping):
            return False
        if "name" in x:
            return (set(x) <= {"name", "arguments", "id"} and isinstance(x["name"], str)
                    and isinstance(x.get("arguments", {}), Mapping)
                    and isinstance(x.get("id", ""), str))
        calls = x.get("tool_calls", [])
        return (set(x) <= {"text", "tool_calls"} and bool(x)
                and isinstance(x.get("text", ""), str) and isinstance(calls, list)
                and all(isinstance(c, Mapping) and self.contains(dict(c)) and "name" in c
                        for c in calls))

    def sample(self, mask: Any | None = None, probability: Any | None = None) -> str:
        n = int(self.np_random.integers(1, self.max_words + 1))
        return " ".join(str(w) for w in self.np_random.choice(_WORDS, size=n))

    def __repr__(self) -> str:
        return "Reply()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reply)

    def __hash__(self) -> int:
        return hash(Reply)


__all__ = ["OBSERVATION_KEYS", "ChatObservation", "Reply"]
