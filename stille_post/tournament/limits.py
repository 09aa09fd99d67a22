"""Per-provider rate limits: requests per minute and tokens per minute.

Limits are applied around each LLM seat's decision (one provider call, plus the rare
repair re-ask), keyed by the provider kind of the seat spec ("openai:gpt-5" -> openai).
Bots never wait. The tokens a call will use are unknown until it returns, so a call
reserves the seat's last observed usage and the difference is settled afterwards; the
bucket may go into debt, which delays later calls instead of rejecting this one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from stille_post.core.errors import ConfigError
from stille_post.games.kit.setup import LLMFactory
from stille_post.players.base import Action, Decision, Player, PromptBook
from stille_post.players.specs import parse_seat_spec

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[Any]]

DEFAULT_TOKEN_GUESS = 1000  # a seat's first call reserves this many tokens


class TokenBucket:
    """At most `per_minute` units per minute, in bursts of at most `burst` units.

    Waiters are served first come, first served (one lock), so a big request cannot be
    starved by a stream of small ones.
    """

    def __init__(self, per_minute: float, *, burst: float | None = None,
                 clock: Clock | None = None, sleep: Sleep | None = None) -> None:
        if per_minute <= 0:
            raise ConfigError("a rate limit must be positive")
        self.rate = per_minute / 60.0
        # One tenth of a minute's allowance: providers meter at finer grain than a
        # minute, so a full minute's burst at start would be refused anyway.
        self.capacity = burst if burst is not None else max(1.0, per_minute / 10.0)
        self._clock = clock
        self._sleep = sleep or asyncio.sleep
        self.level = self.capacity
        self._last: float | None = None
        self._lock = asyncio.Lock()

    def _now(self) -> float:
        return self._clock() if self._clock else asyncio.get_running_loop().time()

    def _refill(self) -> None:
        now = self._now()
        if self._last is not None:
            self.level = min(self.capacity, self.level + (now - self._last) * self.rate)
        self._last = now

    async def acquire(self, amount: float = 1.0) -> None:
        async with self._lock:
            self._refill()
            need = min(amount, self.capacity)  # a request bigger than a burst still runs
            while self.level < need:
                await self._sleep((need - self.level) / self.rate)
                self._refill()
            self.level -= amount

    def settle(self, delta: float) -> None:
        """Charge (or refund) the difference between a reservation and the actual use."""
        self._refill()
        self.level = min(self.capacity, self.level - delta)


@dataclass(frozen=True)
class ProviderLimit:
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None

    @classmethod
    def parse(cls, text: str) -> tuple[str, ProviderLimit]:
        """`openai=500` (requests/min) or `openai=500:200000` (requests:tokens per min);
        either side may be empty: `anthropic=:40000`."""
        name, sep, rest = text.partition("=")
        rpm_s, _, tpm_s = rest.partition(":")
        try:
            rpm = float(rpm_s) if rpm_s else None
            tpm = float(tpm_s) if tpm_s else None
        except ValueError:
            rpm = tpm = -1.0
        if not sep or not name or (rpm is None and tpm is None) or \
                any(v is not None and v <= 0 for v in (rpm, tpm)):
            raise ConfigError(f"--rate-limit {text!r}: write PROVIDER=RPM[:TPM], "
                              "e.g. openai=500:200000")
        return name.strip(), cls(rpm, tpm)


class RateLimits:
    """The buckets of one tournament run, created lazily per provider kind."""

    def __init__(self, limits: Mapping[str, ProviderLimit] | None = None,
                 *, clock: Clock | None = None, sleep: Sleep | None = None) -> None:
        self.limits = dict(limits or {})
        self._clock, self._sleep = clock, sleep
        self._requests: dict[str, TokenBucket] = {}
        self._tokens: dict[str, TokenBucket] = {}
        for name, lim in self.limits.items():
            if lim.requests_per_minute:
                self._requests[name] = TokenBucket(lim.requests_per_minute, clock=clock,
                                                   sleep=sleep)
            if lim.tokens_per_minute:
                self._tokens[name] = TokenBucket(lim.tokens_per_minute, clock=clock,
                                                 sleep=sleep)

    def wrap(self, factory: LLMFactory | None) -> LLMFactory | None:
        if factory is None or not self.limits:
            return factory

        def limited(spec: str, prompts: PromptBook) -> Player:
            # A `model:ALIAS` seat is limited under its alias's provider, not "model".
            provider = parse_seat_spec(spec, ()).provider or ""
            player = factory(spec, prompts)
            if provider not in self.limits:
                return player
            return LimitedPlayer(player, self._requests.get(provider),
                                 self._tokens.get(provider))

        return limited


class LimitedPlayer:
    """A seat whose decisions wait for its provider's buckets. The engine sees a Player."""

    def __init__(self, inner: Player, requests: TokenBucket | None,
                 tokens: TokenBucket | None) -> None:
        self.inner = inner
        self.name = inner.name
        self.requests = requests
        self.tokens = tokens
        self._guess = float(DEFAULT_TOKEN_GUESS)

    async def decide(self, decision: Decision[Any]) -> Action:
        if self.requests is not None:
            await self.requests.acquire(1)
        reserved = self._guess
        if self.tokens is not None:
            await self.tokens.acquire(reserved)
        action = await self.inner.decide(decision)
        if action.usage is not None:
            used = float(action.usage.input_tokens + action.usage.output_tokens)
            if self.tokens is not None:
                self.tokens.settle(used - reserved)
            self._guess = used  # histories grow, so the last call is the best estimate
        return action
