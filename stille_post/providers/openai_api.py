"""OpenAI Chat Completions (kind `openai`) and any OpenAI-compatible server (kind
`openai-compatible`: Ollama, vLLM, llama.cpp's server, OpenRouter, ...).

Native tools: `tools` out, `tool_calls` back. What real replies look like and how each is
normalised:
- `content: null` beside `tool_calls`               -> text ""
- `arguments` pretty-printed, or not JSON at all    -> parsed, or ToolCall.malformed
- several tool calls                                -> all kept, in order (the engine
                                                       applies the first, refuses the rest)
- a reasoning model that spent the whole budget     -> text "", finish "length"
- no `prompt_tokens_details` (older models, local servers) -> cached 0
- no usage, or a count that is negative, fractional, not a number or absurd -> the
  reply is kept, its usage counted by an estimate from the texts (`with_known_usage`)
- `content` as a list of parts (some gateways, Mistral) -> the text parts joined; any
  other non-string content                          -> MalformedReply (a re-ask)
"""

from __future__ import annotations

import json
from typing import Any

from stille_post.providers._common import (
    ACCEPT_ENCODING,
    DEFAULT_TIMEOUT_S,
    UNKNOWN_USAGE,
    apply_concurrency,
    content_text,
    counted_unreadable,
    field_of,
    make_policy,
    parse_arguments,
    read_completion,
    read_usage,
    resolve_key,
    sdk_http_client,
    with_known_usage,
)
from stille_post.providers.base import (
    ChatRequest,
    Completion,
    MalformedReply,
    Message,
    ToolCall,
    Usage,
)
from stille_post.providers.retry import RetryPolicy, limiter_for

OPENAI_BASE_URL = "https://api.openai.com/v1"
# Local servers ignore the key, but the SDK insists on one.
LOCAL_PLACEHOLDER_KEY = "not-needed"


def to_openai_messages(request: ChatRequest, *, calls_content: str | None = None
                       ) -> list[dict[str, Any]]:
    """`calls_content`: the content of an assistant turn that is only tool calls."""
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for m in request.messages:
        out.append(_message(m, calls_content))
    return out


