"""Tests for empirical_dp/bounds.py: closed forms, monotonicity, the sample-size ceiling, coverage, validation."""

from __future__ import annotations

import hashlib
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import beta, norm

from empirical_dp.bounds import (
    EpsilonLowerBound,
    GdpMuLowerBound,
    ceiling_table,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_ceiling,
    epsilon_ceiling_closed_form,
    epsilon_lower_bound,
    gdp_epsilon,
    gdp_mu_lower_bound,
)


def _rng_for(name: str) -> np.random.Generator:
    seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------------------------------
# Clopper–Pearson closed forms


@pytest.mark.parametrize("n", [1, 7, 100, 2000])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.999])
def test_cp_zero_and_all_successes_closed_forms(n, confidence):
    assert clopper_pearson_upper(0, n, confidence) == pytest.approx(1 - (1 - confidence) ** (1 / n), rel=1e-12)
    assert clopper_pearson_lower(n, n, confidence) == pytest.approx((1 - confidence) ** (1 / n), rel=1e-12)
    assert clopper_pearson_lower(0, n, confidence) == 0.0
    assert clopper_pearson_upper(n, n, confidence) == 1.0


@given(n=st.integers(1, 500), data=st.data(), confidence=st.floats(0.51, 0.9999))
def test_cp_bounds_are_beta_quantiles_and_bracket_the_rate(n, data, confidence):
    k = data.draw(st.integers(0, n))
    upper, lower = clopper_pearson_upper(k, n, confidence), clopper_pearson_lower(k, n, confidence)
    assert lower <= k / n <= upper
    if k < n:  # independent formula: upper = B⁻¹(confidence; k+1, n−k)
        assert upper == pytest.approx(beta.ppf(confidence, k + 1, n - k), rel=1e-9)
    if k > 0:
        assert lower == pytest.approx(beta.ppf(1 - confidence, k, n - k + 1), rel=1e-9)


# ---------------------------------------------------------------------------------------------------
# ε lower bound: closed form, monotonicity, safe-side rounding


def test_epsilon_lower_bound_matches_formula_and_rounds_down():
    fp, neg, fn, pos, delta, conf = 30, 1000, 50, 1200, 1e-3, 0.95
    result = epsilon_lower_bound(fp, neg, fn, pos, delta, conf)
    assert isinstance(result, EpsilonLowerBound)
    fpr_u = beta.ppf(1 - 0.025, fp + 1, neg - fp)
    fnr_u = beta.ppf(1 - 0.025, fn + 1, pos - fn)
    expected = max(0.0, math.log((1 - delta - fnr_u) / fpr_u), math.log((1 - delta - fpr_u) / fnr_u))
    assert result.epsilon_lb == pytest.approx(expected, rel=1e-10)
    assert result.epsilon_lb <= expected  # safe side
    assert result.false_positive_rate == fp / neg and result.false_negative_rate == fn / pos
    assert result.false_positive_rate_upper >= fpr_u and result.false_negative_rate_upper >= fnr_u
    assert result.delta == delta and result.confidence == conf


def test_epsilon_lower_bound_is_zero_for_a_useless_test():
    # Coin-flip test: both rates ≈ 1/2, numerators 1 − δ − rate_u are about 1/2, ratio < 1.
    assert epsilon_lower_bound(500, 1000, 500, 1000, 1e-5, 0.95).epsilon_lb == 0.0
    # Numerators ≤ 0 (rates near 1, δ large) give 0, not NaN.
    assert epsilon_lower_bound(1000, 1000, 1000, 1000, 0.5, 0.95).epsilon_lb == 0.0


@given(n=st.integers(20, 3000), data=st.data())
def test_more_errors_give_lower_epsilon(n, data):
    fp = data.draw(st.integers(0, n - 1))
    fn = data.draw(st.integers(0, n))
    base = epsilon_lower_bound(fp, n, fn, n, 1e-5, 0.95).epsilon_lb
    assert epsilon_lower_bound(fp + 1, n, fn, n, 1e-5, 0.95).epsilon_lb <= base
    swapped = epsilon_lower_bound(fn, n, fp, n, 1e-5, 0.95).epsilon_lb
    assert epsilon_lower_bound(fn, n, fp + 1, n, 1e-5, 0.95).epsilon_lb <= swapped


