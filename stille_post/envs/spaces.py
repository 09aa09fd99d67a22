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

from gymnasium.spaces import Dict, Space

OBSERVATION_KEYS = {
    "seat": int, "kind": str, "attempt": int, "repair": str, "system": str,
    "messages": list, "tools": list, "tool_choice": str, "max_output_tokens": int,
    "text": str,
}
_WORDS = ("yes", "no", "rock", "paper", "maybe", "Player", "1", "2", "3", "4", "I", "think",
          "vote", "guess", "the", "word", "is", "hello", "pass", "apple")


class _Leaf(Space[Any]):
    """A leaf of the observation: any value of one plain type."""

    def __init__(self, kind: type, seed: int | None = None) -> None:
        self.kind = kind
        super().__init__(None, None, seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        if self.kind is int:
            return isinstance(x, int) and not isinstance(x, bool) and x >= 0
        if self.kind is list:
            return isinstance(x, list) and all(isinstance(m, Mapping) for m in x)
        return isinstance(x, str)

    def sample(self, mask: Any | None = None, probability: Any | None = None) -> Any:
        if self.kind is int:
            return int(self.np_random.integers(0, 4))
        words = " ".join(str(w) for w in self.np_random.choice(_WORDS, size=4))
        return [{"role": "user", "content": words}] if self.kind is list else words

    def __repr__(self) -> str:
        return f"{self.kind.__name__}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Leaf) and other.kind is self.kind

    def __hash__(self) -> int:
        return hash((_Leaf, self.kind))


class ChatObservation(Dict):
    """A decision's request as plain data (envs/observation.py has the keys): a
    Gymnasium `Dict` space of plain leaves (strings, counts, lists of messages)."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__({k: _Leaf(t) for k, t in OBSERVATION_KEYS.items()}, seed=seed)


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
