"""Reading a user's TOML file into a pydantic model, with errors a user can act on.

Every failure is one `ConfigError` line: `FILE:LINE: KEY: PROBLEM` (the line when it is
known: tomllib gives it for syntax errors; for a validation error it is looked up in the
text by the offending key's dotted path). The CLI prints a `UsageError` as one line and
exits 2, so a bad file stops the command before any game starts.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar, Union

from pydantic import BaseModel, ValidationError

from stille_post.core.errors import ConfigError

ModelT = TypeVar("ModelT", bound=BaseModel)

_DECODE_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_HEADER = re.compile(r"^\s*\[\[?\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
                  r"""(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")
_PART = re.compile(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""")


# What hostile text makes `tomllib.loads` raise: TOMLDecodeError (a ValueError), an
# integer past Python's 4300-digit limit (ValueError), or arrays nested a few thousand
# deep (RecursionError). Every reader of a user's TOML file catches all three.
TOML_ERRORS = (ValueError, RecursionError)


def toml_problem(exc: BaseException) -> str:
    """One line for any of `TOML_ERRORS`."""
    if isinstance(exc, RecursionError):
        return "arrays or tables nested too deep"
    if not isinstance(exc, tomllib.TOMLDecodeError):  # the integer digit limit
        return "a number too long to read"
    return str(exc)


def read_toml(path: Path, what: str) -> tuple[dict[str, Any], str]:
    """The parsed table and the raw text of a TOML file (`what` names it in errors)."""
    if path.is_dir():
        raise ConfigError(f"{path}: is a folder, not a {what} (TOML file)")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such {what}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text (byte {exc.start})") from None
    try:
        return tomllib.loads(text), text
    except TOML_ERRORS as exc:
        msg = toml_problem(exc)
        at = _DECODE_AT.search(msg)
        where = f"{path}:{at.group(1)}" if at else str(path)
        problem = _DECODE_AT.sub("", msg) if at else msg
        raise ConfigError(f"{where}: not valid TOML: {problem}") from None


def validate(model: type[ModelT], data: dict[str, Any], text: str, path: Path,
             context: dict[str, Any] | None = None) -> ModelT:
    """`model` validated from `data`; the first error becomes one line with its line."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise ConfigError(describe(exc, text, path)) from None


class KeyProblem(ValueError):
    """A rule broken by one key of a table field (e.g. `roles.spy`): raised by a field
    validator, it makes the error name that key, so a file's line can be found."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def describe(exc: ValidationError, text: str, path: Path) -> str:
    loc, problem = problem_of(exc)
    key = ".".join(str(p) for p in loc) or "(top level)"
    line = key_line(text, loc)
    where = f"{path}:{line}" if line else str(path)
    return f"{where}: {key}: {problem}"


def problem_of(exc: ValidationError) -> tuple[tuple[Any, ...], str]:
    """The first error's location and a problem a user can read."""
    err = exc.errors()[0]
    loc = tuple(err.get("loc", ()))
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, KeyProblem):
        loc = (*loc, cause.key)
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        problem = "unknown key"
        known = _known_keys(exc, loc)
        if known:
            problem += f" (known: {', '.join(known)})"
    elif kind == "missing":
        problem = "required, but missing"
    elif kind.startswith("path_"):
        problem = f"expected a path (a string), got {_show(err.get('input'))}"
    else:
        problem = str(err.get("msg", "invalid"))
        # pydantic's "Value error, ..." prefix is noise for a user.
        problem = problem.removeprefix("Value error, ")
        if kind.endswith("_type") or kind.startswith(("literal", "int_", "float_", "greater",
                                                      "less")):
            problem += f", got {_show(err.get('input'))}"
    return loc, problem


def key_line(text: str, loc: Sequence[Any]) -> int | None:
    """The line where the longest prefix of `loc` is written: a `key = ...` line (the
    dotted key joined to its table header) or a `[table]` header. A heuristic: it does
    not parse multi-line strings, which is fine for pointing a user at a line."""
    want = [str(p) for p in loc if not isinstance(p, int)]
    best: tuple[int, int] | None = None  # (matched parts, line number)
    table: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _parts(header.group(1))
            path = table
        else:
            key = _KEY.match(line)
            if not key:
                continue
            path = table + _parts(key.group(1))
        n = _common(path, want)
        # A line counts if it writes a prefix of the key, or the key itself inside a
        # longer path (`[model.a]` is where an unknown top-level `model` appears).
        if n and n in (len(path), len(want)) and (best is None or n > best[0]):
            best = (n, number)
    return best[1] if best else None


def _parts(dotted: str) -> list[str]:
    return [p.strip("\"'") for p in _PART.findall(dotted)]


def _common(path: list[str], want: list[str]) -> int:
    n = 0
    for a, b in zip(path, want, strict=False):
        if a != b:
            break
        n += 1
    return n


def _known_keys(exc: ValidationError, loc: tuple[Any, ...]) -> list[str]:
    """The keys the table at `loc[:-1]` accepts, from the model's own fields."""
    ann: Any = _MODELS.get(exc.title)
    for part in loc[:-1]:
        ann = _step(ann, part)
    model = _model_of(ann)
    return sorted(model.model_fields) if model is not None else []


def _step(ann: Any, part: Any) -> Any:
    """The annotation one level down: a model's field, or a table's value type."""
    model = _model_of(ann)
    if model is not None:
        field = model.model_fields.get(str(part))
        return field.annotation if field is not None else None
    for arg in _unwrap(ann):
        if getattr(arg, "__origin__", None) is dict:
            return arg.__args__[1]
    return None


def _unwrap(ann: Any) -> list[Any]:
    """`X | None` -> [X, None]; anything else -> [it]."""
    args = getattr(ann, "__args__", None)
    union = getattr(ann, "__origin__", None) in (None, Union)
    return list(args) if args is not None and union else [ann]


def _model_of(ann: Any) -> type[BaseModel] | None:
    for arg in _unwrap(ann):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


# Models registered here can list their keys in an "unknown key" error.
_MODELS: dict[str, type[BaseModel]] = {}


def known_model(model: type[ModelT]) -> type[ModelT]:
    """Class decorator: lets `describe` list this model's keys on an unknown key."""
    _MODELS[model.__name__] = model
    return model


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
