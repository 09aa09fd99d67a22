"""Wire-faithful loopback emulators of the OpenAI, Anthropic and Gemini HTTP APIs.

Stdlib only (`http.server` in a thread, bound to 127.0.0.1). Each emulator speaks its
API's JSON exactly as the real recordings in ../shared/real-api-cassettes show it (the
shape test in tests/providers compares key paths), and enforces the rules the real APIs
enforce on requests, so an adapter bug shows up while recording, not in production:
- auth header present (401 in the API's own error shape otherwise);
- OpenAI: every assistant `tool_calls` answered by `tool` messages right after it;
  reasoning models refuse `max_tokens` and a non-default temperature;
- Anthropic: `max_tokens` required, no empty text blocks, every `tool_use` answered by a
  `tool_result` in the next user turn, at most 4 `cache_control` breakpoints;
- Gemini: served only under /v1beta/, function calls answered by as many function
  responses in the next turn, Gemini 3 function calls carry their `thoughtSignature`.

The "model" behind them is `policy.decide`, a deterministic hash-based policy. Usage is
estimated at 4 characters per token, with prompt caching emulated per model (OpenAI and
Gemini: implicit prefix caching from 1024 tokens; Anthropic: only prefixes that end at a
breakpoint are written, and a request reads the longest one ending at one of its block
boundaries within 20 blocks before a breakpoint, markers aside; a change of tool_choice
invalidates the cached messages). `fail_next(status, retry_after)` queues an error
response (429, 529, ...).

`Emulator(api, faults=FaultPolicy(rate, seed))` turns it hostile: a seeded share of the
requests get a transport fault or a model-output fault (see faults.py).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from stille_post.core.text import common_prefix
from tests.emulators.faults import TRANSPORT_FAULTS, FaultPolicy, mutate
from tests.emulators.policy import decide

CREATED = 1_763_800_000  # a fixed timestamp keeps recordings reproducible


def tokens(text: str) -> int:
    return max(1, (len(text) + 3) // 4) if text else 0


class ApiError(Exception):
    def __init__(self, status: int, message: str, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind


@dataclass
class EmulatorState:
    api: str  # "openai" | "anthropic" | "google"
    faults: deque[tuple[int, dict[str, str]]] = field(default_factory=deque)
    seen_prompts: dict[str, list[str]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    faults_policy: FaultPolicy | None = None
    # OpenAI only: answer a forced tool or a `response_format` schema the way a
    # constrained decoder would, with values the schema allows (`Emulator(decoder=True)`).
    decoder: bool = False
    # `response_format` types this server refuses with HTTP 500 (llama-cpp-python 0.3.36
    # refuses OpenAI's "json_schema" form so).
    refuses: tuple[str, ...] = ()
    # OpenAI only: serve GET /v1/models with this `owned_by` (llama-cpp-python's is "me").
    models_owner: str | None = None
    raw_bodies: list[bytes] = field(default_factory=list)  # every request body, as sent
    written: dict[str, set[str]] = field(default_factory=dict)  # Anthropic: cached prefixes

    def cached_tokens(self, model: str, prompt: str, *, minimum: int = 1024,
                      granularity: int = 1) -> int:
        with self.lock:
            best = 0
            for old in self.seen_prompts.get(model, []):
                best = max(best, common_prefix(old, prompt))
            self.seen_prompts.setdefault(model, []).append(prompt)
        cached = best // 4
        if cached < minimum:
            return 0
        return cached - cached % granularity

    def anthropic_cache(self, model: str, blocks: list[tuple[Any, dict[str, Any]]],
                        marked: list[int], total: int, *, minimum: int = 1024,
                        lookback: int = 20) -> tuple[int, int]:
        """(read, written) tokens under Anthropic's explicit rule: a prefix is written
        only where a request puts a breakpoint (if at least `minimum` tokens long), and a
        request reads the longest written prefix that ends at one of its own block
        boundaries, at a breakpoint or up to `lookback` blocks before one. `blocks` are
        (scope, block) in cache order (tools, system, messages), without their markers:
        the scope is part of the cache key, not of the size; `marked` indexes the
        breakpoints. Block ends are shares of the request's `total` tokens, so the
        tokens after the last breakpoint are the uncached input."""
        keys: list[str] = []
        sizes: list[int] = []
        digest = hashlib.sha256()
        for scope, block in blocks:
            text = json.dumps(block, sort_keys=True)
            digest.update(json.dumps(scope).encode() + text.encode())
            keys.append(digest.hexdigest())
            sizes.append((sizes[-1] if sizes else 0) + len(text))
        ends = [total * n // max(1, sizes[-1]) for n in sizes]
        reach = {j for b in marked for j in range(max(0, b - lookback), b + 1)}
        with self.lock:
            seen = self.written.setdefault(model, set())
            read = max((ends[j] for j in reach if keys[j] in seen), default=0)
            cacheable = [b for b in marked if ends[b] >= minimum]
            seen.update(keys[b] for b in cacheable)
        written = max(0, ends[max(cacheable)] - read) if cacheable else 0
        return read, written


def _rid(prefix: str, body: bytes, n: int = 24) -> str:
    return prefix + hashlib.sha256(body).hexdigest()[:n]


# --- OpenAI Chat Completions ------------------------------------------------------------

def _openai(state: EmulatorState, path: str, body: bytes, req: dict[str, Any]) -> dict[str, Any]:
    if path != "/v1/chat/completions":
        raise ApiError(404, f"Invalid URL (POST {path})")
    model = req.get("model")
    messages = req.get("messages")
    if not model or not isinstance(messages, list) or not messages:
        raise ApiError(400, "you must provide a model parameter and a non-empty messages array")
    reasoning = str(model).startswith(("gpt-5", "o1", "o3", "o4"))
    if (req.get("response_format") or {}).get("type") in state.refuses:
        raise ApiError(500, "Internal Server Error", "server_error")
    if reasoning and "max_tokens" in req:
        raise ApiError(400, "Unsupported parameter: 'max_tokens' is not supported with this "
                            "model. Use 'max_completion_tokens' instead.")
    if reasoning and req.get("temperature") not in (None, 1, 1.0):
        raise ApiError(400, "Unsupported value: 'temperature' does not support "
                            f"{req.get('temperature')} with this model. Only the default (1) "
                            "value is supported.")
    pending: list[str] = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "tool":
            if m.get("tool_call_id") not in pending:
                raise ApiError(400, "Invalid parameter: messages with role 'tool' must be a "
                                    "response to a preceeding message with 'tool_calls'.")
            pending.remove(m["tool_call_id"])
            continue
        if pending:
            raise ApiError(400, "An assistant message with 'tool_calls' must be followed by "
                                "tool messages responding to each 'tool_call_id'. The following "
                                "tool_call_ids did not have response messages: "
                                + ", ".join(pending))
        if role not in ("system", "developer", "user", "assistant"):
            raise ApiError(400, f"Invalid value: '{role}'. messages[{i}].role")
        if role == "assistant" and m.get("tool_calls"):
            for c in m["tool_calls"]:
                json.loads(c["function"]["arguments"])  # must be a JSON string
            pending = [c["id"] for c in m["tool_calls"]]
        elif m.get("content") is None:
            raise ApiError(400, f"Invalid value for 'content': messages[{i}] content is null")
    if pending:
        raise ApiError(400, "An assistant message with 'tool_calls' must be followed by tool "
                            f"messages responding to each 'tool_call_id': {', '.join(pending)}")
    system = "\n".join(str(m.get("content")) for m in messages
                       if m["role"] in ("system", "developer"))
    last_user = next((str(m.get("content")) for m in reversed(messages) if m["role"] == "user"), "")
    tools = [t["function"]["name"] for t in req.get("tools") or []]
    choice = req.get("tool_choice", "auto" if tools else "none")
    choice = choice if isinstance(choice, str) else "required"
    reply = decide(str(model), system, last_user, choice, tools)
    if state.decoder:
        reply = _decoded(req, body) or reply
    prompt = json.dumps([req.get("tools"), messages], sort_keys=True)
    cached = state.cached_tokens(str(model), prompt, granularity=128)
    tool_calls = [
        {"id": _rid("call_", body + name.encode() + bytes([i])), "type": "function",
         "function": {"name": name, "arguments": json.dumps(args, separators=(",", ":"))}}
        for i, (name, args) in enumerate(reply.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None,
                               "refusal": None, "annotations": []}
    if tool_calls:
        message["tool_calls"] = tool_calls
    out_tokens = tokens(reply.text) + sum(tokens(json.dumps(a)) + 5 for _, a in reply.tool_calls)
    cap = req.get("max_completion_tokens") or req.get("max_tokens")
    finish = "tool_calls" if tool_calls else "stop"
    if cap is not None and out_tokens > cap:
        out_tokens, finish = cap, "length"
    in_tokens = tokens(prompt)
    return {
        "id": _rid("chatcmpl-", body, 29), "object": "chat.completion", "created": CREATED,
        "model": f"{model}-2025-08-07" if reasoning else str(model),
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": finish}],
        "usage": {
            "prompt_tokens": in_tokens, "completion_tokens": out_tokens,
            "total_tokens": in_tokens + out_tokens,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0,
                                      "cache_write_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0,
                                          "rejected_prediction_tokens": 0},
        },
        "service_tier": "default", "system_fingerprint": "fp_emulator",
    }


def _decoded(req: dict[str, Any], body: bytes) -> Any:
    """What a constrained decoder would answer: the forced tool's arguments, or the
    `response_format` schema's JSON, built from the schema (an enum's value picked by
    the request's hash, the shortest string a pattern allows). None: nothing forced."""
    from tests.emulators.policy import Reply

    pick = int(hashlib.sha256(body).hexdigest()[:8], 16)
    choice = req.get("tool_choice")
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        for t in req.get("tools") or []:
            if t["function"]["name"] == name:
                return Reply(tool_calls=[(name, _sample(t["function"]["parameters"], pick))])
    fmt = req.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
    if isinstance(schema, dict):
        return Reply(text=json.dumps(_sample(schema, pick)))
    return None


