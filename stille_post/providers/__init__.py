"""Providers: the contract types, `create_provider`, one module per API.

`create_provider(kind, model, **options)` is the only constructor the rest of the package
uses. SDK modules are imported lazily so that bot-only games never import an SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from stille_post.core.errors import ConfigError
from stille_post.providers.base import (
    ChatRequest,
    Completion,
    Message,
    Provider,
    Tool,
    ToolCall,
    Usage,
)

# kind -> "module:factory". The factory is called as factory(model, **options).
PROVIDER_KINDS: dict[str, str] = {
    "scripted": "stille_post.providers.scripted:ScriptedProvider",
    # A provider with a fixed latency and canned answers, for benchmarks (tournament issue).
    "simulated": "stille_post.providers.simulated:SimulatedProvider",
    "openai": "stille_post.providers.openai_api:OpenAIProvider",
    "openai-compatible": "stille_post.providers.openai_api:OpenAICompatibleProvider",
    "anthropic": "stille_post.providers.anthropic_api:AnthropicProvider",
    "google": "stille_post.providers.google_api:GoogleProvider",
    # Any model Inspect serves (the optional `inspect` extra; imported only when used).
    "inspect": "stille_post.providers.inspect_model:InspectProvider",
}


def create_provider(kind: str, model: str, **options: Any) -> Provider:
    target = PROVIDER_KINDS.get(kind)
    if target is None:
        known = ", ".join(sorted(PROVIDER_KINDS))
        raise ConfigError(f"unknown provider kind {kind!r}; known kinds: {known}")
    module_name, factory_name = target.split(":")
    factory = getattr(import_module(module_name), factory_name)
    if kind == "scripted":
        provider: Provider = factory(options.pop("script", []), model=model)
        return provider
    provider = factory(model, **options)
    return provider


__all__ = [
    "PROVIDER_KINDS",
    "ChatRequest",
    "Completion",
    "Message",
    "Provider",
    "Tool",
    "ToolCall",
    "Usage",
    "create_provider",
]
