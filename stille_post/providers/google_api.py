"""Google Gemini through google-genai (kind `google`): `generate_content` with function
declarations and automatic function calling OFF (the Game Master runs the tools, not the
SDK).

Facts this module follows (DESIGN.md "Record and replay"):
- `HttpOptions(api_version="v1beta")`: google-genai 3.x would call `/v1/`, the real
  recordings use `/v1beta/`;
- the httpx2 transport is forced (our own `httpx2.AsyncClient`), because
  with aiohttp importable the SDK switches to aiohttp, which vcrpy records as a lowercase
  `post` that does not replay;
- the `genai.Client` is kept on the provider: a client used inline is closed under you;
- `HttpRetryOptions(attempts=1)`: one attempt and no implicit SDK retries; ours decide.

Normalisation: function calls may come in parallel, with a `thoughtSignature` on the part
(Gemini 3 wants it sent back; only the first parallel call has one). Signatures are bytes
in the SDK and base64 text on `ToolCall.provider_data` so that transcripts stay JSON.
Thought parts are not text. `output_tokens` counts candidates + thoughts, because
thoughts are billed as output.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Awaitable
from typing import Any

import httpx2

from stille_post.core.usage import token_count
from stille_post.providers import structured
from stille_post.providers._common import (
    ACCEPT_ENCODING,
    DEFAULT_TIMEOUT_S,
    UNKNOWN_USAGE,
    apply_concurrency,
    content_text,
    counted_unreadable,
    make_policy,
    parse_arguments,
    read_completion,
    read_usage,
    resolve_key,
    sum_counts,
    tls_context,
    with_known_usage,
)
from stille_post.providers.base import (
    ChatRequest,
    Completion,
    MalformedReply,
    Message,
    ToolCall,
)
from stille_post.providers.retry import RetryPolicy, limiter_for

GOOGLE_BASE_URL = "https://generativelanguage.googleapis.com"
SIGNATURE_KEY = "thought_signature"  # on a ToolCall: its part's signature (base64)
TEXT_SIGNATURE_KEY = "google_text_signature"  # on a Completion/Message: the text part's
GOOGLE_ID_KEY = "google_call_id"  # the call had an id from Gemini: echo it in the response


def _b64(raw: bytes | None) -> str | None:
    return base64.b64encode(raw).decode("ascii") if raw else None


def _unb64(text: Any) -> bytes | None:
    return base64.b64decode(text) if isinstance(text, str) and text else None


def to_google_contents(request: ChatRequest) -> list[Any]:
    """The history as google-genai content dicts (field names as in `types.Content`).

    Dicts, not `types.Content` objects: the SDK validates either into its models and
    sends the same body, but validates dicts in about half the CPU, which grows with
    the history (benchmarks/bench_providers.py `cpu_per_call`)."""
    names: dict[str, ToolCall] = {}
    contents: list[dict[str, Any]] = []

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        if not parts:
            return
        # Parallel function responses must share one turn; merging all same-role
        # neighbours also keeps user turns and tool results together.
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})

    for m in request.messages:
        if m.role == "user":
            add("user", [{"text": m.content}] if m.content else [])
        elif m.role == "tool":
            call = names.get(m.tool_call_id or "")
            response: dict[str, Any] = {"name": call.name if call else "tool",
                                        "response": {"result": m.content}}
            if call and call.provider_data.get(GOOGLE_ID_KEY):
                response["id"] = m.tool_call_id
            add("user", [{"function_response": response}])
        else:
            add("model", _model_parts(m, names))
    return contents


def _part(signature: Any, **fields: Any) -> dict[str, Any]:
    signed = _unb64(signature)
    return {**fields, "thought_signature": signed} if signed else fields


def _model_parts(m: Message, names: dict[str, ToolCall]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if m.content:
        parts.append(_part(m.provider_data.get(TEXT_SIGNATURE_KEY), text=m.content))
    for c in m.tool_calls:
        if c.id:
            names[c.id] = c
        call: dict[str, Any] = {"name": c.name, "args": c.arguments}
        if c.provider_data.get(GOOGLE_ID_KEY):
            call["id"] = c.id
        parts.append(_part(c.provider_data.get(SIGNATURE_KEY), function_call=call))
    return parts


def completion_from_google(resp: Any, model: str) -> Completion:
    texts: list[str] = []
    calls: list[ToolCall] = []
    data: dict[str, Any] = {}
    candidates = getattr(resp, "candidates", None) or []
    finish: str | None = None
    if candidates:
        cand = candidates[0]
        reason = getattr(cand, "finish_reason", None)
        finish = _reason(reason)
        content = getattr(cand, "content", None)
        for part in getattr(content, "parts", None) or []:
            sig = _b64(getattr(part, "thought_signature", None))
            fc = getattr(part, "function_call", None)
            if fc is not None:
                args, malformed = parse_arguments(fc.args if fc.args is not None else {})
                pdata: dict[str, Any] = {}
                if sig:
                    pdata[SIGNATURE_KEY] = sig
                if fc.id:
                    pdata[GOOGLE_ID_KEY] = True
                calls.append(ToolCall(fc.name or "", args, id=fc.id or None,
                                      malformed=malformed if fc.name else
                                      (malformed or "the function call has no name"),
                                      provider_data=pdata))
            elif getattr(part, "thought", None):
                continue  # a thought summary is not the answer
            elif getattr(part, "text", None) is not None:
                texts.append(content_text(part.text))
                if sig:
                    data[TEXT_SIGNATURE_KEY] = sig
    else:
        feedback = getattr(resp, "prompt_feedback", None)
        block = getattr(feedback, "block_reason", None)
        finish = f"blocked:{_reason(block)}" if block is not None else None
    u = getattr(resp, "usage_metadata", None)
    output = sum_counts(getattr(u, "candidates_token_count", None),
                        getattr(u, "thoughts_token_count", None))
    if output is None and not (texts or calls):
        output = 0  # Gemini leaves the output counts out of an empty reply
    usage = read_usage(getattr(u, "prompt_token_count", None), output,
                       getattr(u, "cached_content_token_count", None)
                       ) if u is not None else UNKNOWN_USAGE
    return Completion("".join(texts), calls, usage,
                      getattr(resp, "model_version", None) or model, finish, data)


def _reason(value: Any) -> str | None:
    if value is None:
        return None
    raw = getattr(value, "value", value)
    return str(raw).lower()


class GoogleProvider:
    kind = "google"

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
        import httpx2
        from google import genai
        from google.genai import types

        self.model = model
        self.free_text_tools = free_text_tools  # see OpenAIProvider
        self.base_url = (base_url or GOOGLE_BASE_URL).rstrip("/")
        key = resolve_key(api_key, ["GEMINI_API_KEY", "GOOGLE_API_KEY"], self.kind)
        self.policy = make_policy(max_retries, retry_policy, timeout)
        apply_concurrency(self.kind, self.base_url, max_concurrency)
        self.alias = alias  # the models.toml alias: its own cap on calls in flight
        tls = tls_context()
        self._http = httpx2.AsyncClient(transport=ReadableUsage(
                                            httpx2.AsyncHTTPTransport(verify=tls)),
                                        timeout=timeout or DEFAULT_TIMEOUT_S)
        http_options = types.HttpOptions(
            api_version="v1beta",
            base_url=self.base_url + "/",
            headers=dict(ACCEPT_ENCODING),
            timeout=int((timeout or DEFAULT_TIMEOUT_S) * 1000),
            # Our own httpx2 client: it forces the httpx2 transport (never aiohttp), and the
            # SDK leaves a client it was given alone instead of closing it from __del__ on
            # an event loop that asyncio.run has already closed.
            httpx_async_client=self._http,
            # The SDK also builds a sync client (never used here) and a websocket TLS
            # context unless it is given them: both on the shared context, or each
            # provider would load the CA store three times (see _common.tls_context).
            httpx_client=httpx2.Client(transport=httpx2.HTTPTransport(verify=tls)),
            async_client_args={"ssl": tls},
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        # Held for the provider's lifetime on purpose (see the module docstring).
        self.client = genai.Client(api_key=key, vertexai=False, http_options=http_options)

    def _config(self, request: ChatRequest) -> Any:
        from google.genai import types

        config: dict[str, Any] = {
            "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True),
        }
        if request.system:
            config["system_instruction"] = request.system
        tools = structured.request_tools(request, self.kind, self.free_text_tools)
        choice = request.tool_choice
        answer = structured.text_schema(request)
        if answer is not None and not tools:
            # A text answer under a schema: JSON, `{"answer": ...}`, read back as text.
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = structured.wrapped(answer)
        elif answer is not None:
            # Gemini refuses a JSON answer beside function declarations: a forced
            # `answer` function carries it instead.
            tools = [*tools, structured.answer_tool(answer)]
            choice = structured.ANSWER_TOOL
        if tools:
            config["tools"] = [types.Tool(function_declarations=[
                types.FunctionDeclaration(name=t.name, description=t.description,
                                          parameters_json_schema=t.parameters)
                for t in tools
            ])]
            mode = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
            if choice is not None:
                fcc = (types.FunctionCallingConfig(mode=mode[choice]) if choice in mode else
                       types.FunctionCallingConfig(mode="ANY", allowed_function_names=[choice]))
                config["tool_config"] = types.ToolConfig(function_calling_config=fcc)
        if request.max_output_tokens is not None:
            config["max_output_tokens"] = request.max_output_tokens
        if request.temperature is not None:
            config["temperature"] = request.temperature
        level = (request.reasoning_effort or "").upper()
        if level in types.ThinkingLevel.__members__:  # Gemini 3's levels; "none" is ignored
            config["thinking_config"] = types.ThinkingConfig(thinking_level=level)
        # `extra` sets GenerateContentConfig fields (top_p, seed, thinking_config, ...).
        config.update(request.extra)
        return types.GenerateContentConfig(**config)

    async def aclose(self) -> None:
        """Close the HTTP connections on the loop that opened them (optional)."""
        await self._http.aclose()

    def __del__(self) -> None:
        # A tournament drops each game's providers with the game. The openai and
        # anthropic SDKs' own clients then close their connections on the running loop;
        # ours does the same (with no loop running there is nothing left to close on).
        http = getattr(self, "_http", None)
        if http is None or http.is_closed:
            return
        try:
            asyncio.get_running_loop().create_task(http.aclose())
        except Exception:  # (contextlib may be gone at interpreter exit: no suppress)
            return  # no running loop (RuntimeError), or the interpreter is shutting down

    async def complete(self, request: ChatRequest) -> Completion:
        contents = to_google_contents(request)
        config = self._config(request)
        try:
            resp = await self.policy.run(
                lambda: _readable(self.client.aio.models.generate_content(
                    model=self.model, contents=contents, config=config)),
                label=f"{self.kind}:{self.model}",
                limiter=limiter_for(self.kind, self.base_url, self.alias),
            )
            completion = read_completion(completion_from_google, resp, self.model,
                                         f"{self.kind}:{self.model}")
        except MalformedReply as exc:
            counted_unreadable(exc, request)
            raise
        completion = with_known_usage(completion, request)
        if structured.text_schema(request) is not None:
            return structured.answer_call_to_text(structured.unwrap_completion(completion))
        return completion


async def _readable(call: Awaitable[Any]) -> Any:
    """The SDK's answer, or `MalformedReply` when the SDK itself cannot convert a 200 body:
    google-genai walks the parsed JSON in its `*_from_mldev` / `*_from_vertex` functions
    assuming an object, so a body that is a bare number or list raises a TypeError (or an
    AttributeError, ...) there. That is the server's bad answer, retried once and then
    re-asked like any unreadable reply; an error raised anywhere else stays what it is."""
    try:
        return await call
    except (TypeError, AttributeError, KeyError, IndexError) as exc:
        if not _raised_converting_a_response(exc):
            raise
        raise MalformedReply("the answer is not the API's shape "
                             f"({type(exc).__name__} in the SDK's conversion)") from None


def _raised_converting_a_response(exc: BaseException) -> bool:
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_name
        if name.endswith(("_from_mldev", "_from_vertex")):
            return True
        tb = tb.tb_next
    return False


# A count of `usageMetadata` (`promptTokenCount`, `tokenCount` of the details, ...) whose
# value is not plain digits: infinity, NaN, a fraction, a negative number, a string.
_ODD_COUNT = re.compile(rb'Count"\s*:\s*(?![0-9]+\s*[,}])')
# The counts the adapter reads: when any count is unreadable, these go, and the usage is
# unknown (counted by an estimate from the texts, `with_known_usage`).
_READ_COUNTS = ("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount",
                "cachedContentTokenCount", "totalTokenCount", "toolUsePromptTokenCount")


class ReadableUsage(httpx2.AsyncBaseTransport):
    """The Gemini client's transport, which keeps a reply whose usage cannot be read.

    google-genai validates the whole answer into its pydantic models, and a token count
    that is infinite, NaN or a fraction fails that validation: the SDK would throw away
    the reply's text for a bad usage field. So a 200 body whose `usageMetadata` holds such
    a count has those counts removed before the SDK reads it (the adapter then finds the
    usage unknown). One regular expression over the body decides; an ordinary answer is
    handed on as it came. vcrpy replays below this transport, so replays pass here too."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        if response.status_code != 200:
            return response
        body = await response.aread()
        fixed = without_unreadable_usage(body)
        if fixed is None:
            return response
        await response.aclose()
        headers = [(k, v) for k, v in response.headers.multi_items()
                   if k.lower() not in ("content-encoding", "content-length")]
        return httpx2.Response(200, headers=headers, content=fixed, request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def without_unreadable_usage(body: bytes) -> bytes | None:
    """`body` with the counts of its `usageMetadata` removed when one of them cannot be
    read as a token count, else None (nothing to change)."""
    if b"usageMetadata" not in body or _ODD_COUNT.search(body) is None:
        return None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None  # not JSON at all: the SDK's own error says so
    usage = data.get("usageMetadata") if isinstance(data, dict) else None
    if not isinstance(usage, dict):
        return None
    if all(token_count(v, 2**63 - 1) is not None for k, v in usage.items()
           if k.endswith("Count")) and not any(
               _odd_details(v) for k, v in usage.items() if isinstance(v, list)):
        return None
    data["usageMetadata"] = {k: v for k, v in usage.items()
                             if k not in _READ_COUNTS and not isinstance(v, list)}
    return json.dumps(data).encode()


def _odd_details(items: list[Any]) -> bool:
    return any(isinstance(d, dict) and "tokenCount" in d
               and token_count(d["tokenCount"], 2**63 - 1) is None for d in items)
