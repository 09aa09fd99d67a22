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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from stille_post.core.errors import ConfigError, UsageError
from stille_post.core.rng import Rng
from stille_post.games.kit.data import DataLedger
from stille_post.games.kit.definition import (
    BotContext,
    GameDefinition,
    LLMFactory,
    SetupContext,
)
from stille_post.players.script_seat import script_player

if TYPE_CHECKING:
    from stille_post.games.kit.engine import Engine

ConfigT = TypeVar("ConfigT", bound=BaseModel)


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


MAX_SET_DEPTH = 32  # no option nests deeper; deeper JSON only exhausts recursion later


def parse_set_value(text: str) -> Any:
    """A `--set` value: JSON when it parses as JSON ({"1": "gpt-5"}, [1, 2], 3, true),
    else the plain string; pydantic then checks it against the field's type. JSON nested
    more than `MAX_SET_DEPTH` deep is refused in one line (`ConfigError`)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ConfigError(f"--set: a value is nested more than {MAX_SET_DEPTH} levels "
                          "deep") from None
    except ValueError:
        return text
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:  # iterative: the check itself must not recurse
        v, depth = stack.pop()
        if depth > MAX_SET_DEPTH:
            raise ConfigError(f"--set: a value is nested more than {MAX_SET_DEPTH} levels "
                              "deep")
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)
    return value


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
        if self.definition.header is not None:
            extra.update(self.definition.header(self.engine))
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


# The contexts live with the definition that names them (kit/definition.py); they are
# re-exported here, where `prepare` builds them.
__all__ = ["BotContext", "LLMFactory", "PreparedGame", "SetupContext", "build_config",
           "parse_assignments", "parse_set_value", "prepare", "script_player"]
