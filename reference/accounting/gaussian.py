"""Exact (analytic) Gaussian privacy profile and Gaussian-DP μ ↔ (ε, δ) (checks dpzero Lemma 2.2 exactly; docs/accounting.md).

Balle & Wang 2018 ("Improving the Gaussian mechanism for DP", ICML 2018), Theorem 8: the Gaussian mechanism with
ℓ2-sensitivity Δ and noise N(0, σ²I) is (ε, δ)-DP iff
    δ ≥ δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2),   μ = Δ/σ.
Dong, Roth & Su 2022 ("Gaussian differential privacy", JRSS-B), Corollary 2.13: this is exactly the privacy profile
of μ-GDP, and (Corollary 3.3) the adaptive composition of Gaussian mechanisms with μ_i is √(Σ μ_i²)-GDP — exactly, so
the T-fold composition of noise multiplier z (σ = zΔ) is (√T/z)-GDP.

Everything is mpmath at the caller's working precision. The profile is a difference of two nearly equal terms in
the tail, so ``gaussian_delta`` forms it in log space and raises the internal precision until the subtraction has
lost no digit the caller asked for: the result is accurate to working precision even for δ ~ 1e-300 at ε = 500.
"""

from __future__ import annotations

from collections.abc import Iterable

import mpmath

from reference.accounting.conversions import bisect_geometric, bracket_geometric
from reference.accounting.errors import AccountingError
from reference.precision import log1mexp, log_erfc
from reference.validation import check_int, check_probability, check_real

__all__ = ["gaussian_delta", "gaussian_epsilon", "gaussian_mu", "composed_gaussian_mu"]

#: Ceiling on the internal precision of gaussian_delta (bits). Reached only for absurd inputs (μ < 1e-1000 or so).
_MAX_INTERNAL_PREC = 1 << 16


#: Beyond |x| = 1e8 log Φ uses the Mills-ratio series (mpmath's erfc overflows a float for |x| ≳ 1e154).
_TAIL = mpmath.mpf(10) ** 8


def _log_ncdf_tail(y):
    """log Φ(−y) for y ≥ 1e8: −y²/2 − log(y√(2π)) + log Σ_k (−1)^k (2k−1)!!/y^{2k} (A&S 26.2.12); the terms shrink
    by a factor ≤ (2k−1)·1e-16 each, and the series is summed until a term is below 2^{−prec}."""
    total, term, k = mpmath.mpf(1), mpmath.mpf(1), 1
    while abs(term) > mpmath.eps:
        term *= -(2 * k - 1) / (y * y)
        total += term
        k += 1
    return -y * y / 2 - mpmath.log(y) - mpmath.log(mpmath.sqrt(2 * mpmath.pi)) + mpmath.log(total)


def _log_ncdf(x):
    """log Φ(x) = log(erfc(−x/√2)/2), finite in the far tail (reference.precision.log_erfc)."""
    if x < -_TAIL:
        return _log_ncdf_tail(-x)
    if x > _TAIL:
        return mpmath.log1p(-mpmath.exp(_log_ncdf_tail(x)))  # log(1 − Φ(−x))
    return log_erfc(-x / mpmath.sqrt(2)) - mpmath.log(2)