def _sample(schema: dict[str, Any], pick: int) -> Any:
    if "enum" in schema:
        return schema["enum"][pick % len(schema["enum"])]
    kind = schema.get("type")
    if kind == "object":
        return {k: _sample(v, pick) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        items = schema.get("items") or {}
        values = list(items.get("enum") or [])
        n = schema.get("minItems", 1)
        return values[:n] if len(values) >= n else [_sample(items, pick) for _ in range(n)]
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "string" and "pattern" in schema:
        # The shortest string of the pattern's first branch: a character of each class
        # or literal that must appear (quantifiers * and ? take none).
        out, pattern, i = [], schema["pattern"].strip("^$"), 0
        while i < len(pattern):
            if pattern[i] == "[":
                end = pattern.index("]", i)
                atom, i = pattern[i + 1], end + 1
            elif pattern.startswith("(?:", i):
                end = pattern.index(")", i)
                atom, i = "", end + 1
            else:
                atom, i = pattern[i], i + 1
            if i < len(pattern) and pattern[i] in "*?":
                i += 1
                continue
            times = 1
            if i < len(pattern) and pattern[i] == "+":
                i += 1
            elif i < len(pattern) and pattern[i] == "{":
                end = pattern.index("}", i)
                times, i = int(pattern[i + 1:end].split(",")[0]), end + 1
            out.append(atom * times)
        return "".join(out)
    return "ok"


# --- Anthropic Messages -----------------------------------------------------------------

def _anthropic(state: EmulatorState, path: str, body: bytes,
               req: dict[str, Any]) -> dict[str, Any]:
    if path != "/v1/messages":
        raise ApiError(404, "Not found", "not_found_error")
    for key in ("model", "max_tokens", "messages"):
        if key not in req:
            raise ApiError(400, f"{key}: Field required")
    messages = req["messages"]
    if not messages or messages[0]["role"] != "user":
        raise ApiError(400, "messages: first message must use the \"user\" role")
    breakpoints = 0
    system_blocks = req.get("system") or []
    if isinstance(system_blocks, str):
        system_blocks = [{"type": "text", "text": system_blocks}]
    blocks_all = [*system_blocks, *(req.get("tools") or [])]
    pending: list[str] = []
    for i, m in enumerate(messages):
        content = m["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        blocks_all.extend(content)
        answered = [b.get("tool_use_id") for b in content if b.get("type") == "tool_result"]
        if pending and sorted(answered) != sorted(pending):
            raise ApiError(400, f"messages.{i}: `tool_use` ids were found without `tool_result` "
                                f"blocks immediately after: {', '.join(pending)}. Each "
                                "`tool_use` block must have a corresponding `tool_result` "
                                "block in the next message.")
        if answered and not pending:
            raise ApiError(400, f"messages.{i}.content.0: unexpected `tool_use_id` found in "
                                "`tool_result` blocks. Each `tool_result` block must have a "
                                "corresponding `tool_use` block in the previous message.")
        for b in content:
            if b.get("type") == "text" and not b.get("text"):
                raise ApiError(400, "messages: text content blocks must be non-empty")
        pending = [b["id"] for b in content if b.get("type") == "tool_use"]
    if pending:
        raise ApiError(400, "the last assistant turn has tool_use blocks without results")
    breakpoints = sum(1 for b in blocks_all if isinstance(b, dict) and b.get("cache_control"))
    if breakpoints > 4:
        raise ApiError(400, "A maximum of 4 blocks with cache_control may be provided. "
                            f"Found {breakpoints}.")
    system = "\n".join(b.get("text", "") for b in system_blocks)
    last = messages[-1]["content"]
    last_user = "\n".join(b.get("text", "") for b in (last if isinstance(last, list) else
                                                      [{"text": last}]) if "text" in b)
    tools = [t["name"] for t in req.get("tools") or []]
    tc = req.get("tool_choice") or {"type": "auto"}
    choice = {"auto": "auto", "any": "required", "tool": "required", "none": "none"}[tc["type"]]
    reply = decide(str(req["model"]), system, last_user, choice, tools)
    prompt = json.dumps([req.get("tools"), system_blocks, messages], sort_keys=True)
    total = tokens(prompt)
    # Cache order: tools, system, messages; a change of tool_choice invalidates the cached
    # messages (not the tools or system), so it is part of each message block's key.
    plain: list[tuple[Any, dict[str, Any]]] = []
    marked: list[int] = []
    for scope, block in ([("tools", b) for b in req.get("tools") or []]
                         + [("system", b) for b in system_blocks]
                         + [((m["role"], tc), b) for m in messages
                            for b in (m["content"] if isinstance(m["content"], list)
                                      else [{"type": "text", "text": m["content"]}])]):
        if block.get("cache_control"):
            marked.append(len(plain))
            block = {k: v for k, v in block.items() if k != "cache_control"}
        plain.append((scope, block))
    read, creation = state.anthropic_cache(str(req["model"]), plain, marked, total)
    content_out: list[dict[str, Any]] = []
    if reply.text:
        content_out.append({"type": "text", "text": reply.text})
    for i, (name, args) in enumerate(reply.tool_calls):
        content_out.append({"type": "tool_use", "id": _rid("toolu_01", body + bytes([i]), 22),
                            "name": name, "input": args})
    out_tokens = tokens(reply.text) + sum(tokens(json.dumps(a)) + 5 for _, a in reply.tool_calls)
    stop = "tool_use" if reply.tool_calls else "end_turn"
    if out_tokens > int(req["max_tokens"]):
        out_tokens, stop = int(req["max_tokens"]), "max_tokens"
    return {
        "id": _rid("msg_01", body, 22), "type": "message", "role": "assistant",
        "model": str(req["model"]), "content": content_out, "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": total - read - creation,
                  "cache_creation_input_tokens": creation, "cache_read_input_tokens": read,
                  "output_tokens": out_tokens, "service_tier": "standard"},
    }


# --- Gemini generateContent -------------------------------------------------------------

_GEMINI_PATH = re.compile(r"^/v1beta/models/([\w.\-]+):generateContent$")


def _signature(body: bytes, i: int) -> str:
    return base64.b64encode(hashlib.sha256(body + bytes([i])).digest() * 2).decode()


def _google(state: EmulatorState, path: str, body: bytes, req: dict[str, Any]) -> dict[str, Any]:
    m = _GEMINI_PATH.match(path)
    if m is None:
        raise ApiError(404, f"models/... is not found for API version in {path}, or is not "
                            "supported for generateContent.", "NOT_FOUND")
    model = m.group(1)
    contents = req.get("contents") or []
    if not contents:
        raise ApiError(400, "* GenerateContentRequest.contents: contents is not specified",
                       "INVALID_ARGUMENT")
    pending = 0
    for i, c in enumerate(contents):
        parts = c.get("parts") or []
        responses = sum(1 for p in parts if "functionResponse" in p)
        if pending and responses != pending:
            raise ApiError(400, "Please ensure that the number of function response parts is "
                                "equal to the number of function call parts of the function "
                                "call turn.", "INVALID_ARGUMENT")
        calls = [p for p in parts if "functionCall" in p]
        if c.get("role") == "model" and calls and model.startswith("gemini-3") \
                and "thoughtSignature" not in calls[0]:
            raise ApiError(400, f"Function call is missing a thought_signature in "
                                f"functionCall parts. contents[{i}].parts", "INVALID_ARGUMENT")
        pending = len(calls) if c.get("role") == "model" else 0
    system = "\n".join(p.get("text", "") for p in
                       (req.get("systemInstruction") or {}).get("parts", []))
    last: dict[str, Any] = next((c for c in reversed(contents) if c.get("role") == "user"),
                                {"parts": []})
    last_user = "\n".join(p["text"] for p in last.get("parts", []) if "text" in p)
    decls = [d for t in req.get("tools") or [] for d in t.get("functionDeclarations") or []]
    tools = [d["name"] for d in decls]
    mode = ((req.get("toolConfig") or {}).get("functionCallingConfig") or {}).get("mode", "AUTO")
    choice = {"AUTO": "auto", "ANY": "required", "NONE": "none",
              "VALIDATED": "auto"}.get(mode, "auto")
    reply = decide(model, system, last_user, choice, tools)
    gen = req.get("generationConfig") or {}
    if gen.get("automaticFunctionCalling"):
        raise ApiError(400, "automaticFunctionCalling is an SDK option, not a wire field",
                       "INVALID_ARGUMENT")
    parts_out: list[dict[str, Any]] = []
    thinking = model.startswith(("gemini-2.5", "gemini-3"))
    if reply.text:
        parts_out.append({"text": reply.text})
    for i, (name, args) in enumerate(reply.tool_calls):
        part: dict[str, Any] = {"functionCall": {"name": name, "args": args}}
        if thinking and i == 0:
            part["thoughtSignature"] = _signature(body, i)
        parts_out.append(part)
    if reply.text and thinking and not reply.tool_calls and model.startswith("gemini-3"):
        parts_out[-1]["thoughtSignature"] = _signature(body, 99)
    prompt = json.dumps([req.get("tools"), req.get("systemInstruction"), contents],
                        sort_keys=True)
    cached = state.cached_tokens(model, prompt)
    out_tokens = tokens(reply.text) + sum(tokens(json.dumps(a)) + 5 for _, a in reply.tool_calls)
    usage: dict[str, Any] = {"promptTokenCount": tokens(prompt),
                             "candidatesTokenCount": out_tokens,
                             "totalTokenCount": tokens(prompt) + out_tokens,
                             "promptTokensDetails": [{"modality": "TEXT",
                                                      "tokenCount": tokens(prompt)}],
                             "candidatesTokensDetails": [{"modality": "TEXT",
                                                          "tokenCount": out_tokens}]}
    if cached:
        usage["cachedContentTokenCount"] = cached
    if thinking:
        usage["thoughtsTokenCount"] = 24
        usage["totalTokenCount"] += 24
    candidate: dict[str, Any] = {"content": {"parts": parts_out, "role": "model"},
                                 "finishReason": "STOP", "index": 0}
    if reply.tool_calls:
        candidate["finishMessage"] = "Model generated function call(s)."
    return {"candidates": [candidate], "modelVersion": model,
            "responseId": _rid("", body, 22), "usageMetadata": usage}


# --- HTTP plumbing ----------------------------------------------------------------------

def _error_body(api: str, status: int, message: str, kind: str) -> dict[str, Any]:
    if api == "openai":
        code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status)
        etype = {401: "invalid_request_error", 429: "requests",
                 500: "server_error", 503: "server_error"}.get(status, kind)
        return {"error": {"message": message, "type": etype, "param": None, "code": code}}
    if api == "anthropic":
        etype = {401: "authentication_error", 429: "rate_limit_error", 500: "api_error",
                 529: "overloaded_error"}.get(status, kind)
        return {"type": "error", "error": {"type": etype, "message": message}}
    gstatus = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND",
               429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}.get(status, kind)
    return {"error": {"code": status, "message": message, "status": gstatus}}


