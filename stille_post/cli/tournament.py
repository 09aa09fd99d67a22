"""`stille-post tournament GAME` and `stille-post merge`: many games into a results folder.

Settings come from three places, each overriding the one before: a config file
(`--config FILE.toml`), then the command line. The merged result is written to
`tournament.json` in the results folder, so `stille-post tournament --resume --out
FOLDER` needs nothing else.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import secrets
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from stille_post.cli.gameopts import GameGroup, make_game_command, option, split_specs
from stille_post.cli.play import game_options
from stille_post.core.errors import UsageError
from stille_post.games import all_games, get_game
from stille_post.games.kit.definition import GameDefinition
from stille_post.games.kit.setup import parse_assignments
from stille_post.tournament.budget import (
    SPEND_COLUMNS,
    cap_options,
    check_caps,
    folder_spend,
    resolve_caps,
    spend_table_rows,
)
from stille_post.tournament.config import (
    Shard,
    TournamentConfig,
    load_run_settings,
    split_list,
)
from stille_post.tournament.limits import ProviderLimit, RateLimits
from stille_post.tournament.results import aggregate, check_folder, load_results, merge
from stille_post.tournament.runner import check_run_settings, run_tournament, validate

MAX_GAMES = 10_000_000

COMMON = [
    option("config", Path | None, None, "--config",
           help="a tournament file (TOML): game, games, seed, seats or pool, roles, "
                "options, concurrency, rate limits, out; flags override it"),
    option("models", Path | None, None, "--models",
           help="a model registry (TOML) of aliases; default ./models.toml if present"),
    option("games", int | None, None, "--games", help="number of games N [default: 10]"),
    option("seed", int | None, None, "--seed",
           help="first game seed S; games use S..S+N-1 (fresh if omitted)"),
    option("players", str | None, None, "--players",
           help="comma-separated seats, one per seat (the same in every game)"),
    option("pool", str | None, None, "--pool",
           help="models or bots to seat from, comma-separated; --seats per game"),
    option("seats", int | None, None, "--seats",
           help="with --pool: seats per game [default: the game's default]"),
    option("seating", str | None, None, "--seating",
           help="with --pool: balanced (rotation; everyone meets evenly) | sampled"),
    option("role", list[str] | None, None, "--role",
           help="NAME=SPEC: every seat of that role plays SPEC; repeatable"),
    option("set_", list[str] | None, None, "--set",
           help="KEY=VALUE: any option of the game, JSON values allowed; repeatable"),
    option("preset", str | None, None, "--preset", help="a named configuration of the game"),
    option("concurrency", int | None, None, "--concurrency",
           help="games played at the same time [default: 8]"),
    option("workers", int | None, None, "--workers",
           help="processes playing games (default: every core when no seat calls a "
                "model, else 1); rate limits need 1"),
    option("out", Path | None, None, "--out",
           help="results folder (default: runs/tournaments/GAME-seedS)"),
    option("resume", bool, False, "--resume",
           help="continue the tournament in --out: skip finished games, redo partial ones"),
    option("retry_aborted", bool, False, "--retry-aborted",
           help="with --resume: play aborted games again"),
    option("shard", str | None, None, "--shard",
           help="play only shard i of n (e.g. 2/4); combine with `stille-post merge`"),
    option("rate_limit", list[str] | None, None, "--rate-limit",
           help="PROVIDER=RPM[:TPM] requests and tokens per minute; repeatable"),
    option("fsync", bool, True, "--fsync/--no-fsync",
           help="fsync each transcript before indexing it (survives power loss)"),
    option("online", bool, False, "--online", help="LLM seats call the live APIs"),
    option("replay", Path | None, None, "--replay",
           help="replay LLM seats from this cassette, offline"),
    option("as_json", bool, False, "--json", help="print only the aggregate JSON"),
    *cap_options(),  # --budget-usd, --max-tokens, --hard-cap (providers/caps.py)
]


def _file_settings(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    from stille_post.configfiles import load_tournament_file

    return load_tournament_file(path).model_dump(exclude_none=True)


def run_tournament_cmd(definition: GameDefinition | None, cli: dict[str, Any],
                       flags: dict[str, Any]) -> None:
    file = _file_settings(cli.get("config"))
    if definition is None:
        definition = _game_of(file, cli)
    elif file.get("game") not in (None, definition.name):
        raise UsageError(f"--config names the game {file['game']!r}, the command line "
                         f"{definition.name!r}")

    def pick(key: str, file_key: str | None = None, default: Any = None) -> Any:
        value = cli.get(key)
        return value if value is not None else file.get(file_key or key, default)

    out: Path | None = pick("out")
    resume = bool(cli.get("resume"))
    saved_run: dict[str, Any] = {}
    if resume and out is not None and not any(cli.get(k) is not None for k in (
            "games", "seed", "players", "pool")) and not flags and not cli.get("set_") \
            and not cli.get("config") and (out / "tournament.json").exists():
        # `--resume --out FOLDER`: the folder says everything.
        config = TournamentConfig.load(out)
        if config.game != definition.name:
            raise UsageError(f"{out} holds a {config.game} tournament, not {definition.name}")
        saved_run = load_run_settings(out)
    else:
        config = _config(definition, cli, flags, file, pick)
    folder = out or Path("runs") / "tournaments" / f"{definition.name}-seed{config.seed}"
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--out {folder} is a file; give a results folder")
    concurrency = next((v for v in (cli.get("concurrency"), file.get("concurrency"),
                                    saved_run.get("concurrency")) if v is not None), 8)
    rate_texts = list(cli.get("rate_limit") or []) or \
        [f"{k}={v}" for k, v in (file.get("rate_limits") or {}).items()] or \
        list(saved_run.get("rate_limits") or [])
    limits = RateLimits(dict(ProviderLimit.parse(t) for t in rate_texts))
    workers: int | None = cli.get("workers")
    # Refused before the run is announced (the runner checks the same).
    check_run_settings(concurrency, 1 if workers is None else workers, limits)
    models_file = cli.get("models") or file.get("models") or saved_run.get("models")
    if models_file is not None:
        # Absolute, so that `--resume --out FOLDER` works from any folder.
        models_file = Path(models_file).resolve()
    as_json = bool(cli.get("as_json"))
    err = Console(stderr=True)
    from stille_post.cli.llm_seats import llm_session

    session_options: dict[str, Any] = {}
    if models_file is not None:
        session_options["models"] = Path(models_file)
    # keep_providers=False: a provider per LLM seat of every game, each freed with its game
    with llm_session(online=bool(cli.get("online")), record=None, replay=cli.get("replay"),
                     keep_providers=False, **session_options) as llm_factory:
        caps = resolve_caps(cli, file, saved_run)  # the registry's per-alias caps too
        check_caps(config, caps, workers)
        validate(config, llm_factory)
        check_folder(folder, config, resume=resume)
        if not as_json:
            shard = f", shard {config.shard}" if config.shard else ""
            err.print(f"[bold]{definition.title}[/] tournament: {config.games} games from "
                      f"seed [bold]{config.seed}[/]{shard} -> {folder}")
        if workers is None:
            # Bot-only runs are CPU-bound: use every core. With model seats the run waits
            # on the network, one process is enough, and rate limits need a single one.
            workers = 1 if llm_factory is not None or limits.limits or caps.active \
                else (os.cpu_count() or 1)
        stats = asyncio.run(run_tournament(
            config, folder, resume=resume, concurrency=concurrency, limits=limits,
            llm_factory=llm_factory, progress=not as_json, durable=bool(cli.get("fsync")),
            retry_aborted=bool(cli.get("retry_aborted")), workers=workers, caps=caps,
            run_settings={"concurrency": concurrency, "rate_limits": rate_texts,
                          **({"models": str(models_file)} if models_file else {}),
                          **caps.run_settings()}))
    summary = aggregate(load_results(folder))
    summary["this_run"] = {"played": stats.played, "skipped": stats.skipped,
                           "aborted": stats.aborted}
    if stats.budget is not None:
        summary["budget"] = {k: stats.budget[k] for k in ("stopped", "reason", "cap", "caps",
                                                           "games")}
        summary["spend"] = stats.budget["spend"]
    elif summary["tokens"]:
        summary["spend"] = folder_spend(folder).all.to_json()
    if as_json:
        typer.echo(json.dumps(summary))
    else:
        _print_aggregate(Console(), summary)
        Console().print(f"report: stille-post report {folder}")


def _game_of(file: dict[str, Any], cli: dict[str, Any]) -> GameDefinition:
    if file.get("game"):
        return get_game(str(file["game"]))
    out = cli.get("out")
    if cli.get("resume") and out is not None and (out / "tournament.json").exists():
        return get_game(TournamentConfig.load(out).game)
    raise UsageError("name the game (`stille-post tournament GAME`), give --config FILE "
                     "with a `game`, or --resume --out FOLDER")


def _config(definition: GameDefinition, cli: dict[str, Any], flags: dict[str, Any],
            file: dict[str, Any], pick: Any) -> TournamentConfig:
    games = pick("games", default=10)
    if not 1 <= games <= MAX_GAMES:
        raise UsageError(f"--games must be between 1 and {MAX_GAMES:,}, got {games}")
    seed = pick("seed")
    if seed is None:
        seed = secrets.randbelow(2**31)
    options = {**dict(file.get("options") or {}), **game_options(flags, cli.get("set_"))}
    roles = {**dict(file.get("roles") or {}), **parse_assignments(cli.get("role"), "role")}
    players = split_specs(cli.get("players")) if cli.get("players") is not None \
        else file.get("players")
    pool = list(split_list(cli.get("pool")) or ()) if cli.get("pool") is not None \
        else file.get("pool")
    seating = pick("seating", default="balanced")
    if pool and seating not in ("balanced", "sampled"):
        raise UsageError(f"--seating {seating!r}: use balanced or sampled")
    seats = pick("seats") or options.get("num_players") or definition.players.default
    if pool and "num_players" not in options:
        options["num_players"] = seats
    return TournamentConfig(
        game=definition.name, games=games, seed=seed,
        seating="fixed" if not pool else seating,
        players=tuple(players) if players else None,
        pool=tuple(pool) if pool else None,
        seats_per_game=seats if pool else None,
        options={k: str(v) if isinstance(v, Path) else v for k, v in options.items()},
        shard=Shard.parse(cli["shard"]) if cli.get("shard") else None,
        roles=roles, preset=pick("preset"))


def register(app: typer.Typer) -> None:
    tour_app = typer.Typer(
        name="tournament", cls=GameGroup, invoke_without_command=True, no_args_is_help=False,
        help="Play N games (seeds S..S+N-1) into a resumable results folder. "
             "`stille-post tournament GAME --help` lists that game's options; "
             "`--resume --out FOLDER` alone continues a tournament.")

    def default(ctx: typer.Context, **cli: Any) -> None:
        if ctx.invoked_subcommand is not None:
            ctx.obj = cli
            return
        if not any(cli.get(k) for k in ("config", "resume")):
            typer.echo(ctx.get_help())
            raise typer.Exit(0)
        run_tournament_cmd(None, cli, {})

    ctx_param = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                  annotation=typer.Context)
    default.__signature__ = inspect.Signature([ctx_param, *COMMON])  # type: ignore[attr-defined]
    default.__annotations__ = {p.name: p.annotation for p in [ctx_param, *COMMON]}
    tour_app.callback()(default)
    for definition in all_games().values():
        make_game_command(tour_app, definition, COMMON,
                          lambda d, ctx, cli, flags: run_tournament_cmd(d, cli, flags),
                          help_text="Play a tournament of it.")
    app.add_typer(tour_app)

    @app.command("merge")
    def merge_cmd(
        out: Annotated[Path, typer.Argument(help="the merged results folder")],
        shards: Annotated[list[Path], typer.Argument(help="shard results folders")],
        as_json: Annotated[bool, typer.Option("--json", help="print only the aggregate JSON")]
        = False,
    ) -> None:
        """Combine shard folders of one tournament into one results folder."""
        added = merge(out, shards)
        summary = aggregate(load_results(out))
        if as_json:
            typer.echo(json.dumps({**summary, "added": added}))
        else:
            _print_aggregate(Console(), summary)
            Console().print(f"merged {added} games into {out}")


def _print_aggregate(console: Console, summary: dict[str, Any]) -> None:
    status = ", ".join(f"{k} {v}" for k, v in summary["status"].items())
    console.print(f"{summary['games']} games planned: {status}")
    table = Table(title="per player")
    for col in ("player", "games", "wins", "eliminations", "survivals", "win rate"):
        table.add_column(col, justify="left" if col == "player" else "right")
    for name, c in summary["players"].items():
        table.add_row(name, str(c["games"]), str(c["wins"]), str(c["eliminations"]),
                      str(c["survivals"]), f"{c['win_rate']:.3f}")
    console.print(table)
    spend = summary.get("spend")
    if spend and spend.get("models"):
        t = Table(title=f"spend: ${spend['dollars']:.4f}, {spend['tokens']:,} tokens")
        for col in SPEND_COLUMNS:
            t.add_column(col, justify="left" if col == "model" else "right")
        for row in spend_table_rows(spend):
            t.add_row(*row)
        console.print(t)
    budget = summary.get("budget")
    if budget is not None:
        style = "yellow" if budget["stopped"] == "budget" else "green"
        console.print(f"[{style}]stopped: {budget['stopped']}[/] ({budget['reason']}); "
                      f"{budget['games']['not_started']} games not started")
