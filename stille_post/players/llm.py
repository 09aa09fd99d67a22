"""The LLM player: observation -> ChatRequest -> Completion -> Action.

It knows nothing about any game: the game's `PromptBook` renders the request, and the
engine validates the action. Retries live in the provider layer, once; a provider that
still fails surfaces here as `ProviderError`, which the engine turns into a forfeit.
"""

from __future__ import annotations

from typing import Any

from stille_post.core.errors import ProviderError, StillePostError
from stille_post.players.base import Action, Decision, PromptBook
from stille_post.providers.base import ChatRequest, Provider


class LLMPlayer:
    def __init__(
        self,
        provider: Provider,
        prompts: PromptBook,
        *,
        name: str,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
    ) -> None:
        self.provider = provider
        self.prompts = prompts
        self.name = name
        self.max_output_tokens = max_output_tokens
        self.temperature = temperature
        self.last_request: ChatRequest | None = None  # for debugging a prompt

    async def decide(self, decision: Decision[Any]) -> Action:
        request = self.prompts.render(decision)
        if self.max_output_tokens is not None or self.temperature is not None:
            request = ChatRequest(
                system=request.system,
                messages=request.messages,
                tools=request.tools,
                max_output_tokens=self.max_output_tokens or request.max_output_tokens,
                temperature=self.temperature if self.temperature is not None
                else request.temperature,
                tool_choice=request.tool_choice,
            )
        self.last_request = request
        try:
            completion = await self.provider.complete(request)
        except StillePostError:
            raise
        except Exception as exc:  # an SDK error the adapter did not classify
            raise ProviderError(f"{type(exc).__name__}: {exc}") from exc
        return Action(
            text=(completion.text or "").strip(),
            tool_calls=tuple(completion.tool_calls),
            usage=completion.usage,
            model=completion.model,
            provider_data=dict(completion.provider_data),
        )
