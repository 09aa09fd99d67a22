"""Pieces every SDK adapter shares: keys, options, argument parsing."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from stille_post.core.errors import MissingKeyError
from stille_post.providers.retry import DEFAULT_MAX_RETRIES, RetryPolicy, set_concurrency

# vcrpy stores gzip bodies decoded but cannot decode zstd or brotli: ask for gzip only.
ACCEPT_ENCODING = {"Accept-Encoding": "gzip"}
DEFAULT_TIMEOUT_S = 120.0


def resolve_key(explicit: str | None, env_names: Sequence[str], kind: str) -> str:
    """The API key: an explicit option, else the first set environment variable.

    The error names the variable, never a value."""
    if explicit:
        return explicit
    for name in env_names:
        value = os.environ.get(name)
        if value:
            return value
    names = " or ".join(env_names)
    raise MissingKeyError(f"{names} is not set: export it to play {kind} seats "
                          "(or use --replay CASSETTE to replay a recording)")


def make_policy(max_retries: int | None, retry_policy: RetryPolicy | None) -> RetryPolicy:
    if retry_policy is not None:
        return retry_policy
    return RetryPolicy(max_retries=DEFAULT_MAX_RETRIES if max_retries is None else max_retries)


def apply_concurrency(kind: str, base_url: str, max_concurrency: int | None) -> None:
    if max_concurrency is not None:
        set_concurrency(kind, base_url, max_concurrency)


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
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
    except json.JSONDecodeError:
        return {}, f"arguments are not valid JSON: {raw[:120]!r}"
    if not isinstance(value, dict):
        return {}, f"arguments are not a JSON object: {raw[:120]!r}"
    return value, None
