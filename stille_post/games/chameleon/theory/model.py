"""The paper's strategy classes (seed 003, §4) as data: the abstract game a theory
variant plays, the stationary response distributions D^w, and the three bounds of
Figure 2.

A theory game is the normal engine (order, simultaneous votes, random tie-breaks, the
second chance) on an abstract card W_C = (w1, ..., wK); only the response space changes:
- `concealing` and `revealing` answer with a token of a finite R_C ("t0", "t1", ...),
  drawn from D^{w*} (stationary: the history is ignored);
- `amb` (the paper's π^amb, §4.2) answers with a subset of W_C ("w2+w5+w7") or "null".

Everything here is a pure function of its arguments (no rng, no I/O).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from stille_post.core.errors import ConfigError

TheoryKind = Literal["concealing", "revealing", "amb"]
KINDS: tuple[str, ...] = ("concealing", "revealing", "amb")
MAX_KL_ALPHA = 10.0  # KL above this carries no extra meaning here (the bound is > 1)
MAX_L1_ALPHA = 2.0  # L1 between distributions is at most 2: unique responses
NULL = "null"
CATEGORY = "theory"


def card_words(k: int) -> tuple[str, ...]:
    """The abstract card the paper writes W_C = {w_1, ..., w_K}."""
    return tuple(f"w{i}" for i in range(1, k + 1))


@dataclass(frozen=True)
class Theory:
    """One point of Figure 2: the class, N, K, α (stationary classes) and l (π^amb)."""

    kind: TheoryKind
    n: int
    k: int
    alpha: float | None = None
    l: int | None = None  # noqa: E741 - the paper's name

    @property
    def words(self) -> tuple[str, ...]:
        return card_words(self.k)

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "n": self.n, "k": self.k, "alpha": self.alpha, "l": self.l}


def theory_of(kind: str, n: int, k: int, alpha: float | None) -> Theory:
    """The validated point, or a ConfigError of one line naming the option to fix."""
    if kind not in KINDS:
        raise ConfigError(f"--set theory={kind}: one of {', '.join(KINDS)}")
    if kind == "amb":
        if alpha is not None:
            raise ConfigError("--set alpha is for the stationary classes; π^amb has none "
                              "(its K = l(N+1) sets l)")
        if k % (n + 1) != 0:
            raise ConfigError(f"π^amb needs K = l(N+1): --words {k} is not a multiple of "
                              f"N+1 = {n + 1} (try --words {n + 1}, {2 * (n + 1)} or "
                              f"{3 * (n + 1)})")
        return Theory("amb", n, k, None, k // (n + 1))
    if alpha is None:
        raise ConfigError(f"theory {kind} needs --set alpha=A")
    top = MAX_KL_ALPHA if kind == "concealing" else MAX_L1_ALPHA
    low_ok = alpha >= 0 if kind == "concealing" else alpha > 0
    if not (math.isfinite(alpha) and low_ok and alpha <= top):
        span = f"0 <= alpha <= {top:g}" if kind == "concealing" else f"0 < alpha <= {top:g}"
        raise ConfigError(f"--set alpha={alpha:g} is out of range for {kind}: {span}")
    return Theory(kind, n, k, float(alpha), None)  # type: ignore[arg-type]


# --- the stationary distributions D^w ----------------------------------------------------

Dist = dict[str, float]


def tokens(t: Theory) -> tuple[str, ...]:
    """R_C: "t1".."tK" for concealing; revealing adds the common token "t0"."""
    own = tuple(f"t{i}" for i in range(1, t.k + 1))
    return own if t.kind == "concealing" else ("t0", *own)


@lru_cache(maxsize=256)
def concealing_peak(k: int, alpha: float) -> float:
    """The mass a on a word's own token such that every pairwise KL equals α.

    D^{w_i} gives a to t_i and b = (1-a)/(K-1) to every other token, so for i != j only
    t_i and t_j differ: KL(D^i || D^j) = a ln(a/b) + b ln(b/a) = (a-b) ln(a/b), the same
    for every ordered pair, increasing in a from 0 (a = 1/K: one shared distribution,
    the trivial strategy) to infinity (a -> 1). Solved by bisection to 1e-12."""
    def kl(a: float) -> float:
        b = (1 - a) / (k - 1)
        return (a - b) * math.log(a / b)

    lo, hi = 1 / k, 1.0 - 1e-15
    if alpha <= 0:
        return lo
    for _ in range(200):
        mid = (lo + hi) / 2
        if kl(mid) < alpha:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@lru_cache(maxsize=4096)
def distribution(t: Theory, word: str) -> Dist:
    """D^w over R_C for a stationary class (cached: treat it as read-only)."""
    i = t.words.index(word) + 1
    if t.kind == "concealing":
        a = concealing_peak(t.k, float(t.alpha or 0.0))
        b = (1 - a) / (t.k - 1)
        return {tok: (a if tok == f"t{i}" else b) for tok in tokens(t)}
    if t.kind == "revealing":
        # D^{w_i}: its own token t_i with β = α/2, the common token t0 otherwise. For
        # i != j the bins are R_{i>j} = {t_i}, R_{i=j} = {t0, other t}, R_{i<j} = {t_j},
        # so the pairwise L1 of Definition 2 is |β-0| + 0 + |0-β| = 2β = α exactly.
        beta = float(t.alpha or 0.0) / 2
        return {tok: (beta if tok == f"t{i}" else 1 - beta if tok == "t0" else 0.0)
                for tok in tokens(t)}
    raise ValueError("π^amb is not stationary")


def mixture(t: Theory, weights: dict[str, float] | None = None) -> Dist:
    """Σ_w weight(w) D^w; uniform weights give Proposition 1's D^ch = (1/K) Σ D^i."""
    if weights is None:
        return _uniform_mixture(t)
    return _mix(t, weights)


