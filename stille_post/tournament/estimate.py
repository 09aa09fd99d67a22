"""`stille-post tournament ... --estimate`: what a tournament will cost, before it runs.

How: a few games of the configuration (the first seeds of its plan) are played offline,
no network and no keys. Every LLM seat is played by its role's default bot, but each of
its decisions is first rendered by the game's own prompts, exactly as the LLM seat would
send it (`PromptBook.render`: system prompt, history, tools), and that request is
measured:

- input tokens: the request's characters (the JSON of its tools, system prompt and
  messages, as the APIs receive them) / `CHARS_PER_TOKEN`. No offline tokenizer ships
  for these providers (tiktoken and the Hugging Face tokenizers fetch their vocabularies
  at run time, which the package never does), so this is the documented approximation;
  tests/tournament/test_estimate.py compares the estimate with the billed tokens of
  every recorded game cassette (9 of 12 within ±25%; docs/campaigns.md).
- cached input: the common prefix with the seat's previous request, when it is at least
  `CACHE_MIN_TOKENS` long (the implicit prefix caching of OpenAI and Gemini; Anthropic's
  breakpoints cache the same stable prefix).
- output tokens: the provider kind's recorded mean reply (`REPLIES`); a recorded share
  of unreadable replies (a small local model's) makes the engine re-ask, as it would.

The sampled games give tokens and dollars per seat-game of each model; the whole run is
that times each model's seat-games in the plan, with the range of the samples as its
interval. The wall time is the requests and tokens over the configured rate limits.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stille_post.core.rng import derive_rng, make_rng
from stille_post.core.text import common_prefix
from stille_post.core.usage import CHARS_PER_TOKEN, approx_tokens  # the one estimate
from stille_post.games import get_game
from stille_post.games.kit.setup import SetupContext, build_config
from stille_post.players.base import Action, Decision, Player, PromptBook
from stille_post.players.llm import UNREADABLE_REPLY
from stille_post.players.specs import SeatSpec, parse_seat_spec
from stille_post.providers.base import ChatRequest, ToolCall, Usage
from stille_post.providers.pricing import seat_cost_usd
from stille_post.tournament.config import GameSpec, TournamentConfig
from stille_post.tournament.limits import RateLimits

CACHE_MIN_TOKENS = 1024
SAMPLE_GAMES = 10  # games played to estimate (a bot game takes milliseconds)


@dataclass(frozen=True)
class ReplyProfile:
    """What a provider kind's replies were like in the recorded games."""

    tokens: int  # mean output tokens of one reply
    unreadable: float = 0.0  # share of replies the engine could not use (re-asked)


# Measured on the game cassettes of cassettes/providers/ (emulated OpenAI, Anthropic and
# Gemini; a real SmolLM2-135M behind an OpenAI-compatible server): docs/campaigns.md.
# The share is over every recorded game (SmolLM2: 6 re-asks in 35 requests); this layer
# names no game, so it is not per game.
REPLIES: Mapping[str, ReplyProfile] = {
    "openai": ReplyProfile(16),
    "anthropic": ReplyProfile(17),
    "google": ReplyProfile(40),
    "openai-compatible": ReplyProfile(75, 0.17),
}


def request_text(request: ChatRequest) -> str:
    """The request as an API receives it, for counting (stable key order)."""
    return json.dumps([
        [{"name": t.name, "description": t.description, "parameters": t.parameters}
         for t in request.tools],
        request.system,
        [{"role": m.role, "content": m.content,
          **({"tool_calls": [{"name": c.name, "arguments": c.arguments}
                             for c in m.tool_calls]} if m.tool_calls else {})}
         for m in request.messages],
    ], sort_keys=True, ensure_ascii=False)


class MeasuringPlayer:
    """An LLM seat's stand-in: a bot decides, the seat's request is measured. A share of
    the replies (the provider kind's recorded `unreadable` share) comes back unreadable,
    so the engine's re-asks are rendered and measured too."""

    def __init__(self, bot: Player, prompts: PromptBook, spec: SeatSpec,
                 rng: random.Random) -> None:
        self.bot = bot
        self.prompts = prompts
        self.name = spec.label
        self.profile = REPLIES.get(spec.provider or "", ReplyProfile(16))
        self.unreadable = self.profile.unreadable
        self.rng = rng
        self.requests = 0
        self._last = ""

    async def decide(self, decision: Decision[Any]) -> Action:
        text = request_text(self.prompts.render(decision))
        prefix = approx_tokens(common_prefix(self._last, text))
        self._last = text
        usage = Usage(approx_tokens(len(text)), self.profile.tokens,
                      prefix if prefix >= CACHE_MIN_TOKENS else 0)
        self.requests += 1
        if self.unreadable and self.rng.random() < self.unreadable:
            return Action("", (ToolCall(UNREADABLE_REPLY, {}, malformed="a stand-in's "
                                        "unreadable reply"),), usage, model=self.name)
        action = await self.bot.decide(decision)
        return Action(action.text, action.tool_calls, usage, model=self.name)


