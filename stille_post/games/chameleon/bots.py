"""The paper's baseline strategies as players that need no LLM (docs/rules.md §3).

Each bot reads only its own observation (its role and, for a non-chameleon, the secret
word come from its private `role` event) and draws only from its own rng, derived from
the game seed and its seat. Every bot plays whichever role it is dealt:

- trivial    (concealing): always says the same word and votes for Player 1; as the
             chameleon it ignores what it heard and guesses uniformly from the card. This
             is the strategy behind the closed form (1/N)(K-1)/K.
- revealing: a non-chameleon says the secret word and votes for the odd one out. As the
             chameleon it repeats the card word said most so far, to pass as a revealer.
- copycat:   repeats the most recent word (the paper's chameleon that copies an answer);
             the first speaker, with nothing to copy, hints like `heuristic`.
- heuristic: a non-chameleon says a hint for the secret word without naming it (the
             card's hint words, else "<first letter>-word") and votes for a player whose
             word fits no hint. As the chameleon it hints at its best guess of the secret.
             Each hint points at one word, so a chameleon that knows the card's hints
             reads the secret off them: the chameleon wins nearly every game.
- subtle:    the default. A non-chameleon says a trait of the secret (a clue that fits
             several words of the card) chosen to leave a listener as many candidate
             words as it can; the chameleon says the trait likeliest to fit what the
             others' words point to. See SubtleBot.

Every chameleon bot except `trivial` makes its second-chance guess from what it heard:
the card word the others said most, else the word whose hints they used most.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from stille_post.games.chameleon import prompts as P
from stille_post.games.chameleon.cards import Card
from stille_post.games.chameleon.observation import ChameleonObservation
from stille_post.games.chameleon.rules import normalise
from stille_post.players.base import Action, Decision

TRIVIAL_WORD = "pass"


def fallback_hint(word: str) -> str:
    """A hint any card supports: the secret's first letter ("apple" -> "a-word")."""
    return f"{normalise(word)[:1] or 'x'}-word"


def repeaters(obs: ChameleonObservation) -> list[int]:
    """Other players whose word had already been said when they spoke."""
    seen: set[str] = set()
    found: list[int] = []
    for seat, word in obs.responses:
        key = normalise(word)
        if key in seen and seat != obs.seat:
            found.append(seat)
        seen.add(key)
    return found


