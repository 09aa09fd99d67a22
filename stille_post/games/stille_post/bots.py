"""Heuristic Stille Post players that need no LLM: the embedded defaults and baselines.

Each bot reads only its own observation and draws only from its own rng (derived from
the game seed and its seat), so a bot can never see or shift what another seat sees.

- random:     a random legal action each turn, a random roster id at each guess;
- gambler:    always pulls russian_roulette; guesses by enumeration;
- cautious:   never gambles; harmless tools; guesses by enumeration;
- enumerator: no tools; works through the roster ids, one per guess phase (RULES §1);
- detective:  earns hints with guess_model, narrows its identity with the hints and the
              public results, and guesses the id that covers most of what is left.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from stille_post.games.stille_post import rules
from stille_post.games.stille_post.observation import StillePostObservation
from stille_post.players.base import Action, Decision
from stille_post.providers.base import ToolCall

_LINES = (
    "Interesting. I will keep my own counsel for now.",
    "Let's see who cracks first.",
    "I have a hunch about a few of you.",
    "My answers speak for themselves.",
    "Watch the style, not the claims.",
)
_TASKS = (
    "Name a prime between 1000 and 1100.",
    "Summarise the rules of chess in one sentence.",
    "Write a haiku about telephones.",
)


@lru_cache(maxsize=4096)
def _coverage(mode: rules.MatchMode, roster_ids: tuple[str, ...],
              guess: str) -> frozenset[str]:
    # Judging is string work over the whole roster; bots ask the same questions every turn.
    return frozenset(c for c in roster_ids
                     if rules.judge_guess(guess, c, mode=mode, roster_ids=roster_ids).correct)


def covered(guess: str, candidates: list[str], obs: StillePostObservation) -> list[str]:
    """The candidates a guess would be judged correct for, under the game's match mode."""
    if guess not in obs.roster.ids:  # free text: judge it directly, keep it out of the cache
        return [c for c in candidates
                if rules.judge_guess(guess, c, mode=obs.match, roster_ids=obs.roster.ids).correct]
    hit = _coverage(obs.match, obs.roster.ids, guess)
    return [c for c in candidates if c in hit]


@dataclass
class Knowledge:
    """What a seat can infer from its own view: its candidates and the others'."""

    me: list[str]
    others: dict[int, list[str]] = field(default_factory=dict)

    @classmethod
    def from_observation(cls, obs: StillePostObservation) -> Knowledge:
        ids = list(obs.roster.ids)
        models = {m.id: m for m in obs.roster}
        me = [i for i in ids
              if all(rules.consistent_with_hint(k, v, models[i]) for k, v in obs.hints)]
        k = cls(me=me, others={s: list(ids) for s in range(1, obs.num_players + 1)
                               if s != obs.seat})
        pending: dict[str, tuple[Any, str]] = {}
        for e in obs.events:
            d = e.data
            if e.actor != obs.seat:
                continue
            if e.type == "identity_guess" and d.get("valid") and not d.get("correct"):
                gone = set(covered(str(d["text"]), k.me, obs))
                k.me = [c for c in k.me if c not in gone]
            elif e.type == "tool_calls":
                for c in d["tool_calls"]:
                    if c["name"] == "guess_model":
                        args = c.get("arguments") or {}
                        pending[c["id"]] = (args.get("player_id"), str(args.get("model_id")))
            elif e.type == "tool_result" and d.get("call_id") in pending:
                target, guess = pending.pop(d["call_id"])
                if target not in k.others:
                    continue
                hit = set(covered(guess, k.others[target], obs))
                k.others[target] = [c for c in k.others[target]
                                    if (c in hit) == bool(d.get("correct"))]
        # Identities are distinct: a model pinned down for another seat is not mine.
        known = {v[0] for v in k.others.values() if len(v) == 1}
        if len(k.me) > 1:
            k.me = [c for c in k.me if c not in known] or k.me
        return k


