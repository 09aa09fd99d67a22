"""Stille Post (seed 000): each model must guess which model it is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stille_post.core.errors import ConfigError, UsageError
from stille_post.core.events import EventSink
from stille_post.core.rng import Rng, derive_rng
from stille_post.core.roster import Roster, RosterModel, load_roster
from stille_post.games.base import GameOutcome, LLMFactory, build_config, resolve_default_bots
from stille_post.games.stille_post import rules
from stille_post.games.stille_post.bots import BOTS
from stille_post.games.stille_post.config import StillePostConfig
from stille_post.games.stille_post.game import GAME_NAME, StillePostGame
from stille_post.games.stille_post.prompts import PROMPTS
from stille_post.players.base import Player
from stille_post.players.specs import SeatSpec, parse_seat_spec

DEFAULT_SEATS = ("detective", "cautious", "gambler", "random")


class PreparedStillePost:
    def __init__(self, game: StillePostGame, specs: Sequence[SeatSpec], seed: int,
                 added: Sequence[RosterModel]) -> None:
        self.game = game
        self.specs = list(specs)
        self.seed = seed
        self.added = list(added)

    def config_json(self) -> dict[str, Any]:
        return self.game.config.model_dump(mode="json")

    def seats_json(self) -> dict[str, dict[str, Any]]:
        return {
            str(seat): {"model": m.id, "provider": m.provider, "tier": m.tier,
                        "player": self.specs[seat - 1].label}
            for seat, m in self.game.identities.items()
        }

    def header_extra(self) -> dict[str, Any]:
        c = self.game.config
        phases = rules.guess_phase_count(c.num_players, c.guess_every, c.max_rounds)
        return {
            "roster": list(self.game.roster.ids),
            "roster_added": [m.id for m in self.added],
            "baseline": {
                "guess_phases": phases,
                "enumeration_win": rules.enumeration_baseline(phases, len(self.game.roster)),
            },
        }

    async def play(self, sink: EventSink | None = None) -> GameOutcome:
        return await self.game.play(sink)


class StillePostDefinition:
    name = GAME_NAME
    bot_names = tuple(BOTS)

    def default_players(self, num_players: int) -> list[str]:
        return [DEFAULT_SEATS[i % len(DEFAULT_SEATS)] for i in range(num_players)]

    def prepare(
        self,
        *,
        seed: int,
        rng: Rng,
        players: Sequence[str] | None,
        options: Mapping[str, Any],
        llm_factory: LLMFactory | None = None,
    ) -> PreparedStillePost:
        config = build_config(StillePostConfig, options, players)
        defaults = self.default_players(config.num_players)
        specs = [parse_seat_spec(p, self.bot_names)
                 for p in resolve_default_bots(players or defaults, defaults)]
        roster = load_roster(config.roster)
        roster, pins, added = _llm_identities(roster, specs, config.pinned)
        if pins != config.pinned:
            config = config.model_copy(update={"pinned": pins})
        seats: dict[int, Player] = {}
        for i, spec in enumerate(specs, start=1):
            if spec.bot is not None:
                seats[i] = BOTS[spec.bot](derive_rng(seed, "seat", i, spec.bot))
            elif llm_factory is None:
                raise UsageError(f"seat {i} ({spec.raw}) is an LLM seat: add --online to play "
                                 "it live, or --replay CASSETTE to replay a recording")
            else:
                seats[i] = llm_factory(spec.raw, PROMPTS)
        return PreparedStillePost(StillePostGame(config, seats, rng, roster), specs, seed, added)


def _llm_identities(
    roster: Roster, specs: Sequence[SeatSpec], pinned: Mapping[int, str]
) -> tuple[Roster, dict[int, str], list[RosterModel]]:
    """An LLM seat's secret identity is its own roster id (matched by id or api_model).
    A model outside the roster joins this game's identity list (the header says so)."""
    pins = dict(pinned)
    added: list[RosterModel] = []
    for seat, spec in enumerate(specs, start=1):
        if not spec.is_llm or seat in pins or spec.model is None:
            continue
        match = next((m for m in roster if spec.model in (m.id, m.api_model)), None)
        if match is None:
            # Off-roster models are unknown quantities: filed as efficient, under their kind.
            match = RosterModel(id=spec.model, provider=spec.provider, tier="efficient")
            added.append(match)
        pins[seat] = match.id
    if len(set(pins.values())) != len(pins):
        raise ConfigError("two seats play the same model; a game needs distinct identities")
    return roster.with_extra(added), pins, added


GAME = StillePostDefinition()
