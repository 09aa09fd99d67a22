"""The `stille-post` command. Each subcommand lives in its own module with `register(app)`.

Exit codes: 0 for a completed run, 1 for an aborted game or a failed run, 2 for a usage or
input error. Every error is one line on stderr; an unexpected error says to re-run with
`--debug`, which shows its traceback.
"""

from __future__ import annotations

import os
import sys
import traceback
from importlib import import_module
from typing import Annotated

import typer
from typer import TyperException
from typer._click.exceptions import NoArgsIsHelpError

from stille_post.core.errors import UsageError

app = typer.Typer(
    name="stille-post",
    help="LLMs play social-deduction and word games against each other.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # `-h` as well as `--help`, on every command (a context passes them to its children).
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        from stille_post import __version__

        typer.echo(f"stille-post {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option(
        "--version", help="print the version and exit", is_eager=True,
        callback=_print_version)] = False,
) -> None:
    """LLMs play social-deduction and word games against each other."""


# One module per command group; each module owns its options and help text.
_COMMAND_MODULES = ("play", "tournament", "report", "view", "games", "importer",
                    "local_models", "export")

for _name in _COMMAND_MODULES:
    import_module(f"stille_post.cli.{_name}").register(app)


def _one_line(text: str) -> str:
    """Collapse a message to one line (the contract is one line on stderr per error), with
    every configured key masked: an error may quote what a server sent back."""
    from stille_post.core.text import clean_text
    from stille_post.providers.secrets import redact

    return clean_text(redact(" ".join(str(text).split()))) or "unknown error"


def _debug_requested(argv: list[str]) -> bool:
    return "--debug" in argv or os.environ.get("STILLE_POST_DEBUG", "") not in ("", "0")


def main(argv: list[str] | None = None) -> None:
    """Run the app and turn every outcome into an exit code (0 done, 1 failed or aborted,
    2 usage or input error) and at most one line on stderr.

    `--debug` anywhere on the command line (or STILLE_POST_DEBUG=1) lets an unexpected
    error show its traceback; it is removed before typer parses the arguments so that no
    command has to declare it.
    """
    from stille_post.providers.logsafety import guard_root

    guard_root()  # no dependency may turn on INFO logging (and print URLs) for us
    args = list(sys.argv[1:] if argv is None else argv)
    debug = _debug_requested(args)
    args = [a for a in args if a != "--debug"]
    sys.exit(_run(args, debug))


def _run(args: list[str], debug: bool) -> int:
    try:
        code = app(args=args, prog_name="stille-post", standalone_mode=False)
    except UsageError as exc:
        typer.echo(f"error: {_one_line(str(exc))}", err=True)
        return 2
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        return 130
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        return 1
    except NoArgsIsHelpError as exc:
        exc.show()  # `stille-post` alone: the help text, as typer would print it
        return 0
    except TyperException as exc:
        # typer vendors click (typer._click): ClickException derives from TyperException
        # and carries its own exit code (2 for every usage error). `click` itself is not a
        # dependency, so it is never imported here.
        typer.echo(f"error: {_one_line(exc.format_message())}", err=True)
        return int(getattr(exc, "exit_code", 1) or 1)
    except UnicodeDecodeError as exc:
        typer.echo(f"error: input is not valid UTF-8 ({exc.reason} at byte {exc.start})",
                   err=True)
        return 2
    except (FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError,
            PermissionError) as exc:
        where = f" {exc.filename}" if exc.filename else ""
        typer.echo(f"error: cannot use{where}: {exc.strerror or exc}", err=True)
        return 2
    except OSError as exc:  # a full disk, a broken pipe, ...: the run failed
        where = f" ({exc.filename})" if exc.filename else ""
        typer.echo(f"error: {exc.strerror or _one_line(str(exc))}{where}", err=True)
        return 1
    except MemoryError:
        typer.echo("error: out of memory", err=True)
        return 1
    except Exception as exc:
        if debug:
            traceback.print_exc()
        else:
            typer.echo(f"error: unexpected {type(exc).__name__}: {_one_line(str(exc))[:300]} "
                       "(run again with --debug for the traceback)", err=True)
        return 1
    # With standalone_mode=False a command's `raise typer.Exit(n)` comes back as the
    # return value n; a command that returns normally gives None (or its own value).
    return code if isinstance(code, int) else 0
