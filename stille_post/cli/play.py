"""`stille-post play [GAME]`: one game, rendered live, written to a transcript.

`stille-post play GAME --help` lists the common options and that game's own; with no
GAME the flagship is played with the common options.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from stille_post.cli.gameopts import (
    GameGroup,
    group_callback,
    make_game_command,
    option,
    split_specs,
)
from stille_post.cli.render import LiveRenderer
from stille_post.cli.warnings import llm_seat_warnings
from stille_post.core.errors import UsageError
from stille_post.core.stopping import INTERRUPTED, STOP_REASONS, detach_output, is_hangup
from stille_post.core.transcript import Transcript, TranscriptError, publish
from stille_post.games import DEFAULT_GAME, all_games, get_game
from stille_post.games.kit.definition import GameDefinition
from stille_post.games.kit.setup import parse_assignments, parse_set_value
from stille_post.players.agents import isolating_agents
from stille_post.session import GameRun, play_game

COMMON = [
    option("seed", int | None, None, "--seed", help="game seed; a fresh one if omitted"),
    option("players", str | None, None, "--players",
           help="comma-separated seats, one per seat: bot names (`bot` = the role's "
                "default), models (openai:gpt-5-mini, openai-compatible:MODEL@URL, "
                "model:ALIAS), script:FILE.yaml, `human` (you, in this terminal), `web` "
                "(a person in a browser page), agent:NAME or python:module:attr (an "
                "agent; +MODEL for the model it may call)"),
    option("role", list[str] | None, None, "--role",
           help="NAME=SPEC: every seat of that role plays SPEC; repeatable"),
    option("set_", list[str] | None, None, "--set",
           help="KEY=VALUE: any option of the game, JSON values allowed; repeatable"),
    option("preset", str | None, None, "--preset", help="a named configuration of the game"),
    option("out", Path | None, None, "--out",
           help="transcript path (default: runs/GAME/seed-SEED.jsonl; never overwritten)"),
    option("online", bool, False, "--online", help="LLM seats call the live APIs"),
    option("record", Path | None, None, "--record",
           help="with --online: record the game's HTTP traffic to this cassette"),
    option("replay", Path | None, None, "--replay",
           help="replay LLM seats from this cassette, offline"),
    option("models", Path | None, None, "--models",
           help="a model registry (TOML) of aliases for model:ALIAS seats; default "
                "./models.toml if present"),
    option("strict", bool, False, "--strict",
           help="exit 1 when an LLM seat never got a valid answer (a dead server, a "
                "cassette that does not match); a server that dies during the game "
                "aborts it"),
    option("structured", str | None, None, "--structured",
           help="constrained decoding for every LLM seat: off | schema (the legal moves "
                "as a schema) | legal (also the legal words); default: each alias's own"),
    option("no_preflight", bool, False, "--no-preflight",
           help="with --online: do not probe the model servers before the game"),
    option("port", int | None, None, "--port",
           help="with a `web` seat: serve its page on 127.0.0.1:PORT (0 or omitted: any "
                "free port; the URL is printed)"),
    option("isolate_agents", bool, False, "--isolate-agents",
           help="run each agent seat (agent:, python:) in a process of its own, without the "
                "game's memory, the API keys or the run's files (docs/agents.md)"),
    option("as_json", bool, False, "--json", help="print only a JSON summary"),
    option("quiet", bool, False, "--quiet", help="do not render the conversation"),
]


def unique_path(path: Path) -> Path:
    """Never overwrite a recorded game: add -2, -3, ... to the name. A name whose `.part`
    exists is taken too (a game still being played, or one a `kill -9` cut off)."""
    for candidate in [path, *(path.with_name(f"{path.stem}-{i}{path.suffix}")
                              for i in range(2, 10_000))]:
        if not candidate.exists() and not _part(candidate).exists():
            return candidate
    raise UsageError(f"too many transcripts named like {path}")


def _part(path: Path) -> Path:
    return path.with_name(path.name + ".part")


def game_options(flags: dict[str, Any], sets: list[str] | None) -> dict[str, Any]:
    """The game's options as the user gave them: flags, then `--set` (which wins)."""
    options = dict(flags)
    options.update({k: parse_set_value(v) for k, v in parse_assignments(sets, "set").items()})
    return options


