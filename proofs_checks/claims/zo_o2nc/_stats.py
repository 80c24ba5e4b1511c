"""Statistics shared by the zo_o2nc estimator claims (private to the folder).

* :func:`bennett_equality_test` — a finite-sample two-sided test of E[X] = value for i.i.d. X with a one-sided
  range on each side and a variance bound: Bennett's inequality (Boucheron, Lugosi & Massart, *Concentration
  Inequalities*, Thm 2.9). With the exact variance of a known law it is nearly as sharp as a z-test, and it
  stays valid at level 1e-6 for any N (no CLT).
* :func:`average_square_moments` — E[X] and E[X²] of X = ‖(1/K) Σ_k Y_k‖² for i.i.d. mean-zero vectors Y_k,
  from E‖Y‖², E‖Y‖⁴ and tr(Cov(Y)²): the exact first two moments of a squared estimation error when the
  estimator is an average of K i.i.d. terms with known moments (the variance tests on linear losses).
* :func:`replicate_estimates` — N replicates of a subject's estimate: one call per replicate as the protocols
  say, or one call for many replicates when the subject takes leading replicate axes and agrees with its own
  single calls (the vectorised ``fast`` twins: same samples, a fraction of the time).
* :func:`finite_samples` — a deterministic failure when a subject's Monte Carlo samples contain NaN or inf, so
  that no statistic computed here ever compares a NaN (a NaN mean makes every comparison false); :func:`proofs_checks.authoring.nan_max`
  is a maximum that keeps a NaN wherever it stands.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

from proofs_checks.authoring import POWER, TestResult, deterministic

__all__ = ["bennett_equality_test", "average_square_moments", "replicate_estimates", "finite_samples"]


def _bennett_h(u: float) -> float:
    """h(u) = (1 + u) log(1 + u) − u, accurate also for tiny u (series u²/2 − u³/6 + u⁴/12)."""
    if u < 1e-4:
        return u * u / 2 - u**3 / 6 + u**4 / 12
    return (1.0 + u) * math.log1p(u) - u


def _bennett_log_tail(n: int, variance: float, reach: float, t: float) -> float:
    """log of Bennett's bound on P(X̄ − μ ≥ t) for X − μ ≤ reach, Var X ≤ variance: −(nσ²/b²) h(bt/σ²)."""
    if t <= 0:
        return 0.0
    return -n * variance / reach**2 * _bennett_h(reach * t / variance)


def _bennett_critical(n: int, variance: float, reach: float, level: float) -> float:
    """The deviation t at which Bennett's bound equals ``level``."""
    target = math.log(level)
    hi = math.sqrt(variance) + reach
    while _bennett_log_tail(n, variance, reach, hi) > target:
        hi *= 2.0
    return optimize.brentq(lambda t: _bennett_log_tail(n, variance, reach, t) - target, 0.0, hi, xtol=1e-15, rtol=1e-12)


def bennett_equality_test(samples, value: float, variance: float, upper: float, lower: float, level: float) -> TestResult:
    """Two-sided finite-sample test of E[X] = ``value`` for i.i.d. X ∈ [``lower``, ``upper``] with Var X ≤ ``variance``.

    Each side is Bennett's inequality at level/2: P(X̄ − μ ≥ t) ≤ exp(−(nσ²/b²) h(bt/σ²)), with b = upper − value
    above and b = value − lower below. The null is {E[X] = value and Var X ≤ variance}: give the exact variance of
    the law under test (a rejection then says that the mean of X, or its spread, is not that law's).

    The MDE is the upper-side shift |E[X] − value| detected with power ``POWER``: the critical deviation plus
    z_POWER standard errors (normal approximation of the power only; the level is exact), using the larger of
    the null and the sample standard deviation.
    """
    x = np.asarray(samples, dtype=np.float64).reshape(-1)
    n = x.size
    if n < 2:
        raise ValueError("the Bennett test needs at least 2 samples")
    if not (variance > 0 and upper > value > lower):
        raise ValueError(f"need variance > 0 and lower < value < upper, got {variance!r}, [{lower!r}, {upper!r}], {value!r}")
    mean = float(np.mean(x))
    log_up = _bennett_log_tail(n, variance, upper - value, mean - value)
    log_down = _bennett_log_tail(n, variance, value - lower, value - mean)
    p_value = min(1.0, 2.0 * math.exp(min(log_up, log_down)))
    spread = max(math.sqrt(variance), float(np.std(x, ddof=1)))
    z = stats.norm.ppf(POWER)
    mde = max(_bennett_critical(n, variance, upper - value, level / 2.0),
              _bennett_critical(n, variance, value - lower, level / 2.0)) + z * spread / math.sqrt(n)
    return TestResult(statistic=mean, p_value=p_value, mde=mde, mde_unit="|E[X] - value| (Bennett, exact null variance)")


