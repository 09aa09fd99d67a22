"""Which seats the evaluated model fills, and who sits in the others (the task options
`seats=`, `role=`, `self_play=`, `opponents=`).

Pure: no inspect_ai here, so the layout is checked before any sample runs (`check`, a
dry `prepare()` of the first game) and unit-tested without Inspect.

- `self_play=true`: the evaluated model fills every seat;
- `role=NAME`: every seat of that role (the kit's `--role NAME=SPEC`, resolved by the
  game's own set-up: a role dealt at random moves from game to game);
- `seats=1` or `seats=1,3`: those seats (default: seat 1);
- `opponents=SPEC`: every other seat plays SPEC (a bot name, `bot` for each role's
  default bot, or any seat spec: `inspect:PROVIDER/MODEL`, `openai:MODEL`, ...), or
  `opponents=A,B,...` one spec per other seat, in seat order.

The evaluated seats of a played game are the seats whose player is the evaluated model's
label (`inspect:PROVIDER/MODEL`): so an opponent may not be that very spec (self-play is
`self_play=true`, or the seats named in `seats=`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stille_post.core.errors import ConfigError
from stille_post.games.kit.definition import GameDefinition


@dataclass(frozen=True)
class Layout:
    """The `play_game` arguments that seat one game: `players` (one spec per seat, or
    None for the game's own default) and `roles` (role -> spec)."""

    players: list[str] | None
    roles: dict[str, str] = field(default_factory=dict)


def parse_seats(value: Any) -> tuple[int, ...]:
    """`seats=1`, `seats=1,3`, `seats=[1, 3]` (Inspect reads `-T` values as YAML)."""
    if value is None or value == "":
        return ()
    items = value if isinstance(value, list | tuple) else str(value).split(",")
    out: list[int] = []
    for item in items:
        text = str(item).strip()
        if not text.isdigit() or int(text) < 1:
            raise ConfigError(f"seats={value!r}: write seat numbers from 1, e.g. seats=1,3")
        out.append(int(text))
    if len(set(out)) != len(out):
        raise ConfigError(f"seats={value!r} names a seat twice")
    return tuple(out)


def parse_opponents(value: Any) -> list[str]:
    if value is None or value == "":
        return ["bot"]
    items = value if isinstance(value, list | tuple) else str(value).split(",")
    specs = [str(s).strip() for s in items if str(s).strip()]
    return specs or ["bot"]


def num_players(definition: GameDefinition, options: Mapping[str, Any],
                preset: str | None = None) -> int:
    """The seats of the game these options (and preset) set up."""
    from stille_post.games.kit.setup import build_config

    return int(build_config(definition, options, None, preset).num_players)  # type: ignore[attr-defined]


def layout(definition: GameDefinition, evaluated: str, *, options: Mapping[str, Any],
           preset: str | None = None, seats: Any = None, role: str | None = None,
           self_play: bool = False, opponents: Any = None) -> Layout:
    """The seating of every game of the task, with `evaluated` (the evaluated model's
    seat spec) in the chosen seats."""
    chosen = parse_seats(seats)
    others = parse_opponents(opponents)
    if evaluated in others:
        raise ConfigError(f"opponents={evaluated} is the evaluated model; for self-play "
                          "give self_play=true or the seats to fill with seats=")
    n = num_players(definition, options, preset)
    if self_play:
        if chosen or role:
            raise ConfigError("self_play=true fills every seat: drop seats= and role=")
        return Layout([evaluated] * n)
    if role:
        if chosen:
            raise ConfigError("give role= or seats=, not both")
        definition.role(role)  # an unknown role is one line naming the game's roles
        return Layout(_fill(n, (), others), {role: evaluated})
    chosen = chosen or (1,)
    if max(chosen) > n:
        raise ConfigError(f"seats={','.join(map(str, chosen))}: {definition.name} has "
                          f"{n} seats here (give num_players= for more)")
    return Layout(_fill(n, chosen, others, evaluated))


def _fill(n: int, chosen: tuple[int, ...], others: list[str], evaluated: str = "") -> list[str]:
    rest = n - len(chosen)
    if len(others) == 1:
        others = others * rest
    elif len(others) != rest:
        raise ConfigError(f"opponents= names {len(others)} seats but {rest} are left to "
                          "fill; give one spec for all, or one per seat")
    it = iter(others)
    return [evaluated if s in chosen else next(it) for s in range(1, n + 1)]