def _log_gaussian_delta(epsilon, mu):
    """log δ_μ(ε) to the caller's working precision (ε ≥ 0, μ > 0 as mpf).

    log δ = log Φ(a) + log(1 − e^{−gap}), a = −ε/μ + μ/2, b = −ε/μ − μ/2, gap = log Φ(a) − (ε + log Φ(b)) > 0.
    At p bits the two logs carry an absolute error of about scale·2^{−p} with scale = 1 + a² + b² + ε (the sensitivity
    of log Φ(x) to a relative error in x is ~x² in the tail), and the subtraction multiplies the error by 1/gap when
    gap < 1. We start with 32 guard bits, measure scale and gap, and repeat with more bits until log δ is known to
    absolute error 2^{−prec−24} (so δ to that relative error). The value is returned at the internal precision.
    """
    target_prec = mpmath.mp.prec
    guard = 32
    while True:
        with mpmath.workprec(target_prec + guard):
            a = -epsilon / mu + mu / 2
            b = -epsilon / mu - mu / 2
            scale = 1 + a * a + b * b + epsilon
            log_first = _log_ncdf(a)
            log_second = epsilon + _log_ncdf(b)
            gap = log_first - log_second
            if gap > 0:
                # log δ must come out with absolute error ≤ 2^{−target−24}: cover the scale and the cancellation.
                bits_lost = mpmath.log(scale, 2) + max(0, mpmath.log(1 / gap, 2))
                if bits_lost + 24 <= guard:
                    value = log_first + log1mexp(-gap)
                    break
                guard = int(bits_lost) + 64
            else:
                guard *= 2  # the gap was lost entirely; δ > 0 mathematically, so more bits will resolve it
        if target_prec + guard > _MAX_INTERNAL_PREC:
            raise AccountingError(
                f"gaussian_delta(epsilon={epsilon}, mu={mu}) needs more than {_MAX_INTERNAL_PREC} bits of internal "
                "precision to separate Φ(a) from e^ε Φ(b)"
            )
    return value  # kept at the internal precision: callers exponentiate it without losing digits


def _exp_to_working_precision(log_value):
    """e^x rounded to the working precision; x is held with extra bits so that e^x has full relative precision."""
    extra = 16 + int(mpmath.log(1 + abs(log_value), 2))
    with mpmath.workprec(mpmath.mp.prec + extra):
        result = mpmath.exp(log_value)
    return +result


def _profile(epsilon, mu):
    """δ_μ(ε) rounded to working precision (validated mpf input, μ > 0). Rounding to nearest is monotone, so the
    inverses below, which compare this value with δ, keep their guarantee for exactly what gaussian_delta returns."""
    return _exp_to_working_precision(_log_gaussian_delta(epsilon, mu))


def gaussian_delta(epsilon, mu):
    """Exact privacy profile δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) of μ-GDP / the Gaussian mechanism.

    Balle–Wang 2018 Thm 8; Dong–Roth–Su 2022 Cor 2.13. ``epsilon``: ε ≥ 0; ``mu``: μ = Δ/σ ≥ 0 (μ = 0 means identical
    output distributions, δ = 0). Returns mpf, accurate to working precision (relative) for every finite input: no
    cancellation (log space + adaptive internal precision, see _log_gaussian_delta). Example: δ_1(1) = 0.12693673750…
    """
    epsilon = mpmath.mpf(check_real("epsilon", epsilon, nonnegative=True))
    mu = mpmath.mpf(check_real("mu", mu, nonnegative=True))
    if mu == 0:
        return mpmath.mpf(0)
    return _profile(epsilon, mu)


def gaussian_epsilon(delta, mu):
    """Smallest ε ≥ 0 with δ_μ(ε) ≤ δ: the exact ε of μ-GDP at δ, rounded up (never understates ε).

    δ_μ(ε) is strictly decreasing in ε (dδ/dε = −e^ε Φ(−ε/μ − μ/2) < 0) from δ_μ(0) = 2Φ(μ/2) − 1 to 0, so: if
    δ ≥ δ_μ(0) the answer is 0; otherwise bracket [ε_lo, ε_hi] with δ_μ(ε_lo) > δ ≥ δ_μ(ε_hi) by galloping from 1,
    bisect (geometrically) until ε_hi/ε_lo − 1 ≤ 4·2^{−prec}, and return ε_hi, for which δ_μ(ε_hi) ≤ δ was verified.
    ``delta``: δ ∈ (0, 1); ``mu``: μ ≥ 0 (μ = 0 gives 0). Returns mpf.
    """
    delta = mpmath.mpf(check_probability("delta", delta))
    mu = mpmath.mpf(check_real("mu", mu, nonnegative=True))
    if mu == 0:
        return mpmath.mpf(0)

    def private_enough(eps):  # δ_μ(ε) ≤ δ as gaussian_delta returns it; monotone: false below ε*, true above
        return _profile(eps, mu) <= delta

    if private_enough(mpmath.mpf(0)):
        return mpmath.mpf(0)
    lo, hi = bracket_geometric(private_enough, mpmath.mpf(1))
    _, hi = bisect_geometric(private_enough, lo, hi)
    return hi


