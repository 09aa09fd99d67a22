"""Anthropic Messages API (kind `anthropic`) with native `tool_use`.

Normalisation of real replies (see ../shared/real-api-cassettes):
- a reply is a list of blocks; `text` blocks are joined into the text, `tool_use` blocks
  become tool calls, `thinking` / `redacted_thinking` blocks are NOT text: they are kept
  opaque on `provider_data` (and on the first tool call) and sent back untouched, which
  the API requires when extended thinking meets tool use;
- `input_tokens` excludes cache reads (those are `cached_input_tokens`) and here includes
  cache writes (`cache_creation_input_tokens`, also kept on `provider_data`);
  `cache_read_input_tokens` may be missing; a count that cannot be read makes the usage
  unknown, counted by an estimate from the texts (the reply is kept).

Cost: Anthropic caches only what a `cache_control` breakpoint marks (a write costs 1.25x
the input price, a read 0.1x; at most 4 breakpoints; never on a thinking block), and a
request reads the longest marked prefix of an earlier one that ends at one of its block
boundaries (up to 20 blocks before a breakpoint). A seat's history is append-only except
for its newest user turn, which in the Elimination Game and Connections ends with a
closing question the history does not keep. So three breakpoints:
- the end of the system prompt (which also covers the tools, rendered before it);
- the last block before the newest message, when that message is a user turn: the end of
  what this seat's next request certainly repeats (the newest message is counted before
  same-role turns are merged, so it may be a tool result in the question's user turn);
- the last block, for games that keep their questions (Stille Post, The Chameleon).
With the last block alone, every message write in those two games was never read back,
and a seat paid more than its uncached input. A change of `tool_choice` keeps the tools
and system cache but loses the messages cache, and Stille Post and the Elimination Game
change it between most of a seat's requests. The billable figures per game are in
docs/performance.md (`python -m benchmarks efficiency --tokens`).
"""

from __future__ import annotations

from typing import Any

from stille_post.core.usage import token_count
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
    sum_counts,
    with_known_usage,
)
from stille_post.providers.base import ChatRequest, Completion, MalformedReply, Message, ToolCall
from stille_post.providers.retry import RetryPolicy, limiter_for
from stille_post.providers.secrets import redact_data

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
# The API requires max_tokens; a Stille Post turn is a short message and one tool call.
DEFAULT_MAX_TOKENS = 2048
THINKING_KEY = "anthropic_thinking"
_THINKING_TYPES = ("thinking", "redacted_thinking")
_CACHE = {"type": "ephemeral"}


def _thinking_of(m: Message) -> list[dict[str, Any]]:
    blocks = m.provider_data.get(THINKING_KEY)
    if not blocks and m.tool_calls:
        blocks = m.tool_calls[0].provider_data.get(THINKING_KEY)
    return [dict(b) for b in blocks or []]


def _blocks(m: Message) -> list[dict[str, Any]]:
    if m.role == "tool":
        return [{"type": "tool_result", "tool_use_id": m.tool_call_id or "",
                 "content": m.content}]
    if m.role == "user":
        return [{"type": "text", "text": m.content}] if m.content else []
    blocks = _thinking_of(m)
    if m.content:  # the API rejects empty text blocks
        blocks.append({"type": "text", "text": m.content})
    for i, c in enumerate(m.tool_calls):
        blocks.append({"type": "tool_use", "id": c.id or f"toolu_{i}", "name": c.name,
                       "input": c.arguments})
    return blocks


def to_anthropic_messages(request: ChatRequest, *, cache: bool = True) -> list[dict[str, Any]]:
    """Messages with tool results as user blocks; consecutive same-role turns merged,
    because tool results must sit in the one user turn right after the tool_use turn.

    With `cache`, two breakpoints (the system prompt's is the third, see `_params`): the
    last block, and, when the newest message is a user turn, the last block rendered
    before it (thinking blocks skipped: they may not carry one). The newest message is
    counted before merging: a closing question may share its merged user turn with tool
    results that the seat's history keeps."""
    out: list[dict[str, Any]] = []
    flat: list[dict[str, Any]] = []  # every block, in order (the same dicts as in `out`)
    newest_start, newest_user = 0, False
    for m in request.messages:
        role = "assistant" if m.role == "assistant" else "user"
        blocks = _blocks(m)
        if not blocks:
            continue
        newest_start, newest_user = len(flat), m.role == "user"
        flat.extend(blocks)
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    if cache and flat:
        if newest_user:
            kept = [b for b in flat[:newest_start] if b.get("type") not in _THINKING_TYPES]
            if kept:
                kept[-1]["cache_control"] = dict(_CACHE)
        if flat[-1].get("type") not in _THINKING_TYPES:
            flat[-1]["cache_control"] = dict(_CACHE)
    return out


def tool_choice_param(choice: str | None) -> dict[str, Any] | None:
    if choice is None:
        return None
    mapping = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}
    return mapping.get(choice, {"type": "tool", "name": choice})


