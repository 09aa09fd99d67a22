"""A scratchpad agent: before each answer it asks its model for a private plan, keeps the
plan in its own memory, and answers with its recent plans in view. Only this seat ever
sees the plans: they are never part of the game's record, only of this agent's requests.

    stille-post play elimination --online --players \\
        python:examples.agents.scratchpad:Agent+openai:gpt-4.1-nano,bot,bot,bot,bot,bot,bot,bot

The model after `+` is any LLM seat spec (`model:ALIAS` from models.toml included); its
tokens and dollars are the seat's, as for a plain LLM seat.
"""

from __future__ import annotations

from dataclasses import replace

from stille_post.players.agents import AgentContext
from stille_post.providers.base import ChatRequest, Completion, Message

PLAN_ASK = ("[SCRATCHPAD] Before you answer, think privately. In at most three short "
            "sentences: what do you know, what do you suspect, and what will you do now? "
            "Nobody else will ever see this note.")
KEEP = 4  # the plans kept in view: a memory that does not grow without bound


class Agent:
    def __init__(self, context: AgentContext) -> None:
        if context.model is None:
            raise ValueError(f"the scratchpad agent needs a model: write {context.name}+MODEL "
                             "(for example +openai:gpt-4.1-nano or +model:ALIAS)")
        self.model = context.model
        self.plans: list[str] = []

    async def respond(self, request: ChatRequest) -> Completion:
        ask_plan = replace(request, messages=[*request.messages, Message("user", PLAN_ASK)],
                           tools=[], tool_choice=None)
        plan = await self.model.complete(ask_plan)
        self.plans.append((plan.text or "").strip()[:600])
        notes = "\n".join(f"- {p}" for p in self.plans[-KEEP:] if p)
        answer = replace(request, system=f"{request.system}\n\nYOUR PRIVATE SCRATCHPAD (only "
                                         f"you see it; your latest plans):\n{notes}")
        return await self.model.complete(answer)
