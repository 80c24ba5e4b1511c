"""Mironov 2017 Props 6–7, Mironov–Talwar–Zhang 2019 §3.3, zo_o2nc Thm 4.3 (corrected): float64 twins of
``reference.accounting.rdp``, vectorized over the Rényi orders.

Same mechanisms and semantics as the reference; the differences are:

* every function takes an array of orders (``orders``, each α > 1) and returns a float64 array of RDP
  values, one per order (the reference takes one order and returns an mpf);
* ``rdp_poisson_gaussian(orders, q, z, steps=1)`` is the "remove" direction only (what dp_accounting,
  Opacus and TF-Privacy report; MTZ 2019 prove it dominates "add"), times ``steps``;
* ``DEFAULT_ORDERS`` is a float array built exactly like dp_accounting's (1 + x/10.0, …).

Poisson-subsampled Gaussian, how (σ = z, R(x) = e^{(2x−1)/(2σ²)}, A_α = E_{N(0,σ²)}[(1 − q + qR)^α]):

* integer α: A_α − 1 = Σ_{k=2}^{α} C(α,k)(1−q)^{α−k} q^k (e^{(k²−k)/(2σ²)} − 1), all terms ≥ 0, summed in log
  space (the (α, k) pairs laid out flat, reduced per order); log A_α = log1p(A_α − 1). dp_accounting sums
  A_α itself (with ``scipy.special.gammaln`` binomials), which loses every digit of log A_α once it falls
  below ~1e-16 (tiny q, large z) and ~1e-12 relative at α = 1024; this path does neither.
* fractional α: the two-sided series of MTZ §3.3 with the same Cohen–Villegas–Zagier acceleration of the
  alternating tail as the reference (``TAIL_TERMS`` = 40 terms: error ≤ 2a_0/(3+√8)^40 ≈ 1e-30·a_0),
  rearranged so that A_α − 1 is computed without forming A_α ≈ 1: with u = q(R − 1) (E[u] = 0) and
  g = (1+u)^α − 1 − αu ≥ 0, A_α − 1 = E[g], and splitting at z0 = σ² log(1/q − 1) + 1/2,

      A_α − 1 = c0 Φ(z0/σ) + αq((1−q)^{α−1} − 1) Φ((z0−1)/σ) + Σ_{i≥2} T0_i + Σ_{i≥0} T1_i
                − (1 − αq) Φ(−z0/σ) − αq Φ((1−z0)/σ),           c0 = (1−q)^α − 1 + αq ≥ 0,

  (T0_i, T1_i are the MTZ terms, see ``reference.accounting.rdp.log_a_poisson_gaussian_fractional``; the
  first two pieces are T0_0 and T0_1 minus the matching parts of 1 + αu). The pieces still cancel, by a
  factor κ ≈ 4z² for small q (the result is C(α,2) q² (e^{1/z²} − 1), the pieces are ~C(α,2) q²) and
  ≈ z²/C(α,2) for q near 1/2.

Precision. The log-magnitudes, exponentials and the signed sums are formed in ``np.longdouble`` (80-bit
extended on x86-64, ε ≈ 1.1e-19), so κ multiplies 1e-19 rather than 1e-16; Φ near its centre (|x| < 1) is
summed from its Taylor series in longdouble (``_log_phi``), elsewhere it is scipy's double ``log_ndtr``.
Measured against the mpmath reference over q ∈ [1e-4, 0.99], z ∈ [0.3, 100] and all default orders the worst
relative error is ~6e-14 (z = 1000: ~6e-12). Every fractional order also carries a rounding estimate
(Σ|piece|·error/sum); where it exceeds ``FLOAT_RELATIVE_TOLERANCE`` — or where longdouble is plain double
(e.g. ARM macOS) and κ·1e-16 is too large — the order is recomputed by the mpmath reference (20 digits)
and rounded to float64. On the grid above that never happens.

Errors: ``ValueError``/``TypeError`` for bad input; ``AccountingError`` if a quantity that must be positive
comes out ≤ 0.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from scipy.special import log_ndtr

from ..accounting.errors import AccountingError
from ..validation import check_array, check_int, check_real

__all__ = [
    "DEFAULT_ORDERS",
    "FLOAT_RELATIVE_TOLERANCE",
    "TAIL_TERMS",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_tree_aggregation",
    "rdp_poisson_gaussian",
]

#: dp_accounting's DEFAULT_RDP_ORDERS, as float64 exactly as dp_accounting builds them.
DEFAULT_ORDERS = np.array([1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024],
                          dtype=np.float64)

#: Fractional orders whose estimated float64 rounding error of A_α − 1 exceeds this (relative) are handed to
#: the mpmath reference (κ·2^{-52} estimate; see the module docstring).
FLOAT_RELATIVE_TOLERANCE = 2e-11

#: Terms of the accelerated alternating tail (error ≤ 2 a_0/(3 + √8)^n).
TAIL_TERMS = 40

_EPS = np.finfo(np.float64).eps


def _orders(orders) -> np.ndarray:
    arr = check_array("orders", orders, ndim=1)
    arr = np.asarray(arr, dtype=np.float64) if arr.dtype != object else np.array([float(a) for a in arr])
    if arr.size == 0:
        raise ValueError("orders must contain at least one order")
    if not np.all(arr > 1):
        bad = arr[~(arr > 1)][0]
        raise ValueError(f"orders must all be > 1 (Rényi orders α ≤ 1 are not used for RDP), got {bad}")
    return arr


def _positive(name, value) -> float:
    return float(check_real(name, value, positive=True))


def _finite(values: np.ndarray, what: str) -> np.ndarray:
    """The RDP values if they are finite and ≥ 0; AccountingError if float64 overflowed or produced NaN."""
    if not np.all(np.isfinite(values) & (values >= 0)):
        raise AccountingError(f"{what}: the RDP value overflows float64 (or came out NaN/negative); "
                              "use the mpmath reference (reference.accounting.rdp)")
    return values


# ---------------------------------------------------------------------------------------------------
# Closed forms


def rdp_gaussian(orders, noise_multiplier) -> np.ndarray:
    """α/(2z²) for each order (Mironov 2017 Prop 7). noise_multiplier: z = σ/Δ > 0."""
    alphas = _orders(orders)
    z = _positive("noise_multiplier", noise_multiplier)
    with np.errstate(over="ignore", divide="ignore"):
        return _finite(alphas / (2 * z * z), "rdp_gaussian")


def _exp_neg_minus_one_plus(t: np.ndarray) -> np.ndarray:
    """e^{−t} − 1 + t ≥ 0 for t ≥ 0, without cancellation (series Σ_{k≥2} (−t)^k/k! for t < 1/2)."""
    out = np.expm1(-t) + t
    small = t < 0.5
    if np.any(small):
        ts = t[small]
        term = ts * ts / 2
        total = term.copy()
        for k in range(3, 30):  # 0.5^30/30! is far below 1e-16 of the first term
            term = term * (-ts) / k
            total += term
        out[small] = total
    return out


def _log1p_minus_identity(y: np.ndarray) -> np.ndarray:
    """log(1 + y) − y ≤ 0 for −1 < y ≤ 0, without cancellation (series −Σ_{k≥2} |y|^k/k for |y| < 1/4)."""
    out = np.log1p(y) - y
    small = np.abs(y) < 0.25
    if np.any(small):
        a = -y[small]  # a = |y|; every term −a^k/k is negative: no cancellation
        power = a * a
        total = -power / 2
        for k in range(3, 40):  # 0.25^40 ≪ 1e-16
            power = power * a
            total -= power / k
        out[small] = total
    return out


def rdp_laplace(orders, noise_multiplier) -> np.ndarray:
    """Mironov 2017 Prop 6 for Laplace noise b = λΔ₁ (ε = 1/λ), rearranged for float64:

        D_α = ε + log1p(y)/(α−1),  y = (α−1)(e^{−t} − 1)/(2α−1),  t = (2α−1)ε
            = (e^{−t} − 1 + t)/(2α−1) + (log1p(y) − y)/(α−1),

    two pieces without internal cancellation (helpers with series for small arguments) of opposite signs whose
    sum cancels only mildly (for small ε they are (2α−1)ε²/2 and −(α−1)ε²/2, summing to D_α ≈ αε²/2, where the
    printed form cancels ~2 log10(1/ε) digits). noise_multiplier: λ = b/Δ₁ > 0.
    """
    alphas = _orders(orders)
    lam = _positive("noise_multiplier", noise_multiplier)
    eps = 1.0 / lam
    t = (2 * alphas - 1) * eps
    y = (alphas - 1) * np.expm1(-t) / (2 * alphas - 1)
    with np.errstate(over="ignore", invalid="ignore"):
        values = _exp_neg_minus_one_plus(t) / (2 * alphas - 1) + _log1p_minus_identity(y) / (alphas - 1)
    return _finite(values, "rdp_laplace")


def rdp_tree_aggregation(orders, z, steps, restarts=1) -> np.ndarray:
    """restarts · α (⌊log2 steps⌋ + 1)/(2z²) (zo_o2nc Thm 4.3 corrected; see the reference)."""
    alphas = _orders(orders)
    z = _positive("z", z)
    steps = check_int("steps", steps, minimum=1)
    restarts = check_int("restarts", restarts, minimum=1)
    with np.errstate(over="ignore", divide="ignore"):
        return _finite(restarts * steps.bit_length() * alphas / (2 * z * z), "rdp_tree_aggregation")


# ---------------------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian
#
# Sums are assembled in np.longdouble so that the rounding of large log-magnitudes (e.g. 2·log q ≈ −18 at
# q = 1e-4) is not multiplied by the cancellation factor κ (module docstring, "Precision").

_LD = np.longdouble
_EPS_LD = float(np.finfo(_LD).eps)


def _inverse_sqrt_2pi():
    """1/√(2π) as longdouble to ~2^-100 (a hi + lo double pair computed in mpmath at 40 digits)."""
    with mpmath.workdps(40):
        value = 1 / mpmath.sqrt(2 * mpmath.pi)
        hi = float(value)
        lo = float(value - hi)
    return _LD(hi) + _LD(lo)


_INV_SQRT_2PI = _inverse_sqrt_2pi()  # a module constant, not state


def _ld_from_fraction(numerator: int, denominator: int):
    """numerator/denominator as longdouble, correctly to ~2^-100 (a hi + lo pair; numpy converts ints via float)."""
    from fractions import Fraction

    exact = Fraction(numerator, denominator)
    hi = float(exact)
    lo = float(exact - Fraction(hi))
    return _LD(hi) + _LD(lo)


def _log_expm1(x: np.ndarray) -> np.ndarray:
    """log(e^x − 1) for x > 0 (no overflow for large x), in the dtype of x."""
    with np.errstate(divide="ignore", over="ignore"):
        big = x > 1
        out = np.log(np.expm1(np.where(big, 1, x)))
        return np.where(big, x + np.log1p(-np.exp(-np.where(big, x, 1))), out)


def _log_a_integer(alphas: np.ndarray, q: float, z: float) -> np.ndarray:
    """log A_α for integer α (as floats) by log Σ_{k≥2} C(α,k)(1−q)^{α−k} q^k expm1((k²−k)/(2z²)), then log1p.

    The (α, k) pairs are laid out flat (Σ(α − 1) entries, not a padded grid) and reduced per order with
    ``reduceat``. log C(α, k) = log α + Σ_{m=2}^{k} log((α − m + 1)/m), accumulated in longdouble (gammaln
    differences of numbers ~6000 would cost ~1e-12 relative at α = 1024).
    """
    alpha_int = alphas.astype(np.int64)
    counts = alpha_int - 1  # k = 2..α
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    row = np.repeat(np.arange(len(alphas)), counts)
    k_int = np.arange(counts.sum()) - starts[row] + 2
    k = k_int.astype(_LD)
    a = alphas.astype(_LD)[row]
    steps = np.log((a - k + 1) / k)
    running = np.cumsum(steps)
    before = (running[starts] - steps[starts])[row]  # cumulative sum before each order's first entry
    log_comb = np.log(a) + running - before
    sigma2 = _LD(z) * _LD(z)
    k_all = np.arange(2, int(alpha_int.max()) + 1, dtype=_LD)
    log_growth = _log_expm1((k_all * k_all - k_all) / (2 * sigma2))[k_int - 2]  # depends on k only
    log_terms = log_comb + (a - k) * np.log1p(-_LD(q)) + k * np.log(_LD(q)) + log_growth
    top = np.maximum.reduceat(log_terms, starts)
    log_am1 = top + np.log(np.add.reduceat(np.exp(log_terms - top[row]), starts))
    return np.logaddexp(0, log_am1).astype(np.float64)


def _cvz_weights(n: int) -> np.ndarray:
    """Cohen–Villegas–Zagier weights Q_k/T_n(3) (exact integers, then rounded to longdouble), as in the reference."""
    p = [(-1) ** k * (n * math.factorial(n + k - 1) * 4**k // (math.factorial(n - k) * math.factorial(2 * k)))
         for k in range(n + 1)]
    d = sum(abs(c) for c in p)
    coeffs = [d - p[0]]
    for k in range(1, n):
        coeffs.append(-p[k] - coeffs[-1])
    return np.array([_ld_from_fraction(c, d) for c in coeffs], dtype=_LD)


def _c0(a: np.ndarray, q):
    """c0 = (1−q)^α − 1 + αq ≥ 0 (longdouble) and its cancellation factor.

    Series Σ_{k≥2} C(α,k)(−q)^k when q ≤ 1/2 and αq ≤ 2 (ratio of terms ≤ max(q, αq/(k+1)) ≤ 2/3, no
    cancellation worth counting); otherwise the direct expm1(α log1p(−q)) + αq, whose cancellation factor is
    returned.
    """
    direct_pow = np.expm1(a * np.log1p(-q))
    value = direct_pow + a * q
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(value > 0, (np.abs(direct_pow) + a * q) / value, np.inf)
    use_series = (q <= 0.5) & (a * q <= 2)
    if np.any(use_series):
        b = a[use_series]
        term = b * (b - 1) / 2 * q * q
        total = term.copy()
        for k in range(2, 160):  # ratio ≤ 2/3 → (2/3)^158 ≪ ε
            term = term * (b - k) / (k + 1) * (-q)
            total += term
        value[use_series] = total
        kappa[use_series] = 4.0
    return np.maximum(value, 0), kappa


def _log_phi(x):
    """(log Φ(x), its rounding-error bound) in longdouble.

    |x| < 1: Φ(x) = 1/2 + φ-series Σ_n (−1)^n x^{2n+1}/(2^n n! (2n+1))/√(2π) in longdouble (Φ ∈ (0.15, 0.85), where
    a double-precision Φ would limit the cancelling sum of the fractional series); elsewhere scipy's log_ndtr
    (double) promoted, with error ε·|log Φ|.
    """
    x = np.asarray(x, dtype=_LD)
    shape = x.shape
    x = x.reshape(-1)
    out = log_ndtr(x.astype(np.float64)).astype(_LD)
    error = _EPS * np.abs(out)
    small = np.abs(x) < 1
    if np.any(small):
        xs = x[small]
        term = xs.copy()
        total = xs.copy()
        for n in range(1, 40):  # |x|^{2n+1}/(2^n n!) < 1e-60 at n = 40
            term = term * (-xs * xs) / (2 * n)
            total += term / (2 * n + 1)
        out[small] = np.log(_LD(0.5) + total * _INV_SQRT_2PI)
        error[small] = 4 * _EPS_LD
    return out.reshape(shape), error.reshape(shape)


def _log_a_fractional(alphas: np.ndarray, q: float, z: float):
    """log A_α for non-integer α via A_α − 1 (module docstring); returns (log A_α, estimated relative error).

    The error estimate adds, for each piece P of the signed sum Σ P = A_α − 1, |P|·(ε_ld·(κ_P + 2|log P|) +
    err Φ_P) (κ_P: the piece's own cancellation, err Φ_P: the error of its log Φ factor from ``_log_phi``) and
    divides by the sum.
    """
    qq = _LD(q)
    sigma = _LD(z)
    two_s2 = 2 * sigma * sigma
    log_q, log_1mq = np.log(qq), np.log1p(-qq)
    z0 = sigma * sigma * (log_1mq - log_q) + _LD(0.5)
    first_tail = np.floor(alphas).astype(np.int64) + 1  # i0
    width = int(first_tail.max()) + TAIL_TERMS
    a = alphas.astype(_LD)[:, None]
    i = np.arange(width, dtype=_LD)[None, :]
    j = a - i

    # log|C(α, i)| by the recurrence C(α, i+1) = C(α, i)(α − i)/(i + 1)
    steps = np.log(np.abs(a - i[:, :-1])) - np.log(i[:, :-1] + 1)
    log_abs_binom = np.concatenate([np.zeros((len(alphas), 1), dtype=_LD), np.cumsum(steps, axis=1)], axis=1)
    phi0, err0 = (np.broadcast_to(v, j.shape) for v in _log_phi((z0 - i) / sigma))
    phi1, err1 = _log_phi((j - z0) / sigma)
    log_t0 = log_abs_binom + i * log_q + j * log_1mq + (i * i - i) / two_s2 + phi0
    log_t1 = log_abs_binom + j * log_q + i * log_1mq + (j * j - j) / two_s2 + phi1

    rows = np.arange(len(alphas))[:, None]
    idx = np.arange(width)[None, :]
    in_head0 = (idx >= 2) & (idx < first_tail[:, None])
    in_head1 = np.broadcast_to(idx < first_tail[:, None], log_t1.shape)
    tail_idx = first_tail[:, None] + np.arange(TAIL_TERMS)[None, :]
    log_tail_terms = np.logaddexp(log_t0[rows, tail_idx], log_t1[rows, tail_idx])  # log a_k
    weights = _cvz_weights(TAIL_TERMS)
    top = log_tail_terms.max(axis=1, keepdims=True)
    tail_scaled = weights[None, :] * np.exp(log_tail_terms - top)
    tail_sum = tail_scaled.sum(axis=1)
    if np.any(tail_sum <= 0):
        raise AccountingError("accelerated tail of the fractional-order series came out <= 0 in float64")
    log_tail = top[:, 0] + np.log(tail_sum)
    tail_kappa = np.abs(tail_scaled).sum(axis=1) / tail_sum + 2 * np.abs(top[:, 0])
    # relative error of the tail from the double-precision log Φ factors, term by term
    tail_phi = (np.abs(weights[None, :]) * (np.exp(log_t0[rows, tail_idx] - top) * err0[rows, tail_idx]
                                            + np.exp(log_t1[rows, tail_idx] - top) * err1[rows, tail_idx])).sum(axis=1)
    tail_phi = tail_phi / tail_sum

    c0, c0_kappa = _c0(a[:, 0], qq)
    aq = a[:, 0] * qq
    zero = np.zeros(len(alphas), dtype=_LD)
    special = [_log_phi(x) for x in (z0 / sigma, (z0 - 1) / sigma, -z0 / sigma, (1 - z0) / sigma)]
    with np.errstate(divide="ignore"):
        pieces = [  # (log |P|, sign, κ_P, |log Φ_P|), one value per order
            (np.log(c0) + special[0][0], 1, c0_kappa, special[0][1]),
            (np.log(aq) + np.log(-np.expm1((a[:, 0] - 1) * log_1mq)) + special[1][0], -1, 4.0, special[1][1]),
            (np.log(np.abs(1 - aq)) + special[2][0], -np.sign(1 - aq), 4.0, special[2][1]),
            (np.log(aq) + special[3][0], -1, 4.0, special[3][1]),
            (log_tail, 1, tail_kappa, tail_phi),
        ]
    cols = lambda k: np.stack([np.broadcast_to(_LD(1) * p[k] + zero, zero.shape) for p in pieces], axis=1)  # noqa: E731
    log_mags = np.concatenate([cols(0), np.where(in_head0, log_t0, -np.inf), np.where(in_head1, log_t1, -np.inf)],
                              axis=1)
    signs = np.concatenate([cols(1), np.ones(log_t0.shape, dtype=_LD), np.ones(log_t1.shape, dtype=_LD)], axis=1)
    kappas = np.concatenate([cols(2), np.full(log_t0.shape, 8, dtype=_LD), np.full(log_t1.shape, 8, dtype=_LD)],
                            axis=1)
    phi_errors = np.concatenate([cols(3), err0, err1], axis=1)
    top = log_mags.max(axis=1, keepdims=True)
    scaled = np.exp(log_mags - top)
    total = (signs * scaled).sum(axis=1)
    with np.errstate(invalid="ignore"):
        per_piece = scaled * (_EPS_LD * (kappas + 2 * np.abs(log_mags)) + phi_errors)
        abs_error = np.where(scaled > 0, per_piece, 0).sum(axis=1)
    log_a = np.full(alphas.shape, np.nan)
    rel_error = np.full(alphas.shape, np.inf)
    ok = total > 0
    log_am1 = top[ok, 0] + np.log(total[ok])
    log_a[ok] = np.logaddexp(0, log_am1).astype(np.float64)
    rel_error[ok] = (abs_error[ok] / total[ok]).astype(np.float64)
    return log_a, rel_error


def rdp_poisson_gaussian(orders, q, z, steps=1) -> np.ndarray:
    """steps × D_α(μ‖μ0) for the Poisson-subsampled Gaussian (remove direction), vectorized over ``orders``.

    q: sampling probability in [0, 1]; z: noise multiplier σ/Δ > 0; steps: number of compositions ≥ 0.
    q = 0 gives 0, q = 1 gives steps·α/(2z²). See the module docstring for the method and its accuracy.
    """
    alphas = _orders(orders)
    q = float(check_real("q", q, nonnegative=True, upper=1))
    z = _positive("z", z)
    steps = check_int("steps", steps, minimum=0)
    if q == 0 or steps == 0:
        return np.zeros_like(alphas)
    if q == 1:
        with np.errstate(over="ignore", divide="ignore"):
            return _finite(steps * alphas / (2 * z * z), "rdp_poisson_gaussian")
    out = np.empty_like(alphas)
    integer = alphas == np.floor(alphas)
    if np.any(integer):
        out[integer] = _log_a_integer(alphas[integer], q, z) / (alphas[integer] - 1)
    if np.any(~integer):
        fractional = alphas[~integer]
        log_a, rel_error = _log_a_fractional(fractional, q, z)
        # estimated rounding error too large (or A−1 ≤ 0 after rounding): these orders go to the mpmath reference
        unsure = ~(rel_error <= FLOAT_RELATIVE_TOLERANCE) | ~(log_a > 0)
        if np.any(unsure):
            from ..accounting.rdp import rdp_poisson_gaussian as reference_rdp

            with mpmath.workdps(20):
                for k in np.flatnonzero(unsure):
                    alpha = fractional[k]
                    log_a[k] = float(reference_rdp(alpha, q, z, "remove")) * (alpha - 1)
        out[~integer] = log_a / (fractional - 1)
    return _finite(steps * out, "rdp_poisson_gaussian")
