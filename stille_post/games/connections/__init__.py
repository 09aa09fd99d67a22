"""Connections (seed 002): one setter holds a word; the guessers reach it one letter at a
time through clues the setter must not be able to block.

Seats are given setter first: `--players SETTER,GUESSER,GUESSER,...` (or per role:
`--role setter=SPEC --role guesser=SPEC`). A spec is a bot name (frequency, semantic,
adaptive, oracle:p=P / oracle-pNN), an LLM spec such as openai:gpt-5-mini, or
script:FILE.yaml. Rulings: README.md in this folder.
"""

from __future__ import annotations

import re

from stille_post.core.errors import ConfigError, UnknownPlayerError
from stille_post.games.connections import dictionary as D
from stille_post.games.connections import rules
from stille_post.games.connections.bots import (
    BOTS,
    ORACLE_NAMES,
    BotSetup,
    OracleBoard,
    OracleBot,
)
from stille_post.games.connections.config import ConnectionsConfig
from stille_post.games.connections.game import GAME_NAME, ConnectionsGame
from stille_post.games.connections.prompts import PROMPTS, invalid_text, repair_text
from stille_post.games.kit import (
    MODEL_SEAT,
    BotContext,
    EventKind,
    GameDefinition,
    PlayerRange,
    Preset,
    Role,
    SetupContext,
    Trial,
)
from stille_post.games.kit.data import DataFile
from stille_post.players.base import Player
from stille_post.players.specs import SeatSpec

DEFAULT_SETTER, DEFAULT_GUESSER = "frequency", "semantic"


def load_dictionary(ctx: SetupContext, config: ConnectionsConfig) -> D.Dictionary:
    if config.dictionary is not None:
        f = ctx.load("dictionary.txt", name="dictionary", override=config.dictionary)
        d = D.from_text(f.text, source=str(config.dictionary),
                        min_length=config.min_word_length)
        if not d.words:
            raise ConfigError(f"dictionary file {config.dictionary}: no usable word "
                              f"(letters only, at least {config.min_word_length} long)")
        return d
    d = D.wordfreq_english(config.min_word_length, config.min_zipf)
    # Hashed into the header like any data file: the list is built from the installed
    # wordfreq, so its version is part of its name.
    ctx.data.files["dictionary"] = _dictionary_file(d)
    return d


_FILES: dict[D.Dictionary, DataFile] = {}


def _dictionary_file(d: D.Dictionary) -> DataFile:
    key = d  # the object itself (hashed by identity): an id could be reused
    if key not in _FILES:
        _FILES[key] = DataFile("dictionary", f"{d.source} (wordfreq {D.wordfreq_version()}, "
                                             f"min length {d.min_length})", d.text())
    return _FILES[key]


ORACLE_PERCENT = re.compile(r"(?:bot:)?oracle-p([0-9.]+)")


def _oracle_alias(text: str) -> str:
    """`oracle-pNN` (p in percent) is `oracle:p=NN/100`."""
    m = ORACLE_PERCENT.fullmatch(text.strip())
    if m is None:
        return text
    try:
        return f"oracle:p={float(m.group(1)) / 100!r}"
    except ValueError:
        return text  # not a number: the parser names it as an unknown player


def _oracle_p(spec: SeatSpec) -> float | None:
    """The p of an oracle seat (`oracle`, `oracle:p=0.3`), else None."""
    if spec.bot != "oracle":
        return None
    text = dict(spec.bot_args).get("p", "0.5")
    try:
        p = float(text)
    except ValueError:
        raise UnknownPlayerError(f"{spec.raw}: p must be a number, got {text!r}") from None
    if not 0.0 <= p <= 1.0:
        raise UnknownPlayerError(f"{spec.raw}: p must be between 0 and 1")
    return p


