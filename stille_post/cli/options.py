"""Command-line options shared by `play` and `tournament`: one definition, one help text.

Game options default to None ("not given"); each game validates the ones it uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from stille_post.games import GAME_MODULES

Game = Annotated[str, typer.Argument(help=f"one of: {', '.join(GAME_MODULES)}")]
Players = Annotated[str | None, typer.Option(
    help="comma-separated seats, one per seat: bot names (random, detective, ...; `bot` = "
         "the game's default) or provider specs (openai:gpt-5-mini, "
         "openai-compatible:MODEL@URL)")]
NumPlayers = Annotated[int | None, typer.Option(help="number of seats")]
GuessEvery = Annotated[int | None, typer.Option(help="turns between identity guesses (N)")]
MaxRounds = Annotated[int | None, typer.Option(help="rounds before the game ends")]
Match = Annotated[str | None, typer.Option(help="identity matching: fuzzy | exact")]
MaxMessageChars = Annotated[int | None, typer.Option(help="message cap in characters")]
RosterFile = Annotated[Path | None, typer.Option("--roster", help="a roster TOML of your own")]
Words = Annotated[int | None, typer.Option(help="chameleon: words per card (K)")]
TieRule = Annotated[str | None, typer.Option(
    help="chameleon: random | dealer | chameleon_wins")]
ChameleonSeat = Annotated[str | None, typer.Option(
    "--chameleon", help="chameleon: the chameleon's seat spec")]
Others = Annotated[str | None, typer.Option(help="chameleon: the non-chameleons' seat spec")]
Cards = Annotated[Path | None, typer.Option(help="chameleon: a card file of your own")]
Online = Annotated[bool, typer.Option(help="LLM seats call the live APIs")]
Replay = Annotated[Path | None, typer.Option(
    help="replay LLM seats from this cassette, offline")]


def game_options(**values: Any) -> dict[str, Any]:
    """Options the user actually gave; each game validates its own."""
    return {k: v for k, v in values.items() if v is not None}