_HANDLERS = {"openai": _openai, "anthropic": _anthropic, "google": _google}
# anthropic 2.x sends `Authorization: Bearer`, older SDKs `x-api-key`: both are accepted.
_AUTH = {"openai": ("authorization",), "anthropic": ("x-api-key", "authorization"),
         "google": ("x-goog-api-key",)}


def _make_handler(state: EmulatorState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body go out in two writes. With Nagle's algorithm on, the
        # body waited for the client's delayed ACK of the headers: 40 ms on every answer.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, payload: dict[str, Any],
                  headers: dict[str, str] | None = None) -> None:
            self._send_json(status, json.dumps(payload, indent=2).encode(), headers)

        def _send_json(self, status: int, data: bytes,
                       headers: dict[str, str] | None = None) -> None:
            """An answer whose JSON body is already encoded."""
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _caller_key(self) -> str:
            auth = self.headers.get("authorization") or ""
            if auth.lower().startswith("bearer "):
                return auth[7:].strip()
            for h in ("x-api-key", "x-goog-api-key"):
                if self.headers.get(h):
                    return str(self.headers.get(h))
            m = re.search(r"[?&]key=([^&]+)", self.path)
            return m.group(1) if m else ""

        def _raw(self, status: int, data: bytes, *, length: int | None = None,
                 gap_s: float = 0.0, headers: dict[str, str] | None = None) -> None:
            """Send `data` as the body; `length` may lie, `gap_s` trickles it."""
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data) if length is None else length))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                if gap_s:
                    for i in range(len(data)):
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                        time.sleep(gap_s)
                else:
                    self.wfile.write(data)
                    self.wfile.flush()
                if length is not None and length != len(data):
                    self.close_connection = True  # the body is cut: hang up
            except OSError:
                self.close_connection = True  # the client gave up first: fine

        def _transport_fault(self, kind: str, api: str, policy: FaultPolicy,
                             normal: dict[str, Any]) -> None:
            data = json.dumps(normal, indent=2).encode()
            if kind == "http500":
                self._send(500, _error_body(api, 500, "The server had an error.", "api_error"))
            elif kind == "http429":
                self._send(429, _error_body(api, 429, "Rate limit reached.", "api_error"),
                           {"retry-after": "0"})
            elif kind == "hang":
                time.sleep(policy.hang_s)
                self._raw(200, data)
            elif kind == "trickle":
                self._raw(200, data, gap_s=policy.trickle_gap_s)
            elif kind == "cut_body":
                self._raw(200, data[: len(data) // 2], length=len(data))
            elif kind == "invalid_json":
                self._raw(200, data[: len(data) // 3])  # a JSON text cut short, as a 200
            elif kind == "echo_key_401":
                self._send(401, _error_body(
                    api, 401, f"Incorrect API key provided: {self._caller_key()}. You can "
                    "find your API key in your account settings.", "authentication_error"))

        def do_GET(self) -> None:
            if state.models_owner is None or self.path.split("?")[0] != "/v1/models":
                self._send(404, _error_body(state.api, 404, "Not found", "not_found_error"))
                return
            self._send(200, {"object": "list", "data": [
                {"id": "tiny", "object": "model", "owned_by": state.models_owner,
                 "permissions": []}]})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            path = self.path.split("?")[0]
            api = state.api
            with state.lock:
                state.raw_bodies.append(body)
            try:
                req = json.loads(body or b"{}")
            except json.JSONDecodeError:
                self._send(400, _error_body(api, 400, "We could not parse the JSON body.",
                                            "invalid_request_error"))
                return
            with state.lock:
                state.requests.append({"path": path, "body": req})
                fault = state.faults.popleft() if state.faults else None
            if not any(self.headers.get(h) for h in _AUTH[api]) and "key=" not in self.path:
                self._send(401, _error_body(api, 401, "Missing or invalid API key.",
                                            "authentication_error"))
                return
            if api == "anthropic" and not self.headers.get("anthropic-version"):
                self._send(400, _error_body(api, 400, "anthropic-version: header is required",
                                            "invalid_request_error"))
                return
            if fault is not None:
                status, headers = fault
                msg = {429: "Rate limit reached. Please try again later.",
                       529: "Overloaded"}.get(status, "The server had an error.")
                self._send(status, _error_body(api, status, msg, "api_error"), headers)
                return
            policy = state.faults_policy
            try:
                if policy is not None:
                    kind, rng = policy.pick()
                    if kind is not None:
                        normal = _HANDLERS[api](state, path, body, req)
                        if kind in TRANSPORT_FAULTS:
                            self._transport_fault(kind, api, policy, normal)
                        else:
                            self._send(200, mutate(api, normal, kind, self._caller_key(),
                                                   rng, policy.huge_chars))
                        return
                self._send(200, _HANDLERS[api](state, path, body, req))
            except ApiError as exc:
                self._send(exc.status, _error_body(api, exc.status, exc.message, exc.kind))
            except (KeyError, TypeError, ValueError) as exc:
                self._send(400, _error_body(api, 400, f"malformed request: {exc!r}",
                                            "invalid_request_error"))

    return Handler


# models.toml for two aliases served by the openai emulator (`running("openai")`), both
# priced `{p}` dollars per 1M tokens of every kind: `PRICED_MODELS.format(url=..., p=...)`.
PRICED_MODELS = """
[models.fast]
provider = "openai-compatible"
model = "tiny-a"
base_url = "{url}"
price = {{ input = {p}, cached_input = {p}, output = {p} }}

[models.slow]
provider = "openai-compatible"
model = "tiny-b"
base_url = "{url}"
price = {{ input = {p}, cached_input = {p}, output = {p} }}
"""


class Emulator:
    def __init__(self, api: str, port: int = 0, faults: FaultPolicy | None = None,
                 decoder: bool = False, refuses: tuple[str, ...] = (),
                 models_owner: str | None = None) -> None:
        self.state = EmulatorState(api, faults_policy=faults, decoder=decoder,
                                   refuses=refuses, models_owner=models_owner)
        self.server = _QuietServer(("127.0.0.1", port), _make_handler(self.state))
        # shutdown() waits for the serving loop to notice, up to one poll interval
        # (0.5 s by default): with an emulator per test, that was most of many tests.
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,),
                                       daemon=True)

    @property
    def origin(self) -> str:
        port = self.server.server_address[1]
        return f"http://127.0.0.1:{port}"

    @property
    def base_url(self) -> str:
        """What to pass as the SDK's base_url."""
        return self.origin + ("/v1" if self.state.api == "openai" else "")

    def fail_next(self, status: int, retry_after: str | None = None) -> None:
        headers = {"retry-after": retry_after} if retry_after is not None else {}
        self.state.faults.append((status, headers))

    def start(self) -> Emulator:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True  # a hung or trickling handler must not block shutdown

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that hung up mid-answer is part of the chaos, not news


@contextmanager
def running(api: str) -> Iterator[Emulator]:
    emu = Emulator(api).start()
    try:
        yield emu
    finally:
        emu.stop()


REAL_ORIGINS = {
    "openai": "https://api.openai.com",
    "anthropic": "https://api.anthropic.com",
    "google": "https://generativelanguage.googleapis.com",
}


