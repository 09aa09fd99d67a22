"""Every configured key value, masked literally wherever text leaves the provider layer.

Key *patterns* (`recording.KEY_PATTERN`: `sk-…`, `AIza…`, bearer tokens) miss keys of
third-party gateways, which have any shape, and some of those gateways echo the refused
key in a 401 body. So the values themselves are redacted too: every key a provider was
built with (`resolve_key` registers it) and every key variable set in the environment,
whether or not a provider has read it yet.

`redact` is applied to error messages (retry.py), to model text and tool arguments before
they reach the engine (players/llm.py), to cassette bodies and URIs (recording.py) and to
the CLI's error line.
"""

from __future__ import annotations

import os
import re
import threading
from functools import lru_cache
from typing import Any

# recording.py imports this module only inside functions, so this is no cycle; at module
# level it saves an import statement on every reply.
from stille_post.providers.recording import KEY_PATTERN

REDACTED = "[redacted]"

# Every environment variable that may hold a key (cli/llm_seats.py reads the same names).
KEY_ENV_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                "OPENAI_COMPATIBLE_API_KEY")
# Placeholders that are not secrets, and short values that would mangle ordinary text.
_NOT_SECRETS = frozenset({"not-needed", "replay-dummy-key", "dummy", "test", "none"})
MIN_SECRET_LEN = 8

# Query parameters that carry a key in a URL (Gemini's `?key=`, gateways' `?api_key=`).
SECRET_QUERY_PARAMETERS = ("key", "api_key", "apikey", "token", "access_token")
_QUERY = re.compile(r"([?&](?:" + "|".join(SECRET_QUERY_PARAMETERS) + r")=)[^&#\s\"']*",
                    re.IGNORECASE)

_lock = threading.Lock()
_registered: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember a key value so that `redact` masks it from now on."""
    if value and len(value) >= MIN_SECRET_LEN and value.lower() not in _NOT_SECRETS:
        with _lock:
            _registered.add(value)


# The environment is read on every call (a key exported after start-up is masked too),
# so the read must be cheap: redaction runs on every decision. CPython's os.environ keeps
# its raw values in a dict; one C-level lookup per name there is far cheaper than a
# lookup through the Mapping interface, which decodes every value. Other interpreters
# take the portable path.
_ENV_DATA: Any = getattr(os.environ, "_data", None)
_ENV_KEYS: tuple[Any, ...] = ()
if isinstance(_ENV_DATA, dict):
    try:
        _ENV_KEYS = tuple(os.environ.encodekey(n) for n in KEY_ENV_VARS)
    except (AttributeError, TypeError):
        _ENV_DATA = None


def _environment_keys() -> tuple[Any, ...]:
    if _ENV_DATA is not None:
        return tuple(map(_ENV_DATA.get, _ENV_KEYS))
    return tuple(os.environ.get(name) for name in KEY_ENV_VARS)


def secrets() -> list[str]:
    """Registered and environment keys, longest first (a key containing another key is
    masked whole)."""
    return _secrets(frozenset(_registered), _environment_keys())


@lru_cache(maxsize=8)
def _secrets(registered: frozenset[str], env: tuple[Any, ...]) -> list[str]:
    # Cached on its inputs: redaction runs on every decision, and rebuilding and sorting
    # the list each time was a large share of an in-memory game's CPU.
    values = set(registered)
    for raw in env:
        if raw is None:
            continue
        v = os.fsdecode(raw) if isinstance(raw, bytes) else str(raw)
        if len(v) >= MIN_SECRET_LEN and v.lower() not in _NOT_SECRETS:
            values.add(v)
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    """`text` with every configured key, every key-shaped string and every secret query
    parameter value replaced by `[redacted]`."""
    for value in secrets():
        if value in text:
            text = text.replace(value, REDACTED)
    text = KEY_PATTERN.sub(REDACTED, text)
    return _QUERY.sub(lambda m: m.group(1) + REDACTED, text) if "=" in text else text


def redact_bytes(data: bytes) -> bytes:
    """`redact` for a recorded body; bytes that are not UTF-8 are only value-masked."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for value in secrets():
            data = data.replace(value.encode(), REDACTED.encode())
        return data
    clean = redact(text)
    return data if clean == text else clean.encode("utf-8")


def redact_data(value: Any, _depth: int = 0) -> Any:
    """`redact` applied to every string inside JSON-like data (tool arguments); keys too.
    Data nested deeper than 64 levels is replaced: it is an attack, not an argument."""
    if isinstance(value, str):
        return redact(value)
    if _depth >= 64 and isinstance(value, dict | list):
        return "[nested too deeply]"
    if isinstance(value, dict):
        return {redact(str(k)): redact_data(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_data(v, _depth + 1) for v in value]
    return value


def forget_secrets() -> None:
    """For tests: drop the registered values (environment keys stay)."""
    with _lock:
        _registered.clear()
