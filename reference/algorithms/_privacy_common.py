"""Shared pieces of the papers' privacy modules (``reference/algorithms/<paper>_privacy.py``).

* ``mp_positive``, ``mp_delta``: a checked input as an mpmath number at the caller's working precision.
* ``first_failing_epsilon``: the first ε at which a Gaussian calibrated by a closed-form rule, μ(ε), stops
  being (ε, δ)-DP by the exact analytic Gaussian (Balle–Wang 2018). dpzero Lemma 2.2 (erratum dpzero.E5)
  and bgm21's Gaussian calibration use it to report where they fail.
"""

from __future__ import annotations

import math

import mpmath

from ..accounting.errors import AccountingError
from ..accounting.gaussian import gaussian_delta
from ..validation import check_probability, check_real

__all__ = ["mp_positive", "mp_delta", "first_failing_epsilon"]


def mp_positive(name, value):
    """``value`` > 0 (checked) as an mpf."""
    return mpmath.mpf(check_real(name, value, positive=True))


def mp_delta(name, value):
    """``value`` ∈ (0, 1) (checked) as an mpf."""
    return mpmath.mpf(check_probability(name, value))


def first_failing_epsilon(mu_of_epsilon, delta, *, smallest, largest, per_decade=40, rel_tol=1e-9):
    """Smallest ε on a log grid [smallest, largest] with gaussian_delta(ε, μ(ε)) > δ, refined by bisection.

    The grid has ``per_decade`` points per decade; the bisection keeps the last certified point as
    the lower end, so the returned value is an ε that certifies, within rel_tol of the first failure.
    """
    count = int(math.ceil(per_decade * math.log10(largest / smallest)))
    ratio = (mpmath.mpf(largest) / smallest) ** (mpmath.mpf(1) / count)
    previous = None
    for j in range(count + 1):
        eps = mpmath.mpf(smallest) * ratio**j
        if gaussian_delta(eps, mu_of_epsilon(eps)) > delta:
            if previous is None:
                raise AccountingError(f"the calibration already fails at the smallest scanned epsilon {smallest}")
            lo, hi = previous, eps
            while hi - lo > rel_tol * hi:
                mid = (lo + hi) / 2
                if gaussian_delta(mid, mu_of_epsilon(mid)) > delta:
                    hi = mid
                else:
                    lo = mid
            return lo
        previous = eps
    raise AccountingError(f"no failure found for epsilon up to {largest}: the calibration certifies the whole scanned range")
