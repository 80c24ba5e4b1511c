"""Statistics for Monte Carlo claims (docs/writing-claims.md, Evidence and statistics), built on statsmodels and scipy.

Every statistical check is a hypothesis test at a declared level (default 1e-6) with a seed derived
from the claim id. What is bounded gets a finite-sample bound (Clopper–Pearson, empirical Bernstein);
what is not gets a CLT test (Hotelling T² for vector means). Each test also reports its power as a
minimal detectable effect (MDE), so a reader knows what a pass rules out.

Written by hand only what statsmodels/scipy lack: the empirical-Bernstein bound (Maurer & Pontil
2009, Theorem 4) and the MDE formulas.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.multivariate import test_mvmean
from statsmodels.stats.proportion import proportion_confint

__all__ = [
    "claim_seed",
    "TestResult",
    "hotelling_mean_test",
    "hotelling_mde",
    "clopper_pearson",
    "empirical_bernstein_radius",
    "bounded_mean_upper_test",
    "bounded_mean_equality_test",
    "ks_test",
    "binomial_test",
    "chi_square_variance_test",
    "normal_z_test",
    "conditional_covariance_test",
    "holm_adjust",
]

POWER = 0.9  # the power at which minimal detectable effects are quoted


def claim_seed(claim_id: str, replicate: int = 0) -> int:
    """Deterministic 63-bit seed from the claim id; replicate > 0 gives the fresh seeds of ``--soak``."""
    digest = hashlib.sha256(f"{claim_id}#{replicate}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


@dataclass(frozen=True)
class TestResult:
    """A test's statistic, p-value and minimal detectable effect (in the units named by ``mde_unit``)."""

    __test__ = False  # not a pytest test class

    statistic: float
    p_value: float
    mde: float
    mde_unit: str

    def power_text(self, level: float) -> str:
        return f"detects {self.mde_unit} >= {self.mde:.3g} with power {POWER} at level {level:g}"


def hotelling_mde(n: int, p: int, level: float, power: float = POWER) -> float:
    """Smallest Mahalanobis distance ‖Σ^{-1/2}(μ − μ0)‖ that Hotelling's T² detects with ``power``.

    Under the alternative, F = (n−p)/(p(n−1))·T² is noncentral F(p, n−p) with noncentrality n·Δ².
    """
    crit = stats.f.ppf(1 - level, p, n - p)

    def shortfall(nc):
        return stats.ncf.sf(crit, p, n - p, nc) - power

    hi = 1.0
    while shortfall(hi) < 0:
        hi *= 2
    nc = optimize.brentq(shortfall, 0.0, hi, xtol=1e-10)
    return math.sqrt(nc / n)


def hotelling_mean_test(samples: np.ndarray, mean_null: np.ndarray, level: float) -> TestResult:
    """One-sample Hotelling T² test of E[X] = mean_null (statsmodels ``test_mvmean``).

    ``samples`` has shape (N, p). The statistic returned is T². The MDE is Euclidean: the test detects a
    Mahalanobis shift Δ (``hotelling_mde``) with the stated power, and a mean shift v has Mahalanobis norm at
    least ‖v‖/√λ_max(Σ), so every shift with ‖v‖ ≥ Δ·√λ_max(Σ̂) is detected (Σ̂ the sample covariance).
    """
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim == 1:
        samples = samples[:, None]
    n, p = samples.shape
    if n <= p + 1:
        raise ValueError(f"Hotelling's test needs more samples than dimensions, got N={n}, p={p}")
    mean_null = np.asarray(mean_null, dtype=np.float64).reshape(p)
    if p == 1:  # statsmodels' covariance degenerates for one column; T² = t² of the one-sample t-test
        result = stats.ttest_1samp(samples[:, 0], mean_null[0])
        t2, p_value = float(result.statistic) ** 2, float(result.pvalue)
    else:
        result = test_mvmean(samples, mean_null)
        t2, p_value = float(result.t2), float(result.pvalue)
    largest_variance = float(np.max(np.linalg.eigvalsh(np.atleast_2d(np.cov(samples, rowvar=False)))))
    return TestResult(
        statistic=t2,
        p_value=p_value,
        mde=hotelling_mde(n, p, level) * math.sqrt(max(largest_variance, 0.0)),
        mde_unit="‖mean shift‖ (Euclidean)",
    )


def clopper_pearson(successes: int, trials: int, level: float) -> tuple[float, float]:
    """Two-sided exact (Clopper–Pearson) interval with coverage 1 − level (statsmodels, method='beta')."""
    lo, hi = proportion_confint(successes, trials, alpha=level, method="beta")
    return float(lo), float(hi)


def empirical_bernstein_radius(samples: np.ndarray, value_range: float, confidence_level: float) -> float:
    """One-sided empirical-Bernstein radius (Maurer & Pontil 2009, Thm 4) for values in an interval of
    length ``value_range``: with probability ≥ 1 − level, E[X] ≤ mean + radius (and symmetrically)."""
    x = np.asarray(samples, dtype=np.float64)
    n = x.size
    if n < 2:
        raise ValueError("empirical Bernstein needs at least 2 samples")
    log_term = math.log(2.0 / confidence_level)
    variance = float(np.var(x, ddof=1))
    return math.sqrt(2.0 * variance * log_term / n) + 7.0 * value_range * log_term / (3.0 * (n - 1))