@lru_cache(maxsize=256)
def _uniform_mixture(t: Theory) -> Dist:
    return _mix(t, None)


def _mix(t: Theory, weights: dict[str, float] | None) -> Dist:
    ws = weights or dict.fromkeys(t.words, 1 / t.k)
    out = dict.fromkeys(tokens(t), 0.0)
    for w, p in ws.items():
        if p:
            for tok, q in distribution(t, w).items():
                out[tok] += p * q
    return out


def kl(p: Dist, q: Dist) -> float:
    total = 0.0
    for key, pv in p.items():
        if pv > 0:
            qv = q.get(key, 0.0)
            if qv <= 0:
                return math.inf
            total += pv * math.log(pv / qv)
    return total


@lru_cache(maxsize=4096)
def pairwise_bins(t: Theory, wi: str, wj: str) -> tuple[tuple[float, float, float],
                                                        tuple[float, float, float]]:
    """Definition 2's (p^i_{i>j}, p^i_{i=j}, p^i_{i<j}) and (p^j_{j<i}, p^j_{j=i},
    p^j_{j>i}): the masses D^{w_i} and D^{w_j} put on the three bins of the pair."""
    di, dj = distribution(t, wi), distribution(t, wj)
    gt = [r for r in di if di[r] > dj[r]]
    eq = [r for r in di if di[r] == dj[r]]
    lt = [r for r in di if di[r] < dj[r]]
    pi = (sum(di[r] for r in gt), sum(di[r] for r in eq), sum(di[r] for r in lt))
    pj = (sum(dj[r] for r in gt), sum(dj[r] for r in eq), sum(dj[r] for r in lt))
    return pi, pj


def bin_of(t: Theory, wi: str, wj: str, response: str) -> int:
    """0: R_{i>j}, 1: R_{i=j}, 2: R_{i<j}."""
    a, b = distribution(t, wi).get(response, 0.0), distribution(t, wj).get(response, 0.0)
    return 0 if a > b else 1 if a == b else 2


# --- Figure 2's bounds --------------------------------------------------------------------

def prop1_upper(n: int, k: int, alpha: float) -> float:
    """Proposition 1: 1/N + (N-1)/N² · sqrt((K-1)α/K)."""
    return 1 / n + (n - 1) / n**2 * math.sqrt((k - 1) * alpha / k)


def phi(t: Theory) -> float:
    """Proposition 2's φ = min over w' of φ(w*, w'); with θ the largest balanced split of
    the three bin masses, φ(θ) = log((1-θ)/θ)/(1-2θ), which tends to 2 at θ = 1/2 and to
    infinity at θ = 0 (a bin of mass 1: unique responses)."""
    best = math.inf
    w0 = t.words[0]  # every word is alike under the symmetric construction
    for w in t.words[1:]:
        masses, _ = pairwise_bins(t, w0, w)
        theta = 0.0
        for mask in range(8):
            s = sum(m for bit, m in enumerate(masses) if mask >> bit & 1)
            theta = max(theta, min(s, 1 - s))
        if theta <= 1e-15:
            value = math.inf
        elif abs(1 - 2 * theta) < 1e-12:
            value = 2.0
        else:
            value = math.log((1 - theta) / theta) / (1 - 2 * theta)
        best = min(best, value)
    return best


def prop2_upper(t: Theory) -> float:
    """Proposition 2: 6(K-1) exp(-(N-1) α φ / 2) (above 1 it says nothing)."""
    f = phi(t)
    if math.isinf(f):
        return 0.0
    return 6 * (t.k - 1) * math.exp(-(t.n - 1) * float(t.alpha or 0.0) * f / 2)


def prop3_lower(n: int, l: int) -> float:  # noqa: E741
    """Proposition 3 as the main text states it: (log(N+1) + 0.4l - 1)/N · (l-1)/l."""
    return (math.log(n + 1) + 0.4 * l - 1) / n * (l - 1) / l


def prop3_lower_appendix(n: int, l: int) -> float:  # noqa: E741
    """The proof's own last consistent-case line: (log(N+1) + 0.4)/N · (l-1)/l."""
    return (math.log(n + 1) + 0.4) / n * (l - 1) / l


def amb_exact(n: int, l: int) -> float:  # noqa: E741
    """π^amb's win probability against any consistent chameleon, from the proof's two
    cases: (1/N)(l-1)/l · (Σ_{m=2}^{N+1} 1/m + N/(N+1))."""
    harmonic = sum(1 / m for m in range(2, n + 2))
    return (l - 1) / l / n * (harmonic + n / (n + 1))


def trivial(n: int, k: int) -> float:
    """The trivial 0-KL strategy: (1/N)(K-1)/K."""
    return (k - 1) / (n * k)
