"""`stille-post tournament GAME` and `stille-post merge`: many games into a results folder.

Settings are one model (tournament/settings.py) in layers, each overriding the one
before: defaults, a tournament file (`--config FILE.toml`), the folder's saved run (with
`--resume`), then the command line. The common options below are generated from that
model's fields; the rest say what to do rather than what to play.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import secrets
import shlex
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from stille_post.cli.gameopts import GameGroup, make_game_command, option
from stille_post.cli.tables import Column, print_table
from stille_post.core.errors import ConfigError, UsageError
from stille_post.games import all_games, get_game
from stille_post.games.kit.definition import GameDefinition
from stille_post.players.agents import isolating_agents
from stille_post.providers.inflight import caps_set as in_flight_caps_set
from stille_post.tournament.caps import Caps, caps_of, check_caps
from stille_post.tournament.config import CONFIG_FILE
from stille_post.tournament.results import aggregate, check_folder, load_results, merge
from stille_post.tournament.runner import (
    RunInterrupted,
    RunStats,
    resume_command_for,
    run_tournament,
    validate,
)
from stille_post.tournament.settings import Layer, TournamentSettings, flags, resolve
from stille_post.tournament.spend import SPEND_COLUMNS, folder_spend, spend_table_rows

ACTIONS = [
    option("config", Path | None, None, "--config",
           help="a tournament file (TOML) of the settings below; flags override it"),
    option("resume", bool, False, "--resume",
           help="continue the tournament in --out: skip finished games, redo partial ones"),
    option("retry_aborted", bool, False, "--retry-aborted",
           help="with --resume: play aborted games again"),
    option("online", bool, False, "--online", help="LLM seats call the live APIs"),
    option("replay", Path | None, None, "--replay",
           help="replay LLM seats from this cassette, offline"),
    option("as_json", bool, False, "--json", help="print only the aggregate JSON"),
    option("estimate", bool, False, "--estimate",
           help="print the expected tokens and dollars per model (offline, no keys) and "
                "play nothing"),
]
# One option per settings field that has a flag; None means "not given on the line".
COMMON = ACTIONS + [option(name, flag.cli_type | None, None, *flag.decls, help=flag.help)
                    for name, flag in flags().items()]


def run_tournament_cmd(definition: GameDefinition | None, cli: dict[str, Any],
                       flags: dict[str, Any]) -> None:
    if cli.get("estimate") and cli.get("resume"):
        raise UsageError("--estimate plans a new tournament and plays nothing; drop "
                         "--resume (or --estimate)")
    settings = settings_from(definition, cli, flags)
    if cli.get("estimate"):
        _print_estimate(settings, bool(cli.get("as_json")))
        return
    folder = settings.folder()
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--out {folder} is a file; give a results folder")
    from stille_post.cli.llm_seats import llm_session

    as_json = bool(cli.get("as_json"))
    # keep_providers=False: a provider per LLM seat of every game, lent by a pool that
    # takes it back when its game is over (providers/pool.py)
    from stille_post.cli.llm_seats import preflight
    from stille_post.providers.models import active_models

    with llm_session(online=bool(cli.get("online")), record=None, replay=cli.get("replay"),
                     keep_providers=False, models=settings.models,
                     max_in_flight=settings.max_in_flight,
                     structured=settings.structured,
                     seats=[*(settings.players or ()), *(settings.pool or ()),
                            *(settings.roles or {}).values()]) as llm_factory, \
            isolating_agents(settings.isolate_agents):
        config = settings.config()
        if config.has_masked_seats():  # read back from tournament.json (issue 27, M2)
            raise UsageError(f"{folder}/tournament.json keeps seat URLs without their "
                             "passwords or keys; give the seats again (--players, --pool "
                             "or --config) with --resume")
        caps = caps_of(settings)  # and the model registry's per-alias caps
        check_caps(config, caps, settings.workers)
        validate(config, llm_factory)
        check_folder(folder, config, resume=bool(cli.get("resume")))
        if cli.get("online") and settings.preflight:
            # After every local check: a dead server is found before any game starts.
            preflight([*(settings.players or settings.pool or ()),
                       *settings.roles.values()], active_models())
        if not as_json:
            shard = f", shard {config.shard}" if config.shard else ""
            Console(stderr=True).print(
                f"[bold]{config.game}[/] tournament: {config.games} games from seed "
                f"[bold]{config.seed}[/]{shard} -> {folder}")
        try:
            stats = asyncio.run(run_tournament(
                config, folder, resume=bool(cli.get("resume")),
                concurrency=settings.concurrency,
                limits=settings.limits(), llm_factory=llm_factory, progress=not as_json,
                durable=settings.fsync, retry_aborted=bool(cli.get("retry_aborted")),
                workers=workers_for(settings, llm_factory is not None, caps,
                                 replay=cli.get("replay") is not None), caps=caps,
                run_settings=settings.run_settings(), stop_on_signals=True,
                resume_command=_resume_command(folder, cli)))
        except RunInterrupted as stopped:  # Ctrl-C: one line, saved games and the resume
            typer.echo(stopped.line, err=True)
            raise typer.Exit(stopped.exit_code) from None
    _print_summary(folder, stats, as_json)


def _resume_command(folder: Path, cli: dict[str, Any]) -> str:
    """What continues this run: the folder keeps the settings; how the seats reach their
    models (`--online`, `--replay`) is said again."""
    command = resume_command_for(folder)
    if cli.get("online"):
        command += " --online"
    if cli.get("replay") is not None:
        command += f" --replay {shlex.quote(str(cli['replay']))}"
    return command


def _print_estimate(settings: TournamentSettings, as_json: bool) -> None:
    from stille_post.providers.models import load_models, using_models
    from stille_post.tournament.estimate import estimate

    with using_models(load_models(settings.models)):
        config = settings.config()
        check_caps(config, caps_of(settings), settings.workers)
        plan = estimate(config, limits=settings.limits(), budget_usd=settings.budget_usd,
                        max_tokens=settings.max_tokens)
    if as_json:
        typer.echo(json.dumps(plan))
        return
    console = Console()
    console.print(f"estimate of {plan['games']} {config.game} games ({plan['method']})")
    table = Table(title="expected spend (low-high: the range of the sampled games)")
    for col in ("model", "seat-games", "input tok", "output tok", "tokens", "dollars"):
        table.add_column(col, justify="left" if col == "model" else "right")

    def span(block: dict[str, float], money: bool = False) -> str:
        f = (lambda v: f"${v:,.4f}") if money else (lambda v: f"{v:,.0f}")
        return f"{f(block['expected'])} ({f(block['low'])}-{f(block['high'])})"

    for label, m in plan["models"].items():
        table.add_row(label, str(m["seat_games"]), f"{m['input_tokens']['expected']:,.0f}",
                      f"{m['output_tokens']['expected']:,.0f}", span(m["tokens"]),
                      span(m["dollars"], True))
    table.add_row("total", "", f"{plan['input_tokens']['expected']:,.0f}",
                  f"{plan['output_tokens']['expected']:,.0f}", span(plan["tokens"]),
                  span(plan["dollars"], True))
    console.print(table)
    console.print(f"per game: {plan['per_game']['tokens']:,.0f} tokens, "
                  f"${plan['per_game']['dollars']:.4f}")
    wall = plan["wall_minutes"]
    console.print(f"wall time at the rate limits: {wall['total']:.1f} min" if wall else
                  "wall time: no rate limits set (bound by the providers' latency)")
    if plan.get("within_caps") is not None:
        console.print(f"within the caps: {plan['within_caps']} of {plan['games']} games")


def settings_from(definition: GameDefinition | None, cli: dict[str, Any],
                  game_flags: dict[str, Any]) -> TournamentSettings:
    """The layers of one command, merged and validated (one line on any bad value)."""
    layers = [Layer({}, lambda loc, problem: problem)]
    if cli.get("config") is not None:
        layers.append(_file_layer(cli["config"]))
    out = cli.get("out") if cli.get("out") is not None else \
        next((la.values.get("out") for la in reversed(layers) if "out" in la.values), None)
    if cli.get("resume") and out is not None and (out / CONFIG_FILE).exists():
        layers.append(_saved_layer(out))
    command_line = _command_line_layer(cli, game_flags)
    if definition is not None:
        command_line["game"] = definition.name
    layers.append(Layer(command_line, _flag_problem))
    _same_game(layers, definition)
    try:
        return resolve(layers, fresh_seed=lambda: secrets.randbelow(2**31))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _file_layer(path: Path) -> Layer:
    from stille_post.configfiles import load_tournament_file

    given = load_tournament_file(path)
    values = {k: getattr(given, k) for k in given.model_fields_set}
    return Layer(values, lambda loc, problem: f"{path}: {'.'.join(map(str, loc))}: {problem}")


def _saved_layer(folder: Path) -> Layer:
    saved = folder / CONFIG_FILE
    return Layer(TournamentSettings.saved(folder),
                 lambda loc, problem: f"{saved}: {'.'.join(map(str, loc))}: {problem}")


def _command_line_layer(cli: dict[str, Any], game_flags: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, flag in flags().items():
        given = cli.get(name)
        if given is not None:
            values[name] = flag.parse(given) if flag.parse else given
    if game_flags:
        # the game's own flags, under --set (which wins)
        values["options"] = {**game_flags, **values.get("options", {})}
    return values


def _flag_problem(loc: tuple[Any, ...], problem: str) -> str:
    name = str(loc[0]) if loc else ""
    flag = flags().get(name)
    where = flag.decls[0].split("/")[0] if flag else name
    inner = ".".join(map(str, loc[1:]))
    return f"{where}{' ' + inner if inner else ''}: {problem}"


def _same_game(layers: list[Layer], definition: GameDefinition | None) -> None:
    """One game per command: the file, the folder and the command line must agree."""
    named = [(la, la.values["game"]) for la in layers if la.values.get("game")]
    if not named and definition is None:
        raise UsageError("name the game (`stille-post tournament GAME`), give --config FILE "
                         "with a `game`, or --resume --out FOLDER")
    games = {game for _, game in named}
    if len(games) > 1:
        raise UsageError(f"the tournament file, the results folder and the command line name "
                         f"different games: {', '.join(sorted(games))}")
    for game in games:
        get_game(game)  # a one-line error for an unknown game


def workers_for(settings: TournamentSettings, calls_models: bool, caps: Caps,
             replay: bool = False) -> int:
    """Processes for the run when `--workers` is not given: every core (at most one per
    game at once), unless the run needs one tally. Rate limits, budget caps and caps on
    calls in flight are counted by one process; a replayed cassette is matched by one.
    Model seats without those get every core too: against a fast server a single process
    runs out of CPU first (1.6-2.2 ms of client CPU per call; 200 games x 64 at 100 ms
    took 1.35-1.45 x the ideal in one process, 1.13-1.18 in two:
    docs/performance-real-path.md). The runner never starts more processes than games at
    once (runner.process_slots)."""
    if settings.workers is not None:
        return settings.workers
    one_tally = settings.rate_limits or caps.active or (
        calls_models and (replay or in_flight_caps_set()))
    # Never more processes than games at once (the runner holds to it too).
    return 1 if one_tally else max(1, min(os.cpu_count() or 1, settings.concurrency))


def _print_summary(folder: Path, stats: RunStats, as_json: bool) -> None:
    from stille_post.providers.replicas import counts as replica_counts

    summary = aggregate(load_results(folder))
    summary["this_run"] = {"played": stats.played, "skipped": stats.skipped,
                           "aborted": stats.aborted}
    replicas = replica_counts()
    if replicas:  # calls per replica of a replicated alias (providers/replicas.py)
        summary["this_run"]["replicas"] = replicas
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


def short_usage() -> str:
    return (f"usage: stille-post tournament GAME [OPTIONS]   (games: {', '.join(all_games())})\n"
            "       stille-post tournament --config FILE.toml\n"
            "       stille-post tournament --resume --out FOLDER\n"
            "`stille-post tournament GAME -h` lists the options.")


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
            # No game: a short usage on stderr (the whole help is `-h`), exit 2.
            typer.echo(short_usage(), err=True)
            raise typer.Exit(2)
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
    print_table(console, "per player", [
        Column("player"), Column("games", right=True), Column("wins", right=True),
        Column("eliminations", right=True, drop=1), Column("survivals", right=True, drop=2),
        Column("win rate", right=True)],
        [[name, str(c["games"]), str(c["wins"]), str(c["eliminations"]), str(c["survivals"]),
          f"{c['win_rate']:.3f}"] for name, c in summary["players"].items()])
    spend = summary.get("spend")
    if spend and spend.get("models"):
        print_table(console, f"spend: ${spend['dollars']:.4f}, {spend['tokens']:,} tokens",
                    [Column(col, right=col != "model") for col in SPEND_COLUMNS],
                    [list(row) for row in spend_table_rows(spend)])
    replicas = summary.get("this_run", {}).get("replicas")
    if replicas:
        console.print("calls per replica: " + "; ".join(
            f"{url} {c['calls']}" + (f" ({c['failed']} failed)" if c["failed"] else "")
            for url, c in replicas.items()))
    budget = summary.get("budget")
    if budget is not None:
        style = "yellow" if budget["stopped"] == "budget" else "green"
        console.print(f"[{style}]stopped: {budget['stopped']}[/] ({budget['reason']}); "
                      f"{budget['games']['not_started']} games not started")
