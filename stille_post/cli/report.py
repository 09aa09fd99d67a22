"""`stille-post report RESULTS_DIR`: leaderboard and metrics of a tournament folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from stille_post.core.errors import UsageError
from stille_post.tournament.ratings import DEFAULT_PASSES


def register(app: typer.Typer) -> None:
    register_leaderboard(app)

    @app.command()
    def report(
        results_dir: Annotated[Path, typer.Argument(help="a tournament results folder")],
        passes: Annotated[int, typer.Option(help="TrueSkill passes over shuffled orders")]
        = DEFAULT_PASSES,
        seed: Annotated[int, typer.Option(help="seed of the pass orders and bootstrap")] = 0,
        workers: Annotated[int | None, typer.Option(
            help="processes for the TrueSkill passes (default: every core when games x "
                 "passes is large)")] = None,
        no_cache: Annotated[bool, typer.Option(
            "--no-cache", help="recompute even if .report-cache/ has this report")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")]
        = False,
        csv_dir: Annotated[Path | None, typer.Option("--csv", help="write CSV files here")]
        = None,
        html: Annotated[Path | None, typer.Option(help="write a one-file HTML report here")]
        = None,
        labels: Annotated[Path | None, typer.Option(
            "--labels", help="display names (TOML): \"model-key\" = \"Name\" per line")]
        = None,
        clean_only: Annotated[bool, typer.Option(
            "--clean-only", help="rate only the games in which no seat forfeited a "
                                 "decision (the error-survival check)")] = False,
    ) -> None:
        """Ratings (TrueSkill), win rates with CIs, game metrics, missing games."""
        from stille_post.tournament.report import (
            build_report,
            load_labels,
            write_csv,
            write_html,
        )

        if not results_dir.is_dir():
            raise UsageError(f"{results_dir} is not a folder")
        if passes < 1:
            raise UsageError("--passes must be at least 1")
        if workers is not None and workers < 1:
            raise UsageError("--workers must be at least 1")
        if html is not None and html.is_dir():
            # Checked first: writing would leave a .tmp file behind before failing.
            raise UsageError(f"--html {html} is a folder; give a file path")
        if html is not None and not html.parent.is_dir():
            raise UsageError(f"--html {html}: the folder {html.parent} does not exist")
        if csv_dir is not None and csv_dir.exists() and not csv_dir.is_dir():
            raise UsageError(f"--csv {csv_dir} is a file; give a folder")
        names = load_labels(labels) if labels is not None else None
        try:
            data = build_report(results_dir, passes=passes, seed=seed, workers=workers,
                                labels=names, cache=not no_cache,
                                progress=Console(stderr=True).is_terminal,
                                clean_only=clean_only)
        except (ValueError, KeyError, TypeError) as exc:
            # A damaged transcript (named with its line) or an index row of another format.
            raise UsageError(f"{results_dir}: cannot build the report ({exc})") from exc
        from stille_post.tournament.spend import folder_spend, read_spend_file

        # Every recorded game's spend (aborted and budget-cut ones too), per model.
        data["spend"] = folder_spend(results_dir).all.to_json()
        stopped = read_spend_file(results_dir)
        if stopped is not None:
            data["budget"] = {k: stopped.get(k) for k in ("stopped", "reason", "cap", "caps")}
        err = Console(stderr=True)
        if csv_dir is not None:
            for path in write_csv(data, csv_dir):
                err.print(f"wrote {path}")
        if html is not None:
            err.print(f"wrote {write_html(data, html)}")
        if as_json:
            typer.echo(json.dumps(data))
        else:
            _print(Console(), data)


def _f(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, float) else "–" if v is None else str(v)


def register_leaderboard(app: typer.Typer) -> None:
    @app.command()
    def leaderboard(
        folders: Annotated[list[Path], typer.Argument(
            help="results folders (tournaments or imported logs), any mix of games")],
        out: Annotated[Path, typer.Option(
            "--out", help="where index.html, leaderboard.json and leaderboard.csv go")]
        = Path("leaderboard"),
        labels: Annotated[Path | None, typer.Option(
            "--labels", help="display names (TOML): \"model-key\" = \"Name\"; models "
                             "are matched across folders by this name")] = None,
        seed: Annotated[int, typer.Option(help="seed of the ratings and the rank interval")]
        = 0,
        as_json: Annotated[bool, typer.Option("--json", help="print the JSON too")] = False,
    ) -> None:
        """One leaderboard across games: a row per model, a column per game."""
        from stille_post.tournament import crossboard
        from stille_post.tournament.report import load_labels

        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out} is a file; give a folder")
        names = load_labels(labels) if labels is not None else None
        boards = crossboard.load_boards(folders, names, seed=seed)
        board = crossboard.build(boards, seed=seed)
        written = crossboard.write(board, boards, out)
        if as_json:
            typer.echo(json.dumps(board))
        else:
            err = Console(stderr=True)
            for path in written:
                err.print(f"wrote {path}")


def _print(console: Console, data: dict[str, Any]) -> None:
    g = data["games"]
    console.print(f"[bold]{data['game']}[/]: {g['planned']} planned, {g['completed']} "
                  f"completed, {g['aborted']} aborted, {g['missing']} missing "
                  f"({g['rated']} rated)")
    if g["missing"] or g["aborted"]:
        console.print("[yellow]warning:[/] missing and aborted games are not in the ratings; "
                      f"missing: {', '.join((data['missing'] + data['broken'])[:10]) or '-'}")
    board = Table(title=f"TrueSkill leaderboard ({data['ratings']['passes']} passes)")
    for col in ("#", "player", "games", "μ", "σ", "win rate", "95% CI", "points", "Σ points",
                "$"):
        board.add_column(col, justify="left" if col == "player" else "right")
    for i, r in enumerate(data["leaderboard"], start=1):
        lo, hi = r["win_rate_ci"]
        board.add_row(str(i), r["player"], str(r["games"]), _f(r["mu"]), _f(r["sigma"]),
                      _f(r["win_rate"]), f"{lo:.2f}–{hi:.2f}", _f(r["partial_points"]),
                      _f(r.get("partial_points_sum")), _f(r["dollars"]))
    console.print(board)
    _print_adherence(console, data)
    spend = data.get("spend") or {}
    if spend.get("models"):
        from stille_post.tournament.spend import SPEND_COLUMNS, spend_table_rows

        t = Table(title=f"spend: ${spend['dollars']:.4f}, {spend['tokens']:,} tokens "
                        "(every recorded game)")
        for col in SPEND_COLUMNS:
            t.add_column(col, justify="left" if col == "model" else "right")
        for srow in spend_table_rows(spend):
            t.add_row(*srow)
        console.print(t)
    if data.get("budget"):
        b = data["budget"]
        console.print(f"last run stopped: {b['stopped']} ({b['reason']})")
    per_player = data["metrics"]["per_player"]
    if any(k != "adherence" for v in per_player.values() for k in v):
        names = sorted({k for v in per_player.values() for k in v} - {"adherence"})
        t = Table(title="game metrics per player")
        t.add_column("metric")
        for p in per_player:
            t.add_column(p, justify="right")
        for n in names:
            t.add_row(n, *(_f(per_player[p].get(n)) for p in per_player))
        console.print(t)
    for name, table in data["metrics"]["tables"].items():
        t = Table(title=name)
        for c in table["columns"]:
            t.add_column(str(c))
        for row in table["rows"]:
            t.add_row(*(_f(v) for v in row))
        console.print(t)


def _pct(cell: Any) -> str:
    if not isinstance(cell, dict) or cell.get("rate") is None:
        return "–"
    lo, hi = cell["ci"]
    return f"{100 * cell['rate']:.0f}% ({100 * lo:.0f}–{100 * hi:.0f})"


def _print_adherence(console: Console, data: dict[str, Any]) -> None:
    """The adherence table (95% Wilson intervals) and the error-survival flag."""
    rows = {p: v["adherence"] for p, v in data["metrics"]["per_player"].items()
            if "adherence" in v}
    if rows:
        t = Table(title="rule adherence (95% CI)")
        for col in ("player", "decisions", "valid 1st try", "re-asked", "forfeited",
                    "over limit"):
            t.add_column(col, justify="left" if col == "player" else "right")
        for p, a in rows.items():
            t.add_row(p, str(a["decisions"]), _pct(a["valid_first_try"]), _pct(a["reasks"]),
                      _pct(a["forfeits"]), _pct(a["over_limit"]))
        console.print(t)
    s = data.get("error_survival") or {}
    if s.get("clean_only"):
        console.print(f"[bold]--clean-only[/]: rated on the {s['clean_games']} games without a "
                      f"forfeit ({s['games_with_forfeits']} left out)")
    elif s.get("top_ranks_change"):
        console.print(f"[yellow]warning:[/] the top ranks change when the "
                      f"{s['games_with_forfeits']} games with forfeits are left out "
                      f"({', '.join(s['top'])} -> {', '.join(s['clean_top'] or ['none'])}); "
                      "see --clean-only")
