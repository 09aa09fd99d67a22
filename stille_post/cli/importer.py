"""`stille-post import GAME FORMAT PATH... --out FOLDER`: games played elsewhere, imported
as a results folder that `report`, `view` and `merge` read. The commands come from the
game registry: each game names the log formats it can read (`GameDefinition.importers`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from stille_post.core.errors import UsageError
from stille_post.core.text import printable


def register(app: typer.Typer) -> None:
    """`import GAME FORMAT PATH...` for every format a game of the registry imports (its
    `importers` hook), and the older one-word spelling `import GAME-FORMAT PATH...`
    (`import elimination-logs`), hidden from the help but kept working."""
    from stille_post.games import all_games

    group = typer.Typer(name="import", no_args_is_help=True,
                        help="Import games played elsewhere into a results folder.")
    app.add_typer(group)
    for game in all_games().values():
        if not game.importers:
            continue
        sub = typer.Typer(name=game.name, no_args_is_help=True,
                          help=f"Import {game.title} games played elsewhere.")
        group.add_typer(sub)
        for fmt_name in game.importers:
            command = _command(game.name, fmt_name)
            sub.command(fmt_name)(command)
            group.command(f"{game.name}-{fmt_name}", hidden=True)(command)


def _command(game_name: str, fmt_name: str) -> Callable[..., None]:
    def run(
        paths: Annotated[list[Path], typer.Argument(
            help="log files (JSONL) or folders of them")],
        out: Annotated[Path, typer.Option("--out", help="the results folder to write")],
        strict: Annotated[bool, typer.Option(
            "--strict", help="skip games whose player ids carry no model key "
                             "(default: import them with `unknown` labels)")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="print the summary as JSON")]
        = False,
    ) -> None:
        _import(game_name, fmt_name, paths, out, strict=strict, as_json=as_json)

    from stille_post.games import get_game

    game = get_game(game_name)
    run.__doc__ = (f"Import {game.title} logs of another program: one transcript per game, "
                   "the model keys as player labels. Re-running skips games already "
                   "imported.")
    return run


def _import(game_name: str, fmt_name: str, paths: list[Path], out: Path, *, strict: bool,
            as_json: bool) -> None:
    from stille_post.games import get_game
    from stille_post.importers.logs import import_logs, not_logs_text, summary_lines
    from stille_post.importers.reader import log_files

    fmt = get_game(game_name).importer(fmt_name)
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; give a folder")
    files = log_files(paths)
    if not files:
        raise UsageError("no .jsonl log files in " + ", ".join(str(p) for p in paths))
    total = sum(f.stat().st_size for f in files)
    err = Console(stderr=True)
    bar = Progress(TextColumn("importing"), BarColumn(), DownloadColumn(),
                   TextColumn("{task.fields[games]} games"), TimeRemainingColumn(),
                   console=err, disable=as_json or not err.is_terminal, transient=True)
    with bar:
        task = bar.add_task("import", total=total, games=0)
        # A folder of another kind raises ConfigError, a UsageError: exit 2.
        stats = import_logs(
            game_name, fmt, paths, out, strict=strict,
            progress=lambda n: bar.advance(task, n),
            on_game=lambda s: bar.update(task, games=s.imported + s.already))
    game = get_game(game_name)
    if stats.not_logs and not stats.read:
        # Nothing was a log (binary, UTF-16, empty, other JSON): bad input, and nothing
        # was written.
        raise UsageError(printable(f"not {game.title} logs: "
                                   + not_logs_text(stats.not_logs)))
    named = [i for i in stats.not_logs if i["named"]]
    if as_json:
        typer.echo(json.dumps({"out": str(out), **stats.to_json()}))
    else:
        for line in summary_lines(stats):
            err.print(line, markup=False, highlight=False)
        err.print(printable(f"results folder: {out} (stille-post report {out})"),
                  markup=False, highlight=False)
    if named:
        # A file named on the command line that is not a log is a bad argument, even when
        # the others were imported (a folder's stray .jsonl files are only warned of).
        raise UsageError(printable(f"{len(named)} of the files given are not {game.title} "
                                   f"logs: {not_logs_text(named)}"))
