"""The LLM player: observation -> ChatRequest -> Completion -> Action.

It knows nothing about any game: the game's `PromptBook` renders the request, and the
engine validates the action. Retries live in the provider layer, once; a provider that
still fails surfaces here as `ProviderError`, which the engine turns into a forfeit.

This is also where model output enters the package, so it is made safe here, once:
- text, tool arguments and tool-call ids are sanitised (`core.text.clean_data`: no lone
  surrogates, no terminal control characters) and every configured key is masked
  (`providers.secrets`);
- a reply the adapter could not read (`MalformedReply`: invalid JSON, content that is not
  text) comes back as an action whose tool call is marked malformed with the reason. The
  engines treat that as a parse error, so the seat gets the usual corrective re-ask and a
  forfeit names what happened if the re-asks fail too;
- a request that is not in a replayed cassette (`ReplayMiss`) aborts the game with
  `GameAborted`: nothing real can happen in it any more;
- any other exception from a provider is a `ProviderError` (a forfeit), never a crash.

`answer_stats(provider)` counts, per provider, the calls that came back with a usable
reply; `cli/warnings.py` turns a seat that never got one into a warning.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from stille_post.core.errors import GameAborted, ProviderError, StillePostError
from stille_post.core.text import clean_data, clean_text
from stille_post.players.base import Action, Decision, PromptBook, legal_moves
from stille_post.providers.base import (
    ChatRequest,
    Completion,
    MalformedReply,
    Provider,
    ReplayMiss,
    ToolCall,
)
from stille_post.providers.secrets import redact, redact_data, secrets

if TYPE_CHECKING:
    from stille_post.players.generation import GenerationConfig

# The name of the placeholder call that carries an unreadable reply to the engine.
UNREADABLE_REPLY = "unreadable_reply"
MAX_CALL_ID = 256  # characters of a tool-call id kept (real ids are under 100)


@dataclass
class AnswerStats:
    """What one provider's calls came to, for the "nothing real happened" warning."""

    label: str
    calls: int = 0
    usable: int = 0  # a reply with text or a well-formed tool call
    failed: int = 0  # provider errors after retries, replay misses
    malformed: int = 0  # unreadable replies (re-asked)
    last_failure: str | None = None


_STATS: weakref.WeakKeyDictionary[Any, AnswerStats] = weakref.WeakKeyDictionary()


def answer_stats(provider: Any) -> AnswerStats | None:
    """The counts of every `LLMPlayer.decide` that went through `provider` (None if it
    was never asked)."""
    try:
        return _STATS.get(provider)
    except TypeError:  # not weak-referenceable
        return None


def _stats_for(provider: Any, label: str) -> AnswerStats:
    try:
        stats = _STATS.get(provider)
        if stats is None:
            stats = _STATS[provider] = AnswerStats(label)
        return stats
    except TypeError:
        return AnswerStats(label)


def safe_text(text: str) -> str:
    """Model or server text as it may enter the game: keys masked, controls replaced."""
    return clean_text(redact(text))


@lru_cache(maxsize=256)
def _safe_label(label: str, keys: tuple[str, ...]) -> str:
    # `keys` (the secrets in force) is part of the cache key: a new key masks anew.
    return safe_text(label)


def safe_model(model: str) -> str:
    """`safe_text` for a reply's model name: a handful of names recur on every reply, so
    the cleaned name is cached (per set of configured keys)."""
    return _safe_label(model, tuple(secrets()))


def safe_completion(completion: Completion) -> tuple[str, tuple[ToolCall, ...]]:
    text = completion.text if isinstance(completion.text, str) else ""
    calls: list[ToolCall] = []
    for c in completion.tool_calls:
        name = safe_text(c.name) if isinstance(c.name, str) else ""
        args = clean_data(redact_data(c.arguments)) if isinstance(c.arguments, dict) else {}
        malformed = c.malformed if isinstance(c.malformed, str) or c.malformed is None \
            else "the call could not be read"
        if not isinstance(args, dict):
            args, malformed = {}, malformed or "arguments are not a JSON object"
        # The id is server text too, and it is echoed back to the server with the
        # tool's result: masked like the rest (and bounded: an id is not a document).
        call_id = safe_text(c.id)[:MAX_CALL_ID] if isinstance(c.id, str) else None
        calls.append(ToolCall(name, args, id=call_id,
                              malformed=safe_text(malformed) if malformed else None,
                              provider_data=c.provider_data))
    return safe_text(text).strip(), tuple(calls)


