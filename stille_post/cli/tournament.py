"""`stille-post tournament GAME` and `stille-post merge`: many games into a results folder."""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from stille_post.cli import options as O
from stille_post.cli.options import game_options
from stille_post.core.errors import UsageError
from stille_post.games import get_game
from stille_post.tournament.config import Shard, TournamentConfig, split_list
from stille_post.tournament.limits import ProviderLimit, RateLimits
from stille_post.tournament.results import aggregate, check_folder, load_results, merge
from stille_post.tournament.runner import run_tournament, validate


def register(app: typer.Typer) -> None:
    @app.command()
    def tournament(
        game: O.Game,
        games: Annotated[int, typer.Option(help="number of games N")] = 10,
        seed: Annotated[int | None, typer.Option(
            help="first game seed S; games use S..S+N-1 (fresh if omitted)")] = None,
        players: O.Players = None,
        pool: Annotated[str | None, typer.Option(
            help="models to seat from, comma-separated; --num-players seats per game")] = None,
        seating: Annotated[str, typer.Option(
            help="with --pool: balanced (rotation; everyone meets evenly) | sampled")]
        = "balanced",
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
        concurrency: Annotated[int, typer.Option(help="games played at the same time")] = 8,
        out: Annotated[Path | None, typer.Option(
            help="results folder (default: runs/tournaments/GAME-seedS)")] = None,
        resume: Annotated[bool, typer.Option(
            help="continue the tournament in --out: skip finished games, redo partial ones")]
        = False,
        retry_aborted: Annotated[bool, typer.Option(
            help="with --resume: play aborted games again")] = False,
        shard: Annotated[str | None, typer.Option(
            help="play only shard i of n (e.g. 2/4); combine with `stille-post merge`")]
        = None,
        rate_limit: Annotated[list[str] | None, typer.Option(
            help="PROVIDER=RPM[:TPM] requests and tokens per minute; repeatable")] = None,
        fsync: Annotated[bool, typer.Option(
            help="fsync each transcript before indexing it (survives power loss)")] = True,
        online: O.Online = False,
        replay: O.Replay = None,
        as_json: Annotated[bool, typer.Option("--json", help="print only the aggregate JSON")]
        = False,
    ) -> None:
        """Play N games (seeds S..S+N-1) into a resumable results folder."""
        definition = get_game(game)
        if seed is None:
            seed = secrets.randbelow(2**31)
        options = game_options(
            num_players=num_players, guess_every=guess_every, max_rounds=max_rounds,
            match=match, max_message_chars=max_message_chars, roster=roster, words=words,
            tie_rule=tie_rule, chameleon=chameleon, others=others, cards=cards)
        pool_list = split_list(pool)
        if pool_list is not None and seating not in ("balanced", "sampled"):
            raise UsageError(f"--seating {seating!r}: use balanced or sampled")
        config = TournamentConfig(
            game=definition.name, games=games, seed=seed,
            seating="fixed" if pool_list is None else seating,  # type: ignore[arg-type]
            players=split_list(players), pool=pool_list,
            seats_per_game=(num_players or 4) if pool_list is not None else None,
            options={k: str(v) if isinstance(v, Path) else v for k, v in options.items()},
            shard=Shard.parse(shard) if shard else None)
        folder = out or Path("runs") / "tournaments" / f"{definition.name}-seed{seed}"
        limits = RateLimits(dict(ProviderLimit.parse(t) for t in rate_limit or []))
        err = Console(stderr=True)
        from stille_post.cli.llm_seats import llm_session

        with llm_session(online=online, record=None, replay=replay) as llm_factory:
            validate(config, llm_factory)
            check_folder(folder, config, resume=resume)
            if not as_json:
                err.print(f"[bold]{definition.name}[/] tournament: {games} games from seed "
                          f"[bold]{seed}[/]{f', shard {config.shard}' if config.shard else ''}"
                          f" -> {folder}")
            stats = asyncio.run(run_tournament(
                config, folder, resume=resume, concurrency=concurrency, limits=limits,
                llm_factory=llm_factory, progress=not as_json, durable=fsync,
                retry_aborted=retry_aborted))
        summary = aggregate(load_results(folder))
        summary["this_run"] = {"played": stats.played, "skipped": stats.skipped,
                               "aborted": stats.aborted}
        if as_json:
            typer.echo(json.dumps(summary))
        else:
            _print_aggregate(Console(), summary)
            Console().print(f"report: stille-post report {folder}")

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
