"""The declarative game definition: everything the generic layers (CLI, tournament,
report, viewer) may know about a game, and nothing else.

A game folder builds one `GameDefinition` and exposes it as `GAME`; the registry
(games/__init__.py) finds it through the `stille_post.games` entry-point group. The
generic layers never import a game module by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module, resources
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from stille_post.players.base import Player, PromptBook

if TYPE_CHECKING:
    from stille_post.games.kit.engine import Engine
    from stille_post.games.kit.importing import LogFormat
    from stille_post.games.kit.setup import BotContext, SetupContext

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


BotFactory = Callable[["BotContext"], Player]
SetupFn = Callable[["SetupContext"], "Engine[Any]"]


def _resolve(ref: str) -> Any:
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

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(self.bots)

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
        return _resolve(self.metrics) if self.metrics else None

    def charts_fn(self) -> Callable[[dict[str, Any]], dict[str, str]] | None:
        return _resolve(self.charts) if self.charts else None

    def importer(self, name: str) -> LogFormat:
        if name not in self.importers:
            from stille_post.core.errors import ConfigError

            known = ", ".join(self.importers) or "none"
            raise ConfigError(f"{self.name} imports no {name!r} logs; its formats: {known}")
        fmt: LogFormat = _resolve(self.importers[name])
        return fmt

    def layout_source(self) -> str | None:
        if self.layout is None:
            return None
        return resources.files(self.package).joinpath(self.layout).read_text(encoding="utf-8")

    def prepare(self, *, seed: int | str, rng: Any, players: Sequence[str] | None = None,
                options: Mapping[str, Any] | None = None,
                roles: Mapping[str, str] | None = None, preset: str | None = None,
                llm_factory: Any = None) -> Any:
        """`kit.setup.prepare` for this game: an engine ready to play."""
        from stille_post.games.kit.setup import prepare

        return prepare(self, seed=seed, rng=rng, players=players, options=options,
                       roles=roles, preset=preset, llm_factory=llm_factory)

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
