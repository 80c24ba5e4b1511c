"""Uniform-ball smoothing facts (reference/smoothing.py): zo_o2nc §1.5, Lemma 2.2, A.1, A.2; §8 tests 20–22.

Independent computations used here: mpmath.quad of the ball-marginal density written out in this file,
elementary closed forms for small d, scipy.stats, and Monte Carlo with reference.rng samplers at fixed
seeds. Monte Carlo comparisons use the CLT: |mean − exact| ≤ 6 standard errors (two-sided false-alarm
probability 2e−9 per comparison) unless the spec prescribes another threshold (§8: |z| < 4.5, 5 SE).
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from reference import smoothing as S
from reference.precision import working_precision
from reference.rng import Streams, sample_ball, sample_sphere

MC_SIGMAS = 6.0


def rng_for(*key):
    return Streams(20240607).generator("tests", "smoothing", *key)


# ---------------------------------------------------------------------------------------------------
# Independent reference computations


def density_constant_mp(d):
    d = mpmath.mpf(d)
    return mpmath.gamma(d / 2 + 1) / (mpmath.sqrt(mpmath.pi) * mpmath.gamma((d + 1) / 2))


def quad_over_marginal(fn, d, breakpoints=()):
    """∫_{−1}^{1} fn(t) p_d(t) dt with p_d(t) = c'_d (1 − t²)^{(d−1)/2}, split at the given points."""
    c = density_constant_mp(d)
    inner = sorted({mpmath.mpf(b) for b in breakpoints if -1 < b < 1})
    nodes = [mpmath.mpf(-1)] + inner + [mpmath.mpf(1)]
    return mpmath.quad(lambda t: fn(t) * c * ((1 - t) * (1 + t)) ** (mpmath.mpf(d - 1) / 2), nodes)


def profile_direct(y, profile, tau):
    if profile == "abs":
        return abs(y)
    if profile == "capped":
        return min(abs(y), tau)
    return abs(abs(y) - tau)


def slope_direct(y, profile, tau):
    """φ'(y) off the kinks, written from the definitions."""
    sgn = 1 if y > 0 else -1
    if profile == "abs":
        return sgn
    if profile == "capped":
        return sgn if abs(y) < tau else 0
    return sgn if abs(y) > tau else -sgn


def kinks(profile, tau):
    return [0] if profile == "abs" else [-tau, 0, tau]


# ---------------------------------------------------------------------------------------------------
# κ_d and the gamma ratio (Lemma 2.2(iii), Lemma A.2, erratum E6; §8 test 22)


def test_smoothness_constant_small_d_exact():
    assert S.smoothness_constant(1) == 1.0
    assert S.smoothness_constant(2) == pytest.approx(4 / math.pi, rel=1e-15)
    assert S.smoothness_constant(3) == pytest.approx(1.5, rel=1e-15)
    with working_precision(40):
        assert abs(S.smoothness_constant(1, arithmetic="mpmath") - 1) < mpmath.mpf(10) ** -39
        assert abs(S.smoothness_constant(2, arithmetic="mpmath") - 4 / mpmath.pi) < mpmath.mpf(10) ** -39


def test_smoothness_constant_below_sqrt_d_with_equality_only_at_1():
    # independent vectorized computation for every d <= 1e5
    d = np.arange(1, 100_001, dtype=np.float64)
    kappa = 2 / np.sqrt(np.pi) * np.exp(special.gammaln(d / 2 + 1) - special.gammaln((d + 1) / 2))
    assert abs(kappa[0] - 1) < 1e-15
    assert np.all(kappa[1:] < np.sqrt(d[1:]) * (1 - 1e-3))
    # the module itself, on all d <= 300 and a log-spaced set up to 1e6
    for dim in list(range(2, 301)) + [1000, 4321, 10**4, 10**5, 10**6]:
        assert S.smoothness_constant(dim) < math.sqrt(dim)


def test_smoothness_constant_asymptotics():
    # κ_d/√(2d/π) = 1 + 1/(4d) + 1/(32 d²) + O(d⁻³); check the first term with an O(1/d²) band.
    with working_precision(40):
        for dim in (10, 100, 10**4, 10**6):
            ratio = S.smoothness_constant(dim, arithmetic="mpmath") / mpmath.sqrt(2 * mpmath.mpf(dim) / mpmath.pi)
            assert abs(ratio - 1 - mpmath.mpf(1) / (4 * dim)) <= mpmath.mpf(1) / dim**2
    assert abs(S.smoothness_constant(10**6) / math.sqrt(2e6 / math.pi) - 1) < 1e-6


