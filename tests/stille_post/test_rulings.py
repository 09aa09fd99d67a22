"""Stille Post rulings (the game's README) that a rulebook scenario cannot state: how an
LLM seat finds its identity in the roster (ruling 18), and whose rng a bot draws from
(ruling 15). The scenario-shaped rulings are in spec/stille_post/rulings.yaml."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from stille_post.core.rng import make_rng
from stille_post.games.kit.setup import BotContext, prepare
from stille_post.games.stille_post import GAME, llm_identities
from stille_post.games.stille_post.roster import load_roster
from stille_post.players.specs import parse_seat_spec


def _specs(*raw: str) -> list[Any]:
    return [parse_seat_spec(text, tuple(GAME.bots)) for text in raw]


def test_an_llm_seat_is_pinned_by_its_roster_ids_api_model() -> None:
    """Ruling 18: the seat's model is matched against a roster entry's `id` or its
    `api_model` (the seed's claude-haiku-4-5-20241022 is served as ...-20251001); a model
    outside the roster joins this game's identity list and the header's `roster_added`."""
    roster = load_roster()
    haiku = roster.get("claude-haiku-4-5-20241022")
    assert haiku.api_model not in (None, haiku.id)  # the case under test exists
    specs = _specs(f"anthropic:{haiku.api_model}", "openai:gpt-5",
                   "openai-compatible:qwen3-8b@http://127.0.0.1:11434/v1", "random")
    extended, pins, added = llm_identities(roster, specs, {})
    assert pins == {1: haiku.id, 2: "gpt-5", 3: "qwen3-8b"}
    assert [m.id for m in added] == ["qwen3-8b"]
    assert extended.ids == (*roster.ids, "qwen3-8b")


def _bot_rngs(players: list[str], seed: int) -> tuple[random.Random, dict[int, random.Random]]:
    """The game's rng and the rng each `random` bot was handed, for one line-up."""
    handed: dict[int, random.Random] = {}
    make_random = GAME.bots["random"]

    def recording(ctx: BotContext) -> Any:
        handed[ctx.seat] = ctx.rng
        return make_random(ctx)

    definition = dataclasses.replace(GAME, bots={**GAME.bots, "random": recording})
    game_rng = make_rng(seed)
    prepare(definition, seed=seed, rng=game_rng, players=players)
    return game_rng, handed


def test_a_bot_draws_from_its_own_rng_so_another_seats_bot_never_shifts_it() -> None:
    """Ruling 15: each bot's rng is derived from (seed, seat, bot), apart from the game's:
    a bot's draws never move the game's, and changing another seat's bot leaves this
    seat's draws as they were."""
    game_a, rngs_a = _bot_rngs(["random", "random", "random", "random"], seed=7)
    game_b, rngs_b = _bot_rngs(["random", "cautious", "gambler", "random"], seed=7)
    assert set(rngs_a) == {1, 2, 3, 4} and set(rngs_b) == {1, 4}
    assert all(r is not game_a for r in rngs_a.values())
    state = game_a.getstate()
    draws_a = {seat: [r.random() for _ in range(5)] for seat, r in rngs_a.items()}
    assert game_a.getstate() == state  # the bots drew; the game's stream did not move
    draws_b = {seat: [r.random() for _ in range(5)] for seat, r in rngs_b.items()}
    assert draws_a[1] == draws_b[1] and draws_a[4] == draws_b[4]
    assert len({tuple(d) for d in draws_a.values()}) == 4  # four seats, four streams
    assert game_a.getstate() == game_b.getstate()
