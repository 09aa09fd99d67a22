"""The declarative game definition: everything the generic layers (CLI, tournament,
report, viewer) may know about a game, and nothing else.

A game folder builds one `GameDefinition` and exposes it as `GAME`; the registry
(games/__init__.py) finds it through the `stille_post.games` entry-point group. The
generic layers never import a game module by name.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module, resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from stille_post.core.errors import UnknownPlayerError, UsageError
from stille_post.core.rng import Rng, derive_rng
from stille_post.games.kit.data import DataFile, DataLedger
from stille_post.games.kit.table import DECISION_EVENT, Table, default_repair_text
from stille_post.players.base import Player, PromptBook
from stille_post.players.specs import SeatSpec, parse_seat_spec

if TYPE_CHECKING:
    from stille_post.games.kit.engine import Engine
    from stille_post.games.kit.importing import LogFormat

# The generic event vocabulary: what the terminal renderer and the viewer's generic view
# understand. A game maps each of its event types onto one of these.
Generic = Literal[
    "speech",  # a player's own words: rendered "[Player X] words"
    "heading",  # structure: a round or turn begins
    "notice",  # a Game Master line
    "private",  # a Game Master line meant for some seats only
    "elimination",  # a seat leaves the game
    "game_over",  # the game ended, and why
    "reveal",  # the hidden facts, shown at the end
    "silent",  # structure only; its meaning is already in another line
]


@dataclass(frozen=True)
class EventKind:
    generic: Generic
    text_key: str = "text"  # the data key holding the words to show
    help: str = ""


# Event types the kit itself writes for every game, declared here once (a game's own
# vocabulary names its own types, and may name these too).
KIT_EVENTS: Mapping[str, EventKind] = {
    DECISION_EVENT: EventKind("silent", help="one decision's replies and their fate (log only)"),
}


@dataclass(frozen=True)
class Role:
    name: str
    help: str
    default_bot: str
    # Seats this role always has (Connections' setter is seat 1); empty when the game
    # deals the role (The Chameleon) or every seat has it. Pool tournaments rotate the
    # models through fixed-seat roles evenly.
    seats: tuple[int, ...] = ()


@dataclass(frozen=True)
class PlayerRange:
    min: int
    default: int
    max: int

    def __post_init__(self) -> None:
        if not self.min <= self.default <= self.max:
            raise ValueError(f"player range {self.min}..{self.max} excludes {self.default}")


@dataclass(frozen=True)
class Preset:
    """A named configuration (TextArena registers its variants the same way)."""

    name: str
    help: str
    options: Mapping[str, Any]


MODEL_SEAT = "{model}"


@dataclass(frozen=True)
class Trial:
    """The game the local proving ground plays with a real model (`stille-post
    local-models`, docs/adherence.md): the seats, one of them `MODEL_SEAT`, and the
    shortest options that still ask every kind of decision the game has; `baseline` is
    the bot that takes the model's seat in the bot row beside it."""

    players: tuple[str, ...]
    options: Mapping[str, Any]
    baseline: str


BotFactory = Callable[["BotContext"], Player]
SetupFn = Callable[["SetupContext"], "Engine[Any]"]