def _eb_p_value(samples, value_range, gap) -> float:
    """Smallest level at which the EB bound separates the sample mean from the null by ``gap``."""
    if gap <= 0:
        return 1.0

    def excess(log_level):
        return empirical_bernstein_radius(samples, value_range, math.exp(log_level)) - gap

    lo = -745.0  # exp(-745) is the smallest positive float64
    if excess(lo) <= 0:  # separated even at the smallest representable level
        return 0.0
    if excess(0.0) > 0:  # not separated even at level 1
        return 1.0
    return math.exp(optimize.brentq(excess, lo, 0.0, xtol=1e-12))


def bounded_mean_upper_test(samples: np.ndarray, bound: float, value_range: float, level: float) -> TestResult:
    """Test H0: E[X] ≤ bound for X in an interval of length ``value_range`` (finite-sample, one-sided).

    Rejects when the empirical-Bernstein lower confidence bound on E[X] exceeds ``bound``. The
    statistic is the sample mean; the MDE is the excess E[X] − bound detectable at this N.
    """
    x = np.asarray(samples, dtype=np.float64)
    mean = float(np.mean(x))
    p_value = _eb_p_value(x, value_range, mean - bound)
    return TestResult(
        statistic=mean,
        p_value=p_value,
        mde=2.0 * empirical_bernstein_radius(x, value_range, level),
        mde_unit="excess of the mean over the bound",
    )


def bounded_mean_equality_test(samples: np.ndarray, value: float, value_range: float, level: float) -> TestResult:
    """Two-sided finite-sample test of E[X] = value by empirical Bernstein (Bonferroni over the sides)."""
    x = np.asarray(samples, dtype=np.float64)
    mean = float(np.mean(x))
    p_one = _eb_p_value(x, value_range, abs(mean - value))
    return TestResult(
        statistic=mean,
        p_value=min(1.0, 2.0 * p_one),
        mde=2.0 * empirical_bernstein_radius(x, value_range, level / 2.0),
        mde_unit="|mean - value|",
    )


def ks_test(samples: np.ndarray, cdf, level: float) -> TestResult:
    """Kolmogorov–Smirnov test against a continuous CDF; MDE from the DKW inequality."""
    x = np.asarray(samples, dtype=np.float64)
    result = stats.kstest(x, cdf)
    n = x.size
    return TestResult(
        statistic=float(result.statistic),
        p_value=float(result.pvalue),
        mde=2.0 * math.sqrt(math.log(2.0 / level) / (2.0 * n)),
        mde_unit="sup |F_n - F|",
    )


def binomial_test(successes: int, trials: int, p: float, level: float) -> TestResult:
    """Exact two-sided binomial test of P(success) = p: the central test, whose acceptance set is the
    Clopper–Pearson interval (p-value 2·min of the two tails). The MDE is the normal approximation."""
    k, n = int(successes), int(trials)
    p_value = min(1.0, 2.0 * min(stats.binom.cdf(k, n, p), stats.binom.sf(k - 1, n, p)))
    mde = (stats.norm.ppf(1 - level / 2) + stats.norm.ppf(POWER)) * math.sqrt(p * (1 - p) / n)
    return TestResult(statistic=k / n, p_value=float(p_value), mde=mde, mde_unit="|P(outside) - p| (normal approx.)")


def chi_square_variance_test(sum_of_squares: float, dof: int, level: float) -> TestResult:
    """Exact two-sided test that ``sum_of_squares`` is χ²_dof, i.e. a sum of ``dof`` squared standardised
    N(0, 1) variables (mean and variance known under H0).

    Statistic: Q/dof, the estimated variance ratio. MDE: the relative variance error |ratio − 1| rejected with
    power POWER in either direction (the larger of the two; Q/k ~ χ²_dof under a ratio k)."""
    q = float(sum_of_squares)
    law = stats.chi2(dof)
    if not math.isfinite(q):
        return TestResult(q, 0.0, math.inf, "relative variance error |Var/target - 1|")
    p_value = min(1.0, 2.0 * min(law.cdf(q), law.sf(q)))
    upper = law.isf(level / 2) / law.ppf(1 - POWER) - 1.0
    lower = 1.0 - law.ppf(level / 2) / law.isf(1 - POWER)
    return TestResult(q / dof, float(p_value), float(max(upper, lower)), "relative variance error |Var/target - 1|")


def normal_z_test(z: float, count: int, level: float, unit: str) -> TestResult:
    """Exact two-sided test that the statistic ``z`` is N(0, 1) under H0, where ``z`` is a standardised sum of
    ``count`` terms. MDE: the per-term shift (z_{1−level/2} + z_POWER)/√count that moves E[z] enough to be
    rejected with power POWER, in ``unit``."""
    z = float(z)
    p_value = float(2.0 * stats.norm.sf(abs(z))) if math.isfinite(z) else 0.0
    mde = (stats.norm.isf(level / 2) + stats.norm.ppf(POWER)) / math.sqrt(count)
    return TestResult(z, p_value, float(mde), unit)


def conditional_covariance_test(products_sum: float, given_squares_sum: float, scale: float, count: int,
                                level: float, unit: str) -> TestResult:
    """Exact test of E[x y] = 0 for x ~ N(0, s²) independent of y (H0): given y, Σ x_k y_k ~ N(0, s² Σ y_k²),
    so z = Σ x y / (s √Σ y²) is N(0, 1) whatever the law of y. ``scale`` is s. MDE in correlation units."""
    z = products_sum / (scale * math.sqrt(given_squares_sum)) if given_squares_sum > 0 else math.inf
    return normal_z_test(z, count, level, unit)


def holm_adjust(p_values) -> np.ndarray:
    """Holm step-down adjusted p-values (statsmodels ``multipletests``); empty input gives empty output."""
    p = np.asarray(list(p_values), dtype=np.float64)
    if p.size == 0:
        return p
    return multipletests(p, method="holm")[1]
