"""Tests for empirical_dp/one_run_fdp.py: the ε-DP reduction at v = r, monotonicity, coverage, validation."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from empirical_dp.one_run import one_run_epsilon_lower_bound
from empirical_dp.one_run_fdp import (
    fdp_one_run_rejects,
    gaussian_blow_up_inverse,
    one_run_gdp_mu_lower_bound,
    one_run_gdp_p_value,
)


def _rng_for(name: str) -> np.random.Generator:
    seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
    return np.random.default_rng(seed)


def _pure_dp_blow_up_inverse(epsilon: float):
    """f̄⁻¹ for ε-DP (randomized response): f(x) = max(0, 1 − e^ε x, e^{−ε}(1 − x))."""
    return lambda y: max(math.exp(-epsilon) * y, 1 - math.exp(epsilon) * (1 - y))


def _fdp_epsilon_lower_bound(correct, guesses, canaries, significance):
    """Largest ε rejected by the f-DP test with the ε-DP trade-off (plain bisection, for the test)."""
    def rejected(epsilon):
        return fdp_one_run_rejects(correct, guesses, canaries, _pure_dp_blow_up_inverse(epsilon), significance)

    lower, upper = 0.0, 40.0
    assert rejected(lower) and not rejected(upper)
    for _ in range(80):
        middle = 0.5 * (lower + upper)
        lower, upper = (middle, upper) if rejected(middle) else (lower, middle)
    return lower


# ---------------------------------------------------------------------------------------------------
# (a) ε-DP trade-off: all-correct case equals the Steinke–Nasr–Jagielski binomial bound


@pytest.mark.parametrize("guesses,canaries", [(5, 5), (10, 10), (10, 1000), (50, 200), (200, 1000)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_pure_dp_all_correct_matches_binomial_bound(guesses, canaries, confidence):
    # v = r: SNJ rejects ε iff q^r ≤ α, q = e^ε/(1 + e^ε), i.e. ε_lb = logit(α^{1/r}).
    alpha = 1 - confidence
    closed_form = math.log(alpha ** (1 / guesses) / (1 - alpha ** (1 / guesses)))
    if closed_form <= 0:  # 2^{−r} > α: even ε = 0 is not rejected by either test
        assert not fdp_one_run_rejects(guesses, guesses, canaries, _pure_dp_blow_up_inverse(0.0), alpha)
        assert one_run_epsilon_lower_bound(guesses, guesses, confidence=confidence) == 0.0
        return
    fdp_bound = _fdp_epsilon_lower_bound(guesses, guesses, canaries, alpha)
    assert fdp_bound == pytest.approx(closed_form, abs=1e-6)
    assert one_run_epsilon_lower_bound(guesses, guesses, confidence=confidence) == pytest.approx(closed_form, abs=1e-6)


@pytest.mark.parametrize(
    "correct,guesses,canaries", [(80, 100, 1000), (150, 200, 1000), (95, 100, 100), (60, 100, 100)]
)
def test_pure_dp_never_beyond_binomial_bound(correct, guesses, canaries):
    # For pure ε-DP the f-DP test is no more aggressive than SNJ's binomial bound (module docstring).
    fdp_bound = _fdp_epsilon_lower_bound(correct, guesses, canaries, 0.05)
    assert 0 < fdp_bound <= one_run_epsilon_lower_bound(correct, guesses, confidence=0.95)


def test_gaussian_blow_up_inverse_inverts_the_trade_off():
    # y = 1 − f_μ(x) with f_μ(x) = Φ(Φ⁻¹(1 − x) − μ) (computed with scipy.stats.norm), mapped back to x.
    from scipy.stats import norm

    mu = 1.3
    inverse = gaussian_blow_up_inverse(mu)
    for x in [1e-6, 0.01, 0.2, 0.5, 0.9]:
        y = 1 - norm.cdf(norm.ppf(1 - x) - mu)
        assert inverse(y) == pytest.approx(x, rel=1e-9)


# ---------------------------------------------------------------------------------------------------
# (b) monotonicity, and the p-value / μ-bound link


@settings(max_examples=30, deadline=None)
@given(st.integers(10, 150), st.integers(0, 1000), st.sampled_from([0.9, 0.95]))
def test_more_correct_gives_larger_mu_bound(guesses, extra_canaries, confidence):
    canaries = guesses + extra_canaries
    bounds = [one_run_gdp_mu_lower_bound(v, guesses, canaries, confidence) for v in range(guesses + 1)]
    assert all(b >= 0 for b in bounds)
    assert all(b1 <= b2 for b1, b2 in zip(bounds, bounds[1:]))
    assert bounds[-1] > 0


@pytest.mark.parametrize("correct,guesses,canaries", [(180, 200, 1000), (90, 100, 100), (40, 40, 500)])
def test_p_value_at_mu_bound_is_alpha(correct, guesses, canaries):
    mu_lb = one_run_gdp_mu_lower_bound(correct, guesses, canaries, 0.95)
    assert mu_lb > 0
    assert one_run_gdp_p_value(correct, guesses, canaries, mu_lb) <= 0.05 * (1 + 1e-8)
    assert one_run_gdp_p_value(correct, guesses, canaries, mu_lb + 1e-6) > 0.05
    # p-value decreases in v and increases in μ.
    p_at_bound = one_run_gdp_p_value(correct, guesses, canaries, mu_lb)
    assert one_run_gdp_p_value(correct - 1, guesses, canaries, mu_lb) >= p_at_bound
    assert one_run_gdp_p_value(correct, guesses, canaries, mu_lb + 0.5) >= p_at_bound


def test_p_value_edge_cases():
    assert one_run_gdp_p_value(0, 10, 10, 1.0) == 1.0
    # μ = 0, all of m = r guesses correct: P[W = r] = 2^{−r} for a mechanism that ignores the data.
    assert one_run_gdp_p_value(10, 10, 10, 0.0) == pytest.approx(0.5**10, rel=1e-8)
    assert one_run_gdp_p_value(10, 10, 10, 0.0) >= 0.5**10


# ---------------------------------------------------------------------------------------------------
# (c) coverage of a μ-GDP mechanism


def test_coverage_gaussian_mechanism():
    # Canary i shifts its own score by μ when included: a μ-GDP mechanism in each canary. The guesser uses
    # the optimal test (threshold μ/2) and guesses only on the r scores farthest from the threshold.
    rng = _rng_for("test_coverage_gaussian_mechanism")
    # μ = 1 with r = 100 of m = 1000: the upper tail of μ_lb comes within a few percent of μ, so the check bites.
    mu, canaries, guesses, confidence, repetitions = 1.0, 1000, 100, 0.95, 300
    exceed = 0
    bounds = []
    for _ in range(repetitions):
        included = rng.integers(0, 2, size=canaries).astype(bool)
        scores = mu * included + rng.standard_normal(canaries)
        confidence_order = np.argsort(-np.abs(scores - mu / 2))[:guesses]
        correct = int(np.sum((scores[confidence_order] > mu / 2) == included[confidence_order]))
        mu_lb = one_run_gdp_mu_lower_bound(correct, guesses, canaries, confidence)
        bounds.append(mu_lb)
        exceed += mu_lb > mu
    lower, _ = proportion_confint(exceed, repetitions, alpha=1e-6, method="beta")
    assert lower <= 1 - confidence
    assert np.median(bounds) > mu / 2  # the audit has power here, so the coverage check is not vacuous


# ---------------------------------------------------------------------------------------------------
# (d) chance accuracy


@pytest.mark.parametrize("guesses,canaries", [(2, 2), (10, 100), (100, 1000), (400, 400)])
def test_chance_accuracy_gives_zero(guesses, canaries):
    assert one_run_gdp_mu_lower_bound(guesses // 2, guesses, canaries, 0.95) == 0.0
    assert one_run_gdp_mu_lower_bound(0, guesses, canaries, 0.95) == 0.0


# ---------------------------------------------------------------------------------------------------
# Validation


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(correct=-1, guesses=10, canaries=10), "correct"),
        (dict(correct=11, guesses=10, canaries=10), "correct"),
        (dict(correct=1, guesses=0, canaries=10), "guesses"),
        (dict(correct=1, guesses=10, canaries=9), "canaries"),
        (dict(correct=1.5, guesses=10, canaries=10), "correct"),
        (dict(correct=1, guesses=10, canaries=10, confidence=1.0), "confidence"),
        (dict(correct=1, guesses=10, canaries=10, confidence=0.0), "confidence"),
    ],
)
def test_mu_lower_bound_validation(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        one_run_gdp_mu_lower_bound(**kwargs)


@pytest.mark.parametrize("mu", [-0.1, float("nan"), float("inf")])
def test_p_value_rejects_bad_mu(mu):
    with pytest.raises((ValueError, TypeError), match="mu"):
        one_run_gdp_p_value(5, 10, 10, mu)


def test_rejects_validation():
    with pytest.raises(ValueError, match="significance"):
        fdp_one_run_rejects(5, 10, 10, gaussian_blow_up_inverse(1.0), 0.0)
    with pytest.raises(TypeError, match="blow_up_inverse"):
        fdp_one_run_rejects(5, 10, 10, 1.0, 0.05)