def test_larger_delta_and_higher_confidence_give_lower_epsilon():
    eps = [epsilon_lower_bound(3, 2000, 5, 2000, d, 0.95).epsilon_lb for d in (0.0, 1e-5, 1e-2, 0.1)]
    assert all(a >= b for a, b in zip(eps, eps[1:])) and eps[0] > eps[-1]
    eps = [epsilon_lower_bound(3, 2000, 5, 2000, 1e-5, c).epsilon_lb for c in (0.5, 0.9, 0.99, 0.9999)]
    assert all(a > b for a, b in zip(eps, eps[1:]))


# ---------------------------------------------------------------------------------------------------
# Sample-size ceiling


@pytest.mark.parametrize(("n", "expected"), [(100, 3.28), (1000, 5.60), (10**4, 7.90), (10**5, 10.21), (10**6, 12.51)])
def test_ceiling_matches_anchors_table(n, expected):
    # anchors.md §7, "Sample-size ceiling": CP at total α = 0.05, perfect attack, pure DP.
    assert round(epsilon_ceiling(n, 0.0, 0.95), 2) == expected


@pytest.mark.parametrize("n", [1, 10, 100, 12345, 10**7])
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.1])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.999])
def test_ceiling_equals_perfect_separation_and_closed_form(n, delta, confidence):
    ceiling = epsilon_ceiling(n, delta, confidence)
    assert ceiling == epsilon_lower_bound(0, n, 0, n, delta, confidence).epsilon_lb
    u = 1 - ((1 - confidence) / 2) ** (1 / n)  # computed independently of the module
    expected = max(0.0, math.log((1 - delta - u) / u)) if 1 - delta - u > 0 else 0.0
    assert epsilon_ceiling_closed_form(n, delta, confidence) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert ceiling == pytest.approx(epsilon_ceiling_closed_form(n, delta, confidence), rel=1e-9, abs=1e-12)
    assert ceiling <= epsilon_ceiling_closed_form(n, delta, confidence) + 1e-12


def test_ceiling_large_n_asymptotic():
    n, alpha = 10**7, 0.05
    assert epsilon_ceiling(n, 0.0, 1 - alpha) == pytest.approx(math.log(n / math.log(2 / alpha)), abs=1e-5)


@given(n=st.integers(1, 10**6))
def test_more_trials_give_higher_ceiling(n):
    # Strictly increasing once positive (tiny N cannot certify anything: 1 − δ − u ≤ 0 gives 0).
    for delta in (0.0, 1e-5):
        smaller, larger = epsilon_ceiling(n, delta, 0.95), epsilon_ceiling(n + 1, delta, 0.95)
        assert larger > smaller if smaller > 0 else larger >= 0.0
    assert epsilon_ceiling(n + 10, 1e-5, 0.95) > epsilon_ceiling(n, 1e-5, 0.95)


def test_no_error_count_beats_the_ceiling():
    n = 50
    ceiling = epsilon_ceiling(n, 1e-5, 0.95)
    assert all(epsilon_lower_bound(fp, n, fn, n, 1e-5, 0.95).epsilon_lb <= ceiling
               for fp in range(n + 1) for fn in range(0, n + 1, 7))


def test_ceiling_table():
    table = ceiling_table([10, 100, 1000], 1e-5, 0.95)
    assert isinstance(table, pd.DataFrame)
    assert list(table.columns) == ["trials_per_side", "rate_upper", "epsilon_ceiling"]
    assert list(table["trials_per_side"]) == [10, 100, 1000]
    assert list(table["epsilon_ceiling"]) == [epsilon_ceiling(n, 1e-5, 0.95) for n in (10, 100, 1000)]
    assert table["epsilon_ceiling"].is_monotonic_increasing
    assert table["rate_upper"].iloc[1] == pytest.approx(1 - 0.025 ** (1 / 100), rel=1e-10)


# ---------------------------------------------------------------------------------------------------
# Gaussian DP


def test_gdp_mu_lower_bound_formula():
    fp, neg, fn, pos, conf = 300, 2000, 280, 2000, 0.95
    result = gdp_mu_lower_bound(fp, neg, fn, pos, conf)
    assert isinstance(result, GdpMuLowerBound)
    fpr_u = beta.ppf(0.975, fp + 1, neg - fp)
    fnr_u = beta.ppf(0.975, fn + 1, pos - fn)
    expected = norm.ppf(1 - fpr_u) - norm.ppf(fnr_u)
    assert result.mu_lb == pytest.approx(expected, rel=1e-10)
    assert result.mu_lb <= expected
    # Symmetric trade-off: swapping the two error counts leaves μ_lb unchanged.
    assert gdp_mu_lower_bound(fn, pos, fp, neg, conf).mu_lb == pytest.approx(result.mu_lb, rel=1e-12)


