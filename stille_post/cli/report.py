"""`stille-post report RESULTS_DIR`: leaderboard and metrics of a tournament folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from stille_post.cli.tables import Column, print_table
from stille_post.core.errors import UsageError
from stille_post.tournament.present import cell, heading
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
        replays: Annotated[str, typer.Option(
            "--replays", metavar="N|all",
            help="with --html: replay pages for the first N games (0: none; all: every "
                 "game); the others show their `stille-post view` command")] = "500",
        clean_only: Annotated[bool, typer.Option(
            "--clean-only", help="rate only the games in which no seat forfeited a "
                                 "decision (the error-survival check)")] = False,
    ) -> None:
        """Ratings (TrueSkill), win rates with CIs, game metrics, missing games."""
        from stille_post.tournament.report import (
            DEFAULT_REPLAYS,
            build_report,
            games_page_path,
            load_labels,
            replay_dir,
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
        replay_limit = _replay_limit(replays, DEFAULT_REPLAYS)
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
            err.print(f"wrote {write_html(data, html, replays=replay_limit)}")
            if games_page_path(html).is_file():
                err.print(f"wrote {games_page_path(html)} (every game, its replay in "
                          f"{replay_dir(html)})")
        if as_json:
            typer.echo(json.dumps(data))
        else:
            _print(Console(), data)


def _replay_limit(text: str, default: int) -> int | None:
    """`--replays`: a count of games, or `all` (None: no limit)."""
    value = text.strip().lower()
    if value == "all":
        return None
    if not value.isdigit():
        raise UsageError(f"--replays {text!r}: give a number of games (0 for none) or `all` "
                         f"(default {default})")
    return int(value)


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
            _print_board(Console(), board)
            err = Console(stderr=True)
            for path in written:
                err.print(f"wrote {path}")


def _print_board(console: Console, board: dict[str, Any]) -> None:
    """The cross-game leaderboard: a row per model, its overall rank with the interval,
    and its rank in each game (`unrated` where it met only itself)."""
    columns = [Column("rank", right=True), Column("model"),
               Column("interval", right=True, drop=2), Column("score", right=True, drop=1)]
    games = [g["column"] for g in board["games"]]
    columns += [Column(g, right=True) for g in games]
    rows = []
    for row in board["rows"]:
        lo_hi = row["rank_interval"]
        cells = []
        for g in games:
            c = row["games"].get(g)
            cells.append("–" if c is None else
                         f"#{c['rank']} of {c['of']}" if c.get("rank") else "unrated")
        rows.append([str(row["rank"]) if row["rank"] is not None else "unrated",
                     row["model"], f"{lo_hi[0]}–{lo_hi[1]}" if lo_hi else "–",
                     cell(row["score"]), *cells])
    print_table(console, "leaderboard across games", columns, rows, keys=2)
    if any(row["rank"] is None for row in board["rows"]):
        console.print("unrated: a model that met only itself in a game (every seat) has no "
                      "standing there; unrated in every game, it has no overall rank")


def _print(console: Console, data: dict[str, Any]) -> None:
    from stille_post.tournament.html import standings

    g = data["games"]
    console.print(f"[bold]{escape(data['game'])}[/]: {g['planned']} planned, {g['completed']} "
                  f"completed, {g['aborted']} aborted, {g['missing']} missing "
                  f"({g['rated']} rated)")
    if g["missing"] or g["aborted"]:
        console.print("[yellow]warning:[/] missing and aborted games are not in the ratings; "
                      "missing: "
                      + escape(', '.join((data['missing'] + data['broken'])[:10]) or '-'))
    ranks = standings(data["leaderboard"])
    rows = []
    for r in data["leaderboard"]:
        rows.append([str(ranks.get(r["player"], "unrated")), r["player"], str(r["games"]),
                     cell(r["mu"]), cell(r["sigma"]), cell(r["win_rate"]),
                     f"{r['win_rate_ci'][0]:.2f}–{r['win_rate_ci'][1]:.2f}",
                     cell(r["partial_points"]), cell(r.get("partial_points_sum")),
                     cell(r["dollars"])])
    # Names stay whole: at a narrow width the least needed columns go first.
    print_table(console, f"TrueSkill leaderboard ({data['ratings']['passes']} passes)", [
        Column("#", right=True), Column("player"), Column("games", right=True),
        Column("μ", right=True), Column("σ", right=True), Column("win rate", right=True),
        Column("95% CI", right=True, drop=1), Column("points", right=True, drop=3),
        Column("Σ points", right=True, drop=4), Column("$", right=True, drop=2)],
        rows, keys=2)
    if any(ranks.get(r["player"]) is None for r in data["leaderboard"]):
        console.print("unrated: played only against itself (every seat of its games), so "
                      "its games say nothing about its strength")
    _print_adherence(console, data)
    spend = data.get("spend") or {}
    if spend.get("models"):
        from stille_post.tournament.spend import SPEND_COLUMNS, spend_table_rows

        print_table(console, f"spend: ${spend['dollars']:.4f}, {spend['tokens']:,} tokens "
                             "(every recorded game)",
                    [Column(c, right=c != "model") for c in SPEND_COLUMNS],
                    [list(srow) for srow in spend_table_rows(spend)])
    if data.get("budget"):
        b = data["budget"]
        console.print(f"last run stopped: {b['stopped']} ({b['reason']})")
    overall = data["metrics"]["overall"]
    if overall:
        print_table(console, "game metrics", [Column("metric"), Column("value", right=True)],
                    [[heading(k), cell(v)] for k, v in overall.items()])
    per_player = data["metrics"]["per_player"]
    if any(k != "adherence" for v in per_player.values() for k in v):
        names = sorted({k for v in per_player.values() for k in v} - {"adherence"})
        print_table(console, "game metrics per player",
                    [Column("metric"), *(Column(p, right=True) for p in per_player)],
                    [[heading(n), *(cell(per_player[p].get(n)) for p in per_player)]
                     for n in names])
    for name, table in data["metrics"]["tables"].items():
        print_table(console, heading(name), [Column(heading(c)) for c in table["columns"]],
                    [[cell(v) for v in row] for row in table["rows"]])


def _pct(share: Any) -> str:
    if not isinstance(share, dict) or share.get("rate") is None:
        return "–"
    lo, hi = share["ci"]
    return f"{100 * share['rate']:.0f}% ({100 * lo:.0f}–{100 * hi:.0f})"


def _print_adherence(console: Console, data: dict[str, Any]) -> None:
    """The adherence table (95% Wilson intervals) and the error-survival flag."""
    rows = {p: v["adherence"] for p, v in data["metrics"]["per_player"].items()
            if "adherence" in v}
    if rows:
        print_table(console, "rule adherence (95% CI)", [
            Column("player"), Column("decisions", right=True),
            Column("valid 1st try", right=True), Column("re-asked", right=True),
            Column("forfeited", right=True), Column("over limit", right=True)],
            [[p, str(a["decisions"]), _pct(a["valid_first_try"]), _pct(a["reasks"]),
              _pct(a["forfeits"]), _pct(a["over_limit"])] for p, a in rows.items()])
    s = data.get("error_survival") or {}
    if s.get("clean_only"):
        console.print(f"[bold]--clean-only[/]: rated on the {s['clean_games']} games without a "
                      f"forfeit ({s['games_with_forfeits']} left out)")
    elif s.get("top_ranks_change"):
        console.print(f"[yellow]warning:[/] the top ranks change when the "
                      f"{s['games_with_forfeits']} games with forfeits are left out "
                      f"({', '.join(s['top'])} -> {', '.join(s['clean_top'] or ['none'])}); "
                      "see --clean-only")
