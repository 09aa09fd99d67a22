"""`stille-post games`: every registered game with its roles, bots, options, defaults
and presets; `--json` prints the same as data."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from stille_post.games import all_games


def register(app: typer.Typer) -> None:
    @app.command()
    def games(
        as_json: Annotated[bool, typer.Option("--json", help="print the games as JSON")]
        = False,
    ) -> None:
        """List the games, their roles, bots, options and presets."""
        described = [g.describe() for g in all_games().values()]
        if as_json:
            typer.echo(json.dumps({"games": described}, default=str))
            return
        console = Console()
        for g in described:
            p = g["players"]
            console.print(f"\n[bold]{g['name']}[/] — {g['title']}: {g['description']}")
            console.print(f"  seats {p['min']}..{p['max']} (default {p['default']}); "
                          f"default seats: {', '.join(g['default_seats'])}")
            console.print("  roles: " + "; ".join(
                f"{r['name']} ({r['help']}, default bot {r['default_bot']})"
                for r in g["roles"]))
            console.print("  bots: " + ", ".join(g["bots"]))
            if g["presets"]:
                console.print("  presets: " + "; ".join(
                    f"{n} ({v['help']})" for n, v in g["presets"].items()))
            table = Table(show_header=True, box=None, pad_edge=False)
            for col in ("option", "default", "meaning"):
                table.add_column(col)
            for name, o in g["options"].items():
                table.add_row(o["flag"] or f"--set {name}=…", str(o["default"]), o["help"])
            console.print(table)