STRUCTURED_MODES = ("schema", "legal")


def with_generation(request: ChatRequest, gen: GenerationConfig) -> ChatRequest:
    """`request` with the settings `gen` sets laid over what the prompts rendered.
    (A structured mode is laid by `decide`, which asks the game for the legal moves.)"""
    return replace(
        request,
        max_output_tokens=gen.max_output_tokens if gen.max_output_tokens is not None
        else request.max_output_tokens,
        temperature=gen.temperature if gen.temperature is not None else request.temperature,
        reasoning_effort=gen.reasoning_effort if gen.reasoning_effort is not None
        else request.reasoning_effort,
        extra={**request.extra, **gen.extra},
    )


class LLMPlayer:
    def __init__(
        self,
        provider: Provider,
        prompts: PromptBook,
        *,
        name: str,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
        generation: GenerationConfig | None = None,
    ) -> None:
        self.provider = provider
        self.prompts = prompts
        self.name = name
        self.max_output_tokens = max_output_tokens
        self.temperature = temperature
        # The seat's settings (models.toml via the CLI); the two keywords above are seat
        # settings too, laid under it. A decision's phase settings win over both.
        self.generation = generation
        if max_output_tokens is not None or temperature is not None:
            from stille_post.players.generation import GenerationConfig, effective

            self.generation = effective(GenerationConfig(max_output_tokens, temperature),
                                        generation)
        self.last_request: ChatRequest | None = None  # for debugging a prompt

    def request(self, decision: Decision[Any]) -> ChatRequest:
        """The request `decide` sends for `decision` (the data export captures it here)."""
        request = self.prompts.render(decision)
        gen = self.generation
        if decision.generation is not None:  # precedence: seat < phase (players/generation.py)
            gen = decision.generation.over(gen)
        if gen is not None:
            request = with_generation(request, gen)
            if gen.structured in STRUCTURED_MODES:
                # The rules of this moment as a schema, for the API to decode under.
                request = replace(request, structured=gen.structured, legal=legal_moves(
                    self.prompts, decision, narrow=gen.structured == "legal"))
        return request

    async def decide(self, decision: Decision[Any]) -> Action:
        request = self.request(decision)
        self.last_request = request
        stats = _stats_for(self.provider, self.name)
        stats.calls += 1
        try:
            completion = await self.provider.complete(request)
        except ReplayMiss as exc:
            stats.failed += 1
            stats.last_failure = safe_text(str(exc))
            raise GameAborted(stats.last_failure) from exc
        except MalformedReply as exc:
            stats.malformed += 1
            stats.last_failure = safe_text(str(exc))
            # A placeholder call marked malformed: the engines re-ask on it with the reason.
            # The call may be billed: its usage (an estimate, set by the adapter) counts.
            return Action(text="", tool_calls=(
                ToolCall(UNREADABLE_REPLY, {}, malformed=f"the reply could not be read: "
                         f"{stats.last_failure}"),), usage=exc.usage)
        except ProviderError as exc:
            stats.failed += 1
            stats.last_failure = safe_text(str(exc))
            raise ProviderError(stats.last_failure, status=exc.status,
                                retryable=exc.retryable) from exc
        except StillePostError:
            stats.failed += 1
            raise
        except Exception as exc:  # an SDK error the adapter did not classify
            stats.failed += 1
            stats.last_failure = safe_text(f"{type(exc).__name__}: {exc}")[:300]
            raise ProviderError(stats.last_failure) from exc
        text, calls = safe_completion(completion)
        if text or any(c.malformed is None for c in calls):
            stats.usable += 1
        model = completion.model if isinstance(completion.model, str) else None
        return Action(
            text=text,
            tool_calls=calls,
            usage=completion.usage,
            model=safe_model(model) if model else model,
            provider_data=dict(completion.provider_data),
            legal=request.legal,
        )