def average_square_moments(count: int, second: float, fourth: float, trace_cov_squared: float) -> tuple[float, float]:
    """(E[X], E[X²]) for X = ‖(1/K) Σ_{k≤K} Y_k‖², Y_k i.i.d., E[Y] = 0, E‖Y‖² = ``second``, E‖Y‖⁴ = ``fourth``,
    tr(Cov(Y)²) = ``trace_cov_squared``.

    With S = Σ Y_k, ‖S‖⁴ = (Σ_{k,l} <Y_k, Y_l>)²; only index patterns that pair up survive the expectation:
    k = l = p = q (K terms, E‖Y‖⁴), k = l ≠ p = q (K(K−1) terms, (E‖Y‖²)²) and k = p ≠ l = q, k = q ≠ l = p
    (2K(K−1) terms, E<Y, Y'>² = tr(Cov²)). So E‖S‖⁴ = K E‖Y‖⁴ + K(K−1)((E‖Y‖²)² + 2 tr(Cov²)).
    """
    k = int(count)
    mean = second / k
    second_moment = (k * fourth + k * (k - 1) * (second**2 + 2.0 * trace_cov_squared)) / k**4
    return mean, second_moment


#: Largest directions array (in float64 entries) handed to a subject in one vectorised call.
CHUNK_ENTRIES = 2_000_000
#: How many replicates of a vectorised call are compared with single calls before it is trusted.
CHECKED_REPLICATES = 2


def replicate_estimates(estimate, directions) -> np.ndarray:
    """(N, d) float64 array of ``estimate(directions[k])`` for the N replicates of ``directions`` (N, b, m, d).

    The protocols take one replicate, directions of shape (b, m, d). A subject that also accepts leading replicate
    axes (the vectorised ``fast`` estimators) is called once per chunk of replicates instead — but only if that
    call returns shape (C, d) and its first rows equal (to 1e-12 relative) the subject's own single calls on those
    replicates; otherwise, or if the call raises, every replicate is a single call. Either way every number comes
    from the subject, and the samples are the same up to rounding.
    """
    directions = np.asarray(directions)
    n, d = directions.shape[0], directions.shape[-1]
    single = [np.asarray(estimate(directions[k]), dtype=np.float64) for k in range(min(CHECKED_REPLICATES, n))]
    chunk = max(1, CHUNK_ENTRIES // max(1, int(np.prod(directions.shape[1:]))))
    rows = []
    try:
        for start in range(0, n, chunk):
            block = np.asarray(estimate(directions[start:start + chunk]), dtype=np.float64)
            if block.shape != (min(chunk, n - start), d):
                rows = None
                break
            if start == 0:
                reference = np.array(single)
                scale = 1.0 + float(np.max(np.abs(reference))) if reference.size else 1.0
                if not np.all(np.abs(block[: len(single)] - reference) <= 1e-12 * scale):
                    rows = None
                    break
            rows.append(block)
    except Exception:  # the subject takes one replicate at a time, as the protocol says
        rows = None
    if rows is not None:
        return np.concatenate(rows) if rows else np.empty((0, d))
    return np.array(single + [np.asarray(estimate(directions[k]), dtype=np.float64)
                              for k in range(len(single), n)]).reshape(n, -1)


def finite_samples(samples, label: str):
    """A deterministic failure if ``samples`` holds NaN or inf (the subject returned them), else None."""
    array = np.asarray(samples, dtype=np.float64)
    bad = ~np.isfinite(array)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        return deterministic(False, statistic=float("nan"), counterexample=index,
                             detail=f"{label}: the subject returned a non-finite value (replicate {index[0]})")
    return None
