"""Pieces every SDK adapter shares: keys, options, argument parsing, and the one
normalisation of what a 200 answer may hold (`content_text`, `read_completion`)."""

from __future__ import annotations

import contextlib
import json
import os
import ssl
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from importlib import import_module
from typing import Any

from stille_post.core.errors import ConfigError, MissingKeyError
from stille_post.core.usage import token_count
from stille_post.providers.base import ChatRequest, Completion, MalformedReply, Usage
from stille_post.providers.retry import (
    DEFAULT_ATTEMPT_TIMEOUT_S,
    DEFAULT_MAX_RETRIES,
    RetryPolicy,
    set_concurrency,
)
from stille_post.providers.secrets import register_secret

# vcrpy stores gzip bodies decoded but cannot decode zstd or brotli: ask for gzip only.
ACCEPT_ENCODING = {"Accept-Encoding": "gzip"}
DEFAULT_TIMEOUT_S = 120.0


@cache
def tls_context() -> ssl.SSLContext:
    """The verified TLS context every SDK client of this process shares.

    Each SDK client otherwise builds its own, loading the CA store again, which costs
    more CPU and memory than the rest of the client (three of them per google-genai
    client), and every LLM seat of every game gets a client. This is the context httpx2
    would build (`verify=True`, honouring SSL_CERT_FILE / SSL_CERT_DIR as they are when
    it is first asked for); an `SSLContext` is made to be shared by many connections."""
    import httpx2

    try:
        return httpx2.create_ssl_context()
    except (OSError, ssl.SSLError) as exc:
        # httpx2 reads SSL_CERT_FILE, else SSL_CERT_DIR, else the system's store
        name = next((n for n in ("SSL_CERT_FILE", "SSL_CERT_DIR") if os.environ.get(n)), None)
        where = f" from {name}={os.environ[name]}" if name else ""
        raise ConfigError(f"cannot load the CA certificates{where} "
                          f"({getattr(exc, 'strerror', None) or exc})") from None


def sdk_http_client(sdk: str, *, timeout: float) -> Any:
    """The async HTTP client an SDK (`openai`, `anthropic`) builds for itself, but on the
    shared TLS context. Its own class when it has one (`AsyncHttpxClientWrapper`, which
    closes its connections when the client is dropped), else its public default."""
    base = import_module(f"{sdk}._base_client")
    cls = getattr(base, "AsyncHttpxClientWrapper", None) or base.DefaultAsyncHttpxClient
    return cls(timeout=timeout, verify=tls_context())


def resolve_key(explicit: str | None, env_names: Sequence[str], kind: str) -> str:
    """The API key: an explicit option, else the first set environment variable.

    The error names the variable, never a value."""
    if explicit:
        register_secret(explicit)
        return explicit
    for name in env_names:
        value = os.environ.get(name)
        if value:
            register_secret(value)
            return value
    names = " or ".join(env_names)
    raise MissingKeyError(f"{names} is not set: export it to play {kind} seats "
                          "(or use --replay CASSETTE to replay a recording)")


def make_policy(max_retries: int | None, retry_policy: RetryPolicy | None,
                timeout: float | None = None) -> RetryPolicy:
    """The adapter's retry loop. With an explicit `timeout` (per read, for the SDK) the
    total deadline of one attempt is 1.5 times it, so a short timeout also ends a body
    that trickles in one byte at a time."""
    if retry_policy is not None:
        return retry_policy
    deadline = DEFAULT_ATTEMPT_TIMEOUT_S if timeout is None else max(0.05, timeout * 1.5)
    return RetryPolicy(max_retries=DEFAULT_MAX_RETRIES if max_retries is None else max_retries,
                       attempt_timeout_s=deadline)


def apply_concurrency(kind: str, base_url: str, max_concurrency: int | None) -> None:
    if max_concurrency is not None:
        set_concurrency(kind, base_url, max_concurrency)


MAX_ARGUMENT_DEPTH = 32


def _too_deep(value: Any, limit: int = MAX_ARGUMENT_DEPTH) -> bool:
    """Iterative, so that data nested thousands deep cannot overflow the stack here."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)
    return False


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """`_parse_arguments`, refusing arguments nested more than 32 levels deep: no tool
    takes nested arguments, and deeper data only exhausts recursion downstream."""
    args, malformed = _parse_arguments(raw)
    if malformed is None and _too_deep(args):
        return {}, f"arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep"
    return args, malformed


def _parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments as a dict, or ({}, why) when they are not a JSON object.

    Models send pretty-printed JSON, empty strings for "no arguments", and sometimes
    plain prose; only the last is malformed (the engine re-asks once)."""
    if isinstance(raw, dict):
        return dict(raw), None
    if raw is None:
        return {}, None
    if not isinstance(raw, str):
        return {}, f"arguments are not a JSON object: {str(raw)[:120]!r}"
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError, ValueError):
        # ValueError: a 5,000-digit integer (int parsing is capped at 4,300 digits);
        # RecursionError: arguments nested thousands deep.
        return {}, f"arguments are not valid JSON: {raw[:120]!r}"
    if not isinstance(value, dict):
        return {}, f"arguments are not a JSON object: {raw[:120]!r}"
    return value, None


