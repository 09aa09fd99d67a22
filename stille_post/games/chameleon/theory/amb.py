"""π^amb (seed 003, §4.2) as pure rules over the speaking positions i = 1..N.

The paper's "player i" is the i-th speaker (it assumes, without loss of generality, that
the indices are the playing order), so "vote for player 1" is a vote for the first
speaker. A response is a frozenset of card words, or None for null.

- Turn i: with r_0 = W_C, respond null when w* ∉ r_{i-1} or |r_{i-1}| ≠ l(N+2-i);
  otherwise say a uniform r_i ⊆ r_{i-1} with w* ∈ r_i and |r_i| = l(N+1-i).
- Vote: for the first speaker when every r_i holds w* and has size l(N+1-i); otherwise
  for the first speaker i whose r_i does not.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

Subset = frozenset[str] | None


def size_at(n: int, l: int, i: int) -> int:  # noqa: E741
    """|r_i| = l(N+1-i); i = 0 gives |W_C| = l(N+1)."""
    return l * (n + 1 - i)


def consistent(r: Subset, secret: str, n: int, l: int, i: int) -> bool:  # noqa: E741
    return r is not None and secret in r and len(r) == size_at(n, l, i)


def says_null(previous: Subset, secret: str, n: int, l: int, i: int) -> bool:  # noqa: E741
    """Whether the i-th speaker must say null after r_{i-1} = `previous`."""
    return not consistent(previous, secret, n, l, i - 1)


def respond(previous: Subset, secret: str, n: int, l: int, i: int,  # noqa: E741
            words: Sequence[str], rng: random.Random) -> Subset:
    """A non-chameleon's r_i. Sampled inside r_{i-1} (Figure 3's nested eliminations;
    the set-builder of §4.2 leaves r_i ⊆ r_{i-1} implicit), kept in card order."""
    if says_null(previous, secret, n, l, i):
        return None
    assert previous is not None
    rest = [w for w in words if w in previous and w != secret]
    keep = set(rng.sample(rest, size_at(n, l, i) - 1)) | {secret}
    return frozenset(keep)


def vote(responses: Sequence[Subset], secret: str, n: int, l: int) -> int:  # noqa: E741
    """The position (1-based) π^amb votes for, from the responses in speaking order."""
    for i, r in enumerate(responses, start=1):
        if not consistent(r, secret, n, l, i):
            return i
    return 1


def candidates(responses: Sequence[Subset], chameleon_pos: int, vote_positions:
               Sequence[int], words: Sequence[str], n: int, l: int) -> list[str]:  # noqa: E741
    """The chameleon's posterior support: the words w* could be, given every response
    of the others and their (unanimous) vote. Under π^amb each non-chameleon response
    has the same probability for every w* it is possible for, so the posterior is
    uniform on this list (the proof's 1/l in both cases)."""
    found = []
    for w in words:
        previous: Subset = frozenset(words)
        ok = True
        for i, r in enumerate(responses, start=1):
            if i != chameleon_pos:
                if says_null(previous, w, n, l, i):
                    ok = r is None
                else:
                    ok = (r is not None and previous is not None and r <= previous
                          and consistent(r, w, n, l, i))
            if not ok:
                break
            previous = r
        expected = vote(responses, w, n, l)
        if ok and all(v == expected for v in vote_positions):
            found.append(w)
    return found
