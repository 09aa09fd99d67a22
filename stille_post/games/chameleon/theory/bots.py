"""The strategy bots of a theory game: each plays the configured class's non-chameleon
strategy when it is not the chameleon, and a best response from the paper's proofs
when it is (seed 003, appendix A).

- `theory`: the non-chameleons' strategy of the class; as the chameleon
  - concealing: Proposition 1's D^ch = (1/K) Σ D^i, and the non-chameleons' vote;
  - revealing: the posterior-predictive Σ_w P(w | heard) D^w (the proof allows any
    response), and Proposition 2's pairwise grouping estimator for the guess;
  - π^amb: a consistent response drawn uniformly from the subsets of r_{c-1}.
- `theory-first` / `theory-last` (π^amb only): consistent chameleons that keep the first
  (last) l(N+1-c) words of r_{c-1} in card order;
- `theory-null` (π^amb only): a chameleon that says null, the proof's inconsistent case.

Every chameleon guesses from its posterior (uniform ties broken by its own rng); the
grouping estimator falls back to it when no word passes every pairwise test. Votes are
functions of the public responses (and w* for a non-chameleon), so the N-1
non-chameleons vote as one, as the proofs assume.
"""

from __future__ import annotations

import math
import random
from typing import Any

from stille_post.games.chameleon import prompts as P
from stille_post.games.chameleon.observation import ChameleonObservation
from stille_post.games.chameleon.theory import amb
from stille_post.games.chameleon.theory.model import (
    NULL,
    Dist,
    Theory,
    bin_of,
    distribution,
    mixture,
    pairwise_bins,
)
from stille_post.games.chameleon.theory.space import SubsetSpace, encode
from stille_post.players.base import Action, Decision

CHAMELEON_VARIANTS = ("theory", "theory-first", "theory-last", "theory-null")
AMB_ONLY = ("theory-first", "theory-last", "theory-null")


