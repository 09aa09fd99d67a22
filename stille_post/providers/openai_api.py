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

from stille_post.providers import structured
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
        free_text_tools: str | None = None,
    ) -> None:
        from openai import AsyncOpenAI

        self.model = model
        # Structured seats' free-text turns: "legal" | "plain" | "omitted" tools (None:
        # the kind's choice, providers/structured.py FREE_TEXT_TOOLS).
        self.free_text_tools = free_text_tools
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
        legal = structured.legal_of(request)
        tools = structured.request_tools(request, self.kind, self.free_text_tools)
        if tools:
            params["tools"] = [self._tool(t, legal is not None and t.name in legal.tools
                                          and t.parameters == legal.tools[t.name])
                               for t in tools]
            choice = tool_choice_param(request.tool_choice)
            if choice is not None:
                params["tool_choice"] = choice
        answer = structured.text_schema(request)
        if answer is not None:
            self._answer_format(params, answer)
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

    def _tool(self, t: Any, legal: bool) -> dict[str, Any]:
        """A function tool; one held to its legal schema is `strict` (OpenAI decodes its
        arguments under the schema, minus the keywords strict mode refuses)."""
        if legal:
            return {"type": "function",
                    "function": {"name": t.name, "description": t.description,
                                 "parameters": structured.for_openai_strict(t.parameters),
                                 "strict": True}}
        return {"type": "function",
                "function": {"name": t.name, "description": t.description,
                             "parameters": t.parameters}}

    def _answer_format(self, params: dict[str, Any], schema: dict[str, Any]) -> None:
        """A text answer under a schema: strict structured output, `{"answer": ...}`."""
        params["response_format"] = {"type": "json_schema", "json_schema": {
            "name": structured.ANSWER_KEY, "strict": True,
            "schema": structured.for_openai_strict(structured.wrapped(schema))}}

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
        completion = await self._complete(request, self.body(request))
        if structured.text_schema(request) is not None:
            return structured.unwrap_completion(completion)
        return completion

    async def _complete(self, request: ChatRequest, body: dict[str, Any],
                        policy: RetryPolicy | None = None) -> Completion:
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
            resp = await (policy or self.policy).run(
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
    """Any server that speaks Chat Completions at `base_url` (required).

    A text answer under a schema (structured seats) is asked for in the first form of
    `TEXT_FORMS` this server takes: OpenAI's `response_format` `json_schema`; llama.cpp's
    `json_object` with a `schema` (llama-cpp-python's server answers the first with HTTP
    500); then nothing. The first such call of a provider is sent once, without retries:
    a refusal (400, 422, 500, 501) moves to the next form, said in one line, and the
    call is sent again. A server that says it is llama.cpp gets a GBNF `grammar` on the
    plain text instead (no JSON around the answer: no tokens spent on it): before its
    first such call a provider reads the server's models list, and llama.cpp's server
    lists its models as `owned_by: "llamacpp"`, llama-cpp-python's as `owned_by: "me"`
    with a `permissions` list (`says_llama_cpp`). The list is read through the SDK's
    client, so a cassette records and replays it like any call."""

    kind = "openai-compatible"
    # llama-cpp-python's server refuses (HTTP 500, a validation error) null content beside
    # tool calls; "" means the same to every server, so a seat's own earlier calls can be
    # sent back.
    calls_content = ""
    TEXT_FORMS = ("json_schema", "json_object", "off")
    REFUSED = frozenset({400, 422, 500, 501})

    def __init__(self, model: str, *, base_url: str | None = None,
                 text_form: str | None = None, **options: Any) -> None:
        if not base_url:
            from stille_post.core.errors import ConfigError

            raise ConfigError("openai-compatible needs a base_url: "
                              "openai-compatible:MODEL@http://host:port/v1")
        super().__init__(model, base_url=base_url, **options)
        # "grammar" (llama.cpp), or one of TEXT_FORMS; known for sure after one call.
        self.text_form = text_form or self.TEXT_FORMS[0]
        self._form_known = text_form is not None

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

    def _tool(self, t: Any, legal: bool) -> dict[str, Any]:
        # No `strict`: a forced tool's schema is already the grammar (llama.cpp, vLLM).
        return super()._tool(t, False)

    def _answer_format(self, params: dict[str, Any], schema: dict[str, Any]) -> None:
        form = self.text_form
        if form == "grammar":
            grammar = structured.gbnf(schema)
            if grammar is not None:
                params["grammar"] = grammar
                return
            form = "json_object"
        if form == "json_schema":
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": structured.ANSWER_KEY, "schema": structured.wrapped(schema)}}
        elif form == "json_object":
            params["response_format"] = {"type": "json_object",
                                         "schema": structured.wrapped(schema)}

    async def complete(self, request: ChatRequest) -> Completion:
        if self._form_known or structured.text_schema(request) is None:
            return await super().complete(request)
        from stille_post.core.errors import ProviderError
        from stille_post.providers.replicas import notice, one_attempt

        if self.text_form == self.TEXT_FORMS[0] and await self._says_llama_cpp():
            self.text_form, self._form_known = "grammar", True
            return await super().complete(request)
        for _ in self.TEXT_FORMS:  # each form at most once
            try:
                completion = await self._complete(request, self.body(request),
                                                  one_attempt(self.policy))
            except ProviderError as exc:
                if exc.status not in self.REFUSED or self.text_form == "off":
                    return await super().complete(request)  # not a refusal: as usual
                refused = self.text_form
                forms = self.TEXT_FORMS
                self.text_form = forms[min(len(forms) - 1, forms.index(refused) + 1)
                                       if refused in forms else 1]
                notice((self.base_url, refused),
                       f"{self.kind}:{self.model} refused response_format {refused} (HTTP "
                       f"{exc.status}); its text answers are asked as "
                       + ("plain text, without a schema" if self.text_form == "off" else
                          f"response_format {self.text_form}"))
                continue
            self._form_known = True
            return structured.unwrap_completion(completion)
        return await super().complete(request)

    async def _says_llama_cpp(self) -> bool:
        from stille_post.core.errors import ProviderError
        from stille_post.providers.base import ReplayMiss
        from stille_post.providers.replicas import one_attempt

        try:
            models = await one_attempt(self.policy).run(
                lambda: self.client.get("/models", cast_to=object),
                label=f"{self.kind}:{self.model}")
        except ReplayMiss:
            raise
        except ProviderError:
            return False  # no models list: the forms are tried in order
        return says_llama_cpp(models)


def says_llama_cpp(models: Any) -> bool:
    """Whether a models list (`GET /models`) is llama.cpp's or llama-cpp-python's."""
    if isinstance(models, str):
        try:
            models = json.loads(models)
        except ValueError:
            return False
    data = models.get("data") if isinstance(models, dict) else None
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        return False
    owner = data[0].get("owned_by")
    return owner == "llamacpp" or (owner == "me" and "permissions" in data[0])