@dataclass
class _StandInContext(SetupContext):
    """A setup context whose LLM seats are played by their role's default bot, measured."""

    seat_roles: dict[int, str] = field(default_factory=dict)
    measured: dict[int, MeasuringPlayer] = field(default_factory=dict)

    def seat_specs(self, roles: Mapping[int, str] | None = None) -> list[SeatSpec]:
        specs = super().seat_specs(roles)
        first = self.definition.roles[0].name
        for seat in range(1, len(specs) + 1):
            self.seat_roles[seat] = (roles or {}).get(seat, first)
        return specs

    def player(self, seat: int, spec: SeatSpec, setup: Any = None) -> Player:
        if not (spec.is_llm or spec.script is not None):
            return super().player(seat, spec, setup)
        d = self.definition
        role = d.role(self.seat_roles.get(seat, d.roles[0].name))
        bot = super().player(seat, parse_seat_spec(role.default_bot, d.bot_names), setup)
        measured = MeasuringPlayer(bot, d.prompts, spec,
                                   derive_rng(self.seed, "estimate", seat))
        self.measured[seat] = measured
        return measured


@dataclass
class SeatGame:
    """One model's seat in one sampled game."""

    label: str
    usage: Usage
    requests: int

    @property
    def tokens(self) -> int:
        return self.usage.input_tokens + self.usage.output_tokens

    @property
    def dollars(self) -> float:
        return seat_cost_usd(self.label, self.usage) or 0.0


async def sample_game(config: TournamentConfig, spec: GameSpec) -> list[SeatGame]:
    """Play one game of the plan with measured stand-ins; one row per LLM seat."""
    definition = get_game(config.game)
    players = list(spec.players) if spec.players else None
    game_config = build_config(definition, config.options, players, config.preset)
    ctx = _StandInContext(definition, game_config, spec.seed, make_rng(spec.seed), players,
                          dict(config.roles))
    engine = definition.setup(ctx)
    outcome = await engine.play(None)
    return [SeatGame(m.name, outcome.usage.get(seat, Usage(0, 0)), m.requests)
            for seat, m in sorted(ctx.measured.items())]


@dataclass
class ModelEstimate:
    label: str
    seat_games: int  # in the whole plan
    per_seat_game: list[SeatGame]  # the samples

    def _mean(self, value: Any) -> float:
        rows = self.per_seat_game
        return sum(value(r) for r in rows) / len(rows) if rows else 0.0

    def total(self, value: Any) -> tuple[float, float, float]:
        """(expected, low, high) over the whole plan."""
        values = [value(r) for r in self.per_seat_game] or [0.0]
        n = self.seat_games
        return self._mean(value) * n, min(values) * n, max(values) * n

    def to_json(self) -> dict[str, Any]:
        def block(value: Any) -> dict[str, float]:
            mid, lo, hi = self.total(value)
            return {"expected": round(mid, 6), "low": round(lo, 6), "high": round(hi, 6)}

        return {
            "seat_games": self.seat_games,
            "per_seat_game": {
                "input_tokens": round(self._mean(lambda r: r.usage.input_tokens)),
                "cached_input_tokens": round(self._mean(lambda r: r.usage.cached_input_tokens)),
                "output_tokens": round(self._mean(lambda r: r.usage.output_tokens)),
                "requests": round(self._mean(lambda r: r.requests), 2),
                "dollars": round(self._mean(lambda r: r.dollars), 6)},
            "tokens": block(lambda r: r.tokens),
            "input_tokens": block(lambda r: r.usage.input_tokens),
            "output_tokens": block(lambda r: r.usage.output_tokens),
            "dollars": block(lambda r: r.dollars),
            "requests": block(lambda r: r.requests),
        }


def _seat_games(plan: Sequence[GameSpec], samples: Mapping[int, list[SeatGame]],
                sampled_labels: set[str]) -> dict[str, int]:
    """How many seat-games each LLM model plays in the plan: from the specs for fixed
    seats or a pool (the labels the samples saw); role seats count per sampled game."""
    per_game: dict[str, float] = {}
    for rows in samples.values():
        for r in rows:
            per_game[r.label] = per_game.get(r.label, 0) + 1 / len(samples)
    return {label: round(n * len(plan)) for label, n in per_game.items()
            if label in sampled_labels}