def content_text(value: Any) -> str:
    """A reply's content as text: the one normalisation at the provider boundary.

    `None` is "" (a tool-only turn); a list of parts (some gateways, Mistral) is the join
    of its text parts; anything else that is not a string (a number, a dict, a bool) is
    not an answer: `MalformedReply`, which the player turns into the usual re-ask."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts: list[str] = []
        for part in value:
            if isinstance(part, str):
                texts.append(part)
                continue
            kind = part.get("type") if isinstance(part, dict) else getattr(part, "type", None)
            text = part.get("text") if isinstance(part, dict) else getattr(part, "text", None)
            if kind in (None, "text", "output_text") and isinstance(text, str):
                texts.append(text)
            elif kind in ("text", "output_text") or text is not None:
                raise MalformedReply(f"a text part of the reply is a {type(text).__name__}, "
                                     "not text")
            # other parts (images, refusals, reasoning) carry no message text
        return "".join(texts)
    raise MalformedReply(f"the reply's content is a {type(value).__name__}, not text")


def field_of(obj: Any, name: str, default: Any = None) -> Any:
    """A field of an answer, read as JSON (a dict) or as an SDK's model (an object).

    The OpenAI and Anthropic adapters read the body as parsed JSON (`cast_to=object`);
    tests and older callers hand the SDKs' objects; both read alike. As with the SDKs'
    loose construction, a missing field is None and a value of the wrong type is returned
    as is, for the adapter's checks to judge (tests/providers/test_*_answer_json.py
    compare the two readings)."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def read_completion(parse: Callable[[Any, str], Completion], resp: Any, model: str,
                    label: str) -> Completion:
    """Run an adapter's parser on a 200 answer; any surprise in its shape is the model's
    (or the server's) bad output, never an internal error: `MalformedReply`.

    A body the server did not label as JSON comes back from a `cast_to=object` post as its
    text. The SDKs, asked for their models, read such a body as JSON when it parses, so it
    is read the same way here, for every adapter that posts that way."""
    try:
        if isinstance(resp, str):
            with contextlib.suppress(ValueError):
                resp = json.loads(resp)
        completion = parse(resp, model)
    except MalformedReply as exc:
        raise MalformedReply(f"{label}: {exc}") from exc
    except (AttributeError, TypeError, ValueError, KeyError, IndexError,
            RecursionError, OverflowError) as exc:
        raise MalformedReply(f"{label}: the answer has an unexpected shape "
                             f"({type(exc).__name__})") from exc
    if not isinstance(completion.text, str):
        raise MalformedReply(f"{label}: the reply's text is a "
                             f"{type(completion.text).__name__}, not text")
    return completion


# --- usage: the one reading of what a server says a call cost ------------------------------

# A reply whose usage is unknown (missing, or a count `core.usage.token_count` refuses):
# zero tokens and one unknown call, until `with_known_usage` counts it by its texts.
UNKNOWN_USAGE = Usage(unknown_calls=1)


def read_usage(input_tokens: Any, output_tokens: Any, cached_input_tokens: Any = None
               ) -> Usage:
    """What every adapter's parser builds its usage with: the server's counts when they
    are whole numbers within bounds, else `UNKNOWN_USAGE` (core/usage.py). The reply
    itself is kept either way: a bad count never costs a seat its answer."""
    return Usage.reported(input_tokens, output_tokens, cached_input_tokens) or UNKNOWN_USAGE


def sum_counts(*parts: Any) -> Any:
    """Counts the API splits in parts (Gemini's candidates + thoughts; Anthropic's input
    + cache writes) as one: their sum, or None when no part is there, or a part that
    `read_usage` refuses (-1) when any present part is unreadable."""
    present = [p for p in parts if p is not None]
    if not present:
        return None
    counts = [token_count(p) for p in present]
    if any(c is None for c in counts):
        return -1
    return sum(c for c in counts if c is not None)


def request_chars(request: ChatRequest) -> int:
    """The characters a request sends (system prompt, messages, their tool calls and the
    tool schemas): the input side of a usage estimate."""
    n = len(request.system)
    for m in request.messages:
        n += len(m.content)
        for c in m.tool_calls:
            n += len(c.name) + len(json.dumps(c.arguments, ensure_ascii=False, default=str))
    if request.tools:
        n += len(json.dumps([[t.name, t.description, t.parameters] for t in request.tools],
                            ensure_ascii=False, default=str))
    return n


def reply_chars(completion: Completion) -> int:
    n = len(completion.text) if isinstance(completion.text, str) else 0
    for c in completion.tool_calls:
        n += len(str(c.name)) + len(json.dumps(c.arguments, ensure_ascii=False, default=str))
    return n


def with_known_usage(completion: Completion, request: ChatRequest) -> Completion:
    """`completion`, its unknown usage (`UNKNOWN_USAGE`) counted by an estimate from the
    request's and the reply's characters (core/usage.py `Usage.estimate`)."""
    u = completion.usage
    if not u.unknown_calls or u.input_tokens or u.output_tokens:
        return completion
    return replace(completion, usage=Usage.estimate(request_chars(request),
                                                    reply_chars(completion)))


def counted_unreadable(exc: MalformedReply, request: ChatRequest) -> MalformedReply:
    """`exc`, an unreadable reply, with the usage its call may have been billed: the
    request's input by the estimate, an unknown call (its output cannot be counted)."""
    exc.usage = Usage.estimate(request_chars(request), 0)
    return exc