class TheoryBot:
    instant = True
    kind = "bot"

    def __init__(self, rng: random.Random, theory: Theory, variant: str = "theory") -> None:
        self.rng = rng
        self.t = theory
        self.variant = variant
        self.name = f"bot:{variant}"
        self.space = SubsetSpace(theory.words)

    async def decide(self, decision: Decision[Any]) -> Action:
        obs: ChameleonObservation = decision.observation
        if decision.kind == P.WORD:
            text = self.respond(obs)
        elif decision.kind == P.VOTE:
            text = str(self.vote(obs))
        elif decision.kind == P.TIE_BREAK:
            text = str(min(obs.tied))
        elif decision.kind == P.GUESS:
            text = self.guess(obs)
        else:
            raise ValueError(f"unknown decision kind {decision.kind!r}")
        return Action(text=text)

    # --- responses ----------------------------------------------------------------------

    def respond(self, obs: ChameleonObservation) -> str:
        if self.t.kind == "amb":
            return self._amb_response(obs)
        if obs.is_chameleon:
            if self.t.kind == "concealing":
                return self._draw(mixture(self.t))
            return self._draw(mixture(self.t, self.posterior(obs)))
        return self._draw(distribution(self.t, str(obs.secret)))

    def _draw(self, dist: Dist) -> str:
        x, acc = self.rng.random(), 0.0
        last = ""
        for tok, p in dist.items():
            if p > 0:
                acc += p
                last = tok
                if x < acc:
                    return tok
        return last  # float rounding left x just above the total

    def _amb_response(self, obs: ChameleonObservation) -> str:
        n, l = self.t.n, int(self.t.l or 1)  # noqa: E741
        i = len(obs.responses) + 1
        previous = (self.space.decode(obs.responses[-1][1]) if obs.responses
                    else frozenset(self.t.words))
        if not obs.is_chameleon:
            return encode_subset(amb.respond(previous, str(obs.secret), n, l, i,
                                             self.t.words, self.rng), self.t.words)
        if self.variant == "theory-null" or previous is None:
            return NULL
        pool = [w for w in self.t.words if w in previous]
        size = amb.size_at(n, l, i)
        if len(pool) < size:
            return NULL
        if self.variant == "theory-first":
            keep = pool[:size]
        elif self.variant == "theory-last":
            keep = pool[-size:]
        else:
            keep = self.rng.sample(pool, size)
        return encode_subset(frozenset(keep), self.t.words)

    # --- what the responses say -----------------------------------------------------------

    def posterior(self, obs: ChameleonObservation) -> dict[str, float]:
        """P(w* = w | the others' tokens) under the uniform prior (stationary classes)."""
        logs = {}
        for w in self.t.words:
            d = distribution(self.t, w)
            total = 0.0
            for _, r in obs.other_responses():
                p = d.get(r, 0.0)
                total = -math.inf if p <= 0 else total + math.log(p)
            logs[w] = total
        top = max(logs.values())
        if top == -math.inf:  # impossible evidence (not from these strategies): uniform
            return dict.fromkeys(self.t.words, 1 / self.t.k)
        weights = {w: math.exp(v - top) for w, v in logs.items()}
        total = sum(weights.values())
        return {w: v / total for w, v in weights.items()}

    def map_word(self, obs: ChameleonObservation) -> str:
        post = self.posterior(obs)
        best = max(post.values())
        return self.rng.choice([w for w in self.t.words if post[w] >= best * (1 - 1e-12)])

    def grouping_estimate(self, obs: ChameleonObservation) -> str | None:
        """Proposition 2's estimator: the word w^i whose bins match the empirical bins of
        the others' responses within α/2 in L1 against every other word (at most one
        can); None when no word passes."""
        heard = [r for _, r in obs.other_responses()]
        half = float(self.t.alpha or 0.0) / 2
        for wi in self.t.words:
            ok = True
            for wj in self.t.words:
                if wj == wi:
                    continue
                p, _ = pairwise_bins(self.t, wi, wj)
                counts = [0, 0, 0]
                for r in heard:
                    counts[bin_of(self.t, wi, wj, r)] += 1
                emp = [c / len(heard) for c in counts] if heard else [0.0, 0.0, 0.0]
                if sum(abs(a - b) for a, b in zip(p, emp, strict=True)) >= half:
                    ok = False
                    break
            if ok:
                return wi
        return None

    # --- votes and the guess --------------------------------------------------------------

    def vote(self, obs: ChameleonObservation) -> int:
        if self.t.kind == "amb":
            if obs.is_chameleon:
                return next(s for s in obs.order if s != obs.seat)
            responses = [self.space.decode(r) for _, r in obs.responses]
            pos = amb.vote(responses, str(obs.secret), self.t.n, int(self.t.l or 1))
            return obs.order[pos - 1]
        secret = str(obs.secret) if not obs.is_chameleon else self.map_word(obs)
        return suspicion_vote(self.t, secret, obs.responses)

    def guess(self, obs: ChameleonObservation) -> str:
        if self.t.kind == "amb":
            pos = obs.order.index(obs.seat) + 1
            responses = [self.space.decode(r) for _, r in obs.responses]
            positions = {s: i for i, s in enumerate(obs.order, start=1)}
            votes = [positions[target] for voter, target in obs.votes if voter != obs.seat]
            found = amb.candidates(responses, pos, votes, self.t.words, self.t.n,
                                   int(self.t.l or 1))
            return self.rng.choice(found or list(self.t.words))
        if self.t.kind == "revealing":
            found_word = self.grouping_estimate(obs)
            if found_word is not None:
                return found_word
        return self.map_word(obs)


def suspicion_vote(t: Theory, secret: str, responses: tuple[tuple[int, str], ...]) -> int:
    """The stationary classes' vote, a function of the public responses and w* only:
    the seat whose response is likeliest to come from D^ch rather than D^{w*} (ratio
    D^ch(r) / D^{w*}(r), infinite when D^{w*}(r) = 0), the earliest speaker on ties. At
    α = 0 every ratio is 1, so this is the trivial strategy's vote for player 1."""
    own, mix = distribution(t, secret), mixture(t)
    best_seat, best = responses[0][0], -1.0
    for seat, r in responses:
        p = own.get(r, 0.0)
        ratio = math.inf if p <= 0 else mix.get(r, 0.0) / p
        if ratio > best * (1 + 1e-12):
            best_seat, best = seat, ratio
    return best_seat


def encode_subset(subset: frozenset[str] | None, words: tuple[str, ...]) -> str:
    if subset is None:
        return NULL
    return encode([w for w in words if w in subset])
