"""LLM seats for the CLI and the Python API: --online / --record / --replay.

- neither --online nor --replay: no factory (the game refuses LLM seats with one line);
- --online: live calls, keys from the environment (a missing key is one line naming it);
- --online --record PATH: live calls, and every HTTP exchange of the game goes to a VCR
  cassette at PATH, with the shared secret filters (providers/recording.py);
- --replay PATH: offline, record mode `none`; dummy keys stand in for missing ones (the
  cassette never holds a key), and a request the cassette lacks fails at once.

Replay keeps our own retry loop, so a recorded 429-then-success replays as the same
success; it only stops *waiting* (the recorded Retry-After is honoured live, not here).
SDK-internal retries are off everywhere (see providers/retry.py).

Models come from the registry (providers/models.py: the shipped aliases plus
`./models.toml` or `--models FILE`), active for the whole session: a `model:ALIAS` seat,
or a `PROVIDER:NAME` seat whose NAME is an alias of that provider, gets the alias's API
id, base_url and generation settings. Generation precedence (players/generation.py):
provider default (the caps below) < seat (the alias) < game phase (the Decision's).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

from stille_post.core.errors import MissingKeyError, UsageError
from stille_post.players.base import Player, PromptBook
from stille_post.players.generation import GenerationConfig, effective
from stille_post.players.specs import LLM_KINDS, SeatSpec
from stille_post.providers.inflight import in_flight_caps
from stille_post.providers.models import (
    ModelAlias,
    ModelRegistry,
    active_models,
    load_models,
    using_models,
)
from stille_post.providers.pool import ProviderPool, pool_key

# A replayed cassette must see byte-identical requests, so these caps are part of the
# recording: change one and the cassettes recorded with it must be re-recorded.
DEFAULT_MAX_OUTPUT_TOKENS: dict[str, int] = {
    # Local models are slow and ramble; a game's message is a few sentences.
    "openai-compatible": 160,
}
_KEY_ENV = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openai-compatible": ("OPENAI_COMPATIBLE_API_KEY",),
}
# The kinds that cannot be called without a key (an OpenAI-compatible server may need none).
_REQUIRED_KEYS = {k: v for k, v in _KEY_ENV.items() if k != "openai-compatible"}
REPLAY_DUMMY_KEY = "replay-dummy-key"


def missing_keys(seats: Iterable[str], models: ModelRegistry) -> dict[str, tuple[str, ...]]:
    """provider kind -> its key variables, for each kind the seats call live whose key is
    not set (an agent's `+MODEL` included). A spec that does not parse is left to the
    game, which names the problem in its own line."""
    from stille_post.players.specs import parse_seat_spec

    kinds: set[str] = set()
    for raw in seats:
        specs = [raw.strip()]
        while specs:
            text = specs.pop()
            if ":" not in text or text.startswith(("bot:", "script:")):
                continue  # a bot, or replies read from a file
            try:
                spec = parse_seat_spec(text, (), models=models)
            except UsageError:
                continue
            if spec.agent_model:
                specs.append(spec.agent_model)
            if spec.provider is not None:
                kinds.add(spec.provider)
    return {k: _REQUIRED_KEYS[k] for k in sorted(kinds) if k in _REQUIRED_KEYS
            and not any(os.environ.get(name) for name in _REQUIRED_KEYS[k])}


def check_keys(seats: Iterable[str], models: ModelRegistry) -> None:
    """Every missing key of a live run, in one line, before any game starts (a key
    found missing at the first seat would be one error per try)."""
    missing = missing_keys(seats, models)
    if not missing:
        return
    names = [" or ".join(v) for v in missing.values()]
    if len(names) == 1:
        raise MissingKeyError(f"{names[0]} is not set: export it to play "
                              f"{next(iter(missing))} seats (or use --replay CASSETTE to "
                              "replay a recording)")
    names = [v[0] + "".join(f" (or {alt})" for alt in v[1:]) for v in missing.values()]
    listed = ", ".join(names[:-1]) + " and " + names[-1]
    kinds = ", ".join(list(missing)[:-1]) + " and " + list(missing)[-1]
    raise MissingKeyError(f"{listed} are not set: export them to play the {kinds} seats "
                          "(or use --replay CASSETTE to replay a recording)")


def seat_provider_options(kind: str, *, replay: bool) -> dict[str, Any]:
    """Provider options for one seat: replay gets dummy keys and a retry loop that never
    sleeps; live play uses the defaults."""
    from stille_post.providers.retry import RetryPolicy, no_sleep

    options: dict[str, Any] = {}
    if replay:
        if not any(os.environ.get(name) for name in _KEY_ENV.get(kind, ())):
            options["api_key"] = REPLAY_DUMMY_KEY
        options["retry_policy"] = RetryPolicy(sleep=no_sleep, jitter=lambda: 0.0)
    return options


class SeatFactory:
    """The LLMFactory `prepare()` calls for each LLM seat spec ("openai:gpt-5-mini",
    "model:ALIAS", ...).

    It remembers the providers it made (`keep_providers`, for one game: `play` reads their
    answer counts afterwards, and closes their connections on its event loop with
    `await factory.aclose()`). A tournament's factory keeps none: each LLM seat of every
    game has a provider of its own while its game lasts, lent by a pool
    (providers/pool.py) that takes it back when the seat's player is freed, so that the
    next game reuses it and its open connection; `await factory.aclose()` then closes
    the idle ones. A replayed cassette's seats are not pooled."""

    def __init__(self, *, replay: bool = False, base_urls: Mapping[str, str] | None = None,
                 extra_options: Mapping[str, Any] | None = None,
                 models: ModelRegistry | None = None, keep_providers: bool = True,
                 recording: bool = False) -> None:
        self.replay = replay
        self.recording = recording
        self.base_urls = dict(base_urls or {})
        self.extra_options = dict(extra_options or {})
        self.models = models if models is not None else active_models()
        self.keep_providers = keep_providers
        self.providers: list[Any] = []
        self.pool = ProviderPool()
        self.cassette: str | None = None  # "record" | "replay" inside a cassette block
        self._noted: set[str] = set()

    def __call__(self, spec_text: str, prompts: PromptBook) -> Player:
        from stille_post.players.llm import LLMPlayer
        from stille_post.players.specs import parse_seat_spec

        spec = parse_seat_spec(spec_text, (), models=self.models)
        assert spec.provider is not None and spec.model is not None
        alias = self.alias_of(spec.provider, spec.model, spec.alias)
        # The seat's model is its game identity; the API may know it by another name.
        api_model = alias.model if alias is not None else spec.model
        options = seat_provider_options(spec.provider, replay=self.replay)
        urls = seat_urls(spec, alias, self.base_urls)
        if self.replay or self.recording:
            # A cassette matches requests by host: its seats call the first replica only.
            urls = urls[:1]
        options.update(self.extra_options)
        if alias is not None:
            options["alias"] = alias.name  # its own cap on calls in flight, if it sets one
        kind = spec.provider
        if kind == "inspect":
            options["replay"] = self.replay
            self._announce_inspect(api_model)
        generation = seat_generation(kind, alias, spec.structured)

        def make() -> Any:
            return self._provider(kind, api_model, options, urls, spec.raw)

        if self.keep_providers:
            provider = make()
            self.providers.append(provider)
            return LLMPlayer(provider, prompts, name=spec.raw, generation=generation)
        keyed = {**options, "base_url": "|".join(urls)} if urls else options
        key = None if self.replay else pool_key(kind, api_model, keyed)
        provider = self.pool.lend(key, make)
        player = LLMPlayer(provider, prompts, name=spec.raw, generation=generation)
        self.pool.take_back_when_freed(player, key, provider)
        return player

    def _provider(self, kind: str, api_model: str, options: Mapping[str, Any],
                  urls: tuple[str, ...], label: str) -> Any:
        """The seat's adapter (one per replica), watched for a server that dies
        (providers/replicas.py); a replayed seat's is the adapter alone."""
        from stille_post.providers import create_provider
        from stille_post.providers.replicas import Watched, one_attempt

        if len(urls) <= 1:
            single = {**options, "base_url": urls[0]} if urls else dict(options)
            provider = create_provider(kind, api_model, **single)
            if self.replay or kind == "inspect":  # Inspect calls its models itself
                return provider
            url = getattr(provider, "base_url", None) or (urls[0] if urls else kind)
            return Watched(kind, (url,), (provider,), label=label)
        policy = options.get("retry_policy")
        inner = [create_provider(kind, api_model, **{**options, "base_url": u,
                                                     "retry_policy": one_attempt(policy)})
                 for u in urls]
        return Watched(kind, urls, inner, label=label, policy=policy)

    def _announce_inspect(self, model: str) -> None:
        """One line at the start, per Inspect provider whose traffic a cassette does not
        hold (providers/inspect_model.py, INSPECT_CASSETTES)."""
        from stille_post.providers.inspect_model import cassette_note

        if self.cassette is None or model in self._noted:
            return
        self._noted.add(model)
        if (note := cassette_note(model, self.cassette)) is not None:
            print(f"warning: {note}", file=sys.stderr)

    def alias_of(self, provider: str, model: str, alias: str | None) -> ModelAlias | None:
        return alias_of(self.models, provider, model, alias)

    async def aclose(self) -> None:
        """Close every kept provider's connections, and the pool's idle ones on this loop.
        Best effort: the games are over and written, so a client that fails to close must
        not cost a summary."""
        await self.pool.aclose()
        for provider in self.providers:
            close = getattr(provider, "aclose", None)
            if close is not None:
                with suppress(Exception):
                    await close()


def alias_of(models: ModelRegistry, provider: str, model: str,
             alias: str | None) -> ModelAlias | None:
    """`model:ALIAS` seats name theirs; a `PROVIDER:NAME` seat picks up the alias NAME
    when it belongs to the same provider."""
    if alias is not None:
        return models.get(alias)
    return models.for_seat(provider, model)


def seat_urls(spec: SeatSpec, alias: ModelAlias | None,
              base_urls: Mapping[str, str]) -> tuple[str, ...]:
    """The base URLs a seat calls: its alias's replicas, else the one URL its spec, its
    alias or the kind's override names; () for the adapter's default."""
    if alias is not None and alias.base_urls and spec.base_url in (None, alias.base_url):
        return alias.base_urls
    assert spec.provider is not None
    one = spec.base_url or (alias.base_url if alias else None) or base_urls.get(spec.provider)
    return (one,) if one else ()


def make_llm_factory(
    *,
    replay: bool = False,
    base_urls: Mapping[str, str] | None = None,
    extra_options: Mapping[str, Any] | None = None,
    models: ModelRegistry | None = None,
    keep_providers: bool = True,
    recording: bool = False,
) -> SeatFactory:
    return SeatFactory(replay=replay, base_urls=base_urls, extra_options=extra_options,
                       models=models, keep_providers=keep_providers, recording=recording)


def seat_generation(kind: str, alias: ModelAlias | None,
                    structured: str | None = None) -> GenerationConfig:
    """A seat's settings over its provider's defaults (the phase's go over both, per
    call, in LLMPlayer). `structured`: the seat's decoding mode (its spec's)."""
    default = GenerationConfig(max_output_tokens=_max_output_tokens(kind))
    if alias is not None:
        default = effective(default, GenerationConfig(
            alias.max_output_tokens, alias.temperature, alias.reasoning_effort,
            dict(alias.extra)))
    if structured:
        default = effective(default, GenerationConfig(structured=structured))
    return default


def _default_url(kind: str) -> str:
    from stille_post.providers.anthropic_api import ANTHROPIC_BASE_URL
    from stille_post.providers.google_api import GOOGLE_BASE_URL
    from stille_post.providers.openai_api import OPENAI_BASE_URL

    return {"openai": OPENAI_BASE_URL, "anthropic": ANTHROPIC_BASE_URL,
            "google": GOOGLE_BASE_URL}.get(kind, "")


def seat_endpoints(texts: Iterable[str], registry: ModelRegistry,
                   base_urls: Mapping[str, str] | None = None) -> list[Any]:
    """The endpoints (replicas) of the LLM seats among `texts` (seat specs as written;
    bots and scripts have none), for the preflight probe."""
    from stille_post.players.specs import parse_seat_spec
    from stille_post.providers.preflight import SeatEndpoints

    out: list[SeatEndpoints] = []
    for text in dict.fromkeys(texts):
        try:
            spec = parse_seat_spec(text, (), models=registry)
            if spec.agent_model is not None:
                spec = parse_seat_spec(spec.agent_model, (), models=registry)
        except UsageError:
            continue  # a bot, or a bad spec (the game names it in one line)
        if not spec.is_llm or spec.provider is None or spec.model is None:
            continue
        alias = alias_of(registry, spec.provider, spec.model, spec.alias)
        urls = seat_urls(spec, alias, base_urls or {}) or (_default_url(spec.provider),)
        if all(urls):
            out.append(SeatEndpoints(text, spec.provider, urls))
    return out


def preflight(texts: Iterable[str], registry: ModelRegistry,
              base_urls: Mapping[str, str] | None = None) -> None:
    """Probe every endpoint the seats will call (providers/preflight.py): a seat none of
    whose replicas answers is one line and exit 2; a dead replica of a live seat is a
    warning line."""
    from stille_post.providers.preflight import check
    from stille_post.providers.replicas import found_dead

    seats = seat_endpoints(texts, registry, base_urls)
    if not seats:
        return
    stop, warnings, probes = check(seats)
    if stop is not None:
        raise UsageError(stop)
    for line in warnings:
        _warn(line)
    found_dead(url for (_, url), p in probes.items() if not p.alive)


def _warn(line: str) -> None:
    print(f"warning: {line}", file=sys.stderr)


def _max_output_tokens(kind: str) -> int | None:
    raw = os.environ.get("STILLE_POST_MAX_OUTPUT_TOKENS")
    if raw:
        try:
            return max(1, int(raw))
        except ValueError:
            raise UsageError(
                f"STILLE_POST_MAX_OUTPUT_TOKENS must be an integer, got {raw!r}") from None
    return DEFAULT_MAX_OUTPUT_TOKENS.get(kind)


@contextmanager
def llm_session(
    *,
    online: bool,
    record: Path | None,
    replay: Path | None,
    base_urls: Mapping[str, str] | None = None,
    rewrite_hosts: Mapping[str, str] | None = None,
    extra_options: Mapping[str, Any] | None = None,
    models: Path | ModelRegistry | None = None,
    keep_providers: bool = True,
    max_in_flight: Mapping[str, int] | None = None,
    structured: str | None = None,
    preflight_seats: Iterable[str] | None = None,
    strict: bool = False,
    seats: Iterable[str] = (),
) -> Iterator[SeatFactory | None]:
    """Yields the LLM factory for one game (or None when LLM seats are not allowed); a
    tournament's, for many games, with `keep_providers=False` (see `SeatFactory`).

    `models`: a models file (`--models`), a registry, or None for the shipped aliases
    plus `./models.toml` if present. It is loaded (and validated) first, and is the
    active registry for the whole block, bot-only games included: seat specs are parsed
    inside the game kit, and a `model:ALIAS` seat must be known there to be refused
    without --online, or to be played with it.

    `base_urls` / `rewrite_hosts` are for the recording tools: they point a kind at a
    local emulator and store the traffic under the real API's address.

    `max_in_flight`: caps on calls in flight by provider kind or alias (`--max-in-flight`),
    over the aliases' own `max_in_flight` (providers/inflight.py); none by default.

    `structured`: the run's `--structured` (None: each alias's own setting).
    `preflight_seats`: live play probes the endpoints of these seat specs first
    (providers/preflight.py; None: no probe, `--no-preflight`). During the block a
    server that stops answering is one warning line; `strict` aborts its game instead.

    `seats`: the seat specs of the run; with --online every key they need and lack is
    named in one line before anything starts."""
    if record is not None and replay is not None:
        raise UsageError("--record and --replay cannot be combined")
    if record is not None and not online:
        raise UsageError("--record needs --online: it records a live game")
    if replay is not None and online:
        raise UsageError("--replay plays offline from the cassette; drop --online")
    if replay is not None and not replay.is_file():
        raise UsageError(f"no cassette at {replay}")
    if record is not None and record.exists():
        raise UsageError(f"{record} already exists; choose a new cassette path")
    registry = models if isinstance(models, ModelRegistry) else load_models(models)
    if structured is not None:
        registry = registry.with_structured(structured)
    if online:
        check_keys(seats, registry)
    caps = dict(max_in_flight or {})
    kinds = {k: v for k, v in caps.items() if k in LLM_KINDS}
    aliases = {**registry.in_flight_caps(),
               **{k: v for k, v in caps.items() if k not in LLM_KINDS}}
    from stille_post.providers.replicas import watching

    with using_models(registry), in_flight_caps(kinds, aliases), \
            watching(_warn, strict=strict):
        if not online and replay is None:
            yield None
            return
        if online and preflight_seats is not None:
            # Before any cassette is open: the probes are not part of a recording.
            preflight(preflight_seats, registry, base_urls)
        from stille_post.providers.recording import cassette

        with ExitStack() as stack:
            if record is not None:
                record.parent.mkdir(parents=True, exist_ok=True)
                stack.enter_context(cassette(record, mode="record",
                                             rewrite_hosts=rewrite_hosts))
            elif replay is not None:
                stack.enter_context(cassette(replay, mode="replay"))
            factory = make_llm_factory(replay=replay is not None, base_urls=base_urls,
                                       extra_options=extra_options, models=registry,
                                       keep_providers=keep_providers,
                                       recording=record is not None)
            if record is not None or replay is not None:
                factory.cassette = "record" if record is not None else "replay"
            yield factory