def test_smoothness_constant_float_matches_mpmath_and_scipy():
    with working_precision(40):
        for dim in (1, 2, 5, 17, 100, 1000, 10**5, 10**6):
            mp_value = S.smoothness_constant(dim, arithmetic="mpmath")
            assert abs(S.smoothness_constant(dim) / mp_value - 1) < 1e-15
    for dim in range(1, 200):
        assert S.smoothness_constant(dim) == pytest.approx(2 / special.beta(0.5, (dim + 1) / 2), rel=1e-13)


def test_gamma_ratio_bounds_lemma_a2():
    n = np.arange(1, 100_001, dtype=np.float64)
    ratio = np.exp(special.gammaln(n / 2 + 1) - special.gammaln((n + 1) / 2))
    assert np.all(ratio <= np.sqrt(2 * n))  # Lemma A.2 as printed
    assert np.all(ratio[1:] < np.sqrt(np.pi * n[1:]) / 2)  # the sharper bound (erratum E6)
    with working_precision(40):
        one = S.gamma_ratio(1, arithmetic="mpmath")
        assert abs(one - mpmath.sqrt(mpmath.pi) / 2) < mpmath.mpf(10) ** -39  # equality at n = 1
        for m in (2, 3, 10, 1000, 10**5):
            value = S.gamma_ratio(m, arithmetic="mpmath")
            assert value <= mpmath.sqrt(mpmath.pi * m) / 2
            expected = mpmath.gamma(mpmath.mpf(m) / 2 + 1) / mpmath.gamma(mpmath.mpf(m - 1) / 2 + 1)
            assert abs(value / expected - 1) < mpmath.mpf(10) ** -38
            assert S.smoothness_constant(m, arithmetic="mpmath") == pytest.approx(
                2 * value / mpmath.sqrt(mpmath.pi), rel=1e-35
            )


# ---------------------------------------------------------------------------------------------------
# Laws of one coordinate (§1.5; §8 tests 1–2)


def test_coordinate_square_laws_are_the_stated_betas():
    for dim in (1, 2, 7):
        law = S.ball_coordinate_square_law(dim)
        assert law.args == (0.5, (dim + 1) / 2)
    assert S.sphere_coordinate_square_law(5).args == (0.5, 2.0)
    with pytest.raises(ValueError, match="d must be >= 2"):
        S.sphere_coordinate_square_law(1)
    with pytest.raises(ValueError, match="d must be >= 2"):
        S.sphere_marginal_cdf(0.3, 1)


def test_coordinate_square_laws_match_samplers():
    dim = 6
    v = sample_ball(rng_for("ks-ball"), 20_000, dim)
    u = sample_sphere(rng_for("ks-sphere"), 20_000, dim)
    assert stats.kstest(v[:, 0] ** 2, S.ball_coordinate_square_law(dim).cdf).pvalue > 1e-3
    assert stats.kstest(u[:, 0] ** 2, S.sphere_coordinate_square_law(dim).cdf).pvalue > 1e-3
    assert stats.kstest(v[:, 1], lambda t: S.ball_marginal_cdf(t, dim)).pvalue > 1e-3
    assert stats.kstest(u[:, 2], lambda t: S.sphere_marginal_cdf(t, dim)).pvalue > 1e-3
    assert stats.kstest(np.linalg.norm(v, axis=1), lambda r: S.ball_radius_cdf(r, dim)).pvalue > 1e-3


def test_ball_marginal_cdf_closed_forms_small_d():
    t = np.linspace(-1.2, 1.2, 97)
    inside = np.clip(t, -1, 1)
    np.testing.assert_allclose(S.ball_marginal_cdf(t, 1), (1 + inside) / 2, rtol=0, atol=1e-15)
    np.testing.assert_allclose(S.ball_marginal_cdf(t, 3), 0.5 + (3 * inside - inside**3) / 4, rtol=0, atol=1e-15)
    # sphere: d = 2 is the arcsine law, d = 3 is uniform on [−1, 1] (Archimedes)
    np.testing.assert_allclose(S.sphere_marginal_cdf(t, 2), 0.5 + np.arcsin(inside) / np.pi, rtol=0, atol=1e-15)
    np.testing.assert_allclose(S.sphere_marginal_cdf(t, 3), (1 + inside) / 2, rtol=0, atol=1e-15)
    assert S.ball_marginal_cdf(-1.0, 4) == 0.0 and S.ball_marginal_cdf(1.0, 4) == 1.0


