"""The roster: which models exist in a Stille Post world, as data (data/roster.toml in
this folder, loaded through the kit's data loader, or a user's own `--roster`)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stille_post.core.errors import UsageError
from stille_post.core.tomlfile import TOML_ERRORS, toml_problem
from stille_post.games.kit.data import DataFile, load_data


class RosterError(UsageError):
    """A roster file that is missing, malformed or inconsistent."""


Provider = Literal["openai", "anthropic", "google", "openai-compatible"]
Tier = Literal["flagship", "efficient"]


class RosterModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    provider: Provider
    tier: Tier
    api_model: str | None = None

    @property
    def api_name(self) -> str:
        return self.api_model or self.id


class Roster(BaseModel):
    """An ordered list of models. The file order is the canonical order that every
    rng draw over the roster starts from."""

    model_config = ConfigDict(frozen=True)

    models: tuple[RosterModel, ...]

    @model_validator(mode="after")
    def _unique_ids(self) -> Roster:
        ids = [m.id for m in self.models]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate model ids: {', '.join(dupes)}")
        if not ids:
            raise ValueError("the roster is empty")
        return self

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.models)

    def __iter__(self) -> Iterator[RosterModel]:  # type: ignore[override]
        return iter(self.models)

    def __len__(self) -> int:
        return len(self.models)

    def get(self, model_id: str) -> RosterModel:
        for m in self.models:
            if m.id == model_id:
                return m
        raise RosterError(f"model {model_id!r} is not in the roster ({', '.join(self.ids)})")

    def find(self, model_id: str) -> RosterModel | None:
        return next((m for m in self.models if m.id == model_id), None)

    def with_extra(self, extra: Sequence[RosterModel]) -> Roster:
        """This roster plus models added for one game (an off-roster local model)."""
        new = [m for m in extra if self.find(m.id) is None]
        return Roster(models=(*self.models, *new))


def roster_file(path: Path | str | None = None) -> DataFile:
    """The shipped roster, or the user's own file."""
    try:
        return load_data("stille_post.games.stille_post", "data/roster.toml", name="roster",
                         override=path)
    except RosterError:
        raise
    except Exception as exc:  # ConfigError from the loader: keep the roster's error type
        raise RosterError(str(exc)) from None


def load_roster(path: Path | str | None = None) -> Roster:
    return roster_of(roster_file(path))


def roster_of(data: DataFile) -> Roster:
    return _parse_cached(data.text, data.origin)


@lru_cache(maxsize=16)
def _parse_cached(text: str, p: str) -> Roster:
    try:
        raw = tomllib.loads(text)
    except TOML_ERRORS as exc:
        raise RosterError(f"roster {p} is not valid TOML: {toml_problem(exc)}") from None
    entries = raw.get("model")
    if not isinstance(entries, list):
        raise RosterError(f"roster {p} has no [[model]] entries")
    try:
        return Roster(models=tuple(RosterModel(**e) for e in entries))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ()))
        raise RosterError(f"roster {p}: {where or 'entry'}: {first['msg']}") from None
    except (TypeError, ValueError) as exc:
        raise RosterError(f"roster {p}: {exc}") from None
