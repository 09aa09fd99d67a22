"""`stille-post export FOLDER... --out DIR`: every decision, game or event of results
folders as one table, in Parquet (the `data` extra: pyarrow) or JSON Lines
(docs/data.md).

Exit codes: 0 when everything was exported as asked; 1 when a transcript was skipped
(damaged, cut off, or holding text UTF-8 cannot hold: each is named on stderr) or a
game's prompts could not be recovered (its re-play differed from the transcript, or its
game is not installed); 2 for bad input (a missing folder, an output folder that already
holds an export without --overwrite, Parquet without pyarrow).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from stille_post.core.errors import UsageError
from stille_post.core.text import printable

What = Literal["decisions", "games", "events"]
Fmt = Literal["parquet", "jsonl"]
Reward = Literal["win", "partial"]
_DIST = __name__.partition(".")[0]  # the distribution whose `data` extra brings pyarrow
# Named skips and games without prompts listed one per line; the rest are counted.
MAX_LISTED = 20


def register(app: typer.Typer) -> None:
    app.command("export")(export)


def export(
    folders: Annotated[list[Path], typer.Argument(
        help="results folders (tournament, import), folders of transcripts, or transcripts",
        show_default=False)],
    out: Annotated[Path, typer.Option("--out", help="the folder to write the table into")],
    fmt: Annotated[Fmt, typer.Option(
        "--format", help="parquet (needs the `data` extra: pyarrow) or jsonl")] = "parquet",
    what: Annotated[What, typer.Option(
        "--what", help="decisions (one row per decision), games or events")] = "decisions",
    reward: Annotated[Reward, typer.Option(
        "--reward", help="the reward column's scheme: win (1 for first place) or partial "
                         "((n - rank) / (n - 1))")] = "win",
    hf_card: Annotated[bool, typer.Option(
        "--hf-card", help="also write a dataset card (README.md) for a hub")] = False,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="bring an existing export up to date: add the new games, or "
                            "write it anew")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the summary as JSON")]
    = False,
) -> None:
    """Export games as data: one row per decision (the messages the seat was sent, its
    reply, re-asks, tokens, placement and reward), per game, or per event."""
    from stille_post.export.run import ExportRequest, run_export

    if fmt == "parquet":
        _need_pyarrow()
    req = ExportRequest(tuple(folders), out, what=what, fmt=fmt, reward=reward,
                        hf_card=hf_card, overwrite=overwrite)
    err = Console(stderr=True)
    # Only on a terminal: piped, a transient bar still leaves an empty line behind.
    bar = Progress(TextColumn(f"exporting {what}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("games"), TimeRemainingColumn(), console=err,
                   disable=as_json or not err.is_terminal, transient=True)
    from stille_post.export.sources import SourceError

    with bar:
        task = bar.add_task("export", total=None)
        try:
            # A disabled bar is not called per game (it would still lock and update).
            result = run_export(req, progress=None if bar.disable else lambda n, total:
                                bar.update(task, completed=n, total=total))
        except SourceError as exc:
            raise UsageError(str(exc)) from None
    if as_json:
        typer.echo(json.dumps({
            "out": str(result.out), "mode": result.mode, "games": result.games,
            "rows": result.rows, "kept": result.kept,
            "skipped": [{"path": str(s.path), "reason": s.reason} for s in result.skipped],
            "no_prompts": [{"game_id": n.game_id, "reason": n.reason,
                            "expected": n.expected} for n in result.no_prompts],
        }))
    else:
        _summary(err, result, what)
    if result.problems:
        raise typer.Exit(1)


def _need_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise UsageError(f"Parquet export needs pyarrow: pip install '{_DIST}[data]' "
                         "(or --format jsonl)") from None
    from stille_post.export.writer import skip_pandas_probe

    skip_pandas_probe()  # this command's process only: see its docstring


def _summary(err: Console, result: object, what: str) -> None:
    from stille_post.export.run import ExportResult

    assert isinstance(result, ExportResult)

    def say(text: str) -> None:
        err.print(printable(text), markup=False, highlight=False, soft_wrap=True)

    kept = f", {result.kept:,} already there" if result.kept else ""
    how = {"new": "written", "added": "added", "rewritten": "written anew",
           "unchanged": "up to date"}[result.mode]
    say(f"{what}: {result.rows:,} rows from {result.games:,} games {how}{kept}: {result.out}")
    for s in result.skipped[:MAX_LISTED]:
        say(f"skipped {s.line()}")
    if len(result.skipped) > MAX_LISTED:
        say(f"skipped {len(result.skipped) - MAX_LISTED:,} more (listed in "
            f"{result.out}/.export.jsonl)")
    unexpected = [n for n in result.no_prompts if not n.expected]
    expected = [n for n in result.no_prompts if n.expected]
    for n in unexpected[:MAX_LISTED]:
        say(f"no prompts for {n.game_id}: {n.reason}")
    if len(unexpected) > MAX_LISTED:
        say(f"no prompts for {len(unexpected) - MAX_LISTED:,} more games")
    if expected:
        reasons = sorted({n.reason for n in expected})
        say(f"{len(expected):,} games have no prompts, as their transcripts cannot: "
            + "; ".join(reasons[:3]))
