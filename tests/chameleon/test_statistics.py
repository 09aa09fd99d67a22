"""The paper's numbers through the real engine, seeded (docs/rules.md §3, seed 003).

Bounds: each test states its interval. With fixed seeds the outcome is deterministic; a
bound says how unlikely a failure would be if the engine drew correctly. The full
20,000-game check is run by `stille-post tournament` / a script (see the README note).
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import permutations

import pytest

from stille_post.games.chameleon import rules
from stille_post.games.chameleon.metrics import compute_metrics
from tests.lazystats import binom_interval, chisquare_pvalue

from .conftest import play_many

pytestmark = pytest.mark.heavy  # seconds in all: handed out first (conftest.py)


@pytest.mark.parametrize(("n", "k", "games"), [
    (4, 16, 1000), pytest.param(4, 16, 3000, marks=pytest.mark.slow),
    pytest.param(5, 16, 2000, marks=pytest.mark.slow)])
def test_trivial_concealing_matches_the_closed_form(n: int, k: int, games: int) -> None:
    """Trivial seats win for the non-chameleons at (1/N)(K-1)/K: 15/64 = 0.234 for N=4
    and 0.1875 for N=5. The count of IdentifiedWin lies in the exact two-sided 99.9%
    binomial interval around that rate (N=4, 1,000 games: about ±0.044, and 3,000 games:
    about ±0.025; N=5, 2,000 games: about ±0.029). Stronger and exact, game by game: the
    chameleon is accused if and only if it sits in seat 1, because every seat votes for
    seat 1."""
    p = rules.trivial_win_probability(n, k)
    ts = play_many(range(games), {"num_players": n, "words": k, "chameleon": "trivial",
                                  "others": "trivial"})
    for t in ts:
        s = t.summary.flat()
        assert s["identified"] == (s["chameleon"] == 1)
        assert set(s["votes"].values()) == {1}
    wins = sum(t.summary.flat()["outcome"] == rules.IDENTIFIED_WIN for t in ts)
    lo, hi = binom_interval(0.999, games, p)
    assert lo <= wins <= hi, (wins / games, p, lo / games, hi / games)
    overall = compute_metrics(ts)["overall"]
    assert overall["trivial_baseline"] == pytest.approx(p)
    assert overall["valid_ratio"] == 1.0


@pytest.mark.parametrize("chameleon", ["copycat", "heuristic", "revealing"])
def test_revealing_non_chameleons_lose_every_second_chance(chameleon: str) -> None:
    """Against revealing non-chameleons an identified chameleon names the secret word
    every time: a second-chance success rate of exactly 1.0 (the paper's Proposition 2
    in the limit), over 300 seeded games with N from 3 to 6."""
    ts = []
    for n in (3, 4, 5, 6):
        ts += play_many(range(75), {"num_players": n, "chameleon": chameleon,
                                    "others": "revealing"})
    overall = compute_metrics(ts)["overall"]
    assert overall["identified"] > 0
    assert overall["second_chance_success_rate"] == 1.0
    assert overall["non_chameleon_win_rate"] == 0.0


def test_deal_is_uniform() -> None:
    """Over 24,000 seeded deals (N=4, K=16): the chameleon seat is uniform over 4 seats,
    the secret word over the 16 words, and the speaking order over the 24 orders
    (chi-square p > 0.001 each)."""
    rng = random.Random(3)
    card = [("Test", [f"w{i}" for i in range(16)])]
    seats: Counter[int] = Counter()
    secrets: Counter[str] = Counter()
    orders: Counter[tuple[int, ...]] = Counter()
    for _ in range(24_000):
        d = rules.deal(rng, card, 4, 16)
        seats[d.chameleon] += 1
        secrets[d.secret] += 1
        orders[d.order] += 1
    assert chisquare_pvalue([seats[s] for s in range(1, 5)]) > 0.001
    assert chisquare_pvalue([secrets[f"w{i}"] for i in range(16)]) > 0.001
    assert set(orders) == set(permutations(range(1, 5)))
    assert chisquare_pvalue(list(orders.values())) > 0.001


def test_a_card_larger_than_k_gives_uniform_subsets() -> None:
    """K=4 of a 16-word card: each word is on the dealt card with probability 1/4, and the
    dealt words keep the card's order (10,000 deals; every count in 2500 ± 4 sd)."""
    rng = random.Random(5)
    words = [f"w{i:02d}" for i in range(16)]
    seen: Counter[str] = Counter()
    for _ in range(10_000):
        d = rules.deal(rng, [("Test", words)], 4, 4)
        assert list(d.words) == sorted(d.words) and d.secret in d.words
        seen.update(d.words)
    sd = (10_000 * 0.25 * 0.75) ** 0.5
    assert all(abs(seen[w] - 2500) < 4 * sd for w in words), seen