def run_play(definition: GameDefinition, common: dict[str, Any], flags: dict[str, Any]) -> None:
    seed = common.get("seed")
    if seed is None:
        seed = secrets.randbelow(2**31)
    as_json = bool(common.get("as_json"))
    options = game_options(flags, common.get("set_"))
    roles = parse_assignments(common.get("role"), "role")
    out = common.get("out")
    path = unique_path(out or Path("runs") / definition.name / f"seed-{seed}.jsonl")
    console = Console(stderr=as_json, quiet=as_json)
    from stille_post.cli.llm_seats import llm_session
    from stille_post.players.humans import HumanHost, hosting

    players = split_specs(common.get("players"))
    people = _people(players, roles, options, definition, common.get("port"))
    isolate = bool(common.get("isolate_agents"))
    if isolate:
        _warn_without_walls()
    host = HumanHost(port=common.get("port"), vocabulary=definition.events)

    probe = None if common.get("no_preflight") else [*(players or []), *roles.values()]
    stop = _Stop(host)
    placed: list[Path] = []
    with llm_session(online=bool(common.get("online")), record=common.get("record"),
                     replay=common.get("replay"), models=common.get("models"),
                     structured=common.get("structured"), preflight_seats=probe,
                     strict=bool(common.get("strict")),
                     seats=[*(players or []), *roles.values()]) as llm_factory:
        watch: Any = None
        if people:
            # The live rendering is omniscient: with a person at the table they see only
            # their own seat's view (and a web page is fed every event it may show).
            watch = host.observe
        elif not (as_json or common.get("quiet")):
            watch = _Watch(console, definition, f"[bold]{definition.title}[/] seed [bold]{seed}[/]")

        async def play_and_close() -> GameRun:
            stop.install(asyncio.get_running_loop(), asyncio.current_task())
            try:
                if "web" in people:
                    await host.start_web(announce=lambda seat, url: typer.echo(
                        f"web seat: open {url} (Player {seat})", err=True))
                # Written line by line to PATH.part, moved to PATH when the game ends.
                return await play_game(
                    definition.name, seed=seed, out=_part(path),
                    players=players, options=options, roles=roles,
                    preset=common.get("preset"), llm_factory=llm_factory, watch=watch,
                    stream=True, stopped=stop.why)
            finally:
                # First, and with no await before it: a second signal cannot cut it.
                placed.extend(_place(path))
                # The seats' HTTP connections close on the loop that opened them, before
                # asyncio.run closes it.
                await host.aclose()
                if llm_factory is not None:
                    await llm_factory.aclose()

        try:
            with hosting(host), isolating_agents(isolate):
                run = asyncio.run(play_and_close())
        except (asyncio.CancelledError, KeyboardInterrupt):
            # A second signal cut the closing of the page server or of the connections:
            # the game itself was already recorded, with its reason.
            where = f"; transcript: {placed[0]}" if placed else ""
            typer.echo(f"game aborted: {stop.reason or INTERRUPTED}{where}", err=True)
            raise typer.Exit(1) from None
    run.transcript = placed[0] if placed else run.transcript
    # A game in which an LLM seat never got a usable answer "completes" on forfeits alone:
    # say so, in the summary too.
    warnings = llm_seat_warnings(llm_factory.providers if llm_factory is not None else [])
    summary = run.summary()
    if warnings:
        summary["warnings"] = warnings
    if as_json:
        typer.echo(json.dumps(summary, sort_keys=False))
    else:
        _print_summary(console, run.seats, summary)
        spent = (f", {summary['tokens']:,} tokens, ${summary['cost_usd']:.4f}"
                 if "tokens" in summary else "")
        console.print(f"seed {seed}{spent}; transcript: {run.transcript}")
    completed = run.outcome.status == "completed"
    # An aborted game's one line already says what went wrong.
    for warning in [*_header_warnings(run.transcript), *(warnings if completed else [])]:
        typer.echo(f"warning: {warning}", err=True)
    if not completed:
        # typer.echo, not rich: one line on stderr, never wrapped.
        typer.echo(f"game aborted: {' '.join(str(run.outcome.reason).split())}", err=True)
        raise typer.Exit(1)
    if warnings and common.get("strict"):
        raise typer.Exit(1)