# Builds an LLM seat from a spec such as "openai:gpt-5-mini" and the game's prompts.
# The CLI supplies one that knows about --online / --replay; without it LLM seats are refused.
LLMFactory = Callable[[str, PromptBook], Player]


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
    args: Mapping[str, str] = field(default_factory=dict)  # from the seat spec: p=0.3


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
        if d.seat_alias is not None:
            raw = [d.seat_alias(text) for text in raw]
        specs = [parse_seat_spec(text, d.bot_names) for text in raw]
        for parsed in specs:
            takes = d.bot_params.get(parsed.bot or "", ())
            if any(k not in takes for k, _ in parsed.bot_args):
                accepted = ", ".join(f"{k}=..." for k in takes) or "no arguments"
                raise UnknownPlayerError(f"{parsed.raw!r}: bot {parsed.bot} takes {accepted}")
        return specs

    def player(self, seat: int, spec: SeatSpec, setup: Any = None) -> Player:
        """The player for one seat. Bots get an rng derived from (seed, seat, bot), so
        swapping one bot never shifts another's draws or the game's."""
        if spec.bot is not None:
            rng = derive_rng(self.seed, "seat", seat, spec.bot)
            ctx = BotContext(self.seed, seat, spec.bot, rng, self.config, setup,
                             dict(spec.bot_args))
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
            from stille_post.players.script_seat import script_player

            return script_player(spec, self.definition.prompts)
        if self.llm_factory is None and spec.offline:  # Inspect's mock: no --online
            from stille_post.players.llm import LLMPlayer
            from stille_post.providers import create_provider

            assert spec.provider is not None and spec.model is not None
            return LLMPlayer(create_provider(spec.provider, spec.model),
                             self.definition.prompts, name=spec.raw)
        if self.llm_factory is None:
            whose = f"{agent.raw}): its model {spec.raw}" if agent else f"{spec.raw})"
            raise UsageError(f"seat {seat} ({whose} is an LLM seat: add --online to play "
                             "it live, or --replay CASSETTE to replay a recording")
        player: Player = self.llm_factory(spec.raw, self.definition.prompts)
        return player

    def players_for(self, specs: Sequence[SeatSpec], setup: Any = None) -> dict[int, Player]:
        return {i: self.player(i, s, setup) for i, s in enumerate(specs, start=1)}

    def table(self, players: Mapping[int, Player]) -> Table:
        """The table these players sit at, for the game's engine (`GameDefinition.table`).
        With a person at this terminal, the seats that take time say when they think."""
        from stille_post.players.humans import announce_turns

        return self.definition.table(self.config, announce_turns(players), self.rng)


def resolve(ref: str) -> Any:
    """A "module:attr" reference, imported when first needed."""
    module, _, attr = ref.partition(":")
    return getattr(import_module(module), attr)


