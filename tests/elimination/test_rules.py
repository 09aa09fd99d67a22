"""Properties of the pure rules (rules.py) over random inputs, beyond the spec's cases."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from stille_post.games.elimination import rules as R


@st.composite
def rankings(draw: st.DrawFn) -> tuple[dict[int, list[int]], list[int]]:
    n = draw(st.integers(2, 10))
    seats = list(range(1, n + 1))
    rnd = random.Random(draw(st.integers(0, 10**9)))
    ranks = {s: rnd.sample([o for o in seats if o != s], n - 1) for s in seats}
    entry = rnd.sample(seats, n)
    return ranks, entry


@settings(deadline=None)
@given(rankings())
def test_pairing_is_a_matching_of_final_holds(case: tuple[dict[int, list[int]], list[int]]
                                              ) -> None:
    ranks, entry = case
    p = R.pair(ranks, entry)
    flat = [s for pair in p.pairs for s in pair]
    assert len(flat) == len(set(flat))  # nobody in two pairs
    assert sorted(flat + list(p.unpaired)) == sorted(ranks)
    holds: dict[int, int] = {}  # replay the trace: who each receiver holds at the end
    for step in p.steps:
        if step.result in ("accepted", "swapped"):
            holds[step.receiver] = step.proposer
    for proposer, receiver in p.pairs:
        assert holds[receiver] == proposer
    # A proposer is held by at most one receiver at the end.
    assert len(set(holds.values())) == len(holds)
    # Mutual first choices always pair.
    for a, ra in ranks.items():
        b = ra[0]
        if ranks[b][0] == a:
            assert (a, b) in p.pairs or (b, a) in p.pairs


@settings(deadline=None)
@given(st.integers(0, 10**6), st.integers(3, 10), st.lists(st.integers(-2, 12), max_size=12))
def test_complete_ranking_is_a_permutation_of_the_others(seed: int, n: int,
                                                         given_: list[int]) -> None:
    seats = list(range(1, n + 1))
    r = R.complete_ranking(1, given_, seats, random.Random(seed))
    assert sorted(r.ranking) == seats[1:]
    kept = [s for s in r.ranking if s not in r.filled]
    assert list(r.ranking[: len(kept)]) == kept  # what was given keeps its order, first


@settings(deadline=None)
@given(st.permutations(list(range(1, 9))))
def test_ranks_follow_reverse_elimination(order: list[int]) -> None:
    *out, winner = order
    ranks = R.ranks(out, [winner], winner)
    assert sorted(ranks.values()) == list(range(1, 9))
    assert ranks[winner] == 1 and ranks[out[-1]] == 2 and ranks[out[0]] == 8
    assert R.partial_points(ranks[winner], 8) == 1.0 and R.partial_points(8, 8) == 0.0


def test_permutation_draws_with_choice_only() -> None:
    rnd = random.Random(3)
    assert sorted(R.permutation(rnd, [5, 2, 9])) == [2, 5, 9]
    assert R.permutation(rnd, [4]) == [4]