def setup(ctx: SetupContext) -> ConnectionsGame:
    config: ConnectionsConfig = ctx.config
    d = load_dictionary(ctx, config)
    if config.word is not None:
        err = rules.secret_error(config.word, d)
        if err:
            raise ConfigError(f"--word: {err} ({d.source}, {len(d):,} words)")
    roles = {s: rules.role_of(s, config.setter) for s in range(1, config.num_players + 1)}
    specs = ctx.seat_specs(roles)
    oracle_p = {s: p for s, spec in enumerate(specs, start=1)
                if (p := _oracle_p(spec)) is not None}
    for seat, p in oracle_p.items():  # one label per oracle, however its spec was written
        specs[seat - 1] = SeatSpec(raw=f"oracle:p={p:g}", bot="oracle",
                                   bot_args=(("p", f"{p:g}"),))
    board = OracleBoard()
    players: dict[int, Player] = {}
    for seat, spec in enumerate(specs, start=1):
        known = {s: persona for s in range(1, config.num_players + 1)
                 if (s == seat or config.share_personas)
                 and (persona := config.persona_of(s))}
        bot_setup = BotSetup(d, config.setter, tuple(config.guesser_seats), board, known)
        if seat in oracle_p:
            players[seat] = OracleBot(ctx.seed, seat, bot_setup, oracle_p[seat])
        else:
            players[seat] = ctx.player(seat, spec, bot_setup)
    return ConnectionsGame(config, ctx.table(players), specs, dictionary=d,
                           oracle_seats=oracle_p)


def _bot(name: str) -> object:
    def make(ctx: BotContext) -> Player:
        setup_: BotSetup = ctx.setup
        return BOTS[name](ctx.rng, setup_, ctx.seat)
    return make


def _oracle(p: float) -> object:
    def make(ctx: BotContext) -> Player:
        return OracleBot(ctx.seed, ctx.seat, ctx.setup, p)
    return make


def default_seats(n: int) -> list[str]:
    return [DEFAULT_SETTER] + [DEFAULT_GUESSER] * (n - 1)


_BOT_FACTORIES = {name: _bot(name) for name in BOTS}
_BOT_FACTORIES["oracle"] = _oracle(0.5)
_BOT_FACTORIES.update({name: _oracle(p) for name, p in ORACLE_NAMES.items()})

GAME = GameDefinition(
    name=GAME_NAME,
    title="Connections",
    description="One setter holds a word; guessers reach it a letter at a time through "
                "clues the setter must not block.",
    package=__name__,
    config=ConnectionsConfig,
    roles=(
        Role("setter", "seat 1: holds the secret word and blocks clues", DEFAULT_SETTER,
             seats=(1,)),
        Role("guesser", "seats 2..n+1: give clues in turn and guess each other's",
             DEFAULT_GUESSER),
    ),
    players=PlayerRange(3, 3, 6),
    bots=_BOT_FACTORIES,  # type: ignore[arg-type]
    setup=setup,
    prompts=PROMPTS,
    repair_text=repair_text,
    invalid_text=invalid_text,
    events={
        "game_start": EventKind("notice"),
        "persona": EventKind("private"),
        "personas": EventKind("notice"),
        "secret": EventKind("private"),
        "prefix": EventKind("notice"),
        "attempt_start": EventKind("heading"),
        "clue_word": EventKind("private"),
        "clue": EventKind("speech", "clue"),
        "guess": EventKind("speech", "word"),
        "scored": EventKind("notice"),
        "repair_request": EventKind("private"),
        "invalid": EventKind("notice"),
        "game_over": EventKind("game_over"),
        "reveal": EventKind("reveal"),
    },
    default_seats=default_seats,
    presets={
        "paper": Preset("paper", "the paper's set-up: two guessers, games up to 200 "
                        "attempts (its longest ran 173)", {"guessers": 2, "max_attempts": 200}),
    },
    metrics="stille_post.games.connections.metrics:compute_metrics",
    charts="stille_post.games.connections.charts:charts",
    layout="layout.js",
    rulebook="stille_post.games.connections.rulebook:HOOKS",
    bot_params={"oracle": ("p",)},
    seat_alias=_oracle_alias,
    hidden_options=("personas", "min_zipf", "max_clue_chars", "max_clue_words",
                    "decision_timeout_s"),
    # The local proving ground's game: the model gives clues and guesses beside a
    # semantic guesser.
    trial=Trial(("frequency", MODEL_SEAT, "semantic"), {"max_attempts": 4}, "semantic"),
)

__all__ = ["GAME", "ConnectionsConfig", "ConnectionsGame"]
