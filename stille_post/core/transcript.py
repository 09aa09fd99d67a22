"""The transcript: one JSONL file per game, streamed as the game is played.

Line 1 is the header (format version, game, config, seed, seats, package version).
Then one line per event. The last line is the result (`completed` or `aborted`,
placements, per-seat usage).

Durability: only a transcript with a result line counts as complete (`Transcript.complete`,
`results.is_complete`), and a tournament redoes every incomplete game on resume. So
events are buffered and written in batches (every `BATCH_LINES` lines, or when the last
write is `BATCH_SECONDS` old, so a slow LLM game still reaches the disk as it goes);
the result line is written with whatever is buffered, flushed and fsynced before the
file is closed. A crash or `kill -9` loses at most the buffered events of an unfinished
game, which was going to be replayed anyway; Ctrl-C or an exception still writes them,
followed by an `aborted` result.

A game of `stille-post play` is nobody's replay: it is written line by line
(`buffered=False`) to a `.part` file that is never truncated (`exclusive=True`), and
`publish` moves it to its name when it ends, without ever replacing a file. A person's
hour-long game then survives even a `kill -9` as its `.part` file, every move in it.

Wall-clock data lives only under the `timing` key of the header and the result, so
`canonical_text` can drop it and two runs of one seed compare byte for byte.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from stille_post import __version__
from stille_post.core.events import Event, visible_to
from stille_post.core.outcome import OutcomeSummary
from stille_post.core.stopping import INTERRUPTED
from stille_post.core.usage import Usage

# 2: the result's `summary` is the typed OutcomeSummary (winners, eliminated, valid,
# turns, notes, details); version 1 summaries were one flat, game-specific mapping.
# 3: every ask of a seat ends in a log-only `decision` event (games/kit/table.py) with
# the seat's replies; version 2 transcripts have none. Both are read.
FORMAT_VERSION = 3

# Write the buffered lines when this many are waiting, or when the oldest is this old.
BATCH_LINES = 256
BATCH_SECONDS = 1.0

# Whether `TranscriptWriter.result` fsyncs the file (the default for a writer built
# without `fsync=`). The tournament runner turns it off for its games: it fsyncs
# finished transcripts off the event loop (an fsync costs milliseconds, a bot game less)
# or, with `durable=False`, not at all.
FSYNC_RESULTS: ContextVar[bool] = ContextVar("stille_post_fsync_results", default=True)

# One encoder, built once: `json.dumps` with options builds a new encoder per call, and
# `JSONEncoder.encode` still builds its C encoder on every call, a large part of the cost
# of an event line (docs/performance.md). The C encoder is built once here, with the same
# settings (compact separators, UTF-8 kept, NaN allowed, no circular check: transcript
# data comes from JSON and from the engines, never from a cycle); the same bytes either
# way (tested).
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)
_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_C = (None if _C_ENCODER is None else  # None: an interpreter without the C accelerator
      _C_ENCODER(None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",",
                 False, False, True))


def _ENCODE(obj: Any) -> str:
    return "".join(_C(obj, 0)) if _C is not None else _ENCODER.encode(obj)


def dumps(obj: Any) -> str:
    return _ENCODE(obj)


class TranscriptWriter:
    """Streams a game to a JSONL file. Use as a context manager: leaving the block
    without a result (an exception, Ctrl-C) still writes the buffered events and closes
    the file with an `aborted` line."""

    def __init__(self, path: Path | str, *, fsync: bool | None = None, buffered: bool = True,
                 exclusive: bool = False) -> None:
        """`buffered=False` writes every line as it comes (one system call each);
        `exclusive=True` refuses a path that exists (FileExistsError) instead of
        truncating it."""
        self.path = Path(path)
        self._fd: int | None = _create(self.path, exclusive=exclusive)
        self._finished = False
        self._t0 = time.monotonic()
        self.fsync = FSYNC_RESULTS.get() if fsync is None else fsync
        self._buffer: list[str] = []
        self._buffered_since = 0.0
        self._batch_lines = BATCH_LINES if buffered else 1

    def _write(self, obj: Mapping[str, Any]) -> None:
        if self._fd is None:
            raise RuntimeError(f"transcript {self.path} is already closed")
        buffer = self._buffer
        if not buffer:
            self._buffered_since = time.monotonic()
        buffer.append(_ENCODE(obj))
        if len(buffer) >= self._batch_lines \
                or time.monotonic() - self._buffered_since >= BATCH_SECONDS:
            self._drain()

    def _drain(self) -> None:
        """Write the buffered lines and hand them to the OS (no fsync)."""
        if self._buffer and self._fd is not None:
            self._buffer.append("")  # the last line's newline
            data = memoryview("\n".join(self._buffer).encode("utf-8"))
            self._buffer.clear()
            while data:  # a regular file takes it all at once; a short write is retried
                data = data[os.write(self._fd, data):]

    def header(
        self,
        *,
        game: str,
        config: Mapping[str, Any],
        seed: int | str | None,
        seats: Mapping[str, Mapping[str, Any]],
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        self._write(
            {
                "kind": "header",
                "format": FORMAT_VERSION,
                "game": game,
                "version": __version__,
                "seed": seed,
                "config": dict(config),
                "seats": {k: dict(v) for k, v in seats.items()},
                **(dict(extra) if extra else {}),
                "timing": {"started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
            }
        )

    def event(self, event: Event) -> None:
        self._write({"kind": "event", **event.to_json()})

    __call__ = event  # a writer is an EventSink

    def result(
        self,
        *,
        status: str,
        reason: str | None = None,
        placements: Mapping[int, int] | None = None,
        usage: Mapping[int, Mapping[str, Any]] | None = None,
        summary: Mapping[str, Any] | None = None,
        adherence: Mapping[int, Mapping[str, Any]] | None = None,
    ) -> None:
        if self._fd is None:
            raise RuntimeError(f"transcript {self.path} is already closed")
        line: dict[str, Any] = {
            "kind": "result",
            "status": status,
            "reason": reason,
            "placements": {str(k): v for k, v in (placements or {}).items()},
            "usage": {str(k): dict(v) for k, v in (usage or {}).items()},
            "summary": dict(summary or {}),
        }
        if adherence:  # absent from transcripts written before it existed, and from aborts
            line["adherence"] = {str(k): dict(v) for k, v in adherence.items()}
        line["timing"] = {"seconds": round(time.monotonic() - self._t0, 4)}
        self._buffer.append(_ENCODE(line))
        self._drain()
        if self.fsync and self._fd is not None:
            os.fsync(self._fd)
        self._finished = True
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            try:
                self._drain()
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._finished and self._fd is not None:
            self.result(status="aborted", reason=abort_reason(exc))
        self.close()

    @property
    def finished(self) -> bool:
        """Whether the result line was written."""
        return self._finished


def abort_reason(exc: BaseException | None) -> str:
    """The result's reason for a game cut off by `exc`. A cancellation is an interruption
    (Ctrl-C, a signal, a run that stops), never the bare `CancelledError: ` it prints as;
    its message, when the canceller gave one, says which."""
    if exc is None:
        return "closed without a result"
    if isinstance(exc, KeyboardInterrupt):
        return INTERRUPTED
    if isinstance(exc, asyncio.CancelledError):
        said = exc.args[0] if exc.args and isinstance(exc.args[0], str) else ""
        return said or "interrupted"
    return f"{type(exc).__name__}: {exc}"


def publish(part: Path, final: Path) -> Path:
    """Move a finished `.part` transcript to `final`, or, when a file of that name
    appeared meanwhile, to the first free `final-2`, `final-3`, ...: a recorded game is
    never replaced. Returns where it went. (A hard link fails on an existing name, where
    a rename would replace it; a file system without hard links gets a checked rename.)"""
    candidates = [final, *(final.with_name(f"{final.stem}-{i}{final.suffix}")
                           for i in range(2, 10_000))]
    for target in candidates:
        try:
            os.link(part, target)
        except FileExistsError:
            continue
        except OSError:  # no hard links here (some network and FAT file systems)
            if target.exists():
                continue
            os.replace(part, target)
            return target
        part.unlink()
        return target
    raise FileExistsError(f"too many transcripts named like {final}")


# Created write-only, truncated, not inherited by child processes; binary, so a line ends
# in "\n" on every platform.
_CREATE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_BINARY", 0))


def _create(path: Path, *, exclusive: bool = False) -> int:
    """Open a new transcript as a raw file descriptor. A buffered text file cost four
    more system calls per transcript (fstat, an isatty ioctl, two lseeks) and the writer
    buffers lines itself; the folder is created only when the open finds it missing,
    instead of a mkdir and a stat before every game (a tournament writes thousands of
    transcripts into one folder)."""
    flags = _CREATE_FLAGS & ~os.O_TRUNC | os.O_EXCL if exclusive else _CREATE_FLAGS
    try:
        return os.open(path, flags, 0o666)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, flags, 0o666)


@dataclass
class Transcript:
    """A transcript read back from disk. `complete` is False when the result line is
    missing (the game was cut off) or the last line was torn mid-write."""

    header: dict[str, Any]
    events: list[Event] = field(default_factory=list)
    result: dict[str, Any] | None = None
    torn_lines: int = 0
    # The event lines as written (no newline), one per event: kept only when asked
    # (`load(keep_lines=True)`), for a reader that compares lines byte for byte.
    event_lines: list[str] | None = None

    @property
    def summary(self) -> OutcomeSummary:
        """How the game ended, typed (an empty summary for a game cut off early)."""
        return OutcomeSummary.from_json((self.result or {}).get("summary"))

    @property
    def complete(self) -> bool:
        return self.result is not None and self.torn_lines == 0

    @property
    def game(self) -> str:
        return str(self.header.get("game"))

    @property
    def seats(self) -> dict[int, dict[str, Any]]:
        return {int(k): v for k, v in self.header.get("seats", {}).items()}

    def usage_row(self, seat: int) -> dict[str, Any]:
        """The result line's usage row of `seat`, as recorded (`cost_usd` included), or
        an empty row when the line or the row is missing or not a mapping: a transcript
        is untrusted input, and a row of the wrong shape must read as absent."""
        usage = (self.result or {}).get("usage")
        row = usage.get(str(seat)) if isinstance(usage, Mapping) else None
        return dict(row) if isinstance(row, Mapping) else {}

    def usage(self, seat: int) -> Usage:
        """`seat`'s tokens, read within bounds (`Usage.from_json`)."""
        return Usage.from_json(self.usage_row(seat))

    def view(self, seat: int) -> list[Event]:
        """Exactly what `seat` was shown during the game (same rule as the engine)."""
        return visible_to(self.events, seat)

    @classmethod
    def load(cls, path: Path | str, *, keep_lines: bool = False) -> Transcript:
        """Read a transcript. Only the *last* line may be torn (a crash mid-write: the
        game is incomplete, not unreadable). A line that is not JSON, not an object, or
        not valid UTF-8 anywhere else is garbage in the middle of the record, and raises
        `TranscriptError` naming the file and the line number."""
        header: dict[str, Any] | None = None
        events: list[Event] = []
        lines: list[str] | None = [] if keep_lines else None
        result: dict[str, Any] | None = None
        torn = 0
        garbage: tuple[int, str] | None = None  # the first bad line, if any
        for lineno, line in _numbered_lines(Path(path)):
            if garbage is not None:
                # A bad line followed by more lines was not cut by a crash.
                raise TranscriptError(f"{path}:{garbage[0]}: {garbage[1]}")
            if line is None:
                garbage = (lineno, "not valid UTF-8")
                continue
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, RecursionError, ValueError):
                garbage = (lineno, f"not a JSON line: {line[:60]!r}")
                continue
            kind = obj.get("kind") if isinstance(obj, dict) else None
            if kind not in ("header", "event", "result"):
                raise TranscriptError(f"{path}:{lineno}: not a transcript line "
                                      f"(kind {kind!r})")
            if header is None and kind != "header":
                raise TranscriptError(f"{path}: no header line; not a stille_post transcript")
            if kind == "header":
                header = obj
            elif kind == "event":
                try:
                    events.append(Event.from_json(obj))
                except (KeyError, TypeError, ValueError) as exc:
                    raise TranscriptError(f"{path}:{lineno}: malformed event ({exc!r})") \
                        from None
                if lines is not None:
                    lines.append(line.rstrip("\r\n"))
            elif kind == "result":
                result = obj
        if garbage is not None:
            torn += 1  # the last line, cut by a crash
        if header is None:
            raise TranscriptError(f"{path}: no header line; not a stille_post transcript")
        return cls(header=header, events=events, result=result, torn_lines=torn,
                   event_lines=lines)


class TranscriptError(ValueError):
    """A transcript file that cannot be read; the message names the file and line."""


def _numbered_lines(path: Path) -> Iterator[tuple[int, str | None]]:
    """Non-blank lines with their 1-based line numbers; None for a line that is not
    UTF-8 (read in binary so that one bad byte does not hide the lines after it)."""
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield lineno, None
                continue
            if line.strip():
                yield lineno, line


def _lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield line


def canonical_text(path: Path | str) -> str:
    """The transcript with wall-clock fields removed: equal for equal games."""
    out = []
    for line in _lines(Path(path)):
        obj = json.loads(line)
        obj.pop("timing", None)
        obj.pop("version", None)
        out.append(dumps(obj))
    return "\n".join(out) + "\n"
