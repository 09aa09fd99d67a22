"""The `stille-post` command. Each subcommand lives in its own module with `register(app)`.

Every user error (a `UsageError`) is printed as one line on stderr with exit code 2;
tracebacks are for bugs only.
"""

from __future__ import annotations

import sys
from importlib import import_module

import typer

from stille_post.core.errors import UsageError

app = typer.Typer(
    name="stille-post",
    help="LLMs play social-deduction and word games against each other.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)



@app.callback()
def _root() -> None:
    """LLMs play social-deduction and word games against each other."""


# One module per command group; each module owns its options and help text.
_COMMAND_MODULES = ("play", "tournament", "report", "view")

for _name in _COMMAND_MODULES:
    import_module(f"stille_post.cli.{_name}").register(app)


def main() -> None:
    try:
        app(standalone_mode=False)
    except UsageError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(1)
    except Exception as exc:  # click's own usage errors
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
