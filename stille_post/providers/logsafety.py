"""No log record leaves this process with a key in it, and no dependency reconfigures
logging for the whole process.

Why: `wordllama` (the Connections semantic bots' embeddings) calls
`logging.basicConfig(level=logging.INFO)` when imported. After that, httpx logged every
request URL at INFO on stderr, `?api_key=` values included, and vcrpy's `--record` logged
raw bodies. Three layers, each enough on its own for the leak:

1. `install()` wraps the log-record factory: every record any logger creates (ours or a
   dependency's) is formatted at once and passed through `providers.secrets.redact` (and
   `clean_text`: no terminal control characters); its traceback text too. Done at
   package import, so even a library user's own handlers only see redacted records.
2. `preserve_logging()` wraps an import that may call `basicConfig`: the root logger's
   level and handlers, and `logging.disable`, are put back as they were afterwards.
3. `guard_root()` (the CLI's process boundary) gives a root logger without handlers the
   handler Python would use anyway (WARNING and above, message only, on stderr), so a
   later `basicConfig()` without `force` is a no-op and cannot lower the level to INFO.
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_installed = False


def scrub(text: str) -> str:
    """`text` as a log line may carry it: keys masked, control characters replaced."""
    from stille_post.core.text import clean_text
    from stille_post.providers.secrets import redact

    return clean_text(redact(text))


def _scrub_record(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: keep what can be shown
        message = f"{record.msg!s} {record.args!r}"
    clean = scrub(message)
    if clean != message:
        record.msg, record.args = clean, ()
    if record.exc_info and not record.exc_text:
        record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
    if record.exc_text:
        record.exc_text = scrub(record.exc_text)
    if record.stack_info:
        record.stack_info = scrub(record.stack_info)


class RedactingFilter(logging.Filter):
    """The same scrubbing as a filter (for handlers; records are already scrubbed at
    creation once `install()` ran, so this is a second net, not the first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        _scrub_record(record)
        return True


def install() -> None:
    """Scrub every log record created from now on (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        base = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = base(*args, **kwargs)
            _scrub_record(record)
            return record

        factory.stille_post_scrubs = True  # type: ignore[attr-defined]
        logging.setLogRecordFactory(factory)
        _installed = True


@contextmanager
def preserve_logging() -> Iterator[None]:
    """Put the root logger back as it was after the block (a dependency's import may
    call `basicConfig` or `logging.disable`)."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    disabled = logging.root.manager.disable
    try:
        yield
    finally:
        for h in list(root.handlers):
            if h not in handlers:
                root.removeHandler(h)
        for h in handlers:
            if h not in root.handlers:
                root.addHandler(h)
        root.setLevel(level)
        logging.disable(disabled)


class _BoundaryHandler(logging.StreamHandler):
    """Python's last-resort handler made explicit: WARNING and above, the message only,
    on the current stderr, scrubbed."""

    def __init__(self) -> None:
        super().__init__()
        self.setLevel(logging.WARNING)
        self.addFilter(RedactingFilter())

    @property
    def stream(self) -> Any:
        return sys.stderr  # the stderr of the moment (tests and the fork server swap it)

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def guard_root() -> None:
    """At the process boundary: scrub records, and occupy the root logger so that a
    dependency's `basicConfig()` changes nothing."""
    install()
    root = logging.getLogger()
    if not root.handlers:  # what Python would print anyway, made explicit
        root.addHandler(_BoundaryHandler())
