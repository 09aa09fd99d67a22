"""From what the user asked for to an engine ready to play.

`prepare()` is the one path every game takes (play, tournament, spec scenarios, tests):

1. options: a preset's, then the user's (flags, `--set`, a config file), validated by
   the game's config model; an error names the option as the user wrote it;
2. the game's `setup(ctx)` deals (all chance from the injected rng), decides which role
   each seat has, and asks the context for the seats' players;
3. the context resolves each seat's spec: `--role NAME=SPEC` for that seat's role, else
   the seat's `--players` entry, else the role's default bot; then builds the player: a
   bot (with its own rng, derived from the seed), an LLM seat, or a `script:FILE` seat.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from stille_post.core.errors import ConfigError, ScenarioError, UsageError
from stille_post.core.rng import Rng, derive_rng
from stille_post.games.kit.data import DataFile, DataLedger
from stille_post.games.kit.definition import GameDefinition
from stille_post.players.base import Player, PromptBook
from stille_post.players.specs import SeatSpec, parse_seat_spec

if TYPE_CHECKING:
    from stille_post.games.kit.engine import Engine

# Builds an LLM seat from a spec such as "openai:gpt-5-mini" and the game's prompts.
# The CLI supplies one that knows about --online / --replay; without it LLM seats are refused.
LLMFactory = Callable[[str, PromptBook], Player]

ConfigT = TypeVar("ConfigT", bound=BaseModel)


@dataclass(frozen=True)
class BotContext:
    """What a bot may know when it sits down: its seat, its own rng, the config, and the
    public (or its own role's) facts the game hands it (`setup`)."""

    seed: int | str
    seat: int
    name: str
    rng: random.Random
    config: Any
    setup: Any = None


def parse_assignments(items: Sequence[str] | None, what: str) -> dict[str, str]:
    """`NAME=VALUE` pairs from repeatable flags (`--role`, `--set`)."""
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"--{what} {item!r}: write NAME=VALUE")
        out[key] = value.strip()
    return out


