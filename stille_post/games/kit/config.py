"""The base of every game's options: `GameConfig`.

What every game's config shares is the convention, not the values: options are
validated once at the boundary and immutable after (`frozen`), an unknown option is an
error naming it (`extra="forbid"`), and three options every game has:

- `num_players`: the seats (its default is the game's `PlayerRange.default`);
- `repair_attempts`: corrective re-asks for an unusable reply;
- `decision_timeout_s`: a player's answer deadline, in seconds.

A game declares these where it wants them among its own options, with the field
helpers below (`seats_field`, `repair_field`, `timeout_field`), because the order of
the fields is the order of the `config` object in every transcript header; the base
checks at class creation that all three are there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

SHARED_FIELDS = ("num_players", "repair_attempts", "decision_timeout_s")


class GameConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    if TYPE_CHECKING:  # declared by each game, in its own place (see the module's doc)
        num_players: int
        repair_attempts: int
        decision_timeout_s: float

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        missing = [f for f in SHARED_FIELDS if f not in cls.model_fields]
        if missing:
            raise TypeError(f"{cls.__name__} lacks the shared option(s) {missing} "
                            "(declare them with kit.config's field helpers)")


def seats_field(default: int, *, ge: int, le: int, description: str = "seats") -> Any:
    """`num_players`: the game's seat count and its range."""
    return Field(default, ge=ge, le=le, description=description)


def repair_field(description: str = "corrective re-asks for an unusable reply", *,
                    default: int = 1, le: int = 5) -> Any:
    return Field(default, ge=0, le=le, description=description)


def timeout_field(description: str = "a player's answer deadline", *,
                     default: float = 300.0) -> Any:
    # Finite: infinity would be written to the transcript's header as `Infinity`, which
    # is not JSON, and "no deadline" is a large number of seconds.
    return Field(default, gt=0, allow_inf_nan=False, description=description)