def gaussian_mu(epsilon, delta):
    """Largest μ (to working precision) with δ_μ(ε) ≤ δ, i.e. μ*(ε, δ) rounded down: never overshoots the target.

    δ_μ(ε) is strictly increasing in μ (from 0 as μ → 0 to 1 as μ → ∞), so bracket [μ_lo, μ_hi] with
    δ_{μ_lo}(ε) ≤ δ < δ_{μ_hi}(ε) by galloping from 1, bisect (geometrically) until μ_hi/μ_lo − 1 ≤ 4·2^{−prec}, and
    return μ_lo, for which δ_μ(ε) ≤ δ was verified. Noise calibration: σ = Δ√T/μ for T Gaussian steps
    (T-fold composition, Dong–Roth–Su 2022 Cor. 3.3). Reference values: μ*(2, 1e-5) = 0.5015516892, μ*(1, 1e-5) = 0.2680511232.
    ``epsilon``: ε ≥ 0; ``delta``: δ ∈ (0, 1). Returns mpf.
    """
    epsilon = mpmath.mpf(check_real("epsilon", epsilon, nonnegative=True))
    delta = mpmath.mpf(check_probability("delta", delta))

    def too_revealing(mu):  # δ_μ(ε) > δ as gaussian_delta returns it; monotone: false below μ*, true above
        return _profile(epsilon, mu) > delta

    lo, hi = bracket_geometric(too_revealing, mpmath.mpf(1))
    lo, _ = bisect_geometric(too_revealing, lo, hi)
    return lo


def composed_gaussian_mu(noise_multipliers, counts=None):
    """μ of the adaptive composition of Gaussian mechanisms: √(Σ_i count_i / z_i²) (Dong–Roth–Su 2022 Cor 3.3).

    ``noise_multipliers``: z_i = σ_i/Δ_i > 0 of each mechanism; ``counts``: how many times each is applied (integers
    ≥ 0, default 1 each). Exact: the composition is √(Σ count_i/z_i²)-GDP, whose profile is ``gaussian_delta``.
    Returns mpf.
    """
    if isinstance(noise_multipliers, (str, bytes)) or not isinstance(noise_multipliers, Iterable):
        raise TypeError(f"noise_multipliers must be a sequence of reals, got {type(noise_multipliers).__name__}")
    noise_multipliers = list(noise_multipliers)
    if len(noise_multipliers) == 0:
        raise ValueError("noise_multipliers must contain at least one noise multiplier")
    if counts is None:
        counts = [1] * len(noise_multipliers)
    if isinstance(counts, (str, bytes)) or not isinstance(counts, Iterable):
        raise TypeError(f"counts must be a sequence of integers, got {type(counts).__name__}")
    counts = list(counts)
    if len(counts) != len(noise_multipliers):
        raise ValueError(
            f"counts must have one entry per noise multiplier, got {len(counts)} and {len(noise_multipliers)}"
        )
    terms = []
    for i, (z, count) in enumerate(zip(noise_multipliers, counts)):
        z = mpmath.mpf(check_real(f"noise_multipliers[{i}]", z, positive=True))
        count = check_int(f"counts[{i}]", count, minimum=0)
        terms.append(count / (z * z))
    return mpmath.sqrt(mpmath.fsum(terms))
