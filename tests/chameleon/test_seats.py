"""Role-aware seats (--chameleon / --others / --players) and the seat records."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from stille_post.core.errors import ConfigError, UnknownPlayerError, UsageError
from stille_post.games.chameleon import GAME
from stille_post.games.kit import PreparedGame
from stille_post.games.kit.setup import prepare as kit_prepare
from stille_post.players.base import Player, PromptBook
from stille_post.players.llm import LLMPlayer
from stille_post.providers.scripted import ScriptedProvider

from .conftest import prepare


def _labels(prepared: PreparedGame) -> dict[int, tuple[str, str]]:
    return {int(s): (v["player"], v["role"]) for s, v in prepared.seats_json().items()}


@pytest.mark.parametrize("seed", range(12))
def test_chameleon_and_others(seed: int) -> None:
    prepared = prepare(seed, {"chameleon": "bot:copycat", "others": "revealing"})
    cham = prepared.engine.deal.chameleon
    for seat, (label, role) in _labels(prepared).items():
        assert role == ("chameleon" if seat == cham else "non-chameleon")
        assert label == ("bot:copycat" if seat == cham else "bot:revealing")


def test_players_with_a_chameleon_override() -> None:
    prepared = prepare(3, {"chameleon": "copycat"}, players=["trivial", "revealing",
                                                             "heuristic", "trivial"])
    cham = prepared.engine.deal.chameleon
    labels = _labels(prepared)
    assert labels[cham] == ("bot:copycat", "chameleon")
    expected = ["trivial", "revealing", "heuristic", "trivial"]
    for seat in labels:
        if seat != cham:
            assert labels[seat][0] == f"bot:{expected[seat - 1]}"


def test_defaults_and_num_players() -> None:
    prepared = prepare(1, {"num_players": 6})
    assert len(prepared.seats_json()) == 6
    assert {v["player"] for v in prepared.seats_json().values()} == {"bot:subtle"}
    assert GAME.seats_by_default(5) == ["subtle"] * 5
    # Only a game that seats `subtle` reads the traits file (and names it in its header).
    assert set(prepared.header_extra()["data"]) == {"cards", "traits"}
    hinting = prepare(1, {"num_players": 6, "others": "heuristic", "chameleon": "heuristic"})
    assert set(hinting.header_extra()["data"]) == {"cards"}


def test_a_role_spec_wins_over_players_for_its_seats() -> None:
    """`--role others=X` with `--players`: every seat of that role plays X (the kit's
    rule: role, then the seat's --players entry, then the role's default bot)."""
    prepared = prepare(2, {"others": "trivial"}, players=["revealing"] * 4)
    cham = prepared.engine.deal.chameleon
    for seat, (label, _) in _labels(prepared).items():
        assert label == ("bot:revealing" if seat == cham else "bot:trivial")


def test_unknown_role_is_one_line() -> None:
    with pytest.raises(ConfigError, match=r"no role 'spy'.*chameleon"):
        kit_prepare(GAME, seed=0, rng=random.Random(0), roles={"spy": "trivial"})


@pytest.mark.parametrize(("options", "players", "error", "message"), [
    ({"num_players": 5}, ["trivial"] * 4, ConfigError, "names 4 seats"),
    ({"num_players": 2}, None, ConfigError, "num-players"),
    ({"tie_rule": "coin"}, None, ConfigError, "tie-rule"),
    ({"guess_every": 3}, None, ConfigError, "no option 'guess_every'"),
    ({"chameleon": "wizard"}, None, UnknownPlayerError, "unknown player"),
    ({"chameleon": "openai:gpt-5-mini"}, None, UsageError, "LLM seat"),
])
def test_bad_seat_options(options: dict[str, Any], players: list[str] | None,
                          error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        prepare(0, options, players)


def test_llm_chameleon_learns_its_role_in_its_first_user_turn() -> None:
    """An LLM seat is told its role in the first user turn of every request (the
    system prompt, the same for every seat of a game, holds only the rules and the card):
    the chameleon that it is the chameleon, a non-chameleon the secret word."""
    providers: dict[str, ScriptedProvider] = {}

    def factory(raw: str, prompts: PromptBook) -> Player:
        providers[raw] = ScriptedProvider(["blend", "1", "apple", "apple"])
        return LLMPlayer(providers[raw], prompts, name=raw)

    for seed in range(6):
        providers.clear()
        prepared = prepare(seed, {"chameleon": "openai:cham", "others": "trivial"},
                           llm_factory=factory)
        asyncio.run(prepared.play())
        for request in providers["openai:cham"].requests:
            assert "You ARE the chameleon" in request.messages[0].content
            assert request.messages[-1].role == "user"
        providers.clear()
        prepared = prepare(seed, {"chameleon": "trivial", "others": "openai:other"},
                           llm_factory=factory)
        asyncio.run(prepared.play())
        secret = prepared.engine.deal.secret
        requests = providers["openai:other"].requests
        assert all(f'The secret word is "{secret}"' in r.messages[0].content
                   for r in requests)
        assert all(secret not in r.system.replace(", ".join(prepared.engine.deal.words), "")
                   for r in requests)
