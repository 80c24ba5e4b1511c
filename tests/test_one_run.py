"""Tests for empirical_dp/one_run.py: closed forms, the δ > 0 bound, monotonicity, coverage, validation."""

from __future__ import annotations

import hashlib
import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binom
from statsmodels.stats.proportion import proportion_confint

from empirical_dp.one_run import one_run_epsilon_lower_bound, one_run_p_value


def _rng_for(name: str) -> np.random.Generator:
    seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
    return np.random.default_rng(seed)


def _q(epsilon: float) -> float:
    """e^ε/(1 + e^ε) written out (the module uses scipy.special.expit)."""
    return math.exp(epsilon) / (1 + math.exp(epsilon))


counts = st.integers(1, 400).flatmap(lambda r: st.tuples(st.integers(0, r), st.just(r)))


# ---------------------------------------------------------------------------------------------------
# p-value: closed forms


@given(counts, st.floats(0, 20))
def test_pure_dp_p_value_is_binomial_tail(vr, epsilon):
    v, r = vr
    expected = binom.sf(v - 1, r, _q(epsilon))
    assert one_run_p_value(v, r, epsilon) == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_p_value_of_zero_correct_is_one():
    assert one_run_p_value(0, 10, 3.0) == 1.0
    assert one_run_p_value(0, 10, 3.0, delta=1e-3, canaries=100) == 1.0


def test_all_correct_p_value_is_q_to_the_r():
    # P[Binomial(r, q) ≥ r] = q^r.
    for r in (1, 5, 50):
        for epsilon in (0.0, 0.5, 2.0):
            assert one_run_p_value(r, r, epsilon) == pytest.approx(_q(epsilon) ** r, rel=1e-12)


def _p_value_with_delta_oracle(v, r, epsilon, delta, m):
    """Theorem 3 of Steinke–Nasr–Jagielski as written: f(v) + 2mδ max_i (f(v−i) − f(v))/i, f from binom.sf."""
    q = _q(epsilon)
    f = lambda k: binom.sf(k - 1, r, q)  # noqa: E731  P[X ≥ k]
    best = max([(f(v - i) - f(v)) / i for i in range(1, v + 1)], default=0.0)
    return min(1.0, f(v) + 2 * m * delta * best)


@pytest.mark.parametrize("v, r, epsilon, delta, m", [
    (30, 40, 0.5, 1e-5, 100),
    (80, 100, 1.0, 1e-6, 1000),
    (900, 1000, 2.0, 1e-5, 5000),
    (5, 5, 0.1, 1e-3, 5),
    (60, 100, 0.0, 1e-4, 200),
])
def test_p_value_with_delta_matches_theorem(v, r, epsilon, delta, m):
    got = one_run_p_value(v, r, epsilon, delta, canaries=m)
    assert got == pytest.approx(_p_value_with_delta_oracle(v, r, epsilon, delta, m), rel=1e-9, abs=1e-15)
    assert got >= one_run_p_value(v, r, epsilon)  # the δ-term is nonnegative


def test_p_value_with_delta_is_capped_at_one():
    assert one_run_p_value(50, 100, 0.0, delta=0.5, canaries=10_000) == 1.0


@given(counts, st.floats(0, 5), st.floats(0, 1e-3), st.floats(0, 1e-3))
def test_p_value_increases_with_delta(vr, epsilon, d1, d2):
    v, r = vr
    lo, hi = sorted((d1, d2))
    assert one_run_p_value(v, r, epsilon, lo, canaries=r) <= one_run_p_value(v, r, epsilon, hi, canaries=r)


# ---------------------------------------------------------------------------------------------------
# ε lower bound: closed forms


@pytest.mark.parametrize("r", [1, 10, 100, 1000])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.999])
def test_all_correct_epsilon_lb_closed_form(r, confidence):
    # v = r: q^r = α  ⇒  q = α^{1/r}, ε = log(q/(1 − q)); bisection returns at most this, within 1e-8.
    alpha = 1 - confidence
    q = alpha ** (1 / r)
    exact = math.log(q) - math.log1p(-q) if q > 0.5 else 0.0
    got = one_run_epsilon_lower_bound(r, r, confidence=confidence)
    assert got <= exact
    assert got == pytest.approx(exact, abs=1e-8)


@given(counts, st.sampled_from([0.9, 0.95, 0.99]))
def test_epsilon_lb_is_the_crossing_of_the_binomial_tail(vr, confidence):
    v, r = vr
    alpha = 1 - confidence
    eps_lb = one_run_epsilon_lower_bound(v, r, confidence=confidence)
    assert eps_lb >= 0
    if eps_lb == 0:
        assert binom.sf(v - 1, r, 0.5) > alpha * (1 - 1e-6)
    else:
        assert binom.sf(v - 1, r, _q(eps_lb)) <= alpha  # rejected at ε_lb: never overshoots
        assert binom.sf(v - 1, r, _q(eps_lb + 1e-8)) > alpha * (1 - 1e-6)  # and the crossing is within 1e-8


