"""Exact Gaussian privacy profile, Gaussian-DP μ ↔ (ε, δ), and their float64 twins (reference/accounting/gaussian.py,
reference/fast/conversions.py). Reference values from dpzero.md §4–§5.2 and its Appendix Z."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.accounting.errors import AccountingError
from reference.accounting.gaussian import composed_gaussian_mu, gaussian_delta, gaussian_epsilon, gaussian_mu
from reference.fast import conversions as fast
from reference.precision import working_precision

DPS = 40
FUZZ = settings(max_examples=25, deadline=None)


def naive_profile(epsilon, mu, dps=600):
    """Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) as printed (dpzero.md App. Z), at a precision that absorbs the cancellation."""
    with mpmath.workdps(dps):
        epsilon, mu = mpmath.mpf(epsilon), mpmath.mpf(mu)
        value = mpmath.ncdf(-epsilon / mu + mu / 2) - mpmath.exp(epsilon) * mpmath.ncdf(-epsilon / mu - mu / 2)
    return value


def relative_error(value, exact):
    return abs(mpmath.mpf(value) / exact - 1)


# ---------------------------------------------------------------------------------------------------
# gaussian_delta


def test_profile_reference_value_mu1_eps1():
    with working_precision(DPS):
        value = gaussian_delta(1, 1)
        assert abs(value - mpmath.mpf("0.1269367375")) < mpmath.mpf("5e-11")
        assert relative_error(value, naive_profile(1, 1)) < mpmath.mpf("1e-39")


@pytest.mark.parametrize(
    ("epsilon", "mu"),
    [(0, 1e-8), (0, 3), (0.5, 0.2), (1, 1e-5), (2, 0.5), (30, 1), (300, 24.007), (500, 0.05), (500, 1), (500, 13.5),
     (500, 60), (1e-4, 30), (80, 0.3)],
)
def test_profile_full_precision_without_cancellation(epsilon, mu):
    # δ from ~1e-2171472425 up to ≈ 1: relative error at the working precision, not 1e-16 × (cancellation).
    with working_precision(DPS):
        value = gaussian_delta(epsilon, mu)
        assert 0 < value <= 1
        assert relative_error(value, naive_profile(epsilon, mu)) < mpmath.mpf("1e-38")


def test_profile_at_delta_1e_minus_300_and_eps_500():
    with working_precision(DPS):
        mu = gaussian_mu(500, mpmath.mpf("1e-300"))
        value = gaussian_delta(500, mu)
        assert mpmath.mpf("0.99e-300") < value <= mpmath.mpf("1e-300")
        assert relative_error(value, naive_profile(500, mu)) < mpmath.mpf("1e-38")


def test_profile_edge_values():
    with working_precision(DPS):
        assert gaussian_delta(3, 0) == 0
        # δ_μ(0) = TV = 2Φ(μ/2) − 1 = erf(μ/(2√2))
        mu = mpmath.mpf("0.7")
        assert relative_error(gaussian_delta(0, mu), mpmath.erf(mu / (2 * mpmath.sqrt(2)))) < mpmath.mpf("1e-38")


def test_profile_monotone_in_epsilon_and_mu():
    with working_precision(DPS):
        eps_grid = [0, 0.01, 0.1, 0.5, 1, 2, 5, 10, 50, 200]
        mu_grid = [0.01, 0.1, 0.5, 1, 2, 5, 20]
        for mu in mu_grid:
            values = [gaussian_delta(e, mu) for e in eps_grid]
            assert all(a > b for a, b in zip(values, values[1:])), mu
        for e in eps_grid:
            values = [gaussian_delta(e, mu) for mu in mu_grid]
            assert all(a < b for a, b in zip(values, values[1:])), e


def test_dpzero_lemma22_counterexample():
    # dpzero.md §4, E5: Lemma 2.2's μ = ε/(2√(2 log(e + ε/δ))) = 24.007… at ε = 300, δ = 1e-6 gives δ_exact = 0.2968 ≫ δ.
    with working_precision(DPS):
        epsilon, delta = mpmath.mpf(300), mpmath.mpf("1e-6")
        mu = epsilon / (2 * mpmath.sqrt(2 * mpmath.log(mpmath.e + epsilon / delta)))
        assert abs(mu - mpmath.mpf("24.0073")) < mpmath.mpf("1e-4")
        exact = gaussian_delta(epsilon, mu)
        assert abs(exact - mpmath.mpf("0.29678")) < mpmath.mpf("1e-5")
        assert exact > delta
        # in the practical regime it holds: ε = 2, δ = 1e-5 (dpzero.md §4 "slack in practice")
        epsilon, delta = mpmath.mpf(2), mpmath.mpf("1e-5")
        mu = epsilon / (2 * mpmath.sqrt(2 * mpmath.log(mpmath.e + epsilon / delta)))
        assert abs(mu - mpmath.mpf("0.2023936046")) < mpmath.mpf("5e-11")
        assert gaussian_delta(epsilon, mu) <= delta
        assert abs(gaussian_epsilon(delta, mu) - mpmath.mpf("0.735")) < mpmath.mpf("5e-4")


# ---------------------------------------------------------------------------------------------------
# gaussian_mu / gaussian_epsilon


MU_STAR = [
    (2, "1e-5", "0.5015516892"),
    (6, "1e-5", "1.3095258394"),
    (2, "1e-6", "0.4483347404"),
    (1, "1e-5", "0.2680511232"),
    (0.1, "1e-6", "0.0275446502"),
    (0.5, "1e-6", "0.1241061490"),
    (1, "1e-6", "0.2367043807"),
    (4, "1e-6", "0.8378587571"),
    (10, "1e-6", "1.8481322058"),
]


@pytest.mark.parametrize(("epsilon", "delta", "expected"), MU_STAR)
def test_mu_star_reference_values(epsilon, delta, expected):
    with working_precision(DPS):
        mu = gaussian_mu(epsilon, mpmath.mpf(delta))
        assert abs(mu - mpmath.mpf(expected)) <= mpmath.mpf("5e-11")  # the spec prints 10 decimals


@pytest.mark.parametrize(("epsilon", "delta"), [(2, "1e-5"), (0, "0.3"), (0.001, "1e-12"), (500, "1e-300"), (60, "0.9")])
def test_gaussian_mu_never_overshoots_and_is_tight(epsilon, delta):
    with working_precision(DPS):
        delta = mpmath.mpf(delta)
        mu = gaussian_mu(epsilon, delta)
        assert gaussian_delta(epsilon, mu) <= delta
        assert gaussian_delta(epsilon, mu * (1 + mpmath.mpf("1e-36"))) > delta


@pytest.mark.parametrize("mu", [0.01, 0.3, 1, 4, 12])
@pytest.mark.parametrize("epsilon", [0.001, 0.5, 3, 40, 400])
def test_epsilon_round_trip(epsilon, mu):
    with working_precision(DPS):
        delta = gaussian_delta(epsilon, mu)
        assert 0 < delta < 1
        back = gaussian_epsilon(delta, mu)
        # conditioning: an ulp of δ moves ε by ulp/|dδ/dε|, dδ/dε = −e^ε Φ(−ε/μ − μ/2) (tiny when δ is near 1)
        slope = mpmath.exp(epsilon) * mpmath.ncdf(-mpmath.mpf(epsilon) / mu - mpmath.mpf(mu) / 2)
        assert abs(back - epsilon) <= mpmath.mpf("1e-35") * max(1, epsilon) + 16 * mpmath.eps * delta / slope
        assert gaussian_delta(back, mu) <= delta  # rounded up: never understates ε


def test_gaussian_epsilon_is_zero_above_total_variation():
    with working_precision(DPS):
        mu = mpmath.mpf(1)
        tv = gaussian_delta(0, mu)
        assert gaussian_epsilon(tv * (1 + mpmath.mpf("1e-30")), mu) == 0
        assert gaussian_epsilon(min(mpmath.mpf("0.999"), tv * 2), mu) == 0
        assert gaussian_epsilon(tv * (1 - mpmath.mpf("1e-20")), mu) > 0
        assert gaussian_epsilon(0.5, 0) == 0


def test_gaussian_epsilon_monotone_in_delta_and_mu():
    with working_precision(DPS):
        deltas = ["0.1", "1e-3", "1e-5", "1e-10", "1e-50"]
        values = [gaussian_epsilon(mpmath.mpf(d), 1) for d in deltas]
        assert all(a < b for a, b in zip(values, values[1:]))
        values = [gaussian_epsilon(mpmath.mpf("1e-5"), mu) for mu in [0.1, 0.5, 1, 2, 8]]
        assert all(a < b for a, b in zip(values, values[1:]))


def test_composed_gaussian_mu():
    with working_precision(DPS):
        assert composed_gaussian_mu([2], [100]) == mpmath.mpf(5)  # √T/z
        z = [mpmath.mpf(10), mpmath.mpf(5)]
        assert composed_gaussian_mu(z, [50, 50]) == mpmath.sqrt(mpmath.mpf(50) / 100 + mpmath.mpf(50) / 25)
        assert composed_gaussian_mu([3, 4]) == mpmath.sqrt(mpmath.mpf(1) / 9 + mpmath.mpf(1) / 16)
        assert composed_gaussian_mu([3, 4], [0, 1]) == mpmath.mpf(1) / 4
        # composing 100 steps of μ = 0.1 is exactly 1-GDP
        assert gaussian_delta(1, composed_gaussian_mu([10], [100])) == gaussian_delta(1, 1)


def test_composed_gaussian_mu_validation_names_the_parameter():
    with pytest.raises(ValueError, match=r"noise_multipliers\[1\]"):
        composed_gaussian_mu([1, 0])
    with pytest.raises(ValueError, match=r"counts\[0\]"):
        composed_gaussian_mu([1], [-1])
    with pytest.raises(ValueError, match="counts"):
        composed_gaussian_mu([1, 2], [1])
    with pytest.raises(ValueError, match="noise_multipliers"):
        composed_gaussian_mu([])
    with pytest.raises(TypeError, match=r"counts\[0\]"):
        composed_gaussian_mu([1], [1.5])


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: gaussian_delta(-1, 1), "epsilon"),
        (lambda: gaussian_delta(1, -1), "mu"),
        (lambda: gaussian_delta(float("nan"), 1), "epsilon"),
        (lambda: gaussian_delta(1, float("inf")), "mu"),
        (lambda: gaussian_epsilon(0, 1), "delta"),
        (lambda: gaussian_epsilon(1, 1), "delta"),
        (lambda: gaussian_epsilon(0.1, -2), "mu"),
        (lambda: gaussian_mu(-0.5, 0.1), "epsilon"),
        (lambda: gaussian_mu(1, 1.5), "delta"),
        (lambda: fast.gaussian_delta(-1, 1), "epsilon"),
        (lambda: fast.gaussian_epsilon(0, 1), "delta"),
        (lambda: fast.gaussian_mu(1, 0), "delta"),
    ],
)
def test_validation_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------------------------------------------
# float64 twins: agreement with the reference (claim: ≤ 1e-10 relative)

EPS_GRID = [0, 1e-6, 1e-3, 0.01, 0.1, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500]
MU_GRID = [1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.3, 0.5, 1, 2, 5, 10, 20, 50, 100]
LOG_TINY = math.log(2.2250738585072014e-308)


def test_fast_gaussian_delta_agrees_on_wide_grid():
    # Worst case observed when written: 8.5e-12 at (ε, μ) = (1e-6, 1e-4); float64 cannot reach 1e-10 for μ ≲ 1e-5
    # with ε ≲ μ (R(x1) − R(x1 + μ) loses ~log10(1/μ) digits) and returns AccountingError below ≈ 2.2e-308.
    worst = 0
    with working_precision(DPS):
        for epsilon in EPS_GRID:
            for mu in MU_GRID:
                exact = gaussian_delta(epsilon, mu)
                if mpmath.log(exact) < LOG_TINY:
                    with pytest.raises(AccountingError, match="float64"):
                        fast.gaussian_delta(epsilon, mu)
                    continue
                worst = max(worst, relative_error(fast.gaussian_delta(epsilon, mu), exact))
    assert worst <= 1e-10


def test_fast_gaussian_epsilon_and_mu_agree():
    worst = 0
    with working_precision(DPS):
        for delta in ["0.1", "1e-5", "1e-20", "1e-300"]:
            for mu in [1e-3, 0.1, 1, 10, 50]:
                exact = gaussian_epsilon(mpmath.mpf(delta), mu)
                value = fast.gaussian_epsilon(float(delta), mu)
                worst = max(worst, relative_error(value, exact) if exact > 0 else abs(value))
            for epsilon in [0, 1e-3, 1, 10, 500]:
                exact = gaussian_mu(epsilon, mpmath.mpf(delta))
                value = fast.gaussian_mu(epsilon, float(delta))
                worst = max(worst, relative_error(value, exact))
                # the float calibration never overshoots by more than its own accuracy against the exact profile
                assert gaussian_delta(epsilon, value) <= mpmath.mpf(float(delta)) * (1 + mpmath.mpf("1e-10"))
    assert worst <= 1e-10


def test_fast_composed_mu():
    assert fast.composed_gaussian_mu([2], [100]) == 5.0
    assert math.isclose(fast.composed_gaussian_mu([10, 5], [50, 50]), math.sqrt(0.5 + 2), rel_tol=1e-15)


# ---------------------------------------------------------------------------------------------------
# Hypothesis fuzz: no NaN, no negative or >1 δ, no exception other than ValueError / AccountingError

finite_eps = st.floats(min_value=0, max_value=500, allow_nan=False)
any_real = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-10, max_value=1e4),
)
log_delta = st.floats(min_value=-690, max_value=-1e-6)  # δ ∈ [1e-300, 0.999999]
log_mu = st.floats(min_value=-9, max_value=6)


def _call(fn, *args):
    """Run fn; return its value or None if it raised a documented error. Anything else propagates (test fails)."""
    try:
        return fn(*args)
    except (ValueError, AccountingError):
        return None


@FUZZ
@given(finite_eps, log_mu)
def test_fuzz_gaussian_delta_valid(epsilon, lmu):
    with working_precision(DPS):
        value = gaussian_delta(epsilon, math.exp(lmu))
        assert not mpmath.isnan(value) and 0 <= value <= 1
        fast_value = _call(fast.gaussian_delta, epsilon, math.exp(lmu))
        assert fast_value is None or (0 <= fast_value <= 1)


@FUZZ
@given(any_real, any_real)
def test_fuzz_gaussian_delta_any(epsilon, mu):
    with working_precision(DPS):
        for fn in (gaussian_delta, fast.gaussian_delta):
            value = _call(fn, epsilon, mu)
            assert value is None or (not mpmath.isnan(value) and 0 <= value <= 1)
        if math.isnan(epsilon) or epsilon < 0 or math.isinf(epsilon):
            with pytest.raises(ValueError, match="epsilon"):
                gaussian_delta(epsilon, 1)


@FUZZ
@given(log_delta, log_mu)
def test_fuzz_gaussian_epsilon(ld, lmu):
    with working_precision(DPS):
        delta, mu = math.exp(ld), math.exp(lmu)
        value = gaussian_epsilon(delta, mu)
        assert value >= 0 and not mpmath.isnan(value)
        assert gaussian_delta(value, mu) <= delta
        fast_value = _call(fast.gaussian_epsilon, delta, mu)
        assert fast_value is None or fast_value >= 0


@FUZZ
@given(finite_eps, log_delta)
def test_fuzz_gaussian_mu(epsilon, ld):
    with working_precision(DPS):
        delta = math.exp(ld)
        value = gaussian_mu(epsilon, delta)
        assert value > 0 and gaussian_delta(epsilon, value) <= delta
        fast_value = _call(fast.gaussian_mu, epsilon, delta)
        assert fast_value is None or fast_value > 0


@FUZZ
@given(any_real, any_real)
def test_fuzz_inverses_any_input(a, b):
    with working_precision(DPS):
        for fn in (gaussian_epsilon, gaussian_mu, fast.gaussian_epsilon, fast.gaussian_mu):
            value = _call(fn, a, b)
            assert value is None or (not mpmath.isnan(value) and value >= 0)


@FUZZ
@given(
    st.lists(st.one_of(st.floats(min_value=-1, max_value=1e6), st.sampled_from([math.nan, math.inf])), max_size=5),
    st.data(),
)
def test_fuzz_composed_gaussian_mu(zs, data):
    counts = data.draw(st.lists(st.integers(min_value=-2, max_value=10**6), min_size=len(zs), max_size=len(zs)))
    with working_precision(DPS):
        for fn in (composed_gaussian_mu, fast.composed_gaussian_mu):
            value = _call(fn, zs, counts)
            assert value is None or (not mpmath.isnan(value) and value >= 0)