def _message(m: Message, calls_content: str | None) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    if m.role == "assistant" and m.tool_calls:
        return {
            "role": "assistant",
            "content": m.content or calls_content,
            "tool_calls": [
                {"id": c.id or f"call_{i}", "type": "function",
                 "function": {"name": c.name,
                              "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
                for i, c in enumerate(m.tool_calls)
            ],
        }
    return {"role": m.role, "content": m.content}


def tool_choice_param(choice: str | None) -> Any:
    if choice is None:
        return None
    if choice in ("auto", "required", "none"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def completion_from_openai(resp: Any, model: str) -> Completion:
    choices = field_of(resp, "choices") or []
    usage = _usage(field_of(resp, "usage"))
    if not choices:
        return Completion("", [], usage, field_of(resp, "model") or model, None)
    choice = choices[0]
    msg = field_of(choice, "message")
    calls: list[ToolCall] = []
    for tc in field_of(msg, "tool_calls") or []:
        fn = field_of(tc, "function")
        name = field_of(fn, "name") or ""
        args, malformed = parse_arguments(field_of(fn, "arguments"))
        if not name:
            malformed = malformed or "the tool call has no name"
        calls.append(ToolCall(name, args, id=field_of(tc, "id") or None,
                              malformed=malformed))
    return Completion(
        text=content_text(field_of(msg, "content")),
        tool_calls=calls,
        usage=usage,
        model=field_of(resp, "model") or model,
        finish_reason=field_of(choice, "finish_reason"),
    )


def _usage(u: Any) -> Usage:
    """The reply's usage; unknown when the server sent none or a count that is not a
    whole number within bounds (`read_usage`)."""
    if u is None:
        return UNKNOWN_USAGE
    details = field_of(u, "prompt_tokens_details")
    cached = field_of(details, "cached_tokens") if details is not None else None
    return read_usage(field_of(u, "prompt_tokens"), field_of(u, "completion_tokens"), cached)


class OpenAIProvider:
    """Chat Completions through the official async SDK, with the SDK's retries off."""

    kind = "openai"
    # null beside tool calls: what the API itself sends back.
    calls_content: str | None = None

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        max_concurrency: int | None = None,
        alias: str | None = None,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        from openai import AsyncOpenAI

        self.model = model
        self.base_url = (base_url or OPENAI_BASE_URL).rstrip("/")
        key = self._key(api_key)
        self.policy = make_policy(max_retries, retry_policy, timeout)
        apply_concurrency(self.kind, self.base_url, max_concurrency)
        self.alias = alias  # the models.toml alias: its own cap on calls in flight
        wait = timeout or DEFAULT_TIMEOUT_S
        self.client = AsyncOpenAI(api_key=key, base_url=self.base_url, max_retries=0,
                                  timeout=wait, default_headers=ACCEPT_ENCODING,
                                  http_client=sdk_http_client("openai", timeout=wait))

    def _key(self, api_key: str | None) -> str:
        return resolve_key(api_key, ["OPENAI_API_KEY"], self.kind)

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(
            request, calls_content=self.calls_content)}
        if request.tools:
            params["tools"] = [
                {"type": "function",
                 "function": {"name": t.name, "description": t.description,
                              "parameters": t.parameters}}
                for t in request.tools
            ]
            choice = tool_choice_param(request.tool_choice)
            if choice is not None:
                params["tool_choice"] = choice
        if request.max_output_tokens is not None:
            # Reasoning models refuse `max_tokens`; OpenAI's own name covers every model.
            params["max_completion_tokens"] = request.max_output_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.reasoning_effort is not None:
            params["reasoning_effort"] = request.reasoning_effort
        if request.extra:
            # models.toml `extra` (clemcore's extra_body): merged into the JSON body as is.
            params["extra_body"] = dict(request.extra)
        return params

    async def aclose(self) -> None:
        """Close the HTTP connections on the loop that opened them (optional)."""
        await self.client.close()

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body `chat.completions.create(**params)` sends: `extra_body` merged
        over the rest, as the SDK merges it."""
        params = self._params(request)
        extra = params.pop("extra_body", None)
        return {**params, **extra} if extra else params

    async def complete(self, request: ChatRequest) -> Completion:
        body = self.body(request)
        # Through the client's own `post`, the path `create` ends in, without the
        # `maybe_transform` that `create` first runs over the whole body: it walks the
        # TypedDict annotations of every message on every call, so its CPU grows with the
        # history and outweighs the rest of the call (docs/performance.md), and returns a
        # body like ours unchanged (tests/providers/test_provider_clients.py checks that).
        # `cast_to=object`: the SDK checks the status, reads and parses the body as it
        # always does, and hands the JSON over as is. Building its pydantic models of the
        # answer, only for the few fields read here, cost 7-9% of the CPU of a call at 64
        # games at once (docs/performance-real-path.md).
        try:
            resp = await self.policy.run(
                lambda: self.client.post("/chat/completions", body=body, cast_to=object),
                label=f"{self.kind}:{self.model}",
                limiter=limiter_for(self.kind, self.base_url, self.alias),
            )
            completion = read_completion(completion_from_openai, resp, self.model,
                                         f"{self.kind}:{self.model}")
        except MalformedReply as exc:
            counted_unreadable(exc, request)
            raise
        return with_known_usage(completion, request)


class OpenAICompatibleProvider(OpenAIProvider):
    """Any server that speaks Chat Completions at `base_url` (required)."""

    kind = "openai-compatible"
    # llama-cpp-python's server refuses (HTTP 500, a validation error) null content beside
    # tool calls; "" means the same to every server, so a seat's own earlier calls can be
    # sent back.
    calls_content = ""

    def __init__(self, model: str, *, base_url: str | None = None, **options: Any) -> None:
        if not base_url:
            from stille_post.core.errors import ConfigError

            raise ConfigError("openai-compatible needs a base_url: "
                              "openai-compatible:MODEL@http://host:port/v1")
        super().__init__(model, base_url=base_url, **options)

    def _key(self, api_key: str | None) -> str:
        import os

        # Hosted gateways (OpenRouter, vLLM with --api-key) want a key; local servers don't.
        return api_key or os.environ.get("OPENAI_COMPATIBLE_API_KEY") or LOCAL_PLACEHOLDER_KEY

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        params = super()._params(request)
        # Older servers (llama.cpp, vLLM < 0.6, Ollama) know only `max_tokens`.
        if "max_completion_tokens" in params:
            params["max_tokens"] = params.pop("max_completion_tokens")
        return params
