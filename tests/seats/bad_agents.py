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
