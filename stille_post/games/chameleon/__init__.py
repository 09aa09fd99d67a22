"""The Chameleon (seed 003): one hidden chameleon, a secret word, one word each, a vote.

Seats are given per seat (`--players a,b,c,d`) or per role (`--chameleon SPEC --others
SPEC`); both may be mixed as `--players ... --chameleon SPEC`, where the chameleon's seat
(drawn by the rng) is replaced. A spec is a bot name (trivial, revealing, copycat,
heuristic) or a provider spec such as openai:gpt-5-mini.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stille_post.core.errors import ConfigError, UsageError
from stille_post.core.events import EventSink
from stille_post.core.rng import Rng, derive_rng
from stille_post.games.base import GameOutcome, LLMFactory, build_config, resolve_default_bots
from stille_post.games.chameleon import rules
from stille_post.games.chameleon.bots import BOTS
from stille_post.games.chameleon.cards import Card, load_cards
from stille_post.games.chameleon.config import ChameleonConfig
from stille_post.games.chameleon.game import GAME_NAME, ChameleonGame
from stille_post.games.chameleon.prompts import PROMPTS
from stille_post.players.base import Player
from stille_post.players.specs import SeatSpec, parse_seat_spec

DEFAULT_BOT = "heuristic"


class PreparedChameleon:
    def __init__(self, game: ChameleonGame, specs: Sequence[SeatSpec]) -> None:
        self.game = game
        self.specs = list(specs)

    def config_json(self) -> dict[str, Any]:
        return self.game.config.model_dump(mode="json")

    def seats_json(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for seat, spec in enumerate(self.specs, start=1):
            entry: dict[str, Any] = {"player": spec.label,
                                     "role": rules.role_of(seat, self.game.deal.chameleon)}
            if spec.is_llm:
                entry.update(model=spec.model, provider=spec.provider)
            out[str(seat)] = entry
        return out

    def header_extra(self) -> dict[str, Any]:
        c, d = self.game.config, self.game.deal
        # Only public facts: the header is not part of any seat's view, but it is read
        # before the game's end by viewers, so the secret word stays in the events.
        return {
            "category": d.category,
            "words": list(d.words),
            "baseline": {"trivial_non_chameleon_win":
                         rules.trivial_win_probability(c.num_players, len(d.words))},
        }

    async def play(self, sink: EventSink | None = None) -> GameOutcome:
        return await self.game.play(sink)


class ChameleonDefinition:
    name = GAME_NAME
    bot_names = tuple(BOTS)

    def default_players(self, num_players: int) -> list[str]:
        return [DEFAULT_BOT] * num_players

    def prepare(
        self,
        *,
        seed: int,
        rng: Rng,
        players: Sequence[str] | None,
        options: Mapping[str, Any],
        llm_factory: LLMFactory | None = None,
    ) -> PreparedChameleon:
        opts = dict(options)
        chameleon_spec: str | None = opts.pop("chameleon", None)
        others_spec: str | None = opts.pop("others", None)
        if players and others_spec is not None:
            raise ConfigError("--others and --players both name the non-chameleon seats; "
                              "use one of them")
        config = build_config(ChameleonConfig, opts, players)
        if players:
            players = resolve_default_bots(players, self.default_players(len(players)))
        cards = playable_cards(config)
        deal = rules.deal(rng, [(c.category, c.words) for c in cards], config.num_players,
                          config.words)
        card = next(c for c in cards if c.category == deal.category)
        raw = seat_specs(config.num_players, deal.chameleon, players, chameleon_spec,
                         others_spec)
        specs = [parse_seat_spec(p, self.bot_names) for p in raw]
        seats = {i: self._player(i, spec, seed, card, llm_factory)
                 for i, spec in enumerate(specs, start=1)}
        return PreparedChameleon(ChameleonGame(config, deal, seats, rng), specs)

    def _player(self, seat: int, spec: SeatSpec, seed: int, card: Card,
                llm_factory: LLMFactory | None) -> Player:
        if spec.bot is not None:
            return BOTS[spec.bot](derive_rng(seed, "seat", seat, spec.bot), card)
        if llm_factory is None:
            raise UsageError(f"seat {seat} ({spec.raw}) is an LLM seat: add --online to play "
                             "it live, or --replay CASSETTE to replay a recording")
        return llm_factory(spec.raw, PROMPTS)


def seat_specs(n: int, chameleon: int, players: Sequence[str] | None,
               chameleon_spec: str | None, others_spec: str | None) -> list[str]:
    """One spec per seat: --players (or --others, or the default bot) for every seat, then
    --chameleon for the seat the rng made the chameleon."""
    base = list(players) if players else [others_spec or DEFAULT_BOT] * n
    if chameleon_spec is not None:
        base[chameleon - 1] = chameleon_spec
    return base


def playable_cards(config: ChameleonConfig) -> list[Card]:
    cards = list(load_cards(config.cards))
    if config.category is not None:
        cards = [c for c in cards if c.category.casefold() == config.category.casefold()]
        if not cards:
            raise ConfigError(f"no card has the category {config.category!r}")
    fit = [c for c in cards if len(c.words) >= config.words]
    if not fit:
        most = max(len(c.words) for c in cards)
        raise ConfigError(f"--words {config.words}: no card has that many words "
                          f"(the most is {most})")
    return fit


GAME = ChameleonDefinition()

__all__ = ["GAME", "ChameleonConfig", "ChameleonDefinition", "ChameleonGame",
           "PreparedChameleon", "playable_cards", "seat_specs"]
