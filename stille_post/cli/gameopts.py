"""Per-game command lines, built from the registry: `play GAME` and `tournament GAME`.

Each game's config model *is* its option list. Every field with a simple type (int,
float, str, bool, a path, a Literal of choices, or an optional one of those) becomes a
flag of that game only (`max_rounds` -> `--max-rounds`); anything else is reached with
`--set key=value`. Flags default to "not given", so the config model's defaults apply
and a config file or preset can supply values that a flag then overrides.

An option of another game is refused in one line that names that game. Click would say
only "No such option"; the game commands accept unknown options and check them here.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

import typer
from typer.core import TyperGroup

from stille_post.core.errors import UsageError
from stille_post.games import all_games
from stille_post.games.kit.definition import GameDefinition

_SIMPLE = (int, float, str, bool, Path)


def _flag_type(annotation: Any) -> tuple[Any, str] | None:
    """(the Python type typer parses, a help suffix) for a flaggable annotation."""
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return _flag_type(args[0]) if len(args) == 1 else None
    if origin is Literal:
        choices = get_args(annotation)
        if all(isinstance(c, str) for c in choices):
            return str, " (" + " | ".join(choices) + ")"
        return None
    if annotation in _SIMPLE:
        return annotation, ""
    return None


def flag_name(field: str) -> str:
    return "--" + field.replace("_", "-")


def game_parameters(definition: GameDefinition) -> list[inspect.Parameter]:
    params = []
    for name, field in definition.config.model_fields.items():
        if name in definition.hidden_options:
            continue
        flag = _flag_type(field.annotation)
        if flag is None:
            continue
        kind, choices = flag
        default = field.get_default(call_default_factory=True)
        shown = "" if default is None else f" (default {default})"
        help_text = (field.description or name.replace("_", " ")) + choices + shown
        if kind is bool:
            option = typer.Option(f"{flag_name(name)}/--no-{name.replace('_', '-')}",
                                  help=help_text, show_default=False)
        else:
            option = typer.Option(flag_name(name), help=help_text, show_default=False)
        params.append(inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=None,
            annotation=Annotated[kind | None, option]))
    return params


def _all_flags() -> dict[str, list[str]]:
    """flag -> the games that have it (for naming the right game in an error)."""
    out: dict[str, list[str]] = {}
    for game in all_games().values():
        for p in game_parameters(game):
            out.setdefault(flag_name(p.name), []).append(game.name)
            if get_args(p.annotation)[0] in (bool, bool | None):
                out.setdefault("--no-" + p.name.replace("_", "-"), []).append(game.name)
    return out


def refuse_extra(game: str, extra: Sequence[str]) -> None:
    """Unknown options and stray arguments, as one line that names the right game."""
    if not extra:
        return
    first = extra[0]
    flag = first.split("=", 1)[0]
    if not flag.startswith("-"):
        raise UsageError(f"unexpected argument {first!r} for {game}")
    owners = [g for g in _all_flags().get(flag, []) if g != game]
    if owners:
        raise UsageError(f"{flag} is an option of {', '.join(owners)}, not of {game}; "
                         f"see `stille-post play {game} --help`")
    raise UsageError(f"{game} has no option {flag}; see `stille-post play {game} --help`")


def make_game_command(
    app: typer.Typer,
    definition: GameDefinition,
    common: Iterable[inspect.Parameter],
    body: Callable[[GameDefinition, typer.Context, dict[str, Any], dict[str, Any]], None],
    *,
    help_text: str,
) -> None:
    """Register `definition.name` on `app`: its signature is the common parameters plus
    the game's own; `body(definition, ctx, common_values, game_options)` runs it."""
    common = list(common)
    own = game_parameters(definition)
    names = {p.name for p in own}

    def command(ctx: typer.Context, **values: Any) -> None:
        refuse_extra(definition.name, ctx.args)
        options = {k: v for k, v in values.items() if k in names and v is not None}
        common_values = merged_common(ctx, {k: v for k, v in values.items() if k not in names})
        body(definition, ctx, common_values, options)

    ctx_param = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                  annotation=typer.Context)
    params = [ctx_param, *common, *own]
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__doc__ = f"{definition.title}: {definition.description}\n\n{help_text}"
    app.command(
        definition.name,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        help=command.__doc__,
    )(command)


class GameGroup(TyperGroup):
    """`play` and `tournament`: a subcommand per game. An unknown name is one line that
    lists the games (click would say "No such command")."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else None
        if name is not None and not name.startswith("-") and self.get_command(ctx, name) is None:
            raise UsageError(f"unknown game {name!r}; known games: "
                             + ", ".join(all_games()))
        return super().resolve_command(ctx, args)


def group_callback(
    definition: GameDefinition,
    common: Sequence[inspect.Parameter],
    body: Callable[[typer.Context, dict[str, Any], dict[str, Any]], None],
) -> Callable[..., None]:
    """The callback of a game group: with no game named, the default game is played with
    its own options (`stille-post play --max-rounds 6` is `play DEFAULT --max-rounds 6`).
    Its options given before another game's name are refused."""
    own = game_parameters(definition)
    names = {p.name for p in own}

    def callback(ctx: typer.Context, **values: Any) -> None:
        options = {k: v for k, v in values.items() if k in names and v is not None}
        common_values = {k: v for k, v in values.items() if k not in names}
        if ctx.invoked_subcommand is not None:
            if options:
                flag = flag_name(next(iter(options)))
                raise UsageError(f"{flag} comes before the game name; write "
                                 f"`{ctx.command_path} {ctx.invoked_subcommand} ... {flag}`")
            ctx.obj = common_values
            return
        body(ctx, common_values, options)

    ctx_param = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                  annotation=typer.Context)
    params = [ctx_param, *common, *own]
    callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    callback.__annotations__ = {p.name: p.annotation for p in params}
    return callback


def merged_common(ctx: typer.Context, values: dict[str, Any]) -> dict[str, Any]:
    """Common options given after the game name win over those given before it."""
    before = ctx.obj if isinstance(ctx.obj, dict) else {}
    out = dict(values)
    for key, value in before.items():
        source = ctx.get_parameter_source(key)
        if value is not None and (source is None or source.name == "DEFAULT"):
            out[key] = value
    return out


def option(name: str, annotation: Any, default: Any, *decls: str, help: str) -> inspect.Parameter:
    """A common parameter, written once for both commands."""
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default,
        annotation=Annotated[annotation, typer.Option(*decls, help=help)])


def split_specs(text: str | None) -> list[str] | None:
    if text is None:
        return None
    seats = [p.strip() for p in text.split(",") if p.strip()]
    if not seats:
        raise UsageError("--players is empty; give one comma-separated spec per seat")
    return seats
