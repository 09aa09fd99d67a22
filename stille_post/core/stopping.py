"""The words for a game or a run stopped by a signal, and what a closed terminal needs.

`play` (cli/play.py) and a tournament (tournament/runner.py) both stop on Ctrl-C,
SIGTERM and SIGHUP (closing the terminal window is how people leave), and say why in
the same words: on the terminal, in a transcript's result, in a run's stop line.
"""

from __future__ import annotations

import contextlib
import os
import signal

INTERRUPTED = "interrupted (Ctrl-C)"

STOP_REASONS: dict[int, str] = {
    signal.SIGINT: INTERRUPTED,
    signal.SIGTERM: "terminated (SIGTERM)",
    **({signal.SIGHUP: "the terminal was closed (SIGHUP)"} if hasattr(signal, "SIGHUP")
       else {}),
}


def is_hangup(signum: int) -> bool:
    return signum == getattr(signal, "SIGHUP", None)


def detach_output() -> None:
    """Point this process's stdout and stderr at /dev/null: after a hang-up the terminal
    is gone, and every write to it would fail (and a failure to report that failure
    would end in a traceback nobody sees, instead of the orderly end)."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            os.dup2(null, fd)
        os.close(null)


__all__ = ["INTERRUPTED", "STOP_REASONS", "detach_output", "is_hangup"]