def test_ball_marginal_cdf_matches_quadrature_and_scipy():
    with working_precision(40):
        for dim in (2, 5, 10):
            for t in ("-0.95", "-0.3", "0", "0.01", "0.7"):
                tt = mpmath.mpf(t)
                c = density_constant_mp(dim)
                exact = mpmath.quad(lambda s: c * ((1 - s) * (1 + s)) ** (mpmath.mpf(dim - 1) / 2), [-1, tt])
                got = S.ball_marginal_cdf(tt, dim)
                assert isinstance(got, mpmath.mpf)
                assert abs(got - exact) < mpmath.mpf(10) ** -35
                assert abs(S.ball_marginal_cdf(float(tt), dim) - float(exact)) < 1e-15
    law = stats.beta(0.5, 3.0)  # d = 5
    t = np.linspace(-0.99, 0.99, 41)
    np.testing.assert_allclose(S.ball_marginal_cdf(t, 5), 0.5 + np.sign(t) / 2 * law.cdf(t**2), atol=1e-14)


def test_marginal_cdf_tails_keep_relative_accuracy():
    # P(v_1 ≤ −0.9) for d = 100 is ~1.7e−38: float64 and mpmath agree in relative terms.
    with working_precision(80):  # the quadrature reference needs the extra digits near the endpoint
        c = density_constant_mp(100)
        exact = mpmath.quad(lambda s: c * ((1 - s) * (1 + s)) ** (mpmath.mpf(99) / 2), [-1, mpmath.mpf("-0.9")])
    with working_precision(40):
        mp_value = S.ball_marginal_cdf(mpmath.mpf("-0.9"), 100)
        assert abs(mp_value / exact - 1) < mpmath.mpf(10) ** -38
        assert 0 < mp_value < 1e-37
        assert S.ball_marginal_cdf(-0.9, 100) == pytest.approx(float(mp_value), rel=1e-12)
        # an mpmath tail far below float64's range
        tiny = S.ball_marginal_cdf(mpmath.mpf("-0.9"), 2000)
        assert 0 < tiny < mpmath.mpf(10) ** -700


def test_ball_marginal_pdf_is_the_derivative_and_integrates_to_one():
    with working_precision(40):
        for dim in (1, 2, 6):
            total = mpmath.quad(lambda s: S.ball_marginal_pdf(s, dim), [-1, 1])
            assert abs(total - 1) < mpmath.mpf(10) ** -30
            for t in ("-0.5", "0.2"):
                tt = mpmath.mpf(t)
                slope = mpmath.diff(lambda s: S.ball_marginal_cdf(s, dim), tt)
                assert abs(slope - S.ball_marginal_pdf(tt, dim)) < mpmath.mpf(10) ** -25
    assert S.ball_marginal_pdf(1.5, 3) == 0.0
    assert S.ball_marginal_pdf(0.0, 3) == pytest.approx(0.75, rel=1e-15)
    np.testing.assert_allclose(S.ball_marginal_pdf(np.array([0.0, 0.5]), 1), [0.5, 0.5])


def test_ball_radius_cdf():
    np.testing.assert_array_equal(S.ball_radius_cdf(np.array([-1.0, 0.0, 0.5, 1.0, 2.0]), 3), [0, 0, 0.125, 1, 1])
    with working_precision(40):
        assert S.ball_radius_cdf(mpmath.mpf("0.5"), 3) == mpmath.mpf(1) / 8


@given(st.floats(-2, 2), st.integers(1, 60))
@settings(max_examples=60, deadline=None)
def test_marginal_cdf_symmetry(t, dim):
    assert S.ball_marginal_cdf(t, dim) + S.ball_marginal_cdf(-t, dim) == pytest.approx(1.0, abs=2e-16)
    if dim >= 2:
        assert S.sphere_marginal_cdf(t, dim) + S.sphere_marginal_cdf(-t, dim) == pytest.approx(1.0, abs=2e-16)


# ---------------------------------------------------------------------------------------------------
# Characteristic function (dpzero Lemma C.2)


def test_ball_characteristic_closed_forms():
    t = np.array([1e-3, 0.5, 2.0, 7.0, 30.0])
    np.testing.assert_allclose(S.ball_characteristic(t, 1), np.sin(t) / t, rtol=1e-13)
    np.testing.assert_allclose(S.ball_characteristic(t, 3), 3 * (np.sin(t) - t * np.cos(t)) / t**3, rtol=1e-8)
    assert S.ball_characteristic(0.0, 5) == 1.0
    assert S.ball_characteristic(-2.0, 5) == S.ball_characteristic(2.0, 5)
    with working_precision(40):
        assert S.ball_characteristic(mpmath.mpf(0), 5) == 1
        tt = mpmath.mpf("2.5")
        exact = mpmath.sin(tt) / tt
        assert abs(S.ball_characteristic(tt, 1) - exact) < mpmath.mpf(10) ** -39