def parse_set_value(text: str) -> Any:
    """A `--set` value: JSON when it parses as JSON ({"1": "gpt-5"}, [1, 2], 3, true),
    else the plain string; pydantic then checks it against the field's type."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def build_config(definition: GameDefinition, options: Mapping[str, Any],
                 players: Sequence[str] | None, preset: str | None = None) -> BaseModel:
    """A game's validated config. `--players` sets the seat count unless `num_players`
    was given too, in which case the two must agree."""
    opts: dict[str, Any] = {}
    if preset is not None:
        if preset not in definition.presets:
            known = ", ".join(definition.presets) or "none"
            raise ConfigError(f"{definition.name} has no preset {preset!r}; presets: {known}")
        opts.update(definition.presets[preset].options)
    opts.update({k: v for k, v in options.items() if v is not None})
    fields = definition.config.model_fields
    unknown = sorted(set(opts) - set(fields))
    if unknown:
        raise ConfigError(f"{definition.name} has no option {unknown[0]!r}; its options: "
                          + ", ".join(fields))
    if players:
        n = opts.setdefault("num_players", len(players))
        if n != len(players):
            raise ConfigError(f"--players names {len(players)} seats but num_players is {n}")
    try:
        return definition.config(**opts)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "config"
        flag = "--" + where.replace("_", "-") if where in fields else where
        raise ConfigError(f"{flag}: {first['msg']}") from None


@dataclass
class SetupContext:
    definition: GameDefinition
    config: Any
    seed: int | str
    rng: Rng
    players: Sequence[str] | None = None  # one spec per seat, as given
    roles: Mapping[str, str] = field(default_factory=dict)  # role -> spec
    llm_factory: LLMFactory | None = None
    data: DataLedger = field(default_factory=DataLedger)

    @property
    def num_players(self) -> int:
        return int(self.config.num_players)

    def load(self, resource: str, *, name: str | None = None,
             override: Path | str | None = None) -> DataFile:
        """A data file of this game's folder (or the user's own), hashed for the header."""
        return self.data.load(self.definition.package, resource, name=name, override=override)

    def seat_specs(self, roles: Mapping[int, str] | None = None) -> list[SeatSpec]:
        """One spec per seat. `roles` maps seats to role names (default: every seat has
        the game's first role)."""
        d, n = self.definition, self.num_players
        first = d.roles[0].name
        seat_roles = {s: (roles or {}).get(s, first) for s in range(1, n + 1)}
        defaults = d.seats_by_default(n) if self.players is None else None
        raw: list[str] = []
        for seat in range(1, n + 1):
            role = d.role(seat_roles[seat])
            if role.name in self.roles:
                spec = self.roles[role.name]
            elif self.players is not None:
                spec = self.players[seat - 1]
            else:
                assert defaults is not None
                spec = defaults[seat - 1]
            raw.append(role.default_bot if spec.strip() in ("bot", "bot:") else spec)
        return [parse_seat_spec(text, d.bot_names) for text in raw]

    def player(self, seat: int, spec: SeatSpec, setup: Any = None) -> Player:
        """The player for one seat. Bots get an rng derived from (seed, seat, bot), so
        swapping one bot never shifts another's draws or the game's."""
        if spec.bot is not None:
            rng = derive_rng(self.seed, "seat", seat, spec.bot)
            ctx = BotContext(self.seed, seat, spec.bot, rng, self.config, setup)
            return self.definition.bots[spec.bot](ctx)
        prompts = self.definition.prompts
        if spec.human is not None:  # a person: `stille-post play` only
            from stille_post.players.humans import human_player

            return human_player(prompts, seat, self.num_players, spec)
        if spec.agent is not None:  # an agent plug-in, with the model after its `+`
            from stille_post.players.agents import agent_player

            return agent_player(spec, game=self.definition.name, seat=seat, prompts=prompts,
                                model_player=lambda inner: self.model_player(seat, inner, spec))
        return self.model_player(seat, spec)

    def model_player(self, seat: int, spec: SeatSpec, agent: SeatSpec | None = None) -> Player:
        """A seat answered by a model: scripted replies, or an LLM live or replayed.
        `agent`: the agent seat whose model this is."""
        if spec.script is not None:
            return script_player(spec, self.definition.prompts)
        if self.llm_factory is None:
            whose = f"{agent.raw}): its model {spec.raw}" if agent else f"{spec.raw})"
            raise UsageError(f"seat {seat} ({whose} is an LLM seat: add --online to play "
                             "it live, or --replay CASSETTE to replay a recording")
        player: Player = self.llm_factory(spec.raw, self.definition.prompts)
        return player

    def players_for(self, specs: Sequence[SeatSpec], setup: Any = None) -> dict[int, Player]:
        return {i: self.player(i, s, setup) for i, s in enumerate(specs, start=1)}


def script_player(spec: SeatSpec, prompts: PromptBook) -> Player:
    """A `script:FILE.yaml` seat: the real LLM path (prompts, parsing, re-asks) fed with
    replies from a file, so a bug report can be replayed from the command line. The file
    is a YAML list of entries as `providers/scripted.py` documents them."""
    import yaml  # only script seats need it: keeps the CLI's start-up lean

    from stille_post.core import yamltext
    from stille_post.players.llm import LLMPlayer
    from stille_post.providers.scripted import ScriptedProvider

    assert spec.script is not None
    path = Path(spec.script)
    try:
        entries = yamltext.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(f"script file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"cannot read script file {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{path}: not valid YAML ({exc.__class__.__name__})") from None
    if isinstance(entries, dict) and isinstance(entries.get("replies"), list):
        entries = entries["replies"]
    if not isinstance(entries, list):
        raise ScenarioError(f"{path}: a script is a YAML list of replies")
    return LLMPlayer(ScriptedProvider(entries, model=f"script:{path.name}"), prompts,
                     name=spec.raw)


@dataclass
class PreparedGame:
    """An engine ready to play, with what its transcript header needs."""

    definition: GameDefinition
    engine: Engine[Any]
    data: DataLedger
    seed: int | str

    def config_json(self) -> dict[str, Any]:
        return self.engine.config_json()

    def seats_json(self) -> dict[str, dict[str, Any]]:
        return self.engine.seats_json()

    def header_extra(self) -> dict[str, Any]:
        extra = dict(self.engine.header_extra())
        if self.data.files:
            extra["data"] = self.data.to_json()
        return extra

    async def play(self, sink: Any = None) -> Any:
        return await self.engine.play(sink)


def prepare(
    definition: GameDefinition,
    *,
    seed: int | str,
    rng: Rng,
    players: Sequence[str] | None = None,
    options: Mapping[str, Any] | None = None,
    roles: Mapping[str, str] | None = None,
    preset: str | None = None,
    llm_factory: LLMFactory | None = None,
) -> PreparedGame:
    for name in roles or {}:
        definition.role(name)  # an unknown role is one line naming the game's roles
    config = build_config(definition, options or {}, players, preset)
    n = int(config.num_players)  # type: ignore[attr-defined]
    if players is not None and len(players) != n:
        raise ConfigError(f"--players names {len(players)} seats but the game has {n}")
    ctx = SetupContext(definition, config, seed, rng, players, dict(roles or {}), llm_factory)
    engine = definition.setup(ctx)
    return PreparedGame(definition, engine, ctx.data, seed)
