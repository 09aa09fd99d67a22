"""TrueSkill passes in compiled code (numba): `ratings.trueskill_passes` runs here.

`rate_pass` is `ratings.rate_once_fast` over a whole pass, compiled: `FastRater.rate`
ported line by line (the same factor schedule, the same floating-point operations in the
same order), with exp and pow taken from libm as Python's `math.exp` and `**` take them.
It equals `FastRater` to the bit, hence the `trueskill` package to 1e-9
(tests/perf/test_fast_trueskill.py). Why not numpy lanes, one pass per lane: a tie's
update is a difference of two nearly equal cdfs, so one ulp of numpy's own exp became
1e-8 in a rating, and with libm's exp called per element, ten iterations of a tied game
cost ~3,000 small numpy calls per step: 3x too slow for the target.

It reads the games as `ratings.GameTable`'s arrays (`ratings.CompiledPasses` hands them
over, with each pass's order): nothing per game besides them and the order.

A module of its own, knowing nothing of `ratings`, so that importing `ratings` (the CLI
does, at start) imports neither numpy nor numba. The compiled code is cached beside this
file (`cache=True`), so only the first report after an install pays the compile (~3 s).
"""

from __future__ import annotations

import math

import numba
import numpy as np
import trueskill

_INF = math.inf
# Python's `x ** 2` and `x ** -2` call libm's pow; with a literal exponent LLVM would turn
# pow(x, 2.0) into x * x, which differs in the last bit now and then. The exponents are
# therefore arguments, unknown when the code is compiled.
_TWO, _MINUS_TWO = 2.0, -2.0
# The error a pass stopped on (the scalar path is then rerun to raise the package's own).
OK, FAILED = 0, 1


@numba.njit(cache=True, error_model="numpy")
def _erfc(x: float) -> float:
    """trueskill.backends.erfc."""
    z = abs(x)
    t = 1. / (1. + z / 2.)
    r = t * math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (
        0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (
            0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
                -0.82215223 + t * 0.17087277)))))))))
    return 2. - r if x < 0 else r


@numba.njit(cache=True, error_model="numpy")
def _cdf(x: float, c_sqrt2: float) -> float:
    """trueskill.backends.cdf with mu 0, sigma 1: 0.5 * erfc(-(x - 0) / (1 * sqrt(2)))."""
    return 0.5 * _erfc(-(x - 0) / c_sqrt2)


@numba.njit(cache=True, error_model="numpy")
def _pdf(x: float, c_pdf: float, two: float) -> float:
    """trueskill.backends.pdf with mu 0, sigma 1."""
    return c_pdf * math.exp(-(((x - 0) / 1) ** two / 2))


@numba.njit(cache=True, error_model="numpy")
def _sum2(vpi1: float, vtau1: float, mpi1: float, mtau1: float, c1: float,
          vpi2: float, vtau2: float, mpi2: float, mtau2: float, c2: float
          ) -> tuple[float, float, bool]:
    """FastRater.rate's `sum_update` of two terms: (pi, tau, ok)."""
    pi_inv = 0.0
    mu = 0.0
    dpi = vpi1 - mpi1
    dtau = vtau1 - mtau1
    mu += c1 * (dtau / dpi if dpi != 0 else dpi)
    if dpi == 0:
        pi_inv = _INF
    else:
        pi_inv += c1 * c1 / dpi
    dpi = vpi2 - mpi2
    dtau = vtau2 - mtau2
    mu += c2 * (dtau / dpi if dpi != 0 else dpi)
    if pi_inv != _INF:
        if dpi == 0:
            pi_inv = _INF
        else:
            pi_inv += c2 * c2 / dpi
    if pi_inv == 0:
        return 0.0, 0.0, False  # Python: ZeroDivisionError
    pi = 1.0 / pi_inv
    return pi, pi * mu, True


