"""Stille Post (seed 000): each model must guess which model it is.

One role, `player`. A bot seat plays a roster model drawn by the rng; an LLM seat's
secret identity is its own roster id (matched by id or api_model), and a model outside
the roster joins that game's identity list (the header lists it under `roster_added`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, get_args

from stille_post.core.errors import ConfigError
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
from stille_post.games.stille_post import rules
from stille_post.games.stille_post.bots import BOTS
from stille_post.games.stille_post.config import StillePostConfig
from stille_post.games.stille_post.game import GAME_NAME, StillePostGame
from stille_post.games.stille_post.prompts import PROMPTS, repair_text
from stille_post.games.stille_post.roster import Provider, Roster, RosterModel, roster_of
from stille_post.players.base import Player
from stille_post.players.specs import SeatSpec

DEFAULT_SEATS = ("detective", "cautious", "gambler", "random")


def header_facts(game: StillePostGame) -> dict[str, Any]:
    """The header facts of a prepared game (the definition's `header` hook)."""
    c = game.config
    phases = rules.guess_phase_count(c.num_players, c.guess_every, c.max_rounds)
    win = rules.enumeration_baseline(phases, len(game.roster))
    warnings = ["this configuration has at least as many guess phases as roster "
                "models; enumerating ids alone wins it"] if win >= 1.0 else []
    return {
        **({"warnings": warnings} if warnings else {}),
        "roster": list(game.roster.ids),
        "roster_added": [m.id for m in game.added],
        "baseline": {
            "guess_phases": phases,
            "enumeration_win": rules.enumeration_baseline(phases, len(game.roster)),
        },
    }


def setup(ctx: SetupContext) -> StillePostGame:
    config: StillePostConfig = ctx.config
    specs = ctx.seat_specs()
    roster = roster_of(ctx.load("data/roster.toml", name="roster", override=config.roster))
    roster, pins, added = llm_identities(roster, specs, config.pinned)
    if pins != config.pinned:
        config = config.model_copy(update={"pinned": pins})
    game = StillePostGame(config, ctx.table(ctx.players_for(specs)), specs, roster=roster)
    game.added = added
    return game


def llm_identities(
    roster: Roster, specs: Sequence[SeatSpec], pinned: Mapping[int, str]
) -> tuple[Roster, dict[int, str], list[RosterModel]]:
    """An LLM seat's secret identity is its own roster id (matched by id or api_model).
    A model outside the roster joins this game's identity list (the header says so)."""
    pins = dict(pinned)
    added: list[RosterModel] = []
    for seat, spec in enumerate(specs, start=1):
        if not spec.is_llm or spec.model is None:
            continue
        # A seat pinned to its own off-roster model is that model joining, as when it
        # is not pinned: set-up then accepts its own header's config (the data export
        # re-plays a game from it).
        if seat in pins and not (pins[seat] == spec.model and roster.find(spec.model) is None):
            continue
        name, kind = spec.model, spec.provider
        if kind == "inspect":  # inspect:openai/gpt-5-mini is the roster's gpt-5-mini
            kind, _, name = spec.model.rpartition("/")
            kind = kind.partition("/")[0]
        match = next((m for m in roster if name in (m.id, m.api_model)), None)
        if match is None:
            # Off-roster models are unknown quantities: filed as efficient, under their kind
            # (an Inspect provider we do not know is filed as openai-compatible).
            match = RosterModel(id=spec.model, tier="efficient",
                                provider=kind if kind in get_args(Provider)
                                else "openai-compatible")
            added.append(match)
        pins[seat] = match.id
    if len(set(pins.values())) != len(pins):
        raise ConfigError("two seats play the same model; a game needs distinct identities")
    return roster.with_extra(added), pins, added


def _bot(name: str) -> Any:
    def make(ctx: BotContext) -> Player:
        return BOTS[name](ctx.rng)
    return make


GAME = GameDefinition(
    name=GAME_NAME,
    title="Stille Post",
    description="Every seat is a different model, nobody is told which, and each must "
                "work out which model it is.",
    package=__name__,
    config=StillePostConfig,
    roles=(Role("player", "every seat", "detective"),),
    players=PlayerRange(2, 4, 12),
    bots={name: _bot(name) for name in BOTS},
    setup=setup,
    prompts=PROMPTS,
    repair_text=repair_text,
    default_seats=lambda n: [DEFAULT_SEATS[i % len(DEFAULT_SEATS)] for i in range(n)],
    events={
        "game_start": EventKind("notice"),
        "intro_prompt": EventKind("heading"),
        "turn_start": EventKind("heading"),
        "message": EventKind("speech"),
        "message_meta": EventKind("silent"),
        "repair_request": EventKind("private"),
        "forfeit": EventKind("notice"),
        "tool_calls": EventKind("silent"),
        "tool_result": EventKind("notice"),
        "tool_refused": EventKind("notice"),
        "hint": EventKind("private"),
        "no_hints_left": EventKind("private"),
        "identity_guess_start": EventKind("heading"),
        "identity_guess": EventKind("speech"),
        "guess_invalid": EventKind("private"),
        "identity_result": EventKind("notice"),
        "eliminated": EventKind("elimination"),
        "game_over": EventKind("game_over"),
        "reveal": EventKind("reveal"),
    },
    presets={
        "benchmark": Preset("benchmark", "exact matching: the fuzzy family exploit is off",
                            {"match": "exact"}),
        "prototype": Preset("prototype", "close to the prototype behind seed 000 (15 turns)",
                            {"num_players": 5, "guess_every": 3, "max_rounds": 3}),
    },
    metrics="stille_post.games.stille_post.metrics:compute_metrics",
    layout="layout.js",
    rulebook="stille_post.games.stille_post.rulebook:HOOKS",
    header=header_facts,
    hidden_options=("pinned",),
    # The local proving ground's game: one round of messages and identity guesses.
    trial=Trial((MODEL_SEAT, "detective", "cautious", "random"), {"max_rounds": 1}, "detective"),
)

__all__ = ["GAME", "StillePostConfig", "StillePostGame", "llm_identities"]
