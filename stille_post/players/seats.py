"""Seats that are neither a game's bot nor a plain model: people (`human`, `web`) and
agent plug-ins (`agent:NAME`, `python:module:attr`). `SetupContext.player` hands such a
spec here; everything else about seating stays in the game kit.

People play only where a host is active (`stille-post play` sets one, players/humans.py):
anywhere else, a tournament say, such a seat is refused in one line before any game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stille_post.core.errors import UsageError
from stille_post.players.base import Player
from stille_post.players.specs import SeatSpec, parse_seat_spec

if TYPE_CHECKING:
    from stille_post.games.kit.setup import SetupContext


def seat_player(ctx: SetupContext, seat: int, spec: SeatSpec) -> Player:
    if spec.human is not None:
        from stille_post.players.humans import human_player

        return human_player(ctx, seat, spec)
    assert spec.agent is not None
    return agent_player(ctx, seat, spec)


def agent_player(ctx: SetupContext, seat: int, spec: SeatSpec) -> Player:
    from stille_post.players.agents import (
        AgentContext,
        AgentProvider,
        MeteredProvider,
        make_agent,
    )
    from stille_post.players.llm import LLMPlayer

    assert spec.agent is not None
    prompts = ctx.definition.prompts
    model: MeteredProvider | None = None
    generation: Any = None
    if spec.agent_model is not None:
        inner_spec = parse_seat_spec(spec.agent_model, ())
        inner: Any
        if inner_spec.script is not None:
            from stille_post.games.kit.setup import script_player

            inner = script_player(inner_spec, prompts)
        elif ctx.llm_factory is None:
            raise UsageError(f"seat {seat} ({spec.raw}): its model {spec.agent_model} is an "
                             "LLM seat: add --online to play it live, or --replay CASSETTE")
        else:
            inner = ctx.llm_factory(spec.agent_model, prompts)
        # The factory's player carries the provider (keys, replay, base_url) and the
        # seat's settings (models.toml); the agent gets the provider, and its requests
        # the settings, as an LLM seat of that model would.
        model = MeteredProvider(inner.provider)
        generation = getattr(inner, "generation", None)
    agent = make_agent(spec.agent, AgentContext(ctx.definition.name, seat, spec.raw, model))
    return LLMPlayer(AgentProvider(agent, spec.raw, model), prompts, name=spec.raw,
                     generation=generation)
