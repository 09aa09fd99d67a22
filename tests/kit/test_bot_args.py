"""Seat specs carry a bot's arguments through the kit (`oracle:p=0.3`): parsed once by
the shared spec parser, checked against the game's `bot_params`, handed to the bot in
its BotContext. Connections' oracle is the one bot that takes one (p)."""

from __future__ import annotations

import pytest

from stille_post.core.errors import UnknownPlayerError
from stille_post.core.rng import make_rng
from stille_post.games.connections import GAME
from stille_post.games.kit.setup import prepare
from stille_post.players.specs import parse_seat_spec


def test_the_parser_reads_a_bots_arguments() -> None:
    bots = ("oracle", "random")
    spec = parse_seat_spec("oracle:p=0.3", bots)
    assert (spec.bot, spec.bot_args, spec.label) == ("oracle", (("p", "0.3"),),
                                                     "bot:oracle:p=0.3")
    assert parse_seat_spec("bot:oracle:p=0.3,q=x", bots).bot_args == (("p", "0.3"), ("q", "x"))
    assert parse_seat_spec("random", bots).bot_args == ()
    for bad in ("oracle:p", "oracle:=1", "oracle:p=", "oracle:p=1,"):
        with pytest.raises(UnknownPlayerError, match="NAME:key=value"):
            parse_seat_spec(bad, bots)


def _labels(players: list[str]) -> dict[str, str]:
    prepared = prepare(GAME, seed=1, rng=make_rng(1), players=players)
    return {s: row["player"] for s, row in prepared.seats_json().items()}


def test_every_spelling_of_an_oracle_gets_one_label_and_its_p() -> None:
    labels = _labels(["oracle:p=0.30", "bot:oracle:p=0.3", "oracle-p30", "oracle"])
    assert labels == {"1": "bot:oracle:p=0.3", "2": "bot:oracle:p=0.3",
                      "3": "bot:oracle:p=0.3", "4": "bot:oracle:p=0.5"}
    # the game's shorthand (its seat_alias) takes any percent, not only the listed names
    assert _labels(["oracle-p100", "oracle-p33", "oracle-p7.5"]) == {
        "1": "bot:oracle:p=1", "2": "bot:oracle:p=0.33", "3": "bot:oracle:p=0.075"}
    prepared = prepare(GAME, seed=1, rng=make_rng(1), players=["oracle:p=0.25"] + ["frequency"] * 2)
    assert prepared.engine.oracle_seats == {1: 0.25}


@pytest.mark.parametrize(("spec", "message"), [
    ("oracle:p=2", "p must be between 0 and 1"),
    ("oracle-p150", "p must be between 0 and 1"),
    ("oracle:p=high", "p must be a number"),
    ("oracle:q=0.3", "bot oracle takes p=..."),
    ("frequency:p=0.3", "bot frequency takes no arguments"),
])
def test_a_bad_argument_is_one_line(spec: str, message: str) -> None:
    with pytest.raises(UnknownPlayerError, match=message):
        prepare(GAME, seed=1, rng=make_rng(1), players=[spec, "frequency", "frequency"])
