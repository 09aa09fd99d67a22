"""Seat specs as the user writes them in --players.

    random | bot:random           a heuristic bot of the game being played
    openai:gpt-5-mini             an LLM seat (provider kind, model name)
    openai-compatible:MODEL@URL   any OpenAI-compatible server
    model:ALIAS                   a model registry alias (models.toml): provider, API id,
                                  base_url and generation settings come from the alias
    script:FILE.yaml              scripted replies from a file, through the LLM path

A `PROVIDER:NAME` seat whose NAME is an alias of that same provider also gets the
alias's API id and settings (cli/llm_seats.py), but keeps NAME as its model: that is how
a game identity reaches the API under another name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from stille_post.core.errors import UnknownPlayerError

if TYPE_CHECKING:
    from stille_post.providers.models import ModelRegistry

LLM_KINDS = ("openai", "anthropic", "google", "openai-compatible")


@dataclass(frozen=True)
class SeatSpec:
    raw: str
    bot: str | None = None  # bot name, for a bot seat
    provider: str | None = None  # provider kind, for an LLM seat
    model: str | None = None
    base_url: str | None = None
    script: str | None = None  # a script:FILE seat: replies read from FILE
    alias: str | None = None  # a model:ALIAS seat (provider, model, base_url resolved)

    @property
    def is_llm(self) -> bool:
        return self.provider is not None

    @property
    def label(self) -> str:
        if self.bot:
            return f"bot:{self.bot}"
        if self.script:
            return f"script:{self.script}"
        if self.alias:
            # The alias, not its API id: two aliases of one model (say, two reasoning
            # efforts) are two players on a leaderboard.
            return f"model:{self.alias}"
        return f"{self.provider}:{self.model}"


def parse_seat_spec(raw: str, bot_names: tuple[str, ...],
                    models: ModelRegistry | None = None) -> SeatSpec:
    """`models`: the registry `model:ALIAS` seats resolve against (default: the active
    one, which the CLI sets for the command)."""
    spec = raw.strip()
    if not spec:
        raise UnknownPlayerError("an empty player spec; use a bot name or provider:model")
    head, sep, rest = spec.partition(":")
    if not sep or head == "bot":
        name = rest if sep else head
        if name not in bot_names:
            raise UnknownPlayerError(
                f"unknown player {raw!r}; bots: {', '.join(bot_names)}; "
                f"LLM seats: {', '.join(k + ':MODEL' for k in LLM_KINDS)}; model:ALIAS; "
                "script:FILE.yaml"
            )
        return SeatSpec(raw=spec, bot=name)
    if head == "script":
        if not rest:
            raise UnknownPlayerError(f"{raw!r} names no file; write script:FILE.yaml")
        return SeatSpec(raw=spec, script=rest)
    if head == "model":
        return _alias_seat(spec, rest, models)
    if head not in LLM_KINDS:
        raise UnknownPlayerError(
            f"unknown provider {head!r} in {raw!r}; providers: {', '.join(LLM_KINDS)}"
        )
    if not rest:
        raise UnknownPlayerError(f"{raw!r} names no model; write {head}:MODEL")
    if head == "openai-compatible":
        model, at, url = rest.partition("@")
        if not at or not model or not url.startswith(("http://", "https://")):
            raise UnknownPlayerError(
                f"{raw!r}: write openai-compatible:MODEL@http://host:port/v1"
            )
        return SeatSpec(raw=spec, provider=head, model=model, base_url=url)
    return SeatSpec(raw=spec, provider=head, model=rest)


def _alias_seat(spec: str, name: str, models: ModelRegistry | None) -> SeatSpec:
    from stille_post.providers.models import active_models, unknown_alias

    registry = models if models is not None else active_models()
    alias = registry.get(name)
    if alias is None:
        raise UnknownPlayerError(f"{spec!r}: {unknown_alias(name, registry)}")
    return SeatSpec(raw=spec, provider=alias.provider, model=alias.model,
                    base_url=alias.base_url, alias=alias.name)


def parse_seat_list(text: str, bot_names: tuple[str, ...]) -> list[SeatSpec]:
    return [parse_seat_spec(p, bot_names) for p in _split(text)]


def _split(text: str) -> list[str]:
    # Commas separate seats, except inside a URL's query string (rare; not supported).
    return [p for p in (x.strip() for x in text.split(",")) if p]
