"""Visibility (DESIGN.md contract, docs/rules.md §3): the secret word reaches only the
non-chameleons until the final reveal. Every seat is a real LLMPlayer with the game's
PromptBook over a ScriptedProvider, so what is checked is exactly what a model is sent."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import re
from typing import Any

from stille_post.core.events import Event
from stille_post.core.rng import make_rng
from stille_post.games.chameleon import GAME, playable_cards, rules
from stille_post.games.chameleon.config import ChameleonConfig
from stille_post.games.chameleon.game import ChameleonGame
from stille_post.games.chameleon.prompts import PROMPTS
from stille_post.games.kit.setup import prepare
from stille_post.players.base import Player, PromptBook
from stille_post.players.llm import LLMPlayer
from stille_post.providers.base import ChatRequest, request_text
from stille_post.providers.scripted import ScriptedProvider

TIE_RULES = ("random", "dealer", "chameleon_wins")


def _scripts(rng: random.Random, n: int, words: tuple[str, ...], seed: int) -> dict[int, list[Any]]:
    """Words no card has, votes that often tie, guesses from the card, and now and then
    an invalid reply (so repair re-asks are rendered too)."""
    out: dict[int, list[Any]] = {}
    for seat in range(1, n + 1):
        script: list[Any] = []
        if rng.random() < 0.2:
            script.append("two words")
        script.append(f"zq{seat}x{seed}")
        if rng.random() < 0.2:
            script.append("nobody")
        script.append(str(rng.randint(1, n)))
        # Enough answers for a dealer pick and a second chance with one re-ask each.
        script += [str(rng.randint(1, n)), rng.choice(words), rng.choice(words),
                   rng.choice(words), rng.choice(words)]
        out[seat] = script
    return out


def _strip_card(text: str, words: tuple[str, ...]) -> str:
    """The request without the card's word list, the one place every seat sees all K."""
    return text.replace(", ".join(words), "<card>")


def _play(seed: int, n: int, tie_rule: str,
          secret: str | None = None) -> tuple[rules.Deal, dict[int, ScriptedProvider], list[Event]]:
    """One game; `secret` overrides the dealt secret word (nothing else changes)."""
    config = ChameleonConfig.model_validate({"num_players": n, "tie_rule": tie_rule})
    rng = make_rng(seed)
    cards = playable_cards(config)
    deal = rules.deal(rng, [(c.category, c.words) for c in cards], n, config.words)
    if secret is not None:
        deal = dataclasses.replace(deal, secret=secret)
    scripts = _scripts(random.Random(seed), n, deal.words, seed)
    providers = {s: ScriptedProvider(scripts[s], model=f"m{s}") for s in scripts}
    players: dict[int, Player] = {s: LLMPlayer(p, PROMPTS, name=f"scripted:{s}")
                                  for s, p in providers.items()}
    events: list[Event] = []
    game = ChameleonGame(config, GAME.table(config, players, rng), deal=deal)
    asyncio.run(game.play(events.append))
    return deal, providers, events


def test_no_request_for_the_chameleon_names_the_secret_word() -> None:
    """240 seeded games, N from 3 to 6, all three tie rules: the secret word never occurs
    in a chameleon's request outside the card's word list; it occurs in every request
    sent to a non-chameleon (so the check could fail)."""
    asked = 0
    for seed in range(240):
        n, tie_rule = 3 + seed % 4, TIE_RULES[seed % 3]
        deal, providers, events = _play(seed, n, tie_rule)
        secret = re.compile(rf"\b{re.escape(deal.secret)}\b", re.IGNORECASE)
        for seat, provider in providers.items():
            for request in provider.requests:
                text = _strip_card(request_text(request), deal.words)
                if seat == deal.chameleon:
                    asked += 1
                    assert not secret.search(text), (seed, seat, text)
                    assert "You ARE the chameleon" in request.messages[0].content
                else:
                    assert secret.search(text), (seed, seat)
        # The transcript agrees: before the reveal, no event the chameleon may see names
        # the word, apart from the card list and the chameleon's own words.
        for e in events:
            if e.type == "reveal":
                break
            if e.visibility.allows(deal.chameleon) and e.actor != deal.chameleon:
                data = {k: v for k, v in e.data.items() if k != "words"}  # the card
                shown = _strip_card(" ".join(str(v) for v in data.values()), deal.words)
                assert not secret.search(shown), (seed, e)
    assert asked > 240 * 2  # a word and a vote per game at least


def test_the_chameleons_requests_do_not_depend_on_the_secret_word() -> None:
    """Counterfactual: the same game with a different secret word sends the chameleon
    byte-identical requests, so nothing it is shown can carry the secret (60 games)."""
    for seed in range(60):
        n, tie_rule = 3 + seed % 4, TIE_RULES[seed % 3]
        deal, providers, _ = _play(seed, n, tie_rule)
        other = next(w for w in deal.words if w != deal.secret)
        deal2, providers2, _ = _play(seed, n, tie_rule, secret=other)
        mine: list[ChatRequest] = providers[deal.chameleon].requests
        assert mine == providers2[deal2.chameleon].requests, seed
        seat = next(s for s in providers if s != deal.chameleon)
        assert providers[seat].requests != providers2[seat].requests  # the check can fail


def test_prepare_path_keeps_the_secret_from_an_llm_chameleon() -> None:
    """Through GAME.prepare, as `stille-post play` builds seats: an LLM chameleon among
    bot non-chameleons that never name the word (heuristic) is never sent the word."""
    providers: list[ScriptedProvider] = []

    def factory(raw: str, prompts: PromptBook) -> Player:
        provider = ScriptedProvider(["blend", "1", *["x"] * 4])
        providers.append(provider)
        return LLMPlayer(provider, prompts, name=raw)

    for seed in range(40):
        providers.clear()

        prepared = prepare(GAME, seed=seed, rng=make_rng(seed), players=None,
                           roles={"chameleon": "openai:gpt-test", "others": "heuristic"},
                           llm_factory=factory)
        asyncio.run(prepared.play())
        deal = prepared.engine.deal
        (provider,) = providers
        for request in provider.requests:
            assert not re.search(rf"\b{re.escape(deal.secret)}\b",
                                 _strip_card(request_text(request), deal.words), re.I)
