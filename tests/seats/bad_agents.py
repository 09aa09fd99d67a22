"""Agents that misbehave, for the tests (python:tests.seats.bad_agents:NAME)."""

from __future__ import annotations

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


class Thinks:
    """An async agent that takes a minute over every answer (it awaits: the loop runs on)."""

    def __init__(self, context: Any) -> None:
        pass

    async def respond(self, request: Any) -> Any:
        import asyncio

        await asyncio.sleep(60)
        raise AssertionError("never answers in a test")


class Slow:
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