def test_ball_characteristic_matches_quadrature_and_float():
    with working_precision(40):
        for dim in (2, 5, 12):
            for t in ("0.3", "4", "11"):
                tt = mpmath.mpf(t)
                exact = quad_over_marginal(lambda s: mpmath.cos(tt * s), dim)
                got = S.ball_characteristic(tt, dim)
                assert abs(got - exact) < mpmath.mpf(10) ** -30
                assert abs(S.ball_characteristic(float(tt), dim) - float(exact)) < 1e-12
    with working_precision(40):
        for dim in (100, 1000, 10**4, 10**6):  # large d: scipy's hyp0f1 returns nan here
            for t in (0.3, 30.0, 2000.0):
                mp_value = S.ball_characteristic(mpmath.mpf(t), dim)
                assert S.ball_characteristic(t, dim) == pytest.approx(float(mp_value), rel=1e-14, abs=1e-300)
        # series representation 0F1(; d/2+1; −t²/4), evaluated independently
        for dim, t in ((300, 0.3), (1000, 10.0), (3000, 100.0)):
            series = mpmath.hyp0f1(mpmath.mpf(dim) / 2 + 1, -mpmath.mpf(t) ** 2 / 4)
            assert S.ball_characteristic(t, dim) == pytest.approx(float(series), rel=1e-14)
    # far beyond float64's range the value underflows to 0 instead of failing
    assert S.ball_characteristic(1e4, 10**4) == 0.0


def test_ball_characteristic_monte_carlo():
    dim, t, n = 4, 3.0, 100_000
    v = sample_ball(rng_for("char"), n, dim)
    samples = np.cos(t * v[:, 2])
    se = samples.std(ddof=1) / math.sqrt(n)
    assert abs(samples.mean() - S.ball_characteristic(t, dim)) < MC_SIGMAS * se


# ---------------------------------------------------------------------------------------------------
# Lemma A.1: symmetric difference (§8 test 22)


def test_symmetric_difference_fraction_bounds_on_a_grid():
    for dim in (1, 2, 3, 5, 10, 100, 1000):
        kappa = S.smoothness_constant(dim)
        for delta in (0.1, 1.0, 3.0):
            for ratio in np.linspace(0.0, 2.5, 26):
                distance = ratio * delta
                value = S.symmetric_difference_fraction(distance, delta, dim)
                assert value <= kappa * distance / delta * (1 + 1e-12) + 1e-300
                assert value <= math.sqrt(dim) * distance / delta * (1 + 1e-12) + 1e-300
                if ratio >= 2:
                    assert value == 2.0
    assert S.symmetric_difference_fraction(0.0, 1.0, 4) == 0.0