@given(st.integers(1, 2000).flatmap(lambda r: st.tuples(st.integers(0, r // 2), st.just(r))),
       st.sampled_from([0.5, 0.9, 0.95, 0.999]), st.sampled_from([0.0, 1e-5]))
def test_epsilon_lb_is_zero_at_accuracy_at_most_half(vr, confidence, delta):
    v, r = vr
    assert one_run_epsilon_lower_bound(v, r, delta=delta, confidence=confidence, canaries=r) == 0.0


# ---------------------------------------------------------------------------------------------------
# ε lower bound: monotonicity


def test_epsilon_lb_increases_with_correct():
    r = 200
    values = [one_run_epsilon_lower_bound(v, r) for v in range(0, r + 1)]
    assert all(a <= b for a, b in zip(values, values[1:]))
    positive = [x for x in values if x > 0]
    assert all(a < b for a, b in zip(positive, positive[1:]))
    assert values[100] == 0 and values[-1] > 0


@pytest.mark.parametrize("accuracy", [0.6, 0.75, 0.9, 1.0])
@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_epsilon_lb_increases_with_guesses_at_fixed_accuracy(accuracy, delta):
    guesses = [40, 100, 400, 1000, 4000]
    values = [one_run_epsilon_lower_bound(round(accuracy * r), r, delta=delta, canaries=10_000) for r in guesses]
    assert all(a < b for a, b in zip(values, values[1:])), values
    if accuracy < 1:
        assert values[-1] < math.log(accuracy / (1 - accuracy))  # never above the plug-in logit


@pytest.mark.parametrize("v, r", [(70, 100), (900, 1000), (1000, 1000)])
def test_epsilon_lb_with_delta_below_pure(v, r):
    pure = one_run_epsilon_lower_bound(v, r)
    with_delta = one_run_epsilon_lower_bound(v, r, delta=1e-5, canaries=10 * r)
    assert 0 < with_delta < pure


def test_epsilon_lb_increases_with_significance():
    values = [one_run_epsilon_lower_bound(800, 1000, confidence=c) for c in (0.999, 0.99, 0.95, 0.8)]
    assert all(a < b for a, b in zip(values, values[1:]))


# ---------------------------------------------------------------------------------------------------
# Coverage: randomized response is the worst case for ε-DP


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_coverage_randomized_response(epsilon):
    rng = _rng_for(f"test_coverage_randomized_response[{epsilon}]")
    repetitions, r, confidence = 500, 1000, 0.95
    alpha = 1 - confidence
    q = _q(epsilon)
    correct = rng.binomial(1, q, size=(repetitions, r)).sum(axis=1)  # each guess right w.p. e^ε/(1+e^ε)
    lb_by_count = {int(v): one_run_epsilon_lower_bound(int(v), r, confidence=confidence) for v in np.unique(correct)}
    exceed = int(sum(lb_by_count[int(v)] > epsilon for v in correct))
    # Valid: P[ε_lb > ε] ≤ α, checked with a one-sided CP test at level 1e-6.
    lower, _ = proportion_confint(exceed, repetitions, alpha=2e-6, method="beta")
    assert lower <= alpha
    # Sharp: ε_lb > ε exactly when v ≥ k*, the smallest count the binomial test rejects at ε.
    k_star = next(k for k in range(r + 1) if binom.sf(k - 1, r, q) <= alpha * (1 - 1e-9))
    exact_rate = binom.sf(k_star - 1, r, q)
    lower, upper = proportion_confint(exceed, repetitions, alpha=1e-6, method="beta")
    assert lower <= exact_rate <= upper


# ---------------------------------------------------------------------------------------------------
# Validation


@pytest.mark.parametrize("call, name", [
    (lambda: one_run_p_value(5, 0, 1.0), "guesses"),
    (lambda: one_run_p_value(-1, 10, 1.0), "correct"),
    (lambda: one_run_p_value(11, 10, 1.0), "correct"),
    (lambda: one_run_p_value(5, 10, -0.1), "epsilon"),
    (lambda: one_run_p_value(5, 10, math.nan), "epsilon"),
    (lambda: one_run_p_value(5, 10, math.inf), "epsilon"),
    (lambda: one_run_p_value(5, 10, 1.0, delta=1.0, canaries=10), "delta"),
    (lambda: one_run_p_value(5, 10, 1.0, delta=-1e-9, canaries=10), "delta"),
    (lambda: one_run_p_value(5, 10, 1.0, delta=1e-5), "canaries"),
    (lambda: one_run_p_value(5, 10, 1.0, delta=1e-5, canaries=9), "canaries"),
    (lambda: one_run_p_value(5, 10, 1.0, canaries=0), "canaries"),
    (lambda: one_run_epsilon_lower_bound(5, 10, confidence=1.0), "confidence"),
    (lambda: one_run_epsilon_lower_bound(5, 10, confidence=0.0), "confidence"),
    (lambda: one_run_epsilon_lower_bound(5, 10, delta=1e-5), "canaries"),
    (lambda: one_run_epsilon_lower_bound(11, 10), "correct"),
    (lambda: one_run_epsilon_lower_bound(5, 10, delta=2.0, canaries=10), "delta"),
])
def test_value_errors_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}\b"):
        call()


@pytest.mark.parametrize("call, name", [
    (lambda: one_run_p_value(5.0, 10, 1.0), "correct"),
    (lambda: one_run_p_value(5, "10", 1.0), "guesses"),
    (lambda: one_run_p_value(5, 10, "1"), "epsilon"),
    (lambda: one_run_epsilon_lower_bound(5, 10, delta=1e-5, canaries=20.5), "canaries"),
])
def test_type_errors_name_the_parameter(call, name):
    with pytest.raises(TypeError, match=rf"^{re.escape(name)}\b"):
        call()
