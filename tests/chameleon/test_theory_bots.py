"""The strategy bots play what seed 003 describes, through the normal engine.

Statistical checks use fixed seeds and state their bound (±4 standard deviations, so a
correct strategy fails about once in 15,000 checks and a wrong one is far outside)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest

from stille_post.games.chameleon.theory import amb, model
from stille_post.games.chameleon.theory.space import SubsetSpace
from stille_post.games.kit.stats import wilson

from .conftest import play_many

Summary = dict[str, Any]


def games(theory: str, n: int, k: int, count: int, alpha: float | None = None,
          chameleon: str = "theory", seed0: int = 0) -> Iterator[Summary]:
    options: dict[str, Any] = {"theory": theory, "num_players": n, "words": k,
                               "chameleon": chameleon, "others": "theory"}
    if alpha is not None:
        options["alpha"] = alpha
    for t in play_many(range(seed0, seed0 + count), options):
        s = t.summary.flat()
        assert t.header["theory"] == s["theory"] == t.events[0].data["theory"]
        assert s["valid"], s
        yield s


def within(hits: int, trials: int, p: float, sds: float = 4.0) -> bool:
    return abs(hits - trials * p) <= sds * math.sqrt(trials * p * (1 - p))


def non_chameleon_responses(s: Summary) -> list[str]:
    return [r for seat, r in s["responses"].items() if int(seat) != s["chameleon"]]


def test_concealing_non_chameleons_peak_on_their_own_token_the_chameleon_mixes() -> None:
    """α = 2, K = 4: a non-chameleon says t_{w*} with the peak mass a (every pairwise KL
    2); the chameleon draws from D^ch, uniform. 150 games of 4 seats."""
    peak = model.concealing_peak(4, 2.0)
    own = theirs = 0
    cham_tokens: list[str] = []
    for s in games("concealing", 4, 4, 150, alpha=2.0):
        target = "t" + s["secret"][1:]
        heard = non_chameleon_responses(s)
        own += sum(r == target for r in heard)
        theirs += len(heard)
        cham_tokens.append(s["responses"][str(s["chameleon"])])
    assert within(own, theirs, peak), (own, theirs, peak)
    for tok in ("t1", "t2", "t3", "t4"):
        assert within(cham_tokens.count(tok), len(cham_tokens), 0.25), tok


def test_zero_kl_votes_for_the_first_speaker() -> None:
    """The trivial strategy: one shared distribution, so the vote is for player 1 (the
    first speaker), and the non-chameleons win (1/N)(K-1)/K of the games."""
    wins = 0
    count = 400
    for s in games("concealing", 4, 4, count, alpha=0.0):
        first = s["order"][0]
        assert all(target == first for target in s["votes"].values()), s
        wins += s["outcome"] == "IdentifiedWin"
    lo, hi = wilson(wins, count) or [0.0, 1.0]
    assert lo <= model.trivial(4, 4) <= hi, (wins, count)


def test_revealing_non_chameleons_say_their_token_or_the_common_one() -> None:
    """α = 1: t_{w*} with β = α/2 = 1/2, else t0; 150 games of 4 seats."""
    own = total = 0
    for s in games("revealing", 4, 4, 150, alpha=1.0):
        target = "t" + s["secret"][1:]
        for r in non_chameleon_responses(s):
            assert r in (target, "t0"), (r, s)
            own += r == target
            total += 1
    assert within(own, total, 0.5), (own, total)


def test_unique_responses_give_the_chameleon_the_word() -> None:
    """α = 2 (2-L1): every non-chameleon says t_{w*}, so the grouping estimator reads w*
    off any one of them and the non-chameleons never win (Prop. 2's bound is 0)."""
    for s in games("revealing", 3, 4, 60, alpha=2.0):
        assert set(non_chameleon_responses(s)) == {"t" + s["secret"][1:]}
        assert s["outcome"] != "IdentifiedWin", s
        if s["accused"] == s["chameleon"]:
            assert s["guess"] == s["secret"], s


def _subsets(s: Summary) -> list[amb.Subset]:
    space = SubsetSpace(model.card_words(s["num_words"]))
    return [space.decode(s["responses"][str(seat)]) for seat in s["order"]]


def test_pi_amb_votes_for_player_1_or_the_first_inconsistent_speaker() -> None:
    n, l = 3, 2  # noqa: E741
    seen = set()
    for s in games("amb", n, l * (n + 1), 200):
        rs, order, cham = _subsets(s), s["order"], s["chameleon"]
        pos = order.index(cham) + 1
        for i, r in enumerate(rs, start=1):
            if i < pos:  # before the chameleon every speaker is consistent
                assert amb.consistent(r, s["secret"], n, l, i), s
        cham_ok = amb.consistent(rs[pos - 1], s["secret"], n, l, pos)
        expected = order[0] if cham_ok else cham
        seen.add(cham_ok)
        for voter, target in s["votes"].items():
            if int(voter) != cham:
                assert target == expected, s
        # The chameleon's vote cannot change a unanimous N-1 (it votes for the first
        # other speaker, never for itself).
        assert s["votes"][str(cham)] == next(x for x in order if x != cham), s
        if not cham_ok:  # null after a deviation, for every later speaker
            assert all(r is None for r in rs[pos:]), s
    assert seen == {True, False}  # both branches were played


def test_pi_amb_null_chameleon_is_always_caught() -> None:
    for s in games("amb", 4, 10, 60, chameleon="theory-null"):
        cham = s["chameleon"]
        assert s["responses"][str(cham)] == "null"
        assert all(t == cham for v, t in s["votes"].items() if int(v) != cham), s


@pytest.mark.parametrize(("variant", "take"), [("theory-first", slice(None, 4)),
                                                ("theory-last", slice(-4, None))])
def test_pi_amb_ordered_chameleons_keep_the_ends_of_the_card_order(variant: str,
                                                                   take: slice) -> None:
    n, l = 3, 2  # noqa: E741
    for s in games("amb", n, 8, 40, chameleon=variant):
        rs, order = _subsets(s), s["order"]
        pos = order.index(s["chameleon"]) + 1
        previous = rs[pos - 2] if pos > 1 else frozenset(model.card_words(8))
        assert previous is not None
        pool = [w for w in model.card_words(8) if w in previous]
        size = amb.size_at(n, l, pos)
        keep = pool[:size] if take.start is None else pool[-size:]
        assert rs[pos - 1] == frozenset(keep), s


def test_pi_amb_plays_the_proofs_exact_rate() -> None:
    """The engine, the votes and the posterior guess together: the non-chameleons win
    (1/N)(l-1)/l (Σ_{m=2}^{N+1} 1/m + N/(N+1)) against the uniform consistent chameleon
    (N = 3, l = 2: 0.3056), inside the Wilson 95% interval of 400 seeded games."""
    count = 400
    wins = sum(s["outcome"] == "IdentifiedWin" for s in games("amb", 3, 8, count))
    lo, hi = wilson(wins, count) or [0.0, 1.0]
    assert lo <= model.amb_exact(3, 2) <= hi, (wins, count)
    assert lo > model.trivial(3, 8)  # above the trivial strategy at the same K