class _Stop:
    """Ctrl-C, SIGTERM and SIGHUP during a game (closing the terminal window is how
    people leave). The first ends the game as aborted with the signal's reason, in a valid
    transcript: through the person being asked, if one is (the engine closes the game as
    for any abort), or else by cancelling the game, which `play_game` closes the same way
    (`stopped`). A second signal cancels whatever is still running (the page server's
    goodbye, closing connections); the game is on disk by then.

    SIGHUP points this process's output at /dev/null first: the terminal is gone, and a
    write to it would fail."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self.reason: str | None = None

    def why(self) -> str | None:
        return self.reason

    def install(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any] | None) -> None:
        for signum in STOP_REASONS:
            # Only the main thread can (an embedding caller keeps its own handling).
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, self._signal, signum, task)

    def _signal(self, signum: int, task: asyncio.Task[Any] | None) -> None:
        first = self.reason is None
        if first:
            self.reason = STOP_REASONS[signum]
            if is_hangup(signum):
                detach_output()
            if self.host.interrupt(self.reason):
                return
        if task is not None:
            task.cancel()


def _place(path: Path) -> list[Path]:
    """Move the finished `PATH.part` to PATH (or the next free name: never replacing a
    file). A `.part` without its result line (the disk failed under it) stays as it is:
    its moves are kept, and nothing reads it as a finished game."""
    part = _part(path)
    try:
        if not Transcript.load(part).complete:
            return [part]
    except FileNotFoundError:
        return []
    except (OSError, TranscriptError):
        return [part]
    return [publish(part, path)]


def _warn_without_walls() -> None:
    from stille_post.players import sandbox

    if not sandbox.available():
        typer.echo("warning: this kernel has no Landlock: isolated agents run without the "
                   "game's memory and keys, but can read what your user can read "
                   "(docs/agents.md)", err=True)


def _people(players: list[str] | None, roles: dict[str, str], options: dict[str, Any],
            definition: GameDefinition, port: int | None) -> set[str]:
    """The kinds of person seated ("human", "web"). A person answers in their own time:
    the game's answer deadline is lifted to a week unless the user set one."""
    from stille_post.players.humans import HUMAN_DECISION_TIMEOUT_S, has_people

    people = has_people([*(players or []), *roles.values()])
    if port is not None and "web" not in people:
        raise UsageError("--port serves a web seat's page: seat one with --players web,...")
    if port is not None and not 0 <= port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, got {port}")
    if people and "decision_timeout_s" in definition.config.model_fields \
            and options.get("decision_timeout_s") is None:
        options["decision_timeout_s"] = HUMAN_DECISION_TIMEOUT_S
    return people


def register(app: typer.Typer) -> None:
    play_app = typer.Typer(
        name="play", cls=GameGroup, no_args_is_help=False, invoke_without_command=True,
        help="Play one game. Bots only by default: no keys, no network. "
             "`stille-post play GAME --help` lists that game's options; with no GAME, "
             f"{DEFAULT_GAME} is played.")
    flagship = get_game(DEFAULT_GAME)
    play_app.callback()(group_callback(
        flagship, COMMON, lambda ctx, common, flags: run_play(flagship, common, flags)))
    for definition in all_games().values():
        make_game_command(play_app, definition, COMMON,
                          lambda d, ctx, common, flags: run_play(d, common, flags),
                          help_text="Play one game of it.")
    app.add_typer(play_app)


class _Watch:
    """Renders events live; the banner waits for the first event, so a game refused
    before it starts prints only its one-line error."""

    def __init__(self, console: Console, definition: GameDefinition, banner: str) -> None:
        self.console = console
        self.definition = definition
        self.banner = banner
        self.renderer: LiveRenderer | None = None

    def __call__(self, event: Any) -> None:
        if self.renderer is None:
            self.console.print(self.banner)
            self.renderer = LiveRenderer(self.console, self.definition.events)
        self.renderer(event)


def _header_warnings(path: Path) -> list[str]:
    """A game may warn about its own configuration in the header (`warnings`)."""
    with path.open(encoding="utf-8") as fh:
        header = json.loads(fh.readline())
    return [str(w) for w in header.get("warnings") or []]


def _print_summary(console: Console, seats: dict[str, dict[str, Any]],
                   summary: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"result: {summary['status']}")
    table.add_column("place", justify="right")
    table.add_column("seat")
    table.add_column("player")
    table.add_column("identity / role")
    for seat, place in sorted(summary["placements"].items(), key=lambda kv: (kv[1], kv[0])):
        info = seats.get(seat, {})
        table.add_row(str(place), f"Player {seat}", str(info.get("player", "")),
                      str(info.get("model", info.get("role", ""))))
    console.print(table)


__all__ = ["COMMON", "game_options", "register", "run_play", "unique_path"]