@dataclass(frozen=True)
class GameDefinition:
    name: str  # the CLI's name for it: stille-post play NAME
    title: str  # for people: "The Chameleon"
    description: str  # one line
    package: str  # the game's package: data and the viewer layout live there
    config: type[BaseModel]  # the options; must have num_players
    roles: tuple[Role, ...]
    players: PlayerRange
    bots: Mapping[str, BotFactory]
    setup: SetupFn
    prompts: PromptBook
    events: Mapping[str, EventKind]
    # Seats when the user names none; None: each seat plays its role's default bot.
    default_seats: Callable[[int], list[str]] | None = None
    presets: Mapping[str, Preset] = field(default_factory=dict)
    # "module:function" references, imported only when a report needs them (matplotlib
    # and friends stay out of `play`).
    metrics: str | None = None  # (Iterable[Transcript]) -> {"overall","per_player","tables",...}
    charts: str | None = None  # (report dict) -> {title: PNG data URI}
    layout: str | None = None  # a JS file inside the package: the viewer layout
    # Options that are not flags of their own (reach them with --set key=value).
    hidden_options: tuple[str, ...] = ()
    # Formats of logs played elsewhere: CLI name -> "module:attr" of a kit LogFormat
    # (`stille-post import GAME NAME PATH...`), imported only when an import runs.
    importers: Mapping[str, str] = field(default_factory=dict)
    # bot name -> the arguments its seat spec may carry (`oracle:p=0.3`); a bot not
    # named here takes none
    bot_params: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # A game's own shorthand for a seat spec, rewritten before parsing
    # (Connections: oracle-p30 -> oracle:p=0.3); it returns other text unchanged.
    seat_alias: Callable[[str], str] | None = None
    # (engine) -> header facts of a prepared game, beside the engine's own
    # (`Engine.header_extra`): what only set-up knows, without subclassing the engine
    header: Callable[[Any], Mapping[str, Any]] | None = None
    # "module:attr" of the kit RulebookHooks its spec/*.yaml scenarios need, if any
    # (imported only when the rulebook runs).
    rulebook: str | None = None
    trial: Trial | None = None  # what the local proving ground plays (None: not played)
    # The Game Master's words on the table (`table`): a re-ask (reason -> text) and a
    # seat whose answer stayed unusable ((seat, reason) -> text); None: the kit's own.
    repair_text: Callable[[str], str] | None = None
    invalid_text: Callable[[int, str], str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "events", {**KIT_EVENTS, **self.events})

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(self.bots)

    def table(self, config: Any, players: Mapping[int, Player], rng: Rng) -> Table:
        """The one place a game's `Table` is built: its players (seats 1..num_players),
        the rng, the config's shared options (`repair_attempts`, `decision_timeout_s`)
        and this game's wording. Set-up reaches it as `ctx.table(players)`; a test that
        drives an engine with players and an rng of its own calls it directly."""
        n = int(config.num_players)
        if sorted(players) != list(range(1, n + 1)):
            raise ValueError(f"players must be seats 1..{n}, got {sorted(players)}")
        return Table(self.name, players, rng, repair_attempts=config.repair_attempts,
                     timeout_s=config.decision_timeout_s,
                     repair_text=self.repair_text or default_repair_text,
                     invalid_text=self.invalid_text)

    def role(self, name: str) -> Role:
        for r in self.roles:
            if r.name == name:
                return r
        known = ", ".join(r.name for r in self.roles)
        from stille_post.core.errors import ConfigError

        raise ConfigError(f"{self.name} has no role {name!r}; its roles: {known}")

    def fixed_role_seats(self) -> tuple[int, ...]:
        """Seats that some role always has, for role-balanced seating."""
        return tuple(sorted({s for r in self.roles for s in r.seats}))

    def seats_by_default(self, n: int) -> list[str]:
        if self.default_seats is not None:
            return self.default_seats(n)
        return [self.roles[0].default_bot] * n

    def metrics_fn(self) -> Callable[..., dict[str, Any]] | None:
        return resolve(self.metrics) if self.metrics else None

    def charts_fn(self) -> Callable[[dict[str, Any]], dict[str, str]] | None:
        return resolve(self.charts) if self.charts else None

    def importer(self, name: str) -> LogFormat:
        if name not in self.importers:
            from stille_post.core.errors import ConfigError

            known = ", ".join(self.importers) or "none"
            raise ConfigError(f"{self.name} imports no {name!r} logs; its formats: {known}")
        fmt: LogFormat = resolve(self.importers[name])
        return fmt

    def layout_source(self) -> str | None:
        if self.layout is None:
            return None
        return resources.files(self.package).joinpath(self.layout).read_text(encoding="utf-8")

    def describe(self) -> dict[str, Any]:
        """`stille-post games --json`: the game as data."""
        options = {}
        for key, f in self.config.model_fields.items():
            default = f.get_default(call_default_factory=True)
            options[key] = {
                "default": default if isinstance(default, int | float | str | bool | None)
                else str(default) if not isinstance(default, dict | list) else default,
                "help": f.description or "",
                "flag": None if key in self.hidden_options else "--" + key.replace("_", "-"),
            }
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "players": {"min": self.players.min, "default": self.players.default,
                        "max": self.players.max},
            "roles": [{"name": r.name, "help": r.help, "default_bot": r.default_bot,
                       "seats": list(r.seats)} for r in self.roles],
            "bots": list(self.bots),
            "default_seats": self.seats_by_default(self.players.default),
            "options": options,
            "presets": {p.name: {"help": p.help, "options": dict(p.options)}
                        for p in self.presets.values()},
            "events": {t: k.generic for t, k in self.events.items()},
        }
