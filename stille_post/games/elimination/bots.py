"""Baseline bots (issue 12), so that tournaments and reports mean something without keys.

Each bot sees only its own view (observation.PublicRecord reads what a player could
read: the pairs announced, the public vote counts, who named whom in public) and draws
only from its own rng.

- `random`: ranks and votes at random; its public statement names nobody.
- `loyal`: ranks its last partner first; never votes against a seat it chatted with this
  round; otherwise votes with the public majority (the seat named most in this round's
  statements), then for the strongest threat. As a juror it keeps the finalist it chatted
  with more.
- `backstabber`: ranks the strongest threats first (allies with them), then votes out its
  own partner when that partner is the strongest threat; otherwise it votes for the
  strongest threat (the public majority breaks ties).
- `sheep`: votes with the public majority it can infer: the seat named most in this
  round's public and tie-break statements, then the one with most public votes received.
  Its public statement names nobody ("I will go with whatever most of you decide").

Statements of loyal and backstabber name the seat they mean to vote against, which is
what gives the majority something to follow. "Strongest threat" is a public proxy
(PublicRecord.threat): paired often, voted against rarely. Measured strength (README):
loyal > backstabber > sheep > random, the same order over disjoint seed ranges.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from stille_post.games.elimination import prompts as P
from stille_post.games.elimination.observation import Observation, PublicRecord, RecordReader
from stille_post.games.kit.setup import BotContext
from stille_post.players.base import Action, Decision, Player
from stille_post.providers.base import ToolCall

STYLES = ("random", "loyal", "backstabber", "sheep")


class EliminationBot:
    instant = True  # decide() never awaits: no deadline timer (players/base.is_instant)

    def __init__(self, style: str, rng: random.Random) -> None:
        if style not in STYLES:
            raise ValueError(f"unknown bot style {style!r}")
        self.style = style
        self.rng = rng
        self.name = f"bot:{style}"
        self._reader: RecordReader | None = None

    async def decide(self, decision: Decision[Any]) -> Action:
        obs: Observation = decision.observation
        if self._reader is None or self._reader.seat != obs.seat:
            self._reader = RecordReader(obs.seat)
        rec = self._reader.read(obs.events)
        kind = decision.kind
        if kind == P.RANKING:
            return _call(P.RANK_TOOL, {"ranking": self.rank(obs, rec)})
        if kind in (P.VOTE, P.REVOTE, P.JURY):
            allowed = list(obs.allowed) or [s for s in obs.moment.active if s != obs.seat]
            target = self.target(obs, rec, allowed, jury=kind == P.JURY)
            return _call(P.VOTE_TOOL, {"target": target, "reason": f"{self.style} choice"})
        return Action(text=self.say(kind, obs, rec))

    # --- choices ----------------------------------------------------------------------------

    def _best(self, seats: Sequence[int], key: Callable[[int], tuple[int, ...]]) -> int:
        """The seat with the highest key; ties broken by the bot's own rng."""
        top = max(key(s) for s in seats)
        return self.rng.choice(sorted(s for s in seats if key(s) == top))

    def target(self, obs: Observation, rec: PublicRecord, allowed: list[int],
               jury: bool = False) -> int:
        if self.style == "random" or not allowed:
            return self.rng.choice(sorted(allowed)) if allowed else obs.seat
        if self.style == "sheep":
            return self._best(allowed, lambda s: (rec.named_this_round.get(s, 0),
                                                  rec.votes_received.get(s, 0)))
        if self.style == "loyal":
            if jury:  # keep the finalist it chatted with more: eliminate the other
                return self._best(allowed, lambda s: (-rec.chats_with.get(s, 0),))
            partner = rec.partner(obs.moment.round)
            pool = [s for s in allowed if s != partner] or allowed
            return self._best(pool, lambda s: (rec.named_this_round.get(s, 0), rec.threat(s)))
        # backstabber: its partner if that partner is the strongest threat, else like loyal
        partner = rec.partner(obs.moment.round)
        strongest = max((rec.threat(s) for s in allowed), default=0)
        if partner in allowed and rec.threat(partner) == strongest and not jury:
            return partner
        return self._best(allowed, lambda s: (rec.threat(s), rec.named_this_round.get(s, 0)))

    def rank(self, obs: Observation, rec: PublicRecord) -> list[int]:
        others = list(obs.allowed) or [s for s in obs.moment.active if s != obs.seat]
        self.rng.shuffle(others)
        if self.style == "loyal":
            last = max(rec.partner_by_round, default=None)
            partner = rec.partner_by_round.get(last) if last is not None else None
            if partner in others:
                others.remove(partner)
                others.insert(0, partner)
        elif self.style == "backstabber":
            others.sort(key=lambda s: -rec.threat(s))  # stable: shuffled among equals
        return others

    def say(self, kind: str, obs: Observation, rec: PublicRecord) -> str:
        me = obs.seat
        if kind == P.FINAL:
            other = next((s for s in obs.moment.finalists if s != me), me)
            return f"I played a fair game and kept my word. Please eliminate Player {other}."
        if kind == P.TIE_BREAK:
            rivals = [s for s in obs.moment.tied if s != me]
            t = self.target(obs, rec, rivals) if rivals else me
            return f"Keep me in the game. Player {t} is the bigger danger to all of you."
        pool = [s for s in obs.moment.active if s != me]
        if self.style == "sheep" and kind == P.PUBLIC:
            return f"Player {me} here. I will go with whatever most of you decide."
        if self.style == "random" and kind == P.PUBLIC:
            return f"Player {me} here. Anything can happen in this game."
        if kind == P.PRIVATE and obs.partner is not None:
            t = self.target(obs, rec, [s for s in pool if s != obs.partner] or pool)
            return f"Player {obs.partner}, let us stick together. I am thinking of Player {t}."
        t = self.target(obs, rec, pool)
        return f"Player {me} here. Player {t} looks like the biggest threat to me."


def _call(name: str, args: dict[str, Any]) -> Action:
    return Action(tool_calls=(ToolCall(name, args, id="bot"),))


def _factory(style: str) -> Callable[[BotContext], Player]:
    def make(ctx: BotContext) -> Player:
        return EliminationBot(style, ctx.rng)
    return make


BOTS: dict[str, Callable[[BotContext], Player]] = {s: _factory(s) for s in STYLES}


def default_seats(n: int) -> list[str]:
    """Two of each bot for 8 seats (issue 12); cycled for any other count."""
    return [STYLES[(i // 2) % len(STYLES)] for i in range(n)]
