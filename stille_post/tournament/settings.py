"""Every setting of a tournament, as one pydantic model: one name per concept, one set of
rules, validated once after the layers are merged.

The layers, each overriding the one before:

    defaults < tournament file (--config) < saved run (tournament.json) < command line

A field that a user may give on the command line carries a `Flag`: `stille-post
tournament`'s common options are generated from those (cli/tournament.py), so a new
setting is a new field here and nothing else. The results folder's `tournament.json`
holds this model, split into what is played (`"tournament"`, the identity that `--resume`
and `merge` compare) and how it is played (`"run"`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from stille_post.core.errors import ConfigError
from stille_post.core.tomlfile import KeyProblem, known_model, problem_of
from stille_post.games.kit.setup import parse_assignments, parse_set_value
from stille_post.players.specs import LLM_KINDS
from stille_post.providers.inflight import parse_max_in_flight
from stille_post.tournament.config import (
    CONFIG_FILE,
    MAX_GAMES,
    Shard,
    TournamentConfig,
)
from stille_post.tournament.limits import ProviderLimit, RateLimits
from stille_post.tournament.seating import DEFAULT_ROUND_GAMES


@dataclass(frozen=True)
class Flag:
    """How a field is written on the command line: its declarations, help, the type typer
    parses, and how that value becomes the field's (e.g. "a,b" -> ["a", "b"])."""

    decls: tuple[str, ...]
    help: str
    cli_type: Any
    parse: Callable[[Any], Any] | None = None


def _csv(flag: str) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        items = [p.strip() for p in text.split(",") if p.strip()]
        if not items:
            raise ConfigError(f"{flag} is empty; give a comma-separated list")
        return items
    return parse


def _rate_limits(texts: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for text in texts:
        kind, sep, value = text.partition("=")
        if not sep:
            raise ConfigError(f"--rate-limit {text!r}: write PROVIDER=RPM[:TPM], "
                              "e.g. openai=500:200000")
        out[kind.strip()] = value.strip()
    return out


def _sets(texts: list[str]) -> dict[str, Any]:
    return {k: parse_set_value(v) for k, v in parse_assignments(texts, "set").items()}


# Paths are written as strings in TOML and JSON; every other value must have its type.
PathField = Annotated[Path, Field(strict=False)]
SeatList = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]

# The fields that are tables: a layer's table merges into the one below key by key.
TABLES = ("roles", "options", "rate_limits", "max_in_flight")

# The fields that change which games exist or how they are played: the identity.
# The rest only change how fast and where they are played.
# The caps are "how" too: `--resume` with a higher cap continues the same tournament.
# `structured` is "how" too: a structured seat's label says so ("model:x (schema)"), so a
# resume in the other mode adds players, and never mixes them.
RUN_FIELDS = ("concurrency", "workers", "rate_limits", "models", "max_in_flight", "fsync",
              "budget_usd", "max_tokens", "hard_cap", "structured", "preflight",
              "isolate_agents")


