"""Every configured key value, masked literally wherever text leaves the provider layer.

Key *patterns* (`KEY_PATTERN` below: `sk-…`, `AIza…`, bearer tokens) miss keys of
third-party gateways, which have any shape, and some of those gateways echo the refused
key in a 401 body. So the values themselves are redacted too: every key a provider was
built with (`resolve_key` registers it) and every key variable set in the environment,
whether or not a provider has read it yet.

`redact` is applied to error messages (retry.py), to model text, tool arguments and
tool-call ids before they reach the engine (players/llm.py), to cassette bodies and URIs
(recording.py), to the seat specs a results folder keeps (tournament/config.py), to
warnings, to every log record (providers/logsafety.py) and to the CLI's error line.
"""

from __future__ import annotations

import os
import re
import threading
from functools import lru_cache
from typing import Any

# Key-like strings: OpenAI (sk-..., sk-proj-...), Anthropic (sk-ant-...), Google (AIza...),
# and bearer tokens. The lookbehind keeps words such as "task-..." from matching, and the
# digit lookaheads keep prose a model may write ("sk-learn-...", "Bearer responsibilities")
# from matching: generated keys and tokens always contain digits.
KEY_PATTERN = re.compile(
    r"(?<![A-Za-z0-9])sk-(?=[A-Za-z0-9_\-]*\d)(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"
    r"|AIza[0-9A-Za-z_\-]{35}"
    r"|Bearer\s+(?=[A-Za-z0-9_\-.=]*\d)[A-Za-z0-9_\-.=]{12,}"
)


def find_keys(text: str) -> list[str]:
    return [m.group(0) for m in KEY_PATTERN.finditer(text)]


REDACTED = "[redacted]"
# The same inside a URL's user information, where brackets would read as an IPv6 host
# (and break whatever parses the URL next, vcrpy included): the brackets percent-encoded.
REDACTED_IN_URL = "%5Bredacted%5D"

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

# A password in a URL's user information (`http://user:PASSWORD@host`): the user name
# stays (it names the account, not the secret), the password goes.
_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:)[^\s/?#@]+@")

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
    """`text` with every configured key, every key-shaped string, every secret query
    parameter value and every URL password (`://user:PASSWORD@`) replaced by
    `[redacted]`."""
    for value in secrets():
        if value in text:
            text = text.replace(value, REDACTED)
    text = KEY_PATTERN.sub(REDACTED, text)
    if "@" in text:
        text = _USERINFO.sub(lambda m: m.group(1) + REDACTED_IN_URL + "@", text)
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
