"""`stille-post view`: a transcript as one self-contained HTML replay."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from stille_post.core.errors import UsageError


def register(app: typer.Typer) -> None:
    @app.command()
    def view(
        transcript: Annotated[Path, typer.Argument(help="a transcript (.jsonl) from play")],
        out: Annotated[Path | None, typer.Option(
            "-o", "--out", help="HTML path (default: the transcript's path with .html)")]
        = None,
        open_page: Annotated[bool, typer.Option(
            "--open", help="open the page in the default browser")] = False,
    ) -> None:
        """Write an HTML replay of a game: one file, no network needed to view it."""
        # imported here: jinja2 and the templates are only needed to draw a page
        from stille_post.viewer import default_output, write_html

        if not transcript.is_file():
            raise UsageError(f"no transcript at {transcript}")
        target = out if out is not None else default_output(transcript)
        if target.is_dir():
            # Checked first: writing would leave a .tmp file behind before failing.
            raise UsageError(f"--out {target} is a folder; give a file path")
        if not target.parent.is_dir():
            raise UsageError(f"--out {target}: the folder {target.parent} does not exist")
        if target.resolve() == transcript.resolve():
            raise UsageError(f"the page would overwrite the transcript {transcript}; use -o")
        try:
            path = write_html(transcript, target)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # a file that is not a transcript (or not this format) is the user's input
            raise UsageError(f"{transcript}: cannot read it as a transcript ({exc})") from exc
        except UnicodeDecodeError as exc:
            raise UsageError(f"{transcript}: not a text transcript ({exc.reason})") from exc
        typer.echo(f"replay: {path} ({path.stat().st_size / 1024:.1f} KiB)")
        if open_page:
            webbrowser.open(path.resolve().as_uri())