@numba.njit(cache=True, error_model="numpy")
def _rate_pass(order: np.ndarray, start: np.ndarray, labels: np.ndarray, ranks: np.ndarray,
               selfplay: np.ndarray, mu_tab: np.ndarray, sg_tab: np.ndarray,
               seen: np.ndarray, env_mu: float, env_sigma: float, beta2: float,
               dyn2: float, margin: float, min_delta: float, c_sqrt2: float, c_pdf: float,
               two: float, minus_two: float, slots: int) -> int:
    """One pass: `mu_tab`/`sg_tab` (one entry per label, fresh ratings to start) end as
    `rate_once_fast`'s ratings before its final `_as_rating`; `seen` marks the labels
    rated. Returns OK, or FAILED where Python would have raised."""
    n_max = slots
    k_max = max(1, n_max - 1)
    order_s = np.zeros(n_max, np.int64)
    in_mu = np.zeros(n_max)
    in_sg = np.zeros(n_max)
    r_pi = np.zeros(n_max)
    r_tau = np.zeros(n_max)
    p_pi = np.zeros(n_max)
    p_tau = np.zeros(n_max)
    t_pi = np.zeros(n_max)
    t_tau = np.zeros(n_max)
    m_pl_pi = np.zeros(n_max)
    m_pl_tau = np.zeros(n_max)
    m_ps_pi = np.zeros(n_max)
    m_ps_tau = np.zeros(n_max)
    m_ts_pi = np.zeros(n_max)
    m_ts_tau = np.zeros(n_max)
    m_tl_pi = np.zeros(k_max)
    m_tl_tau = np.zeros(k_max)
    m_tr_pi = np.zeros(k_max)
    m_tr_tau = np.zeros(k_max)
    d_pi = np.zeros(k_max)
    d_tau = np.zeros(k_max)
    m_dd_pi = np.zeros(k_max)
    m_dd_tau = np.zeros(k_max)
    m_dt_pi = np.zeros(k_max)
    m_dt_tau = np.zeros(k_max)
    tie = np.zeros(k_max, np.bool_)
    out_mu = np.zeros(n_max)
    out_sg = np.zeros(n_max)
    for step in range(order.shape[0]):
        g = order[step]
        lo = start[g]
        n = start[g + 1] - lo
        if n < 2:
            continue
        # Seats sorted by rank, stably (as the package sorts them).
        for i in range(n):
            order_s[i] = i
        for i in range(1, n):
            cur = order_s[i]
            j = i - 1
            while j >= 0 and ranks[lo + order_s[j]] > ranks[lo + cur]:
                order_s[j + 1] = order_s[j]
                j -= 1
            order_s[j + 1] = cur
        for i in range(n):
            lab = labels[lo + i]
            in_mu[i] = mu_tab[lab]
            in_sg[i] = sg_tab[lab]
            r_pi[i] = r_tau[i] = p_pi[i] = p_tau[i] = t_pi[i] = t_tau[i] = 0.0
            m_pl_pi[i] = m_pl_tau[i] = m_ps_pi[i] = m_ps_tau[i] = 0.0
            m_ts_pi[i] = m_ts_tau[i] = 0.0
        k = n - 1
        for j in range(k):
            m_tl_pi[j] = m_tl_tau[j] = m_tr_pi[j] = m_tr_tau[j] = 0.0
            d_pi[j] = d_tau[j] = m_dd_pi[j] = m_dd_tau[j] = m_dt_pi[j] = m_dt_tau[j] = 0.0
        for slot in range(n):
            i = order_s[slot]
            mu = in_mu[i]
            sigma = in_sg[i]
            pi0 = sigma ** minus_two
            tau0 = pi0 * mu
            val_mu = tau0 / pi0 if pi0 != 0 else pi0
            val_sigma = math.sqrt(1 / pi0) if pi0 != 0 else _INF
            s = math.sqrt(val_sigma ** two + dyn2)
            vpi = s ** minus_two
            r_pi[slot] = vpi
            r_tau[slot] = vpi * val_mu
        for j in range(n):
            mpi = r_pi[j] - 0.0
            mtau = r_tau[j] - 0.0
            a = 1.0 / (1.0 + beta2 * mpi)
            npi = a * mpi
            ntau = a * mtau
            p_pi[j] = (p_pi[j] - m_pl_pi[j]) + npi
            p_tau[j] = (p_tau[j] - m_pl_tau[j]) + ntau
            m_pl_pi[j] = npi
            m_pl_tau[j] = ntau
        for j in range(n):
            dpi = p_pi[j] - m_ps_pi[j]
            dtau = p_tau[j] - m_ps_tau[j]
            mu = 1 * (dtau / dpi if dpi != 0 else dpi)
            if dpi == 0:
                return FAILED
            pi_inv = 1 / dpi
            pi = 1.0 / pi_inv
            tau = pi * mu
            t_pi[j] = (t_pi[j] - m_ts_pi[j]) + pi
            t_tau[j] = (t_tau[j] - m_ts_tau[j]) + tau
            m_ts_pi[j] = pi
            m_ts_tau[j] = tau
        for j in range(k):
            tie[j] = ranks[lo + order_s[j]] == ranks[lo + order_s[j + 1]]
        for _ in range(10):
            delta = 0.0
            if k == 1:
                first, last = 0, 0
            else:
                first, last = 0, k - 2
            # The forward sweep (j = 0 .. k-2), then the backward one (j = k-1 .. 1); a
            # two-seat game (k == 1) runs diff_down(0) and trunc_up(0) once.
            total = 1 if k == 1 else 2 * (k - 1)
            for step_j in range(total):
                if k == 1:
                    j = 0
                    forward = True
                elif step_j <= last:
                    j = first + step_j
                    forward = True
                else:
                    j = k - 1 - (step_j - (k - 1))
                    forward = False
                # diff_down(j)
                pi, tau, ok = _sum2(t_pi[j], t_tau[j], m_tl_pi[j], m_tl_tau[j], 1.0,
                                    t_pi[j + 1], t_tau[j + 1], m_tr_pi[j], m_tr_tau[j], -1.0)
                if not ok:
                    return FAILED
                d_pi[j] = (d_pi[j] - m_dd_pi[j]) + pi
                d_tau[j] = (d_tau[j] - m_dd_tau[j]) + tau
                m_dd_pi[j] = pi
                m_dd_tau[j] = tau
                # trunc_up(j)
                dpi = d_pi[j] - m_dt_pi[j]
                dtau = d_tau[j] - m_dt_tau[j]
                if dpi < 0:
                    return FAILED  # Python: math domain error
                sqrt_pi = math.sqrt(dpi)
                diff = dtau / sqrt_pi
                draw_margin = margin * sqrt_pi
                if not tie[j]:
                    x = diff - draw_margin
                    denom = _cdf(x, c_sqrt2)
                    v = (_pdf(x, c_pdf, two) / denom) if denom != 0 else -x
                    w = v * (v + x)
                    if not (0 < w < 1):
                        return FAILED
                else:
                    abs_diff = abs(diff)
                    a = draw_margin - abs_diff
                    b = -draw_margin - abs_diff
                    denom = _cdf(a, c_sqrt2) - _cdf(b, c_sqrt2)
                    pdf_a = _pdf(a, c_pdf, two)
                    pdf_b = _pdf(b, c_pdf, two)
                    if denom == 0:
                        return FAILED
                    v_abs = (pdf_b - pdf_a) / denom
                    v = v_abs * (-1 if diff < 0 else +1)
                    w = (v_abs ** two) + (a * pdf_a - b * pdf_b) / denom
                denom = 1.0 - w
                pi = dpi / denom
                tau = (dtau + sqrt_pi * v) / denom
                m_dt_pi[j] = (pi + m_dt_pi[j]) - d_pi[j]
                m_dt_tau[j] = (tau + m_dt_tau[j]) - d_tau[j]
                pi_delta = abs(d_pi[j] - pi)
                if pi_delta == _INF:
                    d = 0.0
                else:
                    d1 = abs(d_tau[j] - tau)
                    d2 = math.sqrt(pi_delta)
                    d = d2 if d2 > d1 else d1
                d_pi[j] = pi
                d_tau[j] = tau
                if k == 1:
                    delta = d
                    continue
                delta = d if d > delta else delta
                if forward:  # diff_up(j, 1)
                    pi, tau, ok = _sum2(t_pi[j], t_tau[j], m_tl_pi[j], m_tl_tau[j], 1.0,
                                        d_pi[j], d_tau[j], m_dd_pi[j], m_dd_tau[j], -1.0)
                    if not ok:
                        return FAILED
                    t = j + 1
                    t_pi[t] = (t_pi[t] - m_tr_pi[j]) + pi
                    t_tau[t] = (t_tau[t] - m_tr_tau[j]) + tau
                    m_tr_pi[j] = pi
                    m_tr_tau[j] = tau
                else:  # diff_up(j, 0)
                    pi, tau, ok = _sum2(d_pi[j], d_tau[j], m_dd_pi[j], m_dd_tau[j], 1.0,
                                        t_pi[j + 1], t_tau[j + 1], m_tr_pi[j], m_tr_tau[j],
                                        1.0)
                    if not ok:
                        return FAILED
                    t_pi[j] = (t_pi[j] - m_tl_pi[j]) + pi
                    t_tau[j] = (t_tau[j] - m_tl_tau[j]) + tau
                    m_tl_pi[j] = pi
                    m_tl_tau[j] = tau
            if delta <= min_delta:
                break
        # diff_up(0, 0) then diff_up(k - 1, 1)
        pi, tau, ok = _sum2(d_pi[0], d_tau[0], m_dd_pi[0], m_dd_tau[0], 1.0,
                            t_pi[1], t_tau[1], m_tr_pi[0], m_tr_tau[0], 1.0)
        if not ok:
            return FAILED
        t_pi[0] = (t_pi[0] - m_tl_pi[0]) + pi
        t_tau[0] = (t_tau[0] - m_tl_tau[0]) + tau
        m_tl_pi[0] = pi
        m_tl_tau[0] = tau
        j = k - 1
        pi, tau, ok = _sum2(t_pi[j], t_tau[j], m_tl_pi[j], m_tl_tau[j], 1.0,
                            d_pi[j], d_tau[j], m_dd_pi[j], m_dd_tau[j], -1.0)
        if not ok:
            return FAILED
        t_pi[j + 1] = (t_pi[j + 1] - m_tr_pi[j]) + pi
        t_tau[j + 1] = (t_tau[j + 1] - m_tr_tau[j]) + tau
        m_tr_pi[j] = pi
        m_tr_tau[j] = tau
        for j in range(n):
            # _single: SumFactor.update with one term and coefficient 1.0.
            dpi = t_pi[j] - m_ts_pi[j]
            dtau = t_tau[j] - m_ts_tau[j]
            mu = 0.0
            mu += 1.0 * (dtau / dpi if dpi != 0 else dpi)
            pi_inv = 0.0
            if dpi == 0:
                pi_inv = _INF
            else:
                pi_inv += 1.0 / dpi
            if pi_inv == 0:
                return FAILED
            pi = 1.0 / pi_inv
            tau = pi * mu
            p_pi[j] = (p_pi[j] - m_ps_pi[j]) + pi
            p_tau[j] = (p_tau[j] - m_ps_tau[j]) + tau
            m_ps_pi[j] = pi
            m_ps_tau[j] = tau
        for j in range(n):
            mpi = p_pi[j] - m_pl_pi[j]
            mtau = p_tau[j] - m_pl_tau[j]
            a = 1.0 / (1.0 + beta2 * mpi)
            npi = a * mpi
            ntau = a * mtau
            rpi = (r_pi[j] - 0.0) + npi
            rtau = (r_tau[j] - 0.0) + ntau
            out_mu[order_s[j]] = rtau / rpi if rpi != 0 else rpi
            out_sg[order_s[j]] = math.sqrt(1 / rpi) if rpi != 0 else _INF
        # The new ratings, by label; several seats of one label: the mean of their
        # ratings as Rating objects read them, summed in seat order.
        if not selfplay[g]:
            for i in range(n):
                lab = labels[lo + i]
                mu_tab[lab] = out_mu[i]
                sg_tab[lab] = out_sg[i]
                seen[lab] = True
        else:
            for i in range(n):
                lab = labels[lo + i]
                earlier = False
                count = 0
                for q in range(n):
                    if labels[lo + q] == lab:
                        count += 1
                        if q < i:
                            earlier = True
                if earlier:
                    continue
                if count == 1:
                    mu_tab[lab] = out_mu[i]
                    sg_tab[lab] = out_sg[i]
                else:
                    sum_mu = 0.0
                    sum_sg = 0.0
                    for q in range(i, n):
                        if labels[lo + q] == lab:
                            pi = out_sg[q] ** minus_two
                            tau = pi * out_mu[q]
                            sum_mu += tau / pi if pi != 0 else pi
                            sum_sg += math.sqrt(1 / pi) if pi != 0 else _INF
                    mu_tab[lab] = sum_mu / count
                    sg_tab[lab] = sum_sg / count
                seen[lab] = True
    return OK


def rate_pass(order: np.ndarray, start: np.ndarray, labels: np.ndarray, ranks: np.ndarray,
              selfplay: np.ndarray, labels_count: int, env: trueskill.TrueSkill,
              slots: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """One pass over the games in `order` (positions into the seat arrays: game g's seats
    are `start[g]:start[g + 1]`, each with its label's number and its rank). Returns
    (OK or FAILED, mu and sigma per label as `rate_once_fast` keeps them, which labels
    were rated). `env` must pass `FastRater`'s checks."""
    mu_tab = np.full(max(1, labels_count), float(env.mu))
    sg_tab = np.full(max(1, labels_count), float(env.sigma))
    seen = np.zeros(max(1, labels_count), np.bool_)
    margin = trueskill.calc_draw_margin(env.draw_probability, 2, env)
    status = _rate_pass(order, start, labels, ranks, selfplay, mu_tab, sg_tab, seen,
                        float(env.mu), float(env.sigma), float(env.beta ** 2),
                        float(env.tau ** 2), float(margin), float(trueskill.DELTA),
                        1 * math.sqrt(2), 1 / math.sqrt(2 * math.pi) * abs(1), _TWO,
                        _MINUS_TWO, slots)
    return int(status), mu_tab, sg_tab, seen
