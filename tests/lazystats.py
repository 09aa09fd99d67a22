"""The two scipy.stats calls of the statistical tests, imported when such a test first runs
instead of when pytest collects its module: scipy.stats takes 0.7 s to import, and under
`--dist loadfile` most test processes never run one of these tests."""

from __future__ import annotations


def binom_interval(confidence: float, n: int, p: float) -> tuple[float, float]:
    """The central `confidence` interval of Binomial(n, p), in counts."""
    from scipy.stats import binom

    lo, hi = binom.interval(confidence, n, p)
    return float(lo), float(hi)


def chisquare_pvalue(counts: list[int]) -> float:
    """Pearson's chi-square test of `counts` against equal frequencies."""
    from scipy.stats import chisquare

    return float(chisquare(counts).pvalue)