class ChameleonBot:
    instant = True  # decide() never awaits: no deadline timer (players/base.is_instant)
    kind = "bot"

    def __init__(self, rng: random.Random, card: Card | None = None) -> None:
        self.rng = rng
        self.card = card  # the hint words; bots work without them
        self.name = f"bot:{self.kind}"
        self._fitting: dict[str, frozenset[str]] = {}

    async def decide(self, decision: Decision[Any]) -> Action:
        obs: ChameleonObservation = decision.observation
        if decision.kind == P.WORD:
            text = self.chameleon_word(obs) if obs.is_chameleon else self.word(obs)
        elif decision.kind == P.VOTE:
            text = str(self.vote(obs))
        elif decision.kind == P.TIE_BREAK:
            text = str(self.tie_break(obs))
        elif decision.kind == P.GUESS:
            text = self.guess(obs)
        else:
            raise ValueError(f"unknown decision kind {decision.kind!r}")
        return Action(text=text)

    # --- what bots know ------------------------------------------------------------------

    def hints(self, word: str) -> tuple[str, ...]:
        """The card's hints for `word`, then the first-letter hint every word has."""
        found = self.card.hints_for(word) if self.card is not None else ()
        return (*found, fallback_hint(word))

    def fitting(self, word: str) -> frozenset[str]:
        """What a player who knows `word` might say, normalised: the word and its hints
        (kept per word: a vote weighs every card word against every word heard)."""
        found = self._fitting.get(word)
        if found is None:
            found = frozenset({normalise(word), *(normalise(h) for h in self.hints(word))})
            self._fitting[word] = found
        return found

    def fits(self, said: str, word: str) -> bool:
        """Whether `said` is what a player who knows `word` might say."""
        return normalise(said) in self.fitting(word)

    def likely_secrets(self, obs: ChameleonObservation) -> list[str]:
        """The card words best supported by the others' words: said outright most often,
        else hinted at most often; every word when nothing was said that fits one."""
        heard = [normalise(w) for _, w in obs.other_responses()]
        named = Counter(heard)
        scores = {w: (named[normalise(w)], sum(h in self.fitting(w) for h in heard))
                  for w in obs.words}
        best = max(scores.values(), default=(0, 0))
        if best == (0, 0):
            return list(obs.words)
        return [w for w in obs.words if scores[w] == best]

    def best_guess(self, obs: ChameleonObservation) -> str:
        if obs.secret is not None:
            return obs.secret
        return self.rng.choice(self.likely_secrets(obs))

    def pick(self, seats: Sequence[int], fallback: Sequence[int]) -> int:
        pool = sorted(seats) or sorted(fallback)
        return self.rng.choice(pool)

    # --- decisions (overridden per strategy) ---------------------------------------------------

    def word(self, obs: ChameleonObservation) -> str:
        """A non-chameleon's word."""
        # A hint nobody has said yet shows more knowledge than a repeat; the card's hints
        # come before the first-letter hint, which gives more away.
        used = {normalise(w) for _, w in obs.responses}
        *card_hints, letter = self.hints(str(obs.secret))
        fresh = [h for h in card_hints if normalise(h) not in used]
        if fresh:
            return self.rng.choice(fresh)
        return letter if normalise(letter) not in used else self.rng.choice(card_hints or [letter])

    def chameleon_word(self, obs: ChameleonObservation) -> str:
        return self.rng.choice(list(self.hints(self.best_guess(obs))))

    def vote(self, obs: ChameleonObservation) -> int:
        """The player whose word fits the (known or guessed) secret least."""
        secret = self.best_guess(obs)
        odd = [s for s, w in obs.other_responses() if not self.fits(w, secret)]
        # With no word out of place, suspect whoever only repeated an earlier word: that
        # is what a player who does not know the secret can safely do.
        return self.pick(odd or repeaters(obs), obs.others)

    def tie_break(self, obs: ChameleonObservation) -> int:
        mine = dict(obs.votes).get(obs.seat)
        if mine in obs.tied and mine != obs.seat:
            return mine
        return self.pick([s for s in obs.tied if s != obs.seat], obs.tied)

    def guess(self, obs: ChameleonObservation) -> str:
        return self.best_guess(obs)


class TrivialBot(ChameleonBot):
    kind = "trivial"

    def word(self, obs: ChameleonObservation) -> str:
        return TRIVIAL_WORD

    chameleon_word = word

    def vote(self, obs: ChameleonObservation) -> int:
        return 1

    def tie_break(self, obs: ChameleonObservation) -> int:
        return min(obs.tied)

    def guess(self, obs: ChameleonObservation) -> str:
        return self.rng.choice(list(obs.words))


class RevealingBot(ChameleonBot):
    kind = "revealing"

    def word(self, obs: ChameleonObservation) -> str:
        return str(obs.secret)

    def chameleon_word(self, obs: ChameleonObservation) -> str:
        return self.best_guess(obs)

    def fitting(self, word: str) -> frozenset[str]:
        return frozenset({normalise(word)})  # the word itself, never a hint


class CopycatBot(ChameleonBot):
    kind = "copycat"

    def chameleon_word(self, obs: ChameleonObservation) -> str:
        if obs.responses:
            return obs.responses[-1][1]
        return super().chameleon_word(obs)

    def word(self, obs: ChameleonObservation) -> str:
        if obs.responses:
            return obs.responses[-1][1]
        return super().word(obs)


class HeuristicBot(ChameleonBot):
    kind = "heuristic"