class StillePostBot:
    instant = True  # decide() never awaits: no deadline timer (players/base.is_instant)
    kind = "bot"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.name = f"bot:{self.kind}"

    async def decide(self, decision: Decision[Any]) -> Action:
        obs: StillePostObservation = decision.observation
        if decision.kind == "intro":
            return Action(text=f"Hello, I am Player {obs.seat}. {self.rng.choice(_LINES)}")
        if decision.kind == "identity_guess":
            return Action(text=self.guess_identity(obs))
        return self.turn(obs)

    def turn(self, obs: StillePostObservation) -> Action:
        return Action(text=self.rng.choice(_LINES))

    def guess_identity(self, obs: StillePostObservation) -> str:
        """Enumeration: any id not yet ruled out, in this bot's own random order."""
        return self.rng.choice(Knowledge.from_observation(obs).me or list(obs.roster.ids))

    def _call(self, name: str, **arguments: Any) -> ToolCall:
        return ToolCall(name, arguments)


class RandomBot(StillePostBot):
    kind = "random"

    def turn(self, obs: StillePostObservation) -> Action:
        choice = self.rng.randrange(5)
        text = self.rng.choice(_LINES)
        if choice == 0 or not obs.others:
            return Action(text=text)
        if choice == 1:
            return Action(text=text, tool_calls=(self._call("russian_roulette"),))
        if choice == 2:
            return Action(text=text, tool_calls=(self._call(
                "guess_model", player_id=self.rng.choice(obs.others),
                model_id=self.rng.choice(obs.roster.ids)),))
        if choice == 3:
            return Action(text=text, tool_calls=(self._call(
                "proclaim_superiority", statement="I am clearly the strongest model here."),))
        return Action(text=text, tool_calls=(self._call(
            "propose_task", task=self.rng.choice(_TASKS)),))

    def guess_identity(self, obs: StillePostObservation) -> str:
        return self.rng.choice(obs.roster.ids)


class GamblerBot(StillePostBot):
    kind = "gambler"

    def turn(self, obs: StillePostObservation) -> Action:
        return Action(text="Feeling lucky.", tool_calls=(self._call("russian_roulette"),))


class CautiousBot(StillePostBot):
    kind = "cautious"

    def turn(self, obs: StillePostObservation) -> Action:
        choice = self.rng.randrange(3)
        text = self.rng.choice(_LINES)
        if choice == 0 and obs.others:
            return Action(text=text, tool_calls=(self._call(
                "guess_model", player_id=self.rng.choice(obs.others),
                model_id=self.rng.choice(obs.roster.ids)),))
        if choice == 1:
            return Action(text=text, tool_calls=(self._call(
                "propose_task", task=self.rng.choice(_TASKS)),))
        return Action(text=text)


class EnumeratorBot(StillePostBot):
    kind = "enumerator"


class DetectiveBot(StillePostBot):
    kind = "detective"

    def turn(self, obs: StillePostObservation) -> Action:
        k = Knowledge.from_observation(obs)
        hints_done = len(obs.hints) >= len(rules.HINT_KINDS) or any(
            e.type == "no_hints_left" for e in obs.events)
        if hints_done or len(k.me) <= 1 or not obs.others:
            return Action(text="I think I know who I am.")
        # The guess most likely to be right: the (target, id) covering the largest share
        # of that target's remaining candidates. My own candidates are not theirs only
        # when I am certain of myself, which is handled above.
        best: tuple[float, int, str] | None = None
        for target in obs.others:
            pool = k.others.get(target) or list(obs.roster.ids)
            for guess in pool:
                share = len(covered(guess, pool, obs)) / len(pool)
                if best is None or share > best[0]:
                    best = (share, target, guess)
        assert best is not None
        _, target, guess = best
        return Action(text=f"Player {target}, your style gives you away.",
                      tool_calls=(self._call("guess_model", player_id=target, model_id=guess),))

    def guess_identity(self, obs: StillePostObservation) -> str:
        me = Knowledge.from_observation(obs).me or list(obs.roster.ids)
        scored = [(len(covered(g, me, obs)), g) for g in me]
        top = max(s for s, _ in scored)
        return self.rng.choice([g for s, g in scored if s == top])


BOTS: dict[str, Callable[[random.Random], StillePostBot]] = {
    "random": RandomBot,
    "gambler": GamblerBot,
    "cautious": CautiousBot,
    "enumerator": EnumeratorBot,
    "detective": DetectiveBot,
}
