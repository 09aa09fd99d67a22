"""The scripted provider: replays a list of completions, one per call.

It sits behind the real `LLMPlayer`, so tests and spec scenarios exercise the real
prompt-building and parsing path with no network. Each entry of a script is a mapping:

    text: "hello"                                  # the completion's text
    tool: {name: guess_model, arguments: {...}}   # one tool call (or `tool_calls: [...]`)
    raw_arguments: "{not json"                     # a tool call whose arguments are broken
    error: "503 overloaded"                        # the call fails for good (ProviderError)
    usage: {input_tokens: 10, output_tokens: 3}

An exhausted script raises `ProviderError`, which the engine turns into a forfeit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stille_post.core.errors import ProviderError, ScenarioError
from stille_post.core.usage import MAX_CALL_TOKENS, token_count
from stille_post.providers.base import ChatRequest, Completion, ToolCall, Usage

_KEYS = {"text", "tool", "tool_calls", "raw_arguments", "error", "usage", "finish_reason"}


def completion_from_script(entry: Mapping[str, Any] | str, *, model: str) -> Completion:
    if isinstance(entry, str):
        return Completion(entry, [], Usage(), model, "stop")
    if not isinstance(entry, Mapping):
        raise ScenarioError(f"script entry must be a mapping or a string, got {entry!r}")
    unknown = set(entry) - _KEYS
    if unknown:
        raise ScenarioError(f"script entry has unknown keys {sorted(unknown)}: {dict(entry)}")
    calls_raw: list[Any] = list(entry.get("tool_calls") or [])
    if entry.get("tool") is not None:
        calls_raw.insert(0, entry["tool"])
    calls: list[ToolCall] = []
    for i, c in enumerate(calls_raw):
        if not isinstance(c, Mapping) or not isinstance(c.get("name"), str):
            raise ScenarioError(f"tool call needs a name: {c!r}")
        args = c.get("arguments", {})
        calls.append(ToolCall(c["name"], dict(args) if isinstance(args, Mapping) else {},
                              id=f"call_{i}",
                              malformed=None if isinstance(args, Mapping) else
                              f"arguments are not a JSON object: {args!r}"))
    if "raw_arguments" in entry:
        name = calls[0].name if calls else "guess_model"
        calls = [ToolCall(name, {}, id="call_0",
                          malformed=f"arguments are not valid JSON: {entry['raw_arguments']!r}")]
    return Completion(
        text=str(entry.get("text") or ""),
        tool_calls=calls,
        usage=_script_usage(entry.get("usage")),
        model=model,
        finish_reason=entry.get("finish_reason", "tool_calls" if calls else "stop"),
    )


_USAGE_KEYS = ("input_tokens", "output_tokens", "cached_input_tokens")


def _script_usage(raw: Any) -> Usage:
    """A script entry's `usage`: a mapping of whole token counts (core/usage.py's bounds
    for one call), or nothing. A script is a file a person wrote: a bad count is refused
    in one line, never clamped."""
    if raw is None:
        return Usage()
    if not isinstance(raw, Mapping):
        raise ScenarioError(f"usage must be a mapping of token counts, got a "
                            f"{type(raw).__name__}")
    unknown = sorted(str(k) for k in raw if k not in _USAGE_KEYS)
    if unknown:
        raise ScenarioError(f"usage has unknown keys {unknown}; it takes "
                            f"{', '.join(_USAGE_KEYS)}")
    counts = []
    for key in _USAGE_KEYS:
        value = raw.get(key, 0)
        n = token_count(value)
        if n is None:
            raise ScenarioError(f"usage.{key} must be a whole number from 0 to "
                                f"{MAX_CALL_TOKENS:,}, got {str(value)[:40]!r}")
        counts.append(n)
    return Usage(*counts)


class ScriptedProvider:
    """Answers call k with entry k of the script and keeps every request it was sent."""

    def __init__(self, script: Sequence[Mapping[str, Any] | str], *, model: str = "scripted"):
        self.model = model
        self._script = list(script)
        self._next = 0
        self.requests: list[ChatRequest] = []

    @property
    def remaining(self) -> int:
        return len(self._script) - self._next

    async def complete(self, request: ChatRequest) -> Completion:
        self.requests.append(request)
        if self._next >= len(self._script):
            raise ProviderError(f"scripted provider {self.model!r}: script exhausted")
        entry = self._script[self._next]
        self._next += 1
        if isinstance(entry, Mapping) and entry.get("error"):
            raise ProviderError(f"scripted failure: {entry['error']}")
        return completion_from_script(entry, model=self.model)