class SubtleBot(ChameleonBot):
    """The default bot: it plays a game a person would want to watch.

    A non-chameleon says a *trait* of the secret word (cards.py: a word that fits several
    words of the card, "yellow" for banana, lemon and pineapple): related, but not giving
    the word away. Of the secret's traits nobody has said yet it picks the one that leaves
    a listener who trusts every word heard so far with the most candidate words. As the
    chameleon it says the trait that fits the most of the words the others' words point
    to (every word, when it speaks first): its best chance to fit the secret it does not
    know, and a word nobody said yet when two fit as many. A vote goes to a player whose
    word fits no trait, hint or name of the secret (the known one, or the chameleon's
    best guess); else to one who repeated an earlier word; else to the vaguest word, the
    one that fits the most words of the card. The chameleon's second-chance guess is
    uniform among the words the others' words fit best. A card without traits falls back
    to the card's hints, then to the first letter (`ChameleonBot`)."""

    kind = "subtle"

    def traits(self, obs: ChameleonObservation) -> dict[str, frozenset[str]]:
        """The card's traits, each with the dealt words it fits (K may be under 16)."""
        if self.card is None:
            return {}
        dealt = {normalise(w) for w in obs.words}
        out = {t: frozenset(fits) & dealt for t, fits in self.card.traits.items()}
        return {t: fits for t, fits in out.items() if fits}

    def fitting(self, word: str) -> frozenset[str]:
        found = self._fitting.get(word)
        if found is None:
            traits = self.card.traits_for(word) if self.card is not None else ()
            found = super().fitting(word) | {normalise(t) for t in traits}
            self._fitting[word] = found
        return found

    def support(self, obs: ChameleonObservation, extra: str | None = None,
                fit: str | None = None) -> dict[str, int]:
        """For each dealt word, how many of the others' words (and `extra`) fit it; with
        `fit`, only the words that fit that word count (a non-chameleon's view of what
        the chameleon will learn: a word that misses the secret is the chameleon's own)."""
        heard = [normalise(w) for _, w in obs.other_responses()]
        if fit is not None:
            heard = [h for h in heard if h in self.fitting(fit)]
        if extra is not None:
            heard.append(normalise(extra))
        return {w: sum(h in self.fitting(w) for h in heard) for w in obs.words}

    @staticmethod
    def leaders(support: dict[str, int]) -> list[str]:
        best = max(support.values(), default=0)
        return [w for w, n in support.items() if n == best]

    def word(self, obs: ChameleonObservation) -> str:
        secret = str(obs.secret)
        said = {normalise(w) for _, w in obs.responses}
        fresh = [t for t, fits in self.traits(obs).items()
                 if normalise(secret) in fits and t not in said]
        if not fresh:
            return super().word(obs)  # the card's hints, then the first letter
        # The most concealing fresh trait: the most words a listener is left with.
        left = {t: len(self.leaders(self.support(obs, t, fit=secret))) for t in fresh}
        most = max(left.values())
        return self.rng.choice([t for t in fresh if left[t] == most])

    def vote(self, obs: ChameleonObservation) -> int:
        secret = self.best_guess(obs)
        others = obs.other_responses()
        odd = [s for s, w in others if not self.fits(w, secret)]
        if odd or repeaters(obs) or not self.traits(obs):
            return self.pick(odd or repeaters(obs), obs.others)
        # Every word fits: suspect the vaguest, the word that fits the most words of the
        # card (what a player who does not know the secret says to be safe).
        width = {s: sum(normalise(w) in self.fitting(c) for c in obs.words) for s, w in others}
        most = max(width.values(), default=0)
        return self.pick([s for s, n in width.items() if n == most], obs.others)

    def chameleon_word(self, obs: ChameleonObservation) -> str:
        traits = self.traits(obs)
        if not traits:
            return super().chameleon_word(obs)
        candidates = {normalise(w) for w in self.leaders(self.support(obs))}
        said = {normalise(w) for _, w in obs.responses}
        # Fit as many candidates as possible; among those, a word nobody said yet (a repeat
        # is what a player who does not know the secret can safely do, and looks it).
        score = {t: (len(fits & candidates), t not in said) for t, fits in traits.items()}
        best = max(score.values())
        return self.rng.choice([t for t in traits if score[t] == best])


BotFactory = Callable[[random.Random, Card | None], ChameleonBot]

BOTS: dict[str, BotFactory] = {
    "trivial": TrivialBot,
    "revealing": RevealingBot,
    "copycat": CopycatBot,
    "heuristic": HeuristicBot,
    "subtle": SubtleBot,
}
