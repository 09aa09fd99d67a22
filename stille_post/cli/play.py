"""`stille-post play`: one game, rendered live, written to a transcript."""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from stille_post.cli import options as O
from stille_post.cli.options import game_options
from stille_post.cli.render import LiveRenderer
from stille_post.core.errors import UsageError
from stille_post.games import get_game
from stille_post.session import play_game


def unique_path(path: Path) -> Path:
    """Never overwrite a recorded game: add -2, -3, ... to the name."""
    if not path.exists():
        return path
    for i in range(2, 10_000):
        candidate = path.with_name(f"{path.stem}-{i}{path.suffix}")
        if not candidate.exists():
            return candidate
    raise UsageError(f"too many transcripts named like {path}")


def parse_players(text: str | None) -> list[str] | None:
    if text is None:
        return None
    seats = [p.strip() for p in text.split(",") if p.strip()]
    if not seats:
        raise UsageError("--players is empty; give one comma-separated spec per seat")
    return seats


def register(app: typer.Typer) -> None:
    @app.command()
    def play(
        game: O.Game = "stille-post",
        seed: Annotated[int | None, typer.Option(help="game seed; a fresh one if omitted")]
        = None,
        players: O.Players = None,
        num_players: O.NumPlayers = None,
        guess_every: O.GuessEvery = None,
        max_rounds: O.MaxRounds = None,
        match: O.Match = None,
        max_message_chars: O.MaxMessageChars = None,
        roster: O.RosterFile = None,
        words: O.Words = None,
        tie_rule: O.TieRule = None,
        chameleon: O.ChameleonSeat = None,
        others: O.Others = None,
        cards: O.Cards = None,
        out: Annotated[Path | None, typer.Option(
            help="transcript path (default: runs/GAME/seed-SEED.jsonl)")] = None,
        online: O.Online = False,
        record: Annotated[Path | None, typer.Option(
            help="with --online: record the game's HTTP traffic to this cassette")] = None,
        replay: O.Replay = None,
        as_json: Annotated[bool, typer.Option("--json", help="print only a JSON summary")]
        = False,
        quiet: Annotated[bool, typer.Option(help="do not render the conversation")] = False,
    ) -> None:
        """Play one game. Bots only by default: no keys, no network."""
        definition = get_game(game)
        if seed is None:
            seed = secrets.randbelow(2**31)
        options = game_options(
            num_players=num_players, guess_every=guess_every, max_rounds=max_rounds,
            match=match, max_message_chars=max_message_chars, roster=roster, words=words,
            tie_rule=tie_rule, chameleon=chameleon, others=others, cards=cards,
        )
        path = unique_path(out or Path("runs") / definition.name / f"seed-{seed}.jsonl")
        console = Console(stderr=as_json, quiet=as_json)
        err = Console(stderr=True)
        from stille_post.cli.llm_seats import llm_session

        with llm_session(online=online, record=record, replay=replay) as llm_factory:
            watch = None
            if not (as_json or quiet):
                watch = _Watch(console, f"[bold]{definition.name}[/] seed [bold]{seed}[/]")
            run = asyncio.run(play_game(
                definition.name, seed=seed, out=path, players=parse_players(players),
                options=options, llm_factory=llm_factory, watch=watch,
            ))
        summary = run.summary()
        if as_json:
            typer.echo(json.dumps(summary, sort_keys=False))
        else:
            _print_summary(console, run.seats, summary)
            spent = (f", {summary['tokens']:,} tokens, ${summary['cost_usd']:.4f}"
                     if "tokens" in summary else "")
            console.print(f"seed {seed}{spent}; transcript: {run.transcript}")
        baseline = _baseline(run.transcript)
        if baseline is not None and baseline >= 1.0:
            err.print("[yellow]warning:[/] this configuration has at least as many guess "
                      "phases as roster models; enumerating ids alone wins it")
        if run.outcome.status != "completed":
            err.print(f"[red]game aborted:[/] {run.outcome.reason}")
            raise typer.Exit(1)


class _Watch:
    """Renders events live; the banner waits for the first event, so a game refused
    before it starts prints only its one-line error."""

    def __init__(self, console: Console, banner: str) -> None:
        self.console = console
        self.banner = banner
        self.renderer: LiveRenderer | None = None

    def __call__(self, event: Any) -> None:
        if self.renderer is None:
            self.console.print(self.banner)
            self.renderer = LiveRenderer(self.console, {})
        self.renderer(event)


def _baseline(path: Path) -> float | None:
    with path.open(encoding="utf-8") as fh:
        header = json.loads(fh.readline())
    value = (header.get("baseline") or {}).get("enumeration_win")
    return float(value) if value is not None else None


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
