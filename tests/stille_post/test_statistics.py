"""Seeded statistical checks of the game's chance events (docs/rules.md §1).

Bounds: each test states its interval. With fixed seeds the outcome is deterministic;
the bounds say how unlikely a failure would be if the code drew correctly.
"""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from stille_post.games.stille_post import rules
from tests.lazystats import chisquare_pvalue

Z_999 = 3.2905  # two-sided 99.9% normal quantile


def binomial_interval(n: int, p: float, z: float = Z_999) -> tuple[float, float]:
    half = z * math.sqrt(p * (1 - p) / n)
    return p - half, p + half


# The same rate drawn by the rule function is checked in the fast suite (next test).
@pytest.mark.slow
def test_roulette_self_elimination_rate_through_the_engine(play, bots) -> None:
    """≥10,000 pulls by gambler bots in real games: the caller dies at rate 0.5, inside the
    99.9% binomial interval (0.5 ± 0.0165 at n = 10,000)."""
    pulls = self_hits = 0
    seed = 0
    while pulls < 10_000:
        seed += 1
        _, events, _ = play(bots(["gambler"] * 4, seed), seed=seed, max_rounds=3)
        for e in events:
            if e.type == "tool_result" and e.data.get("tool") == "russian_roulette":
                pulls += 1
                self_hits += e.data["victim"] == e.actor
    lo, hi = binomial_interval(pulls, 0.5)
    assert lo <= self_hits / pulls <= hi, (self_hits, pulls)


def test_roulette_victims_of_the_other_branch_are_uniform() -> None:
    """The caller dies at rate 0.5 (inside the 99.9% binomial interval, 0.5 ± 0.0095 at
    n = 30,000) and, when the caller survives, the victim is uniform over the 3 others:
    chi-square p-value above 0.001 (seeded)."""
    rng = random.Random(20261122)
    victims: Counter[int] = Counter()
    pulls, self_hits = 30_000, 0
    for _ in range(pulls):
        victim, r = rules.roulette(rng, 2, [1, 2, 3, 4])
        if victim != 2:
            assert r >= 0.5
            victims[victim] += 1
        else:
            assert r < 0.5
            self_hits += 1
    lo, hi = binomial_interval(pulls, 0.5)
    assert lo <= self_hits / pulls <= hi, (self_hits, pulls)
    assert set(victims) == {1, 3, 4}
    assert chisquare_pvalue([victims[s] for s in (1, 3, 4)]) > 0.001


def test_hint_kinds_are_uniform_among_the_unseen() -> None:
    """For several already-seen sets, 10,000 draws each are uniform over the unseen kinds
    (chi-square p > 0.001) and never repeat a seen kind."""
    rng = random.Random(7)
    for seen in ([], ["provider"], ["tier", "middle"], ["provider", "length", "first_letter"]):
        unseen = rules.unseen_hint_kinds(seen)
        draws = Counter(rules.draw_hint_kind(rng, seen) for _ in range(10_000))
        assert set(draws) == set(unseen)
        assert chisquare_pvalue([draws[k] for k in unseen]) > 0.001
    assert rules.draw_hint_kind(rng, rules.HINT_KINDS) is None


def test_identity_sampling_is_uniform_over_the_roster(play, bots) -> None:
    """Seat 1's identity over 6,000 seeded games is uniform over the 12 roster ids
    (chi-square p > 0.001)."""
    from stille_post.core.rng import make_rng
    from stille_post.games.stille_post.roster import load_roster

    roster = load_roster()
    counts: Counter[str] = Counter()
    for seed in range(6_000):
        seats = rules.assign_identities(make_rng(seed), roster, 4)
        assert len({m.id for m in seats.values()}) == 4  # without replacement
        counts[seats[1].id] += 1
    assert chisquare_pvalue([counts[i] for i in roster.ids]) > 0.001