def test_gdp_mu_lower_bound_edges_and_monotonicity():
    assert gdp_mu_lower_bound(1000, 1000, 1000, 1000, 0.95).mu_lb == 0.0  # FPR_u = 1: Φ⁻¹(0) = −inf, clipped
    assert gdp_mu_lower_bound(500, 1000, 500, 1000, 0.95).mu_lb == 0.0
    perfect = gdp_mu_lower_bound(0, 1000, 0, 1000, 0.95).mu_lb
    assert perfect == pytest.approx(2 * norm.isf(1 - 0.025 ** (1 / 1000)), rel=1e-9)
    mus = [gdp_mu_lower_bound(k, 1000, 100, 1000, 0.95).mu_lb for k in range(0, 400, 50)]
    assert all(a > b for a, b in zip(mus, mus[1:]))


def test_gdp_epsilon_solves_the_profile():
    for mu, delta in [(1.0, 1e-5), (0.5, 1e-3), (3.0, 1e-8)]:
        eps = gdp_epsilon(mu, delta)
        profile = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
        assert profile == pytest.approx(delta, rel=1e-8)
    tight_delta = 2 * norm.cdf(0.5) - 1  # δ_μ(0) for μ = 1
    assert gdp_epsilon(1.0, tight_delta) == pytest.approx(0.0, abs=1e-8)
    assert gdp_epsilon(0.0, 1e-5) == 0.0
    assert gdp_epsilon(1.0, 1e-6) > gdp_epsilon(1.0, 1e-5) > gdp_epsilon(0.5, 1e-5)


# ---------------------------------------------------------------------------------------------------
# Coverage: the bounds are valid on a mechanism with known tight privacy


_N_PER_SIDE = 2000
_REPETITIONS = 400
_CONFIDENCE = 0.95
_THRESHOLD = 0.5  # the likelihood-ratio test for N(0,1) vs N(1,1) at log LR = 0, optimal for μ = 1


