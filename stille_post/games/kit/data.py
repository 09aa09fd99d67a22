"""A game's shipped data (cards, rosters, dictionaries), loaded from its own folder.

Data is read through `importlib.resources`, so an installed wheel plays exactly like a
checkout. Every file a game loads is hashed; the hash goes into the transcript header,
so two games that claim the same seed can be checked to have used the same data.
A user's own file (`--cards`, `--roster`, `--dictionary`) is loaded the same way.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path

from stille_post.core.errors import ConfigError


@dataclass(frozen=True)
class DataFile:
    name: str  # the name the game knows it by ("cards", "roster", ...)
    origin: str  # "package:stille_post.games.chameleon/data/cards.toml" or a path
    text: str

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def load_data(package: str, resource: str, *, name: str | None = None,
              override: Path | str | None = None) -> DataFile:
    """`resource` inside `package` (e.g. "data/cards.toml"), or the user's `override`.

    A user's file that is missing, unreadable or not UTF-8 is a one-line ConfigError."""
    label = name or Path(resource).stem
    if override is not None:
        path = Path(override)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"{label} file not found: {path}") from None
        except IsADirectoryError:
            raise ConfigError(f"{label} file {path} is a folder") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{label} file {path} is not UTF-8 text") from None
        except OSError as exc:
            raise ConfigError(f"cannot read {label} file {path}: {exc.strerror}") from None
        return DataFile(label, str(path), text)
    return _packaged(package, resource, label)


@lru_cache(maxsize=64)
def _packaged(package: str, resource: str, label: str) -> DataFile:
    # An installed package's files do not change while it runs: read (and hash) each once
    # per process, not once per game (a tournament prepares thousands of games).
    node = resources.files(package).joinpath(resource)
    try:
        text = node.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{label}: {package}/{resource} is not in the installed "
                          "package (a broken install?)") from None
    return DataFile(label, f"package:{package}/{resource}", text)


class DataLedger:
    """The data files one game loaded, for its transcript header."""

    def __init__(self) -> None:
        self.files: dict[str, DataFile] = {}

    def load(self, package: str, resource: str, *, name: str | None = None,
             override: Path | str | None = None) -> DataFile:
        f = load_data(package, resource, name=name, override=override)
        self.files[f.name] = f
        return f

    def to_json(self) -> dict[str, dict[str, str]]:
        return {n: {"origin": f.origin, "sha256": f.sha256} for n, f in sorted(self.files.items())}
