"""The Chameleon (seed 003): one hidden chameleon, a secret word, one word each, a vote.

Roles: `chameleon` (one seat, drawn by the rng) and `others`. Seats are given per seat
(`--players a,b,c,d`) or per role (`--role chameleon=SPEC --role others=SPEC`); both may
be mixed, the role winning for its seats. A spec is a bot name (trivial, revealing,
copycat, heuristic, subtle), an LLM spec such as openai:gpt-5-mini, or script:FILE.yaml.
A theory game (`--set theory=...`, see theory/) seats only the theory bots.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from stille_post.core.errors import ConfigError
from stille_post.games.chameleon import rules, theory
from stille_post.games.chameleon.bots import BOTS
from stille_post.games.chameleon.cards import (
    CARDS_RESOURCE,
    TRAITS_RESOURCE,
    Card,
    cards_of,
    load_cards,
    with_traits,
)
from stille_post.games.chameleon.config import ChameleonConfig
from stille_post.games.chameleon.game import GAME_NAME, ChameleonGame
from stille_post.games.chameleon.prompts import PROMPTS, invalid_text, repair_text
from stille_post.games.chameleon.theory.model import CATEGORY
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
from stille_post.players.base import Player

DEFAULT_BOT = "subtle"


def setup(ctx: SetupContext) -> ChameleonGame:
    config: ChameleonConfig = ctx.config
    if config.theory is not None:
        return _theory_setup(ctx, config)
    cards = playable_cards(config, cards_of(ctx.load(CARDS_RESOURCE, name="cards",
                                                     override=config.cards)))
    deal = rules.deal(ctx.rng, [(c.category, c.words) for c in cards], config.num_players,
                      config.words)
    card = next(c for c in cards if c.category == deal.category)
    roles = {s: ("chameleon" if s == deal.chameleon else "others")
             for s in range(1, config.num_players + 1)}
    specs = ctx.seat_specs(roles)
    theory.check_seats(None, specs)
    if config.cards is None and any(s.bot == "subtle" for s in specs):
        # The shipped cards' traits, read (and hashed into the header) only when a bot
        # that says traits sits: a game without one reads exactly what it read before.
        card = with_traits(card, ctx.load(TRAITS_RESOURCE, name="traits"))
    return ChameleonGame(config, ctx.table(ctx.players_for(specs, setup=card)), specs,
                         deal=deal)


def _theory_setup(ctx: SetupContext, config: ChameleonConfig) -> ChameleonGame:
    """A theory game: the abstract card w1..wK, the class's response space, the paper's
    random tie-break, and theory bots only (every seat `theory` when none is named)."""
    point = theory.theory_of(str(config.theory), config.num_players, config.words,
                             config.alpha)
    if config.tie_rule != "random":
        raise ConfigError(f"a theory game breaks ties at random, as the paper does "
                          f"(--tie-rule {config.tie_rule} is not for it)")
    if ctx.players is None and not ctx.roles:
        ctx = replace(ctx, roles={"others": "theory", "chameleon": "theory"})
    deal = rules.deal(ctx.rng, [(CATEGORY, point.words)], config.num_players, config.words)
    roles = {s: ("chameleon" if s == deal.chameleon else "others")
             for s in range(1, config.num_players + 1)}
    specs = ctx.seat_specs(roles)
    theory.check_seats(point, specs)
    return ChameleonGame(config, ctx.table(ctx.players_for(specs, setup=point)), specs,
                         deal=deal, theory=point)


def playable_cards(config: ChameleonConfig, cards: tuple[Card, ...] | None = None
                   ) -> list[Card]:
    chosen = list(cards if cards is not None else load_cards(config.cards))
    if config.category is not None:
        chosen = [c for c in chosen if c.category.casefold() == config.category.casefold()]
        if not chosen:
            raise ConfigError(f"no card has the category {config.category!r}")
    fit = [c for c in chosen if len(c.words) >= config.words]
    if not fit:
        most = max(len(c.words) for c in chosen)
        raise ConfigError(f"--words {config.words}: no card has that many words "
                          f"(the most is {most})")
    return fit


def _theory_bot(name: str) -> Callable[[BotContext], Player]:
    def make(ctx: BotContext) -> Player:
        if not isinstance(ctx.setup, theory.Theory):
            raise ConfigError(f"bot {name} plays only in a theory game "
                              "(add --set theory=concealing|revealing|amb)")
        return theory.TheoryBot(ctx.rng, ctx.setup, name)
    return make


def _bot(name: str) -> Callable[[BotContext], Player]:
    def make(ctx: BotContext) -> Player:
        card: Card | None = ctx.setup
        return BOTS[name](ctx.rng, card)
    return make


GAME = GameDefinition(
    name=GAME_NAME,
    title="The Chameleon",
    description="One hidden chameleon, a secret word, one word each, then a vote.",
    package=__name__,
    config=ChameleonConfig,
    roles=(
        Role("others", "the players who know the secret word", DEFAULT_BOT),
        Role("chameleon", "the one seat (drawn at random) that does not know it",
             DEFAULT_BOT),
    ),
    players=PlayerRange(3, 4, 20),
    bots={**{name: _bot(name) for name in BOTS},
          **{name: _theory_bot(name) for name in theory.THEORY_BOTS}},
    setup=setup,
    prompts=PROMPTS,
    repair_text=repair_text,
    invalid_text=invalid_text,
    events={
        "game_start": EventKind("notice"),
        "role": EventKind("private"),
        "dealer": EventKind("notice"),
        "speaking_order": EventKind("notice"),
        "turn_start": EventKind("heading"),
        "word": EventKind("speech", "word"),
        "repair_request": EventKind("private"),
        "invalid": EventKind("notice"),
        "vote_start": EventKind("heading"),
        "vote": EventKind("notice"),
        "vote_result": EventKind("notice"),
        "tie_break_request": EventKind("notice"),
        "tie_break": EventKind("notice"),
        "accusation": EventKind("elimination"),
        "second_chance": EventKind("notice"),
        "guess": EventKind("speech", "word"),
        "game_over": EventKind("game_over"),
        "reveal": EventKind("reveal"),
    },
    presets={
        "paper": Preset("paper", "the paper's set-up: K=16, random tie-breaks",
                        {"words": 16, "tie_rule": "random"}),
        "chatarena": Preset("chatarena", "ChatArena's: ties let the chameleon go free",
                            {"tie_rule": "chameleon_wins"}),
        "llmchameleon": Preset("llmchameleon", "LLMChameleon's: a dealer settles ties",
                               {"tie_rule": "dealer"}),
    },
    metrics="stille_post.games.chameleon.metrics:compute_metrics",
    charts="stille_post.games.chameleon.charts:charts",
    hidden_options=("theory", "alpha"),
    layout="layout.js",
    rulebook="stille_post.games.chameleon.rulebook:HOOKS",
    # The local proving ground's game: the model's seat is the chameleon or not, as the
    # seed draws it.
    trial=Trial((MODEL_SEAT, "heuristic", "heuristic", "heuristic"), {}, "heuristic"),
)

__all__ = ["GAME", "ChameleonConfig", "ChameleonGame", "playable_cards"]
