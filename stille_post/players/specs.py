"""Seat specs as the user writes them in --players.

    random | bot:random           a heuristic bot of the game being played
    oracle:p=0.3                  a bot with arguments (`NAME:key=value,...`), those its
                                  game declares (GameDefinition.bot_params)
    openai:gpt-5-mini             an LLM seat (provider kind, model name)
    openai-compatible:MODEL@URL   any OpenAI-compatible server
    inspect:PROVIDER/MODEL        any model Inspect serves (`inspect_ai`, the `inspect`
                                  extra): inspect:bedrock/..., inspect:vllm/...;
                                  `inspect:mockllm/model` is Inspect's offline mock
    model:ALIAS                   a model registry alias (models.toml): provider, API id,
                                  base_url and generation settings come from the alias
    script:FILE.yaml              scripted replies from a file, through the LLM path
    human                         a person at this terminal (`stille-post play` only)
    web                           a person in a browser: one local page (`play --port`)
    agent:NAME[+MODEL]            an agent plug-in of the `stille_post.agents` entry points
    python:module:attr[+MODEL]    an agent plug-in by import path; MODEL (any LLM seat
                                  spec above, `model:ALIAS` or `script:FILE` included) is
                                  the model the agent may call (docs/agents.md)

A `PROVIDER:NAME` seat whose NAME is an alias of that same provider also gets the
alias's API id and settings (cli/llm_seats.py), but keeps NAME as its model: that is how
a game identity reaches the API under another name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from stille_post.core.errors import UnknownPlayerError
from stille_post.providers.inspect_model import INSPECT_OFFLINE  # no network: no --online

if TYPE_CHECKING:
    from stille_post.providers.models import ModelRegistry

LLM_KINDS = ("openai", "anthropic", "google", "openai-compatible", "inspect")
# How a person's seat is marked in the transcript header and on a leaderboard.
HUMAN_LABELS = {"terminal": "human", "web": "human:web"}
AGENT_KINDS = ("agent", "python")


@dataclass(frozen=True)
class SeatSpec:
    raw: str
    bot: str | None = None  # bot name, for a bot seat
    provider: str | None = None  # provider kind, for an LLM seat
    model: str | None = None
    base_url: str | None = None
    script: str | None = None  # a script:FILE seat: replies read from FILE
    alias: str | None = None  # a model:ALIAS seat (provider, model, base_url resolved)
    human: str | None = None  # "terminal" | "web": a person plays this seat
    agent: str | None = None  # "agent:NAME" | "python:module:attr": an agent plug-in
    agent_model: str | None = None  # the agent's model, an LLM (or script) seat spec
    bot_args: tuple[tuple[str, str], ...] = ()  # `oracle:p=0.3`: the bot's arguments
    # An LLM seat's constrained decoding ("schema" | "legal"; None: off), from its alias
    # or the run's --structured (providers/models.py). Part of the label: a leaderboard
    # never mixes a model's structured and free play under one name.
    structured: str | None = None

    @property
    def is_llm(self) -> bool:
        return self.provider is not None

    @property
    def offline(self) -> bool:
        """An LLM seat that calls no network (Inspect's mock model): it needs no --online."""
        return self.provider == "inspect" and self.model is not None \
            and self.model.partition("/")[0] in INSPECT_OFFLINE

    @property
    def label(self) -> str:
        if self.human:
            return HUMAN_LABELS[self.human]
        if self.agent:
            return self.raw
        if self.bot:
            args = ",".join(f"{k}={v}" for k, v in self.bot_args)
            return f"bot:{self.bot}:{args}" if args else f"bot:{self.bot}"
        if self.script:
            return f"script:{self.script}"
        mark = f" ({self.structured})" if self.structured else ""
        if self.alias:
            # The alias, not its API id: two aliases of one model (say, two reasoning
            # efforts) are two players on a leaderboard.
            return f"model:{self.alias}{mark}"
        return f"{self.provider}:{self.model}{mark}"


def parse_seat_spec(raw: str, bot_names: tuple[str, ...],
                    models: ModelRegistry | None = None) -> SeatSpec:
    """`models`: the registry `model:ALIAS` seats resolve against (default: the active
    one, which the CLI sets for the command)."""
    spec = raw.strip()
    if not spec:
        raise UnknownPlayerError("an empty player spec; use a bot name or provider:model")
    if spec in ("human", "web"):
        return SeatSpec(raw=spec, human="terminal" if spec == "human" else "web")
    head, sep, rest = spec.partition(":")
    if head in AGENT_KINDS and sep:
        return _agent_seat(spec, head, rest, models)
    if not sep or head == "bot" or head in bot_names:
        name, args = (rest.partition(":")[::2] if head == "bot" else (head, rest))
        if name not in bot_names:
            raise UnknownPlayerError(
                f"unknown player {raw!r}; bots: {', '.join(bot_names)}; "
                f"LLM seats: {', '.join(k + ':MODEL' for k in LLM_KINDS)}; model:ALIAS; "
                "script:FILE.yaml; human; web; agent:NAME; python:module:attr"
            )
        return SeatSpec(raw=spec, bot=name, bot_args=_bot_args(spec, args))
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
        from stille_post.providers.models import base_url_problem

        if (problem := base_url_problem(url)) is not None:
            raise UnknownPlayerError(f"{raw!r}: {problem}")
        return SeatSpec(raw=spec, provider=head, model=model, base_url=url,
                        structured=_structured(head, model, None, models))
    if head == "inspect":
        provider, slash, name = rest.partition("/")
        if not slash or not provider.strip() or not name.strip():
            raise UnknownPlayerError(f"{raw!r}: write inspect:PROVIDER/MODEL "
                                     "(e.g. inspect:openai/gpt-5-mini, inspect:mockllm/model)")
        return SeatSpec(raw=spec, provider=head, model=rest)  # Inspect decodes as it will
    return SeatSpec(raw=spec, provider=head, model=rest,
                    structured=_structured(head, rest, None, models))


def _structured(provider: str, model: str, alias: str | None,
                models: ModelRegistry | None) -> str | None:
    """An LLM seat's decoding mode (None: off): the run's, else its alias's."""
    from stille_post.providers.models import active_models

    registry = models if models is not None else active_models()
    found = registry.get(alias) if alias is not None else registry.for_seat(provider, model)
    mode = registry.structured_for(found)
    return None if mode == "off" else mode


def _bot_args(spec: str, text: str) -> tuple[tuple[str, str], ...]:
    """`key=value,key=value` after a bot's name; which keys a bot takes is its game's
    to say (kit: GameDefinition.bot_params)."""
    if not text:
        return ()
    out = []
    for item in text.split(","):
        key, eq, value = (x.strip() for x in item.partition("="))
        if not eq or not key.isidentifier() or not value:
            raise UnknownPlayerError(f"{spec!r}: write a bot's arguments as "
                                     "NAME:key=value[,key=value]")
        out.append((key, value))
    return tuple(out)


def _alias_seat(spec: str, name: str, models: ModelRegistry | None) -> SeatSpec:
    from stille_post.providers.models import active_models, unknown_alias

    registry = models if models is not None else active_models()
    alias = registry.get(name)
    if alias is None:
        raise UnknownPlayerError(f"{spec!r}: {unknown_alias(name, registry)}")
    return SeatSpec(raw=spec, provider=alias.provider, model=alias.model,
                    base_url=alias.base_url, alias=alias.name,
                    structured=_structured(alias.provider, alias.model, alias.name, registry))


def _agent_seat(spec: str, head: str, rest: str, models: ModelRegistry | None) -> SeatSpec:
    """`agent:NAME[+MODEL]` or `python:module:attr[+MODEL]`. The model part is any LLM
    seat spec (checked here, so a typo is one line before the game starts)."""
    ref, plus, model = rest.partition("+")
    ref = ref.strip()
    if head == "python":
        module, colon, attr = ref.rpartition(":")
        if not colon or not module or not attr:
            raise UnknownPlayerError(f"{spec!r}: write python:module:attr (e.g. "
                                     "python:examples.agents.rule_based:Agent)")
    elif not ref:
        raise UnknownPlayerError(f"{spec!r} names no agent; write agent:NAME")
    agent_model = None
    if plus:
        inner = parse_seat_spec(model, (), models)
        if not (inner.is_llm or inner.script):
            raise UnknownPlayerError(f"{spec!r}: an agent's model is an LLM seat spec "
                                     "(openai:MODEL, model:ALIAS, script:FILE.yaml, ...)")
        agent_model = inner.raw
    return SeatSpec(raw=spec, agent=f"{head}:{ref}", agent_model=agent_model)


def parse_seat_list(text: str, bot_names: tuple[str, ...]) -> list[SeatSpec]:
    return [parse_seat_spec(p, bot_names) for p in _split(text)]


def _split(text: str) -> list[str]:
    # Commas separate seats, except inside a URL's query string (rare; not supported).
    return [p for p in (x.strip() for x in text.split(",")) if p]
