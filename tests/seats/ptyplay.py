"""Drive `stille-post play` through a pseudo-terminal, answering as a person would.

The answerer reads what the seat was shown and types at each prompt; it knows nothing a
person at the seat would not (the card, the prefix, the listed players)."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

PROMPT = re.compile(r"> $")


@dataclass
class Session:
    output: str = ""
    typed: list[str] = field(default_factory=list)
    status: int | None = None


def run(args: list[str], answer: Callable[[str, Session], str | None], *,
        timeout_s: float = 60.0, cwd: str | None = None) -> Session:
    """Play `stille-post ARGS` on a pty; `answer(output_so_far, session)` gives each line
    to type (None: press Ctrl-C)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI, with the pty as its controlling terminal
        if cwd:
            os.chdir(cwd)
        os.environ["COLUMNS"] = "120"
        os.execv(sys.executable, [sys.executable, "-c",
                                  "from stille_post.cli import main; main()", *args])
    session = Session()
    deadline = time.monotonic() + timeout_s
    answered_at = -1
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.05)  # quiet this long: read the screen
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # the child closed the pty: it has exited
                    break
                if not chunk:
                    break
                session.output += chunk.decode("utf-8", "replace")
                continue
            text = session.output
            if PROMPT.search(text) and len(text) != answered_at:
                answered_at = len(text)
                line = answer(text, session)
                if line is None:
                    os.write(fd, b"\x03")
                else:
                    session.typed.append(line)
                    os.write(fd, line.encode() + b"\r")
        else:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"the game did not end in {timeout_s} s:\n"
                                 f"{session.output[-3000:]}")
    finally:
        _, status = os.waitpid(pid, 0)
        session.status = os.waitstatus_to_exitcode(status)
        os.close(fd)
    return session


class Pty:
    """`stille-post ARGS` on a pseudo-terminal, its screen read as it comes."""

    def __init__(self, args: list[str], *, cwd: str | Path) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the CLI, with the pty as its controlling terminal
            os.chdir(cwd)
            os.environ["COLUMNS"] = "120"
            os.execv(sys.executable, [sys.executable, "-c",
                                      "from stille_post.cli import main; main()", *args])
        self.screen = ""
        self.status: int | None = None

    def read(self, until: float) -> bool:
        """Read what is ready until `until` (monotonic); False once the pty is closed."""
        while self.fd >= 0 and time.monotonic() < until:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                return False
            if not chunk:
                return False
            self.screen += chunk.decode("utf-8", "replace")
        return True

    def wait_for(self, pattern: str, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not re.search(pattern, self.screen):
            if time.monotonic() > deadline or not self.read(time.monotonic() + 0.1):
                self.kill()
                raise AssertionError(f"never showed {pattern!r}:\n{self.screen[-2000:]}")

    def exit_code(self, timeout_s: float = 20.0) -> int:
        """Wait for the process (reading its screen meanwhile, so it never blocks on
        a full pty); fails if it takes longer than `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.status = os.waitstatus_to_exitcode(status)
                self.read(time.monotonic() + 0.2)
                self.close()
                return self.status
            if not self.read(time.monotonic() + 0.05):
                time.sleep(0.05)
        self.kill()
        raise AssertionError(f"still running after {timeout_s} s:\n{self.screen[-2000:]}")

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def kill(self) -> None:
        if self.status is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.status = -9
        self.close()


def last(pattern: str, text: str) -> re.Match[str] | None:
    found = list(re.finditer(pattern, text))
    return found[-1] if found else None
