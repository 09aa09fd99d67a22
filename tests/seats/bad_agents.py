"""Agents that misbehave, for the tests (python:tests.seats.bad_agents:NAME)."""

from __future__ import annotations

import threading
from typing import Any


class Raises:
    def __init__(self, context: Any) -> None:
        pass

    def respond(self, request: Any) -> Any:
        raise ValueError("boom")


class WrongType:
    def __init__(self, context: Any) -> None:
        pass

    async def respond(self, request: Any) -> Any:
        return "a string, not a Completion"


NOT_CALLABLE = 3


class Slow:
    """The rule-based example agent, thinking 1.5 s before each answer (a slow model)."""

    def __init__(self, context: Any) -> None:
        from examples.agents.rule_based import Agent

        self.inner = Agent(context)

    async def respond(self, request: Any) -> Any:
        import asyncio

        await asyncio.sleep(1.5)
        return self.inner.respond(request)


class Thinks:
    """An async agent that takes a minute over every answer (it awaits: the loop runs on)."""

    def __init__(self, context: Any) -> None:
        pass

    async def respond(self, request: Any) -> Any:
        import asyncio

        await asyncio.sleep(60)
        raise AssertionError("never answers in a test")


class Quick:
    """An async agent that answers after 0.15 s, like a quick model: a tournament of it
    is still running when a test presses Ctrl-C."""

    def __init__(self, context: Any) -> None:
        from examples.agents.rule_based import Agent

        self.inner = Agent(context)

    async def respond(self, request: Any) -> Any:
        import asyncio

        await asyncio.sleep(0.15)
        return self.inner.respond(request)


class Stubborn:
    """An agent that will not be cancelled: it keeps waiting through every CancelledError."""

    def __init__(self, context: Any) -> None:
        pass

    async def respond(self, request: Any) -> Any:
        import asyncio

        while True:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                continue


class KillsItsProcess:
    """An agent whose first answer kills the process it runs in (SIGKILL: no handler,
    no last message)."""

    def __init__(self, context: Any) -> None:
        pass

    def respond(self, request: Any) -> Any:
        import os
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


# What `Blocks` waits for: a test sets it when it is done, so that no thread outlives it.
RELEASE = threading.Event()
BLOCK_S = 5.0


class Blocks:
    """A plain `respond` that blocks its thread for BLOCK_S (as `time.sleep` does), then
    answers: before issue 36 item 7 it blocked the event loop and every game on it."""

    def __init__(self, context: Any) -> None:
        from examples.agents.rule_based import Agent

        self.inner = Agent(context)

    def respond(self, request: Any) -> Any:
        RELEASE.wait(BLOCK_S)
        return self.inner.respond(request)


class Sleeps:
    """`time.sleep(40)` in `respond`, exactly as issue 36 item 7 reports it."""

    def __init__(self, context: Any) -> None:
        from examples.agents.rule_based import Agent

        self.inner = Agent(context)

    def respond(self, request: Any) -> Any:
        import time

        time.sleep(40)
        return self.inner.respond(request)


class Hogs:
    """An agent that takes 3 GiB at its first answer."""

    def __init__(self, context: Any) -> None:
        self.kept: list[bytes] = []

    def respond(self, request: Any) -> Any:
        import os

        if "stille-post-agent-" not in os.getcwd():  # not isolated: do not hurt the tests
            raise RuntimeError("Hogs runs only isolated")
        self.kept.append(b"x" * (3 * 1024**3))
        raise AssertionError("an isolated agent never gets here")