def test_symmetric_difference_fraction_monte_carlo_volume():
    # Points uniform in B(x, δ); the fraction outside B(y, δ) is half the symmetric difference fraction.
    # §8 test 22 asks for N = 1e6; 2e5 per case keeps the file fast and still resolves ~1e−3 (5 SE).
    for dim, distance in ((3, 0.4), (10, 0.25)):
        delta, n = 1.0, 200_000
        points = sample_ball(rng_for("volume", dim), n, dim, radius=delta)
        y = np.zeros(dim)
        y[0] = distance
        outside = np.linalg.norm(points - y, axis=1) > delta
        p_hat = outside.mean()
        p = S.symmetric_difference_fraction(distance, delta, dim) / 2
        assert abs(p_hat - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_symmetric_difference_fraction_mpmath():
    with working_precision(40):
        value = S.symmetric_difference_fraction(mpmath.mpf("0.3"), mpmath.mpf(1), 3)
        # d = 3: P(|v_1| ≤ s) = (3s − s³)/2 with s = 0.15
        s = mpmath.mpf("0.15")
        assert abs(value - (3 * s - s**3)) < mpmath.mpf(10) ** -39
        assert S.symmetric_difference_fraction(0.3, 1.0, 3) == pytest.approx(float(value), rel=1e-14)


# ---------------------------------------------------------------------------------------------------
# Ridge profiles


def test_ridge_profiles_values_and_slopes():
    r = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
    np.testing.assert_array_equal(S.ridge_profile(r, "abs"), np.abs(r))
    np.testing.assert_array_equal(S.ridge_profile(r, "capped", 1.0), [1, 1, 0.5, 0, 0.5, 1, 1])
    np.testing.assert_array_equal(S.ridge_profile(r, "wshape", 1.0), [1, 0, 0.5, 1, 0.5, 0, 1])
    # slopes, with the midpoint rule at kinks
    np.testing.assert_array_equal(S.ridge_profile_slope(r, "abs"), [-1, -1, -1, 0, 1, 1, 1])
    np.testing.assert_array_equal(S.ridge_profile_slope(r, "capped", 1.0), [0, -0.5, -1, 0, 1, 0.5, 0])
    np.testing.assert_array_equal(S.ridge_profile_slope(r, "wshape", 1.0), [-1, 0, 1, 0, -1, 0, 1])
    with working_precision(40):
        v = S.ridge_profile(mpmath.mpf("-0.25"), "wshape", 1.0)
        assert isinstance(v, mpmath.mpf) and v == mpmath.mpf("0.75")
        assert S.ridge_profile_slope(mpmath.mpf("0.5"), "capped", mpmath.mpf("0.5")) == mpmath.mpf("0.5")


@pytest.mark.parametrize("profile", S.RIDGE_PROFILES)
def test_ridge_profile_slope_matches_central_differences(profile):
    tau, h = 0.7, 1e-7
    for r in np.linspace(-2.13, 2.07, 23):
        if min(abs(r - b) for b in kinks(profile, tau)) < 1e-3:
            continue
        fd = (S.ridge_profile(r + h, profile, tau) - S.ridge_profile(r - h, profile, tau)) / (2 * h)
        assert fd == pytest.approx(S.ridge_profile_slope(r, profile, tau), abs=1e-8)
        assert S.ridge_profile_slope(r, profile, tau) == slope_direct(r, profile, tau)


# ---------------------------------------------------------------------------------------------------
# Smoothed ridge functions: closed forms against quadrature and Monte Carlo (§1.5, §8 tests 20–21)

QUAD_CASES = [
    ("abs", 1.0, 1, 0.5, "0.2"),
    ("abs", 1.0, 4, 0.5, "-0.37"),
    ("abs", 1.0, 7, 2.0, "0"),
    ("capped", 1.0, 3, 0.5, "0.8"),
    ("capped", 0.4, 6, 1.0, "-0.55"),
    ("capped", 1.0, 2, 0.3, "1.25"),
    ("wshape", 1.0, 5, 0.5, "0.9"),
    ("wshape", 0.6, 2, 1.5, "0.1"),
    ("wshape", 1.0, 10, 0.25, "-1.1"),
]


@pytest.mark.parametrize("profile, tau, dim, delta, r", QUAD_CASES)
def test_smoothed_ridge_matches_quadrature(profile, tau, dim, delta, r):
    with working_precision(40):
        rr, dd, tt = mpmath.mpf(r), mpmath.mpf(delta), mpmath.mpf(tau)
        breaks = [(b - rr) / dd for b in kinks(profile, tt)]
        slope = quad_over_marginal(lambda s: slope_direct(rr + dd * s, profile, tt), dim, breaks)
        value = quad_over_marginal(lambda s: profile_direct(rr + dd * s, profile, tt), dim, breaks)
        got_slope = S.smoothed_ridge_slope(rr, dd, dim, profile, tt)
        got_value = S.smoothed_ridge_value(rr, dd, dim, profile, tt)
        assert isinstance(got_slope, mpmath.mpf) and isinstance(got_value, mpmath.mpf)
        assert abs(got_slope - slope) < mpmath.mpf(10) ** -30
        assert abs(got_value - value) < mpmath.mpf(10) ** -30
        # float64 path against the mpmath path
        assert abs(S.smoothed_ridge_slope(float(rr), delta, dim, profile, tau) - float(got_slope)) < 1e-12
        assert abs(S.smoothed_ridge_value(float(rr), delta, dim, profile, tau) - float(got_value)) < 1e-12


@pytest.mark.parametrize("profile", S.RIDGE_PROFILES)
def test_smoothed_ridge_matches_monte_carlo(profile):
    dim, delta, tau, n = 5, 0.8, 0.6, 100_000
    v = sample_ball(rng_for("ridge-mc", profile), n, dim)
    a = sample_sphere(rng_for("ridge-mc-dir", profile), (), dim)
    projection = v @ a  # <a, v> has the law of v_1 for a unit a
    for r in (-0.9, -0.1, 0.35, 1.2):
        y = r + delta * projection
        slopes = S.ridge_profile_slope(y, profile, tau)
        values = S.ridge_profile(y, profile, tau)
        for samples, exact in (
            (slopes, S.smoothed_ridge_slope(r, delta, dim, profile, tau)),
            (values, S.smoothed_ridge_value(r, delta, dim, profile, tau)),
        ):
            se = samples.std(ddof=1) / math.sqrt(n)
            assert abs(samples.mean() - exact) < MC_SIGMAS * se + 1e-15


@pytest.mark.parametrize("profile", S.RIDGE_PROFILES)
def test_smoothed_slope_is_derivative_of_smoothed_value(profile):
    dim, delta, tau, h = 6, 0.5, 0.8, 1e-6
    for r in np.linspace(-1.7, 1.9, 19):
        fd = (S.smoothed_ridge_value(r + h, delta, dim, profile, tau) - S.smoothed_ridge_value(r - h, delta, dim, profile, tau)) / (2 * h)
        assert fd == pytest.approx(S.smoothed_ridge_slope(r, delta, dim, profile, tau), abs=1e-8)


def test_smoothed_abs_special_case_formula():
    # ∇ĥ_δ for h = L|<a,x> − c| is L·a·sign(r)·I_{min(1, r²/δ²)}(1/2, (d+1)/2)
    dim, delta = 7, 0.4
    r = np.linspace(-0.6, 0.6, 25)
    expected = np.sign(r) * special.betainc(0.5, (dim + 1) / 2, np.minimum(1.0, r**2 / delta**2))
    np.testing.assert_allclose(S.smoothed_ridge_slope(r, delta, dim), expected, rtol=0, atol=1e-15)


def test_smoothed_outside_the_kink_neighbourhood_is_unsmoothed():
    # Cor 2.3 check on F = L|x_1|: every gradient in B(y, δ) equals sign(y_1) when |y_1| ≥ δ, so ∇F̂ does too.
    delta = 0.3
    for r in (-2.0, -0.3, 0.3, 0.31, 5.0):
        assert S.smoothed_ridge_slope(r, delta, 4) == np.sign(r)
        assert S.smoothed_ridge_value(r, delta, 4) == pytest.approx(abs(r), rel=0, abs=1e-15)
    for r in (-1.31, 1.5, 3.0):  # capped, τ = 1: beyond τ + δ the function is the constant τ
        assert S.smoothed_ridge_slope(r, delta, 4, "capped", 1.0) == 0.0
        assert S.smoothed_ridge_value(r, delta, 4, "capped", 1.0) == pytest.approx(1.0, abs=1e-15)


# ---------------------------------------------------------------------------------------------------
# Lemma 2.2 (i)–(iii) on h = L|x_1| and the other profiles (§8 tests 21, 22)


def test_smoothed_abs_at_zero():
    L, delta = 2.5, 0.3
    for dim in (1, 2, 3, 10, 1000, 10**6):
        value = S.smoothed_abs_at_zero(L, delta, dim)
        assert value == pytest.approx(L * S.smoothed_ridge_value(0.0, delta, dim), rel=1e-13)
        assert value <= L * delta
    assert S.smoothed_abs_at_zero(1.0, 1.0, 1) == pytest.approx(0.5, rel=1e-15)
    assert S.smoothed_abs_at_zero(1.0, 1.0, 3) == pytest.approx(3 / 8, rel=1e-15)
    with working_precision(40):
        scale = mpmath.mpf(L) * mpmath.mpf(delta)
        exact = scale * mpmath.gamma(mpmath.mpf(7) / 2 + 1) / (mpmath.sqrt(mpmath.pi) * mpmath.gamma(mpmath.mpf(10) / 2))
        got = S.smoothed_abs_at_zero(mpmath.mpf(L), mpmath.mpf(delta), 7)
        assert abs(got / exact - 1) < mpmath.mpf(10) ** -38
        assert abs(S.smoothed_abs_at_zero(L, delta, 7) - float(got)) < 1e-15


@pytest.mark.parametrize("profile", S.RIDGE_PROFILES)
def test_lemma_2_2_ii_gap_at_most_l_delta(profile):
    L, tau = 1.7, 0.9
    grid = np.linspace(-3, 3, 601)
    for dim in (1, 2, 5, 50):
        for delta in (0.05, 0.5, 2.0):
            gap = np.abs(L * S.smoothed_ridge_value(grid, delta, dim, profile, tau) - L * S.ridge_profile(grid, profile, tau))
            assert np.all(gap <= L * delta * (1 + 1e-12))
            if profile == "abs":
                assert gap.max() == pytest.approx(S.smoothed_abs_at_zero(L, delta, dim), rel=1e-12)


@given(
    st.floats(-5, 5),
    st.floats(1e-3, 10),
    st.integers(1, 500),
    st.sampled_from(S.RIDGE_PROFILES),
    st.floats(0.01, 3),
)
@settings(max_examples=150, deadline=None)
def test_lemma_2_2_i_smoothed_slope_bounded(r, delta, dim, profile, tau):
    slope = S.smoothed_ridge_slope(r, delta, dim, profile, tau)
    assert abs(slope) <= 1.0
    value = S.smoothed_ridge_value(r, delta, dim, profile, tau)
    assert abs(value - S.ridge_profile(r, profile, tau)) <= delta * (1 + 1e-12)
    if profile == "abs":  # convex profile: Jensen gives ĥ ≥ h
        assert value >= abs(r) * (1 - 1e-15)


@pytest.mark.parametrize("dim", [1, 2, 3, 10, 100, 10**4])
def test_lemma_2_2_iii_sharp_smoothness_constant(dim):
    # The Lipschitz constant of ∇ĥ for h = L|x_1| is attained at 0 and equals κ_d L/δ.
    L, delta, h = 1.3, 0.7, 1e-6 * 0.7
    slope = lambda r: L * S.smoothed_ridge_slope(r, delta, dim)  # noqa: E731
    kappa = S.smoothness_constant(dim)
    at_zero = (slope(h) - slope(-h)) / (2 * h)
    assert at_zero == pytest.approx(kappa * L / delta, rel=1e-4)
    grid = np.linspace(-1.5 * delta, 1.5 * delta, 301)
    quotients = np.abs(np.diff(L * S.smoothed_ridge_slope(grid, delta, dim))) / np.diff(grid)
    assert np.all(quotients <= kappa * L / delta * (1 + 1e-9))
    assert kappa <= math.sqrt(dim)


# ---------------------------------------------------------------------------------------------------
# Lemma 2.2(iv): sphere estimators against the closed form (§8 test 20)


def test_lemma_2_2_iv_sphere_estimators_match_closed_form():
    dim, delta, L, n = 5, 0.6, 2.0, 100_000
    a = sample_sphere(rng_for("iv-a"), (), dim)
    c = 0.25
    x = 0.1 * np.arange(dim)
    h = lambda points: L * np.abs(points @ a - c)  # noqa: E731
    exact = L * a * S.smoothed_ridge_slope(x @ a - c, delta, dim)
    u = sample_sphere(rng_for("iv-u"), n, dim)
    one_point = (dim / delta) * h(x + delta * u)[:, None] * u
    two_point = (dim / (2 * delta)) * (h(x + delta * u) - h(x - delta * u))[:, None] * u
    for estimates in (one_point, two_point):
        z = (estimates.mean(axis=0) - exact) / (estimates.std(axis=0, ddof=1) / math.sqrt(n))
        assert np.all(np.abs(z) < 4.5)  # §8: Bonferroni threshold for d coordinates


# ---------------------------------------------------------------------------------------------------
# Precision: mpmath results are correct to the working precision


@pytest.mark.parametrize("profile", S.RIDGE_PROFILES)
def test_mpmath_results_correct_to_working_precision(profile):
    cases = [("0.999999999", "1.0", 3), ("1e-9", "0.5", 8), ("1.3", "0.31", 40), ("-0.7", "2", 1)]
    for r, delta, dim in cases:
        with working_precision(60):
            ref_slope = S.smoothed_ridge_slope(mpmath.mpf(r), mpmath.mpf(delta), dim, profile, mpmath.mpf("0.7"))
            ref_value = S.smoothed_ridge_value(mpmath.mpf(r), mpmath.mpf(delta), dim, profile, mpmath.mpf("0.7"))
        with working_precision(40):
            slope = S.smoothed_ridge_slope(mpmath.mpf(r), mpmath.mpf(delta), dim, profile, mpmath.mpf("0.7"))
            value = S.smoothed_ridge_value(mpmath.mpf(r), mpmath.mpf(delta), dim, profile, mpmath.mpf("0.7"))
            tol = mpmath.mpf(10) ** -39
            assert abs(slope - ref_slope) <= tol * max(1, abs(ref_slope))
            assert abs(value - ref_value) <= tol * max(1, abs(ref_value))


def test_mpmath_relative_accuracy_of_a_small_smoothed_slope():
    # abs profile near r = 0: slope ≈ κ_d r/δ must keep its relative digits (no 1 − 2F cancellation).
    with working_precision(60):
        ref = S.smoothed_ridge_slope(mpmath.mpf("1e-30"), mpmath.mpf(1), 5)
    with working_precision(40):
        got = S.smoothed_ridge_slope(mpmath.mpf("1e-30"), mpmath.mpf(1), 5)
        assert abs(got / ref - 1) < mpmath.mpf(10) ** -38
    assert S.smoothed_ridge_slope(1e-30, 1.0, 5) == pytest.approx(float(ref), rel=1e-13)


def test_arithmetic_keyword_and_array_inputs():
    with working_precision(40):
        forced = S.smoothed_ridge_value(0.25, 0.5, 3, arithmetic="mpmath")
        assert isinstance(forced, mpmath.mpf)
        as_float = S.smoothed_ridge_value(mpmath.mpf("0.25"), 0.5, 3, arithmetic="float64")
        assert isinstance(as_float, float)
        assert abs(forced - as_float) < 1e-15
        obj = np.array([mpmath.mpf("0.1"), mpmath.mpf("-0.4")], dtype=object)
        out = S.ball_marginal_cdf(obj, 4)
        assert out.dtype == object and all(isinstance(v, mpmath.mpf) for v in out)
        np.testing.assert_allclose(S.ball_marginal_cdf(np.array([0.1, -0.4]), 4), [float(v) for v in out], atol=1e-15)
        listed = S.smoothed_ridge_slope([mpmath.mpf("0.1"), 0.2], 1.0, 3)  # a list holding mpf stays mpmath
        assert listed.dtype == object and all(isinstance(v, mpmath.mpf) for v in listed)
    arr = S.smoothed_ridge_slope(np.zeros((2, 3)), 1.0, 2)
    assert arr.shape == (2, 3) and arr.dtype == np.float64
    assert isinstance(S.ball_characteristic(1.0, 3), float)


# ---------------------------------------------------------------------------------------------------
# Validation: errors name the parameter


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: S.smoothness_constant(0), ValueError, "d"),
        (lambda: S.smoothness_constant(2.5), TypeError, "d"),
        (lambda: S.gamma_ratio(0), ValueError, "n"),
        (lambda: S.smoothness_constant(3, arithmetic="float32"), ValueError, "arithmetic"),
        (lambda: S.ball_marginal_cdf(float("nan"), 3), ValueError, "t"),
        (lambda: S.ball_marginal_cdf(np.array([0.1, np.inf]), 3), ValueError, "t"),
        (lambda: S.ball_marginal_pdf(0.1, 0), ValueError, "d"),
        (lambda: S.ball_radius_cdf("x", 3), TypeError, "r"),
        (lambda: S.ball_characteristic(1.0, -1), ValueError, "d"),
        (lambda: S.symmetric_difference_fraction(-0.1, 1.0, 3), ValueError, "distance"),
        (lambda: S.symmetric_difference_fraction(0.1, 0.0, 3), ValueError, "smoothing_radius"),
        (lambda: S.smoothed_abs_at_zero(-1.0, 1.0, 3), ValueError, "lipschitz"),
        (lambda: S.smoothed_abs_at_zero(1.0, float("nan"), 3), ValueError, "smoothing_radius"),
        (lambda: S.ridge_profile(0.1, "square"), ValueError, "profile"),
        (lambda: S.ridge_profile(0.1, "capped", 0.0), ValueError, "tau"),
        (lambda: S.ridge_profile_slope(0.1, "wshape", -1.0), ValueError, "tau"),
        (lambda: S.smoothed_ridge_slope(0.1, -1.0, 3), ValueError, "smoothing_radius"),
        (lambda: S.smoothed_ridge_slope(float("nan"), 1.0, 3), ValueError, "r"),
        (lambda: S.smoothed_ridge_value(0.1, 1.0, 0), ValueError, "d"),
        (lambda: S.smoothed_ridge_value(0.1, 1.0, 3, "capped", float("inf")), ValueError, "tau"),
    ],
)
def test_bad_inputs_raise_naming_the_parameter(call, exc, name):
    with pytest.raises(exc, match=rf"^{name}\b"):
        call()


def test_mpmath_bessel_failure_is_reported():
    with working_precision(20):
        with pytest.raises(ArithmeticError, match="did not converge"):
            S.ball_characteristic(mpmath.mpf(10) ** 5, 10**4)