@known_model
class TournamentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    # --- what is played ------------------------------------------------------------------
    game: str | None = None
    preset: Annotated[str | None, Flag(("--preset",), "a named configuration of the game",
                                       str)] = None
    games: Annotated[int, Field(ge=1, le=MAX_GAMES),
                     Flag(("--games",), "number of games N [default: 10]", int)] = 10
    seed: Annotated[int | None, Flag(
        ("--seed",), "first game seed S; games use S..S+N-1 (fresh if omitted)", int)] = None
    players: Annotated[SeatList | None, Flag(
        ("--players",), "comma-separated seats, one per seat (the same in every game): bot "
        "names, models (openai:gpt-5-mini, model:ALIAS, ...), script:FILE.yaml, agent:NAME or "
        "python:module:attr (+MODEL); people (`human`, `web`) play only in `stille-post play`",
        str,
        _csv("--players"))] = None
    pool: Annotated[SeatList | None, Flag(
        ("--pool",), "models or bots to seat from, comma-separated; --seats per game", str,
        _csv("--pool"))] = None
    seating: Annotated[Literal["balanced", "sampled", "adaptive"], Flag(
        ("--seating",), "with --pool: balanced (rotation; everyone meets evenly) | sampled "
        "| adaptive (rounds seated from the ratings so far)", str)] = "balanced"
    round_games: Annotated[int | None, Field(ge=1, le=MAX_GAMES), Flag(
        ("--round-games",), "with --seating adaptive: games per round, each round seated "
        f"from the ratings of the rounds before [default: {DEFAULT_ROUND_GAMES}]",
        int)] = None
    seats: Annotated[int | None, Field(ge=2), Flag(
        ("--seats",), "seats per game (the game's num_players) [default: the game's "
        "default]", int)] = None
    roles: Annotated[dict[str, str], Flag(
        ("--role",), "NAME=SPEC: every seat of that role plays SPEC; repeatable", list[str],
        lambda items: parse_assignments(items, "role"))] = Field(default_factory=dict)
    options: Annotated[dict[str, Any], Flag(
        ("--set",), "KEY=VALUE: any option of the game, JSON values allowed; repeatable",
        list[str], _sets)] = Field(default_factory=dict)
    shard: Annotated[str | None, Flag(
        ("--shard",), "play only shard i of n (e.g. 2/4); combine with `stille-post merge`",
        str)] = None

    # --- how it is played ----------------------------------------------------------------
    concurrency: Annotated[int, Field(ge=1), Flag(
        ("--concurrency",), "games played at the same time [default: 8]", int)] = 8
    workers: Annotated[int | None, Field(ge=1), Flag(
        ("--workers",), "processes playing games, never more than --concurrency "
        "(default: every core; 1 when rate limits, caps or --replay need one tally); rate "
        "limits need 1", int)] = None
    rate_limits: Annotated[dict[str, str], Flag(
        ("--rate-limit",), "PROVIDER=RPM[:TPM] requests and tokens per minute; repeatable",
        list[str], _rate_limits)] = Field(default_factory=dict)
    models: Annotated[PathField | None, Flag(
        ("--models",), "a model registry (TOML) of aliases; default ./models.toml if "
        "present", Path)] = None
    # after `models`: an ALIAS=N cap is checked against that registry
    max_in_flight: Annotated[dict[str, Annotated[int, Field(ge=1)]], Flag(
        ("--max-in-flight",), "N, PROVIDER=N or ALIAS=N: model calls in flight at once "
        "(default: no cap beyond --concurrency; halved on 429s); repeatable", list[str],
        lambda texts: parse_max_in_flight(texts, LLM_KINDS))] = Field(default_factory=dict)
    fsync: Annotated[bool, Flag(
        ("--fsync/--no-fsync",), "sync finished transcripts to disk, in groups, before "
        "indexing them (survives power loss) [default: fsync]", bool)] = True
    # Caps on the whole results folder's spend, across runs (tournament/budget.py).
    budget_usd: Annotated[float | None, Field(gt=0, allow_inf_nan=False), Flag(
        ("--budget-usd",), "stop starting games when the next one would take the folder's "
        "spend past this many US dollars (priced with prices.toml and models.toml)",
        float)] = None
    max_tokens: Annotated[int | None, Field(gt=0), Flag(
        ("--max-tokens",), "stop starting games when the next one would take the folder's "
        "spend past this many tokens (input + output)", int)] = None
    structured: Annotated[Literal["off", "schema", "legal"] | None, Flag(
        ("--structured",), "constrained decoding for every LLM seat: off | schema (the "
        "legal moves as a schema) | legal (also the legal words) [default: each alias's "
        "own]", str)] = None
    preflight: Annotated[bool, Flag(
        ("--preflight/--no-preflight",), "with --online: probe every model server before "
        "the run; a seat none of whose servers answers stops it [default: preflight]",
        bool)] = True
    hard_cap: Annotated[bool, Flag(
        ("--hard-cap/--no-hard-cap",), "cut running games at the cap (recorded as aborted, "
        "reason budget) instead of letting them finish [default: no-hard-cap]", bool)] = False
    isolate_agents: Annotated[bool, Flag(
        ("--isolate-agents/--no-isolate-agents",), "run each agent seat (agent:, python:) in "
        "a process of its own, without the games' memory, the API keys or the run's files "
        "(docs/agents.md) [default: no-isolate-agents]", bool)] = False
    out: Annotated[PathField | None, Flag(
        ("--out",), "results folder (default: runs/tournaments/GAME-seedS)", Path)] = None

    # --- rules ---------------------------------------------------------------------------

    @field_validator("pool")
    @classmethod
    def _one_seat_source(cls, pool: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if pool and info.data.get("players"):
            raise ValueError("give either players (fixed seats) or pool, not both")
        if pool and len(set(pool)) != len(pool):
            raise ValueError("the pool names a model twice")
        return pool

    @field_validator("players", "pool")
    @classmethod
    def _one_seat_per_item(cls, specs: list[str] | None) -> list[str] | None:
        for spec in specs or ():
            if "," in spec:
                raise ValueError(f"{spec!r}: one seat per list item, no commas")
        return specs

    @field_validator("seats")
    @classmethod
    def _seats_fit_the_pool(cls, seats: int | None, info: ValidationInfo) -> int | None:
        pool = info.data.get("pool")
        if pool and seats is not None and seats > len(pool):
            raise ValueError(f"{seats} seats per game but the pool has {len(pool)}")
        return seats

    @field_validator("game")
    @classmethod
    def _known_game(cls, name: str | None) -> str | None:
        from stille_post.games import all_games

        games = all_games()
        if name is not None and name not in games:
            raise ValueError(f"unknown game {name!r}; games: {', '.join(sorted(games))}")
        return name

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, preset: str | None, info: ValidationInfo) -> str | None:
        definition = _definition(info.data.get("game"))
        if preset is not None and definition is not None and preset not in definition.presets:
            known = ", ".join(definition.presets) or "none"
            raise ValueError(f"{definition.name} has no preset {preset!r}; presets: {known}")
        return preset

    @field_validator("roles")
    @classmethod
    def _known_roles(cls, roles: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        definition = _definition(info.data.get("game"))
        if definition is not None:
            _only_known(roles, [r.name for r in definition.roles], definition.name, "role")
        return roles

    @field_validator("options")
    @classmethod
    def _known_options(cls, options: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        definition = _definition(info.data.get("game"))
        if definition is not None:
            _only_known(options, list(definition.config.model_fields), definition.name, "option")
        seats = info.data.get("seats")
        given = options.get("num_players")
        if seats is not None and given is not None and given != seats:
            raise ValueError(f"seats {seats} and num_players {given} disagree: they are one "
                             "setting; give one")
        return options

    @field_validator("shard")
    @classmethod
    def _shard(cls, text: str | None) -> str | None:
        if text is not None:
            Shard.parse(text)  # raises the one-line message
        return text

    @field_validator("rate_limits", mode="before")
    @classmethod
    def _rate_texts(cls, value: Any) -> Any:
        # tournament.json written before the settings model kept them as "P=RPM" texts
        if isinstance(value, list) and all(isinstance(t, str) for t in value):
            return _rate_limits(value)
        return value

    @field_validator("rate_limits")
    @classmethod
    def _rates(cls, limits: dict[str, str]) -> dict[str, str]:
        for kind, value in limits.items():
            if kind not in LLM_KINDS:
                raise KeyProblem(kind, f"unknown provider; providers: {', '.join(LLM_KINDS)}")
            try:
                ProviderLimit.parse(f"{kind}={value}")
            except ConfigError:
                raise KeyProblem(kind, f"{value!r}: write \"RPM[:TPM]\", e.g. \"500:200000\"") \
                    from None
        return limits

    @field_validator("max_in_flight", mode="before")
    @classmethod
    def _one_cap_for_all(cls, value: Any) -> Any:
        # `max_in_flight = 32` in a tournament file: the same cap for every provider
        if isinstance(value, int) and not isinstance(value, bool):
            return dict.fromkeys(LLM_KINDS, value)
        return value

    @field_validator("max_in_flight")
    @classmethod
    def _capped_names(cls, caps: dict[str, int], info: ValidationInfo) -> dict[str, int]:
        aliases: Mapping[str, Any] | None = None
        for name in caps:
            if name in LLM_KINDS:
                continue
            if aliases is None:
                from stille_post.providers.models import load_models

                aliases = load_models(info.data.get("models")).aliases
            if name not in aliases:
                raise KeyProblem(name, f"neither a provider ({', '.join(LLM_KINDS)}) nor a "
                                 "model alias")
        return caps

    @field_validator("models")
    @classmethod
    def _models_file(cls, path: Path | None) -> Path | None:
        if path is not None and not path.is_file():
            raise ValueError(f"no models file at {path}")
        return path

    @model_validator(mode="after")
    def _adaptive_rules(self) -> TournamentSettings:
        # KeyProblem: the message names the setting, wherever it was given.
        if self.seating == "adaptive":
            if not self.pool:
                raise KeyProblem("seating", "adaptive needs a pool (--pool MODEL,MODEL,...)")
            if self.shard:
                # A shard would need the other shards' results to choose its next round.
                raise KeyProblem("shard", "--seating adaptive cannot be split with --shard: "
                                 "each round's seats depend on every earlier game; use "
                                 "--workers")
        elif self.round_games is not None:
            raise KeyProblem("round_games", "for --seating adaptive only")
        return self

    @model_validator(mode="after")
    def _run_rules(self) -> TournamentSettings:
        if (self.workers or 1) > 1 and self.rate_limits:
            # Each process would keep its own buckets and allow the whole rate.
            raise KeyProblem("rate_limits", "rate limits need --workers 1")
        if (self.workers or 1) > 1 and (self.budget_usd or self.max_tokens):
            # Each process would count only its own spend.
            raise KeyProblem("budget_usd" if self.budget_usd else "max_tokens",
                             "a budget needs --workers 1")
        return self

    # --- what the rest of the package uses -----------------------------------------------

    def config(self) -> TournamentConfig:
        """The tournament's identity (needs `game` and `seed`, which `resolve` ensures)."""
        if self.game is None or self.seed is None:
            raise ConfigError("a tournament needs a game and a seed")
        definition = _definition(self.game)
        options = dict(self.options)
        seats = self.seats or options.get("num_players") or \
            (definition.players.default if definition else None)
        if self.pool and "num_players" not in options:
            options["num_players"] = seats
        return TournamentConfig(
            game=self.game, games=self.games, seed=self.seed,
            seating=self.seating if self.pool else "fixed",
            players=tuple(self.players) if self.players else None,
            pool=tuple(self.pool) if self.pool else None,
            seats=seats if self.pool else None,
            options={k: str(v) if isinstance(v, Path) else v for k, v in options.items()},
            shard=Shard.parse(self.shard) if self.shard else None,
            roles=dict(self.roles), preset=self.preset,
            round_games=(self.round_games or DEFAULT_ROUND_GAMES)
            if self.pool and self.seating == "adaptive" else None)

    def limits(self) -> RateLimits:
        return RateLimits(dict(ProviderLimit.parse(f"{k}={v}")
                               for k, v in self.rate_limits.items()))

    def folder(self) -> Path:
        return self.out or Path("runs") / "tournaments" / f"{self.game}-seed{self.seed}"

    def run_settings(self) -> dict[str, Any]:
        """The "run" section of tournament.json: how the games are played."""
        run = self.model_dump(mode="json", include=set(RUN_FIELDS), exclude_none=True)
        if self.models is not None:
            # Absolute, so that `--resume --out FOLDER` works from any folder.
            run["models"] = str(self.models.resolve())
        return run

    @classmethod
    def saved(cls, folder: Path) -> dict[str, Any]:
        """A results folder's settings, as a layer (tournament.json of this version or of
        any earlier one)."""
        config = TournamentConfig.load(folder)
        data = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
        run = data.get("run") if isinstance(data.get("run"), dict) else {}
        layer: dict[str, Any] = {
            "game": config.game, "games": config.games, "seed": config.seed,
            "players": list(config.players) if config.players else None,
            "pool": list(config.pool) if config.pool else None,
            "seats": config.seats, "roles": dict(config.roles),
            "options": dict(config.options), "preset": config.preset,
            "shard": str(config.shard) if config.shard else None,
            **{k: v for k, v in run.items() if k in RUN_FIELDS}}
        if config.seating != "fixed":
            layer["seating"] = config.seating
        if config.round_games is not None:
            layer["round_games"] = config.round_games
        if "models" in layer:
            layer["models"] = Path(str(layer["models"]))
        if isinstance(layer.get("rate_limits"), list):  # written before this model
            layer["rate_limits"] = _rate_limits([str(t) for t in layer["rate_limits"]])
        return {k: v for k, v in layer.items() if v is not None}


def _only_known(keys: Iterable[str], known: list[str], game: str, what: str) -> None:
    """A table key the game does not have is named, with the ones it has."""
    for key in keys:
        if key not in known:
            raise KeyProblem(key, f"{game} has no {what} {key!r}; {what}s: {', '.join(known)}")


def _definition(name: Any) -> Any:
    from stille_post.games import all_games

    return all_games().get(name) if isinstance(name, str) else None


# --- layers ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Layer:
    """Values given in one place, and how to point a user at a bad one there."""

    values: Mapping[str, Any]
    where: Callable[[tuple[Any, ...], str], str]  # (loc, problem) -> one-line message


def flags() -> dict[str, Flag]:
    """Every field that has a command-line flag, by field name."""
    out: dict[str, Flag] = {}
    for name, info in TournamentSettings.model_fields.items():
        flag = next((m for m in info.metadata if isinstance(m, Flag)), None)
        if flag is not None:
            out[name] = flag
    return out


def resolve(layers: list[Layer], *, fresh_seed: Callable[[], int]) -> TournamentSettings:
    """The layers merged (later wins) and validated once. Tables (`roles`, `options`,
    `rate_limits`, `max_in_flight`) merge key by key; a layer that names seats (`players` or `pool`)
    replaces the seats of the layers below it."""
    merged: dict[str, Any] = {}
    origin: dict[str, Layer] = {}
    for layer in layers:
        values = dict(layer.values)
        if "players" in values or "pool" in values:
            for key in ("players", "pool"):
                merged.pop(key, None)
        for key, value in values.items():
            below = merged.get(key)
            if key in TABLES and isinstance(below, dict) and isinstance(value, dict):
                value = {**below, **value}
            merged[key] = value
            origin[key] = layer
    if merged.get("seed") is None:
        merged["seed"] = fresh_seed()
    try:
        return TournamentSettings.model_validate(merged)
    except ValidationError as exc:
        loc, problem = problem_of(exc)
        culprit = origin.get(str(loc[0])) if loc else None
        raise ConfigError((culprit or layers[-1]).where(loc, problem)) from None


__all__ = ["RUN_FIELDS", "Flag", "Layer", "TournamentSettings", "flags", "resolve"]