def _simulate_error_counts(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian mechanism with μ = 1: outputs N(0, 1) under D and N(1, 1) under D'; test says D' iff x > 1/2."""
    under_d = rng.standard_normal((_REPETITIONS, _N_PER_SIDE))
    under_d_prime = 1.0 + rng.standard_normal((_REPETITIONS, _N_PER_SIDE))
    false_positives = (under_d > _THRESHOLD).sum(axis=1)
    false_negatives = (under_d_prime <= _THRESHOLD).sum(axis=1)
    return false_positives, false_negatives


def _assert_exceedance_consistent(exceedances: int, allowed_rate: float) -> None:
    """CP test at level 1e-6: the exceedance frequency must not be significantly above allowed_rate."""
    lower = clopper_pearson_lower(exceedances, _REPETITIONS, 1 - 1e-6) if exceedances else 0.0
    assert lower <= allowed_rate, f"{exceedances}/{_REPETITIONS} exceedances, CP lower bound {lower} > {allowed_rate}"


@pytest.mark.parametrize("delta", [1e-5, 2 * norm.cdf(0.5) - 1, 0.3])
def test_coverage_epsilon_lower_bound(request, delta):
    # δ = 2Φ(1/2) − 1 is where this test is tight: true ε = 0 and the rates sit on the (ε, δ) boundary.
    rng = _rng_for(request.node.name)
    false_positives, false_negatives = _simulate_error_counts(rng)
    true_epsilon = gdp_epsilon(1.0, delta)
    exceedances = sum(
        epsilon_lower_bound(int(fp), _N_PER_SIDE, int(fn), _N_PER_SIDE, delta, _CONFIDENCE).epsilon_lb > true_epsilon
        for fp, fn in zip(false_positives, false_negatives)
    )
    _assert_exceedance_consistent(exceedances, 1 - _CONFIDENCE)


def test_coverage_gdp_mu_lower_bound(request):
    rng = _rng_for(request.node.name)
    false_positives, false_negatives = _simulate_error_counts(rng)
    bounds = [gdp_mu_lower_bound(int(fp), _N_PER_SIDE, int(fn), _N_PER_SIDE, _CONFIDENCE).mu_lb
              for fp, fn in zip(false_positives, false_negatives)]
    _assert_exceedance_consistent(sum(mu > 1.0 for mu in bounds), 1 - _CONFIDENCE)
    # The test is tight, so the bound is informative: typically within ~0.15 of the true μ = 1.
    assert 0.8 < float(np.median(bounds)) < 1.0
    # Power of the coverage check: the plug-in estimate (no confidence bound) exceeds μ = 1 about half the time,
    # which the same CP check must reject.
    plug_in = norm.isf(false_positives / _N_PER_SIDE) - norm.ppf(false_negatives / _N_PER_SIDE)
    with pytest.raises(AssertionError):
        _assert_exceedance_consistent(int((plug_in > 1.0).sum()), 1 - _CONFIDENCE)


# ---------------------------------------------------------------------------------------------------
# Input validation: errors name the parameter


@pytest.mark.parametrize(
    ("call", "exc", "name"),
    [
        (lambda: clopper_pearson_upper(-1, 10, 0.95), ValueError, "count"),
        (lambda: clopper_pearson_upper(11, 10, 0.95), ValueError, "count"),
        (lambda: clopper_pearson_upper(1.5, 10, 0.95), TypeError, "count"),
        (lambda: clopper_pearson_lower(1, 0, 0.95), ValueError, "trials"),
        (lambda: clopper_pearson_upper(1, 10, 0.4), ValueError, "confidence"),
        (lambda: clopper_pearson_lower(1, 10, 1.0), ValueError, "confidence"),
        (lambda: clopper_pearson_upper(1, 10, float("nan")), ValueError, "confidence"),
        (lambda: epsilon_lower_bound(5, 4, 0, 10, 1e-5, 0.95), ValueError, "false_positives"),
        (lambda: epsilon_lower_bound(0, 0, 0, 10, 1e-5, 0.95), ValueError, "negatives"),
        (lambda: epsilon_lower_bound(0, 10, -1, 10, 1e-5, 0.95), ValueError, "false_negatives"),
        (lambda: epsilon_lower_bound(0, 10, 0, True, 1e-5, 0.95), TypeError, "positives"),
        (lambda: epsilon_lower_bound(0, 10, 0, 10, 1.0, 0.95), ValueError, "delta"),
        (lambda: epsilon_lower_bound(0, 10, 0, 10, -1e-9, 0.95), ValueError, "delta"),
        (lambda: epsilon_lower_bound(0, 10, 0, 10, 1e-5, 0.0), ValueError, "confidence"),
        (lambda: gdp_mu_lower_bound(0, 10, 11, 10, 0.95), ValueError, "false_negatives"),
        (lambda: gdp_mu_lower_bound(0, 10, 0, 10, 1.5), ValueError, "confidence"),
        (lambda: gdp_epsilon(-1.0, 1e-5), ValueError, "mu"),
        (lambda: gdp_epsilon(1.0, 0.0), ValueError, "delta"),
        (lambda: epsilon_ceiling(0, 1e-5, 0.95), ValueError, "trials_per_side"),
        (lambda: epsilon_ceiling_closed_form(10, 1e-5, 1.0), ValueError, "confidence"),
        (lambda: ceiling_table([10, 0], 1e-5, 0.95), ValueError, "trial_counts[1]"),
        (lambda: ceiling_table([], 1e-5, 0.95), ValueError, "trial_counts"),
        (lambda: ceiling_table(10, 1e-5, 0.95), TypeError, "trial_counts"),
    ],
)
def test_validation_errors_name_the_parameter(call, exc, name):
    with pytest.raises(exc, match=r"^" + re.escape(name) + r" "):
        call()


def test_rate_bounds_used_for_epsilon_are_at_least_the_exact_beta_quantiles():
    # Safe-side rounding: the inflated CP upper bounds in the result dominate the mpmath beta quantile.
    import mpmath

    with mpmath.workdps(40):
        for k, n in [(0, 1), (0, 2000), (3, 17), (250, 400), (1999, 2000)]:
            result = epsilon_lower_bound(k, n, k, n, 1e-5, 0.95)
            exact = mpmath.findroot(lambda x: mpmath.betainc(k + 1, n - k, 0, x, regularized=True) - mpmath.mpf(0.975),
                                    mpmath.mpf(result.false_positive_rate_upper), tol=1e-30, verify=False)
            assert mpmath.mpf(result.false_positive_rate_upper) >= exact
            assert mpmath.mpf(result.false_negative_rate_upper) >= exact