def completion_from_anthropic(resp: Any, model: str) -> Completion:
    """The completion in an answer: its parsed JSON, as the adapter reads it, or the SDK's
    `Message` (tests and older callers); both read alike."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[dict[str, Any]] = []
    for block in field_of(resp, "content") or []:
        kind = field_of(block, "type")
        if kind == "text":
            texts.append(content_text(field_of(block, "text")))
        elif kind == "tool_use":
            args, malformed = parse_arguments(field_of(block, "input"))
            calls.append(ToolCall(field_of(block, "name") or "", args,
                                  id=field_of(block, "id") or None, malformed=malformed))
        elif kind in _THINKING_TYPES:
            # Kept opaque and sent back as it came, but masked like all server text: a
            # block that holds a configured key would otherwise reach the transcript (the
            # chaos fuzz found one). A real block never holds one, so it is unchanged.
            thinking.append(redact_data(_without_nones(block) if isinstance(block, dict)
                                        else block.model_dump(mode="json",
                                                              exclude_none=True)))
    data: dict[str, Any] = {THINKING_KEY: thinking} if thinking else {}
    if calls and thinking:
        # A tool-only turn publishes no message event, so the calls carry the blocks too.
        first = calls[0]
        calls[0] = ToolCall(first.name, first.arguments, first.id, first.malformed,
                            {THINKING_KEY: thinking})
    u = field_of(resp, "usage")
    created = field_of(u, "cache_creation_input_tokens") if u is not None else None
    if token_count(created):
        data["cache_creation_input_tokens"] = created
    # Cache writes are prompt tokens the model processed, not cached ones: counting them as
    # input keeps token totals (and costs) honest when every call writes a breakpoint.
    usage = read_usage(sum_counts(field_of(u, "input_tokens"), created),
                       field_of(u, "output_tokens"), field_of(u, "cache_read_input_tokens")
                       ) if u is not None else UNKNOWN_USAGE
    return Completion("".join(texts), calls, usage, field_of(resp, "model") or model,
                      field_of(resp, "stop_reason"), data)


def _without_nones(block: dict[str, Any]) -> dict[str, Any]:
    """A thinking block as the SDK's `model_dump(exclude_none=True)` gives it: without its
    null fields (the block's own: values inside them are kept as they came)."""
    return {k: v for k, v in block.items() if v is not None}


class AnthropicProvider:
    kind = "anthropic"

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
        prompt_caching: bool = True,
        free_text_tools: str | None = None,
    ) -> None:
        from anthropic import AsyncAnthropic

        self.model = model
        self.free_text_tools = free_text_tools  # see OpenAIProvider
        self.base_url = (base_url or ANTHROPIC_BASE_URL).rstrip("/")
        key = resolve_key(api_key, ["ANTHROPIC_API_KEY"], self.kind)
        self.policy = make_policy(max_retries, retry_policy, timeout)
        self.prompt_caching = prompt_caching
        apply_concurrency(self.kind, self.base_url, max_concurrency)
        self.alias = alias  # the models.toml alias: its own cap on calls in flight
        wait = timeout or DEFAULT_TIMEOUT_S
        self.client = AsyncAnthropic(api_key=key, base_url=self.base_url, max_retries=0,
                                     timeout=wait, default_headers=ACCEPT_ENCODING,
                                     http_client=sdk_http_client("anthropic", timeout=wait))

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_output_tokens or DEFAULT_MAX_TOKENS,
            "messages": to_anthropic_messages(request, cache=self.prompt_caching),
        }
        if request.system:
            block: dict[str, Any] = {"type": "text", "text": request.system}
            if self.prompt_caching:
                block["cache_control"] = dict(_CACHE)
            params["system"] = [block]
        tools = structured.request_tools(request, self.kind, self.free_text_tools)
        choice_name = request.tool_choice
        answer = structured.text_schema(request)
        if answer is not None:
            # A text answer under a schema: a forced `answer` tool carries it.
            tools = [*tools, structured.answer_tool(answer)]
            choice_name = structured.ANSWER_TOOL
        if tools:
            params["tools"] = [{"name": t.name, "description": t.description,
                                "input_schema": t.parameters} for t in tools]
            choice = tool_choice_param(choice_name)
            if choice is not None:
                params["tool_choice"] = choice
        if request.temperature is not None:
            params["temperature"] = request.temperature
        # `reasoning_effort` has no Messages API equivalent (extended thinking takes a token
        # budget): it is ignored here; write `extra = { thinking = {...} }` instead.
        if request.extra:
            params["extra_body"] = dict(request.extra)
        return params

    async def aclose(self) -> None:
        """Close the HTTP connections on the loop that opened them (optional)."""
        await self.client.close()

    async def complete(self, request: ChatRequest) -> Completion:
        params = self._params(request)
        # The Messages endpoint through the SDK's own `post` (auth, headers, retries off,
        # status errors), with the answer read as the JSON the SDK parsed rather than
        # built into its models: 12-17% less CPU per call (docs/performance-real-path.md).
        # `extra_body` merges into the body as `messages.create` merges it. It also keeps
        # `temperature`, which the API takes and this SDK's `create` no longer does.
        extra = params.pop("extra_body", {})
        body = {**params, **extra}
        try:
            resp = await self.policy.run(
                lambda: self.client.post("/v1/messages", body=body, cast_to=object),
                label=f"{self.kind}:{self.model}",
                limiter=limiter_for(self.kind, self.base_url, self.alias),
            )
            completion = read_completion(completion_from_anthropic, resp, self.model,
                                         f"{self.kind}:{self.model}")
        except MalformedReply as exc:
            counted_unreadable(exc, request)
            raise
        completion = with_known_usage(completion, request)
        if structured.text_schema(request) is not None:
            return structured.answer_call_to_text(completion)
        return completion