def estimate(config: TournamentConfig, *, limits: RateLimits | None = None,
             sample: int = SAMPLE_GAMES, budget_usd: float | None = None,
             max_tokens: int | None = None) -> dict[str, Any]:
    """The estimate of `config`'s shard, as JSON. With caps, `within_caps` says how many
    games the expected spend per game lets start."""
    plan = config.seated_plan() if config.seating == "adaptive" else config.shard_plan()
    picked = plan[:max(1, sample)]
    # A large pool: also the first game of every model the first games did not seat.
    seen = {p for g in picked for p in g.players or ()}
    for g in plan[len(picked):]:
        if not set(g.players or ()) <= seen:
            picked.append(g)
            seen |= set(g.players or ())

    async def play_all() -> dict[int, list[SeatGame]]:
        return {g.index: await sample_game(config, g) for g in picked}

    samples = asyncio.run(play_all())
    by_label: dict[str, list[SeatGame]] = {}
    for rows in samples.values():
        for r in rows:
            by_label.setdefault(r.label, []).append(r)
    counts = _plan_seat_games(config, plan, samples)
    models = {label: ModelEstimate(label, counts.get(label, 0), rows)
              for label, rows in sorted(by_label.items())}
    out: dict[str, Any] = {
        "game": config.game, "games": len(plan), "sampled_games": len(picked),
        "method": f"{len(picked)} games played offline with stand-in bots; requests "
                  f"measured at {CHARS_PER_TOKEN:g} characters per token",
        "models": {k: m.to_json() for k, m in models.items()},
    }
    for key in ("tokens", "dollars", "requests", "input_tokens", "output_tokens"):
        out[key] = {part: round(sum(m[key][part] for m in out["models"].values()), 6)
                    for part in ("expected", "low", "high")}
    n = len(plan) or 1
    out["per_game"] = {k: round(out[k]["expected"] / n, 6) for k in ("tokens", "dollars")}
    out["wall_minutes"] = _wall_minutes(models, limits)
    fits = [len(plan)]
    if budget_usd is not None and out["per_game"]["dollars"] > 0:
        fits.append(int(budget_usd // out["per_game"]["dollars"]))
    if max_tokens is not None and out["per_game"]["tokens"] > 0:
        fits.append(int(max_tokens // out["per_game"]["tokens"]))
    out["within_caps"] = min(fits) if budget_usd is not None or max_tokens is not None \
        else None
    return out


def _plan_seat_games(config: TournamentConfig, plan: Sequence[GameSpec],
                     samples: Mapping[int, list[SeatGame]]) -> dict[str, int]:
    """Each model's seat-games in the whole plan. Seats named per game (fixed players,
    a pool) are counted from the plan; seats given by role are the sampled share."""
    definition = get_game(config.game)
    counted: dict[str, int] = {}
    for g in plan:
        for text in g.players or ():
            if text.strip() in ("bot", "bot:"):
                continue
            spec = parse_seat_spec(text, definition.bot_names)
            if spec.is_llm or spec.script is not None:
                counted[spec.label] = counted.get(spec.label, 0) + 1
    role_labels = {parse_seat_spec(t, definition.bot_names).label
                   for t in config.roles.values() if t.strip() not in ("bot", "bot:")}
    shares = _seat_games(plan, samples, role_labels)
    return {**counted, **shares}


def _wall_minutes(models: Mapping[str, ModelEstimate],
                  limits: RateLimits | None) -> dict[str, Any] | None:
    """Minutes the rate limits alone need (requests / RPM, tokens / TPM), per provider;
    None without limits (the run is then bound by the providers' latency)."""
    if limits is None or not limits.limits:
        return None
    per_kind: dict[str, list[float]] = {}
    for label, m in models.items():
        kind = label.partition(":")[0]
        requests, tokens = m.total(lambda r: r.requests)[0], m.total(lambda r: r.tokens)[0]
        acc = per_kind.setdefault(kind, [0.0, 0.0])
        acc[0] += requests
        acc[1] += tokens
    out: dict[str, float] = {}
    for kind, (requests, tokens) in per_kind.items():
        limit = limits.limits.get(kind)
        if limit is None:
            continue
        minutes = requests / limit.requests_per_minute if limit.requests_per_minute \
            else 0.0
        if limit.tokens_per_minute:
            minutes = max(minutes, tokens / limit.tokens_per_minute)
        out[kind] = round(minutes, 2)
    return {"by_provider": out, "total": max(out.values(), default=0.0)} if out else None


__all__ = ["MeasuringPlayer", "estimate", "request_text", "sample_game"]
