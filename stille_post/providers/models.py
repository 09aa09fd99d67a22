"""The model registry: `models.toml` names models once, seats refer to them by alias.

    [models.gpt5-mini-low]
    provider = "openai"               # openai | anthropic | google | openai-compatible
    model = "gpt-5-mini"              # the API model id
    reasoning_effort = "low"          # optional: temperature, max_output_tokens, base_url
    extra = { service_tier = "flex" } # optional: extra request parameters, sent as is
    price = { input = 0.25, cached_input = 0.025, output = 2.0 }  # optional, USD per 1M
    budget_usd = 5.0                  # optional caps on a results folder's spend on it
    max_tokens = 2_000_000            # (tournament/budget.py)
    max_in_flight = 16                # optional: calls in flight at once (default: no cap)
    structured = "schema"             # optional: "off" | "schema" | "legal" (decoding)

`base_url` may be a list of replicas of one server (providers/replicas.py): each call
goes to the least busy one, and a dead one is taken out.
`structured` asks the API to decode each answer under the legal-move schema of the
decision (players/llm.py; "legal" also narrows free vocabularies); `--structured` on the
command line sets it for every LLM seat of a run, over the aliases' own.

Seat grammar (players/specs.py): `model:ALIAS` seats the alias. A plain
`PROVIDER:NAME` seat whose NAME is an alias *of the same provider* gets that alias's API
id and settings too, so the shipped table (data/models.toml) can map a game identity to
the name the API knows (`anthropic:claude-haiku-4-5-20241022` is sent as
`claude-haiku-4-5-20251001`) without any game being named here.

`load_models(path)` = the shipped aliases, overlaid by one user file: `path`, else
`./models.toml` when it exists. The CLI makes the result the *active* registry for the
command (`using_models`), because seat specs are parsed deep inside the game kit and
seat dollars are priced in the tournament, neither of which is handed a registry.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from stille_post.core.tomlfile import known_model, read_toml, validate
from stille_post.providers.price import Price

ProviderKind = Literal["openai", "anthropic", "google", "openai-compatible"]
Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]
Structured = Literal["off", "schema", "legal"]
STRUCTURED_MODES: tuple[str, ...] = ("off", "schema", "legal")
PROJECT_FILE = "models.toml"  # looked for in the working directory
# Seat lists are comma-separated and `model:` takes the rest of the spec, so an alias
# may not hold a comma, a space or an '@' (the openai-compatible URL separator).
_ALIAS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]*$")


@known_model
class PriceEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    # Finite: an infinite price makes every cost infinite (and a cap meaningless).
    input: float = Field(ge=0, allow_inf_nan=False)
    cached_input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)


def base_url_problem(url: str) -> str | None:
    """Why `url` cannot be a server's base URL (None if it can): refused when the seat is
    read, not after a game of forfeits or as an http library's error. Never quotes the
    URL, which may hold a password."""
    from urllib.parse import urlsplit

    if not url.startswith(("http://", "https://")):
        return "the URL must start with http:// or https://"
    if any(c.isspace() or not c.isprintable() for c in url):
        return "the URL holds a space or a control character"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError when out of range or not a number)
    except ValueError as exc:
        return f"the URL cannot be read ({str(exc).split(':')[0]})"
    if not parts.hostname:
        return "the URL names no host"
    return None


# `extra` keys the adapters own: each would make every answer unreadable or every
# request another one, so a seat would forfeit each turn instead of being refused.
RESERVED_EXTRA = {
    "stream": "the adapters read one JSON answer per call, not a stream of events",
    "stream_options": "the adapters read one JSON answer per call, not a stream of events",
    "model": "the model is the entry's `model`",
    "messages": "the adapter sends the game's messages",
    "contents": "the adapter sends the game's messages",
    "system": "the adapter sends the game's system prompt",
    "tools": "the adapter sends the game's tools",
}


@known_model
class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    provider: ProviderKind
    model: str = Field(min_length=1)
    base_url: str | list[str] | None = None  # a list: replicas of one server
    temperature: float | None = Field(default=None, ge=0, le=2)
    reasoning_effort: Effort | None = None
    max_output_tokens: int | None = Field(default=None, ge=1)
    extra: dict[str, Any] = Field(default_factory=dict)
    price: PriceEntry | None = None
    # Caps on what a results folder spends on this alias (tournament/budget.py).
    budget_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_tokens: int | None = Field(default=None, gt=0)
    max_in_flight: int | None = Field(default=None, ge=1)
    structured: Structured | None = None

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list):
            if not value:
                raise ValueError("an empty list of base URLs; give one URL or several")
            if len(set(value)) != len(value):
                raise ValueError("a base URL is listed twice")
        for i, url in enumerate([value] if isinstance(value, str) else value or []):
            problem = base_url_problem(url)
            if problem is not None:
                raise ValueError(problem if isinstance(value, str) else
                                 f"replica {i + 1}: {problem}")
        return value

    @field_validator("extra")
    @classmethod
    def _extra(cls, value: dict[str, Any]) -> dict[str, Any]:
        taken = sorted(k for k in value if k in RESERVED_EXTRA)
        if taken:
            raise ValueError(f"{taken[0]!r} cannot be set here: {RESERVED_EXTRA[taken[0]]}")
        return value

    @model_validator(mode="after")
    def _compatible_needs_url(self) -> ModelEntry:
        if self.provider == "openai-compatible" and not self.base_url:
            raise ValueError("an openai-compatible model needs base_url "
                             "(e.g. \"http://127.0.0.1:11434/v1\")")
        return self


@known_model
class ModelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    models: dict[str, ModelEntry] = Field(default_factory=dict)

    @field_validator("models")
    @classmethod
    def _names(cls, value: dict[str, ModelEntry]) -> dict[str, ModelEntry]:
        for name in value:
            if not _ALIAS.match(name):
                raise ValueError(f"alias {name!r}: use letters, digits and . _ / + - "
                                 "(no spaces, commas or @)")
        return value


@dataclass(frozen=True)
class ModelAlias:
    """One registry entry, resolved. Generation fields are kept flat here (the CLI
    builds the seat's GenerationConfig from them) so this layer imports no game code."""

    name: str
    provider: str
    model: str
    source: str  # the file that defined it, for error messages
    base_url: str | None = None
    temperature: float | None = None
    reasoning_effort: str | None = None
    max_output_tokens: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    price: Price | None = None
    budget_usd: float | None = None  # what a results folder may spend on this alias
    max_tokens: int | None = None
    max_in_flight: int | None = None  # calls in flight at once (providers/inflight.py)
    structured: str | None = None  # "off" | "schema" | "legal"; None: not set
    # Every replica (providers/replicas.py); `base_url` is the first of them.
    base_urls: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelRegistry:
    aliases: Mapping[str, ModelAlias]
    files: tuple[str, ...] = ()  # the files read, shipped table first
    # The run's `--structured`: over every alias's own (None: each alias says).
    structured: str | None = None

    def structured_for(self, alias: ModelAlias | None) -> str:
        """The decoding mode of a seat: the run's, else its alias's, else "off"."""
        if self.structured is not None:
            return self.structured
        return (alias.structured if alias is not None else None) or "off"

    def with_structured(self, mode: str | None) -> ModelRegistry:
        """This registry with the run's decoding mode (None keeps each alias's)."""
        if mode is not None and mode not in STRUCTURED_MODES:
            from stille_post.core.errors import UsageError

            raise UsageError(f"--structured {mode!r}: use one of "
                             f"{', '.join(STRUCTURED_MODES)}")
        return replace(self, structured=mode)

    def replica_urls(self) -> list[str]:
        """Every URL of an alias with several replicas (for their counts)."""
        return [u for a in self.aliases.values() if len(a.base_urls) > 1
                for u in a.base_urls]

    def get(self, name: str) -> ModelAlias | None:
        return self.aliases.get(name)

    def for_seat(self, provider: str, name: str) -> ModelAlias | None:
        """The alias a plain `PROVIDER:NAME` seat picks up: same name, same provider."""
        alias = self.aliases.get(name)
        return alias if alias is not None and alias.provider == provider else None

    def names(self) -> list[str]:
        return sorted(self.aliases)

    def in_flight_caps(self) -> dict[str, int]:
        """alias -> its `max_in_flight`, for the aliases that set one."""
        return {name: a.max_in_flight for name, a in self.aliases.items()
                if a.max_in_flight is not None}


def _entries(path: Path | Any, source: str) -> dict[str, ModelAlias]:
    data, text = read_toml(path, "models file") if isinstance(path, Path) else \
        _read_resource(path)
    parsed = validate(ModelsFile, data, text, Path(source))
    out: dict[str, ModelAlias] = {}
    for name, e in parsed.models.items():
        price = None
        if e.price is not None:
            # Anthropic reports cache reads apart from the input count (see prices.toml).
            price = Price(e.price.input, e.price.cached_input, e.price.output,
                          cached_included=e.provider != "anthropic")
        urls = tuple(e.base_url) if isinstance(e.base_url, list) else \
            ((e.base_url,) if e.base_url else ())
        out[name] = ModelAlias(name, e.provider, e.model, source, urls[0] if urls else None,
                               e.temperature, e.reasoning_effort, e.max_output_tokens,
                               dict(e.extra), price, budget_usd=e.budget_usd,
                               max_tokens=e.max_tokens, max_in_flight=e.max_in_flight,
                               structured=e.structured, base_urls=urls)
    return out


def _read_resource(file: Any) -> tuple[dict[str, Any], str]:
    import tomllib

    text = file.read_text(encoding="utf-8")
    return tomllib.loads(text), text


@lru_cache(maxsize=1)
def builtin_models() -> ModelRegistry:
    """The shipped aliases (package data, so an installed wheel has them)."""
    file = resources.files("stille_post.providers").joinpath("data", "models.toml")
    source = "stille_post/providers/data/models.toml"
    return ModelRegistry(_entries(file, source), (source,))


def load_models(path: Path | None = None) -> ModelRegistry:
    """The shipped aliases overlaid by the user's: `path`, else `./models.toml` if it
    exists. A user alias of the same name replaces the shipped one."""
    base = builtin_models()
    if path is None:
        local = Path(PROJECT_FILE)
        if not local.is_file():
            return base
        path = local
    user = _entries(path, str(path))
    return ModelRegistry({**base.aliases, **user}, (*base.files, str(path)))


_active: ModelRegistry | None = None


def active_models() -> ModelRegistry:
    """The registry of the running command (the shipped one when none was set)."""
    return _active if _active is not None else builtin_models()


@contextmanager
def using_models(registry: ModelRegistry) -> Iterator[ModelRegistry]:
    """Make `registry` the active one for the block (a module global, not a context
    variable: the tournament's worker threads and tasks must all see it)."""
    global _active
    before = _active
    _active = registry
    try:
        yield registry
    finally:
        _active = before


def unknown_alias(name: str, registry: ModelRegistry) -> str:
    """The one-line message for a `model:NAME` seat that names no alias."""
    known = ", ".join(registry.names()) or "none"
    return (f"unknown model alias {name!r}; aliases: {known} "
            f"(add [models.{name}] to {PROJECT_FILE}, or pass --models FILE)")
