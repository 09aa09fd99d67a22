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


class Slow:
    """The rule-based example agent, thinking 1.5 s before each answer (a slow model)."""

    def __init__(self, context: Any) -> None:
        from examples.agents.rule_based import Agent

        self.inner = Agent(context)

    async def respond(self, request: Any) -> Any:
        import asyncio

        await asyncio.sleep(1.5)
        return self.inner.respond(request)
