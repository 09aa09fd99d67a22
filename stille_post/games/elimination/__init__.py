"""The Elimination Game (seed 001, docs/rules.md §2): public statements, preference pairing,
private chats, anonymous votes with a tie chain, and a jury of the eliminated.

Every seat plays the same role, `player`; a spec is a bot (random, loyal, backstabber,
sheep) or an LLM seat. With no seats named, 8 seats are two of each bot.
"""

from __future__ import annotations

from stille_post.games.elimination.bots import BOTS, default_seats
from stille_post.games.elimination.config import EliminationConfig
from stille_post.games.elimination.game import GAME_NAME, EliminationEngine
from stille_post.games.elimination.prompts import PROMPTS, repair_text
from stille_post.games.kit import MODEL_SEAT, Trial
from stille_post.games.kit.definition import EventKind, GameDefinition, PlayerRange, Preset, Role
from stille_post.games.kit.engine import Engine
from stille_post.games.kit.setup import SetupContext

EVENTS: dict[str, EventKind] = {
    "game_start": EventKind("notice", help="the seats, limits and options"),
    "round_start": EventKind("heading", help="a round begins: who is still in"),
    "phase": EventKind("heading", help="ranking, private chats, vote, final, jury"),
    "speaking_order": EventKind("notice", help="the rng order of a speaking phase"),
    "public_message": EventKind("speech", help="a public statement"),
    "ranking": EventKind("private", help="a seat's own ranking (only that seat sees it)"),
    "pairing_trace": EventKind("silent", help="the deferred-acceptance steps (log only)"),
    "pairing": EventKind("notice", help="who chats with whom"),
    "private_message": EventKind("speech", help="a private chat line (the pair only)"),
    "vote": EventKind("private", help="a seat's own vote (only that seat sees it)"),
    "vote_reason": EventKind("silent", text_key="reason", help="a vote's reason (log only)"),
    "vote_result": EventKind("notice", help="counts per target; voters stay anonymous"),
    "tie": EventKind("notice", help="a tied vote and who re-votes"),
    "tie_break_message": EventKind("speech", help="a tied seat's statement"),
    "tie_break": EventKind("notice", help="one step of the tie chain"),
    "elimination": EventKind("elimination", help="a seat is out, with its vote count"),
    "final_message": EventKind("speech", help="a finalist's statement to the jury"),
    "game_over": EventKind("game_over", help="the winner and the ranks"),
    "reveal": EventKind("reveal", help="the final ranks and votes received"),
    "repair_request": EventKind("private", help="a corrective re-ask"),
}


def setup(ctx: SetupContext) -> Engine[EliminationConfig]:
    config: EliminationConfig = ctx.config
    specs = ctx.seat_specs()
    return EliminationEngine(config, ctx.table(ctx.players_for(specs)), specs)


GAME = GameDefinition(
    name=GAME_NAME,
    title="The Elimination Game",
    description="public and private chat, preference pairing, anonymous votes with "
                "tie-breaks, and a jury of the eliminated (seed 001)",
    package=__name__,
    config=EliminationConfig,
    roles=(Role("player", "every seat plays the same role", "random"),),
    players=PlayerRange(3, 8, 20),
    bots=BOTS,
    setup=setup,
    prompts=PROMPTS,
    repair_text=repair_text,
    events=EVENTS,
    default_seats=default_seats,
    presets={
        "public-only": Preset("public-only", "the anchor's public-only version: no private "
                              "chats", {"private_subrounds": 0}),
        "short": Preset("short", "4 seats, one private subround: quick LLM games",
                        {"num_players": 4, "private_subrounds": 1}),
    },
    metrics="stille_post.games.elimination.metrics:compute_metrics",
    charts="stille_post.games.elimination.charts:charts",
    importers={"logs": "stille_post.games.elimination.importer.convert:LOGS"},
    layout="layout.js",
    rulebook="stille_post.games.elimination.rulebook:HOOKS",
    hidden_options=("max_message_chars", "reason_words", "decision_timeout_s",
                    "repair_attempts"),
    # The local proving ground's game: the short preset's table, one private subround.
    trial=Trial((MODEL_SEAT, "loyal", "sheep", "random"),
                {"num_players": 4, "private_subrounds": 1}, "loyal"),
)

__all__ = ["EVENTS", "GAME", "EliminationConfig", "EliminationEngine"]
