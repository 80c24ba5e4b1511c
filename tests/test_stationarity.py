"""Goldstein stationarity (reference/stationarity.py): zo_o2nc Definition 2.1, Corollary 2.3, Lemma 4.6 proxy.

Independent computations used here:

* the minimum-norm point of a hull of k ≤ 3 points by enumerating its faces (vertices, edges, triangle);
* the same for larger k through scipy.optimize.nnls (Lawson–Hanson): with E = [G^T; 1^T] and f = e_{d+1},
  min_{u ≥ 0} ‖E u − f‖² = min_{s ≥ 0, λ ∈ simplex} s²‖G^T λ‖² + (s − 1)², whose λ = u/Σu is the hull's
  min-norm weight vector (a different active-set algorithm on a different formulation);
* the exact Goldstein values of one ridge written from the profiles' slopes by hand, the d = 1 smoothed slope
  ψ'(t) = (φ(t + s) − φ(t − s))/(2s) (piecewise linear: extremes at its breakpoints), and dense grids with a
  Lipschitz band for other d.
"""

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import optimize, special

from reference import smoothing
from reference.objectives import Linear, RidgeSum
from reference.precision import to_mp
from reference.rng import Streams, sample_ball
from reference.stationarity import (
    GoldsteinEstimate,
    MinNormPoint,
    exact_goldstein_ridge,
    goldstein_stationarity,
    min_norm_point,
    proxy_stationarity,
)

PROFILES = smoothing.RIDGE_PROFILES


def rng_for(*key):
    return Streams(20240611).generator("tests", "stationarity", *key)


# ---------------------------------------------------------------------------------------------------
# Independent min-norm computations


def brute_force_min_norm(points: np.ndarray) -> float:
    """Min norm over conv(points) for k ≤ 3 by enumerating faces."""
    k = points.shape[0]
    assert k <= 3
    scale = float(np.max(np.abs(points)))
    if scale == 0:
        return 0.0
    if scale != 1.0:  # work in units of the largest entry (no overflow in the Gram determinant)
        return scale * brute_force_min_norm(points / scale)
    best = min(float(np.linalg.norm(p)) for p in points)
    for i in range(k):
        for j in range(i + 1, k):
            p, q = points[i], points[j]
            edge = q - p
            length = float(edge @ edge)
            if length > 0:
                t = min(1.0, max(0.0, -float(p @ edge) / length))
                best = min(best, float(np.linalg.norm(p + t * edge)))
    if k == 3:
        p0, e1, e2 = points[0], points[1] - points[0], points[2] - points[0]
        gram = np.array([[e1 @ e1, e1 @ e2], [e1 @ e2, e2 @ e2]])
        if abs(np.linalg.det(gram)) > 1e-12 * max(1.0, float(np.trace(gram))) ** 2:
            b = np.linalg.solve(gram, -np.array([p0 @ e1, p0 @ e2]))
            if b[0] >= 0 and b[1] >= 0 and b.sum() <= 1:
                best = min(best, float(np.linalg.norm(p0 + b[0] * e1 + b[1] * e2)))
    return best


def nnls_min_norm(points: np.ndarray) -> float:
    k, d = points.shape
    matrix = np.vstack([points.T, np.ones((1, k))])
    target = np.zeros(d + 1)
    target[-1] = 1.0
    u, _ = optimize.nnls(matrix, target, maxiter=50 * k)
    weights = u / u.sum()
    return float(np.linalg.norm(weights @ points))


def row_norms(rows) -> np.ndarray:
    """Euclidean norms without overflow or underflow of the squares (math.hypot scales)."""
    return np.array([math.hypot(*row) for row in np.atleast_2d(rows)])


def assert_valid(result: MinNormPoint, gradients: np.ndarray, *, slack=1e-12):
    gradients = np.asarray(gradients, dtype=np.float64)
    scale = float(np.max(row_norms(gradients))) or 1.0
    assert isinstance(result, MinNormPoint)
    assert result.point.shape == (gradients.shape[1],)
    assert result.weights.shape == (gradients.shape[0],)
    assert np.all(result.weights >= 0)
    assert abs(result.weights.sum() - 1) <= 1e-12
    np.testing.assert_allclose(result.point, result.weights @ gradients, rtol=0, atol=1e-12 * scale)
    assert 0 <= result.lower <= result.norm <= result.upper
    tiny = 1e-322  # a few subnormal spacings: entries below 2^-1022 carry fewer significant bits
    assert result.norm == pytest.approx(row_norms(result.point)[0], rel=1e-15, abs=tiny)
    assert result.norm <= float(np.min(row_norms(gradients))) * (1 + 1e-15) + tiny
    assert result.norm <= float(row_norms(gradients.mean(axis=0))[0]) + slack * scale
    # Wolfe's optimality condition at the returned point: <g_i, p> >= ‖p‖² − tolerance for every row
    power = math.ldexp(1.0, math.frexp(float(np.max(np.abs(gradients))) or 1.0)[1])  # exact rescaling
    rows, point = gradients / power, result.point / power
    assert float(np.min(rows @ point)) >= float(point @ point) - slack * float(np.max(row_norms(rows))) ** 2
    # The certificate is tight (gap ~ u·R) unless 0 < ‖x*‖ ≲ √u·R: there the optimal weights are of order
    # ‖x*‖²/R² < u and float64 cannot resolve them; the gap is then about u·R²/‖x*‖ (still a valid interval).
    k, d = gradients.shape
    unresolved = 1e2 * (k + d) * 2.0**-53 * scale * (scale / result.norm) if result.norm > 0 else 0.0
    assert result.gap <= 1e-10 * scale + unresolved + 1e-320  # plus the subnormal allowance
    assert result.converged or result.norm <= 1e-6 * scale


# ---------------------------------------------------------------------------------------------------
# min_norm_point against brute force and NNLS


small_rows = st.integers(1, 3).flatmap(
    lambda k: st.integers(1, 4).flatmap(
        lambda d: hnp.arrays(np.float64, (k, d), elements=st.floats(-100, 100, allow_nan=False, width=64))
    )
)


@settings(max_examples=200, deadline=None)
@given(small_rows)
def test_wolfe_matches_face_enumeration(gradients):
    result = min_norm_point(gradients)
    expected = brute_force_min_norm(gradients)
    scale = max(1.0, float(np.max(np.abs(gradients))))
    assert result.lower <= expected + 1e-12 * scale
    assert expected <= result.upper + 1e-12 * scale
    assert result.norm == pytest.approx(expected, abs=1e-10 * scale)


def _family(rng, kind, k, d):
    if kind == "gaussian":
        return rng.standard_normal((k, d))
    if kind == "shifted":
        return rng.standard_normal((k, d)) + 2 * rng.standard_normal(d)
    if kind == "sphere_cap":  # unit vectors shifted along e_1: the hull's nearest point is on a curved face
        g = rng.standard_normal((k, d))
        return g / np.linalg.norm(g, axis=1, keepdims=True) + rng.uniform(0.8, 1.2) * np.eye(d)[0]
    if kind == "duplicates":
        base = rng.standard_normal((max(1, k // 3), d))
        return np.vstack([base, base * rng.uniform(0.5, 2, (base.shape[0], 1)), base])
    if kind == "integer_grid":  # many exact ties and affinely dependent rows
        return rng.integers(-2, 3, (k, d)).astype(np.float64) + rng.integers(0, 3) * np.eye(d)[0]
    # nearly rank one plus an offset: nearly collinear rows
    return np.outer(rng.standard_normal(k), rng.standard_normal(d)) + 1e-9 * rng.standard_normal((k, d)) + rng.standard_normal(d)


@pytest.mark.parametrize("kind", ["gaussian", "shifted", "sphere_cap", "duplicates", "integer_grid", "near_collinear"])
def test_wolfe_matches_nnls(kind):
    rng = rng_for("nnls", kind)
    for _ in range(60):
        k, d = int(rng.integers(1, 50)), int(rng.integers(1, 8))
        gradients = _family(rng, kind, k, d)
        result = min_norm_point(gradients)
        expected = nnls_min_norm(gradients)
        scale = float(np.max(np.abs(gradients)))
        assert result.lower - 1e-9 * scale <= expected <= result.upper + 1e-9 * scale
        assert_valid(result, gradients, slack=1e-10)


hull_rows = st.integers(1, 12).flatmap(
    lambda k: st.integers(1, 5).flatmap(
        lambda d: st.one_of(
            hnp.arrays(np.float64, (k, d), elements=st.floats(-1e3, 1e3, allow_nan=False, width=64)),
            hnp.arrays(np.float64, (k, d), elements=st.integers(-3, 3).map(float)),  # ties and degeneracy
            hnp.arrays(np.float64, (k, d), elements=st.floats(-1e300, 1e300, allow_nan=False, width=64)),
            hnp.arrays(np.float64, (k, d), elements=st.floats(-1e-300, 1e-300, allow_nan=False, width=64)),
        )
    )
)


@settings(max_examples=150, deadline=None)
@given(hull_rows)
def test_min_norm_point_properties(gradients):
    result = min_norm_point(gradients)
    assert_valid(result, gradients, slack=1e-10)
    # the certified interval contains the min norm found independently (NNLS, in units of the largest entry)
    scale = float(np.max(np.abs(gradients)))
    if scale > 0:
        expected = nnls_min_norm(gradients / scale) * scale
        assert result.lower <= expected * (1 + 1e-9) + 1e-9 * scale
        assert expected <= result.upper + 1e-9 * scale


def test_special_shapes_and_degenerate_inputs():
    one = min_norm_point([[3.0, -4.0]])  # k = 1
    assert one.norm == 5.0 and one.lower <= 5.0 <= one.upper and one.weights.tolist() == [1.0]
    assert one.gap <= 1e-13
    zero = min_norm_point(np.zeros((4, 3)))  # zero gradients only
    assert zero.norm == zero.lower == zero.upper == 0.0 and zero.weights.sum() == 1.0
    with_zero = min_norm_point([[1.0, 2.0], [0.0, 0.0], [5.0, 5.0]])  # a zero row is the answer
    assert with_zero.norm == 0.0 and with_zero.weights[1] == 1.0
    # d = 1: the hull is an interval
    assert min_norm_point([[2.0], [3.0], [5.0]]).norm == 2.0
    mixed = min_norm_point([[-2.0], [3.0]])
    assert mixed.norm <= 1e-15 and mixed.lower == 0.0
    assert mixed.weights == pytest.approx([0.6, 0.4], abs=1e-15)
    # duplicates and collinear rows
    dup = min_norm_point([[1.0, 1.0]] * 50 + [[2.0, 2.0]] * 50)
    assert dup.norm == pytest.approx(math.sqrt(2), rel=1e-15) and dup.gap <= 1e-13
    collinear = min_norm_point([[1.0, 1.0], [2.0, 2.0], [-1.0, -1.0], [-3.0, -3.0]])
    assert collinear.norm <= 1e-15 and collinear.lower == 0.0
    segment = min_norm_point([[1.0, 1.0], [1.0, -1.0]] * 20)
    assert segment.norm == pytest.approx(1.0, rel=1e-15) and segment.lower == pytest.approx(1.0, rel=1e-14)
    # scale invariance by powers of two, far from 1
    base = np.array([[1.0, 1.0], [1.0, -1.0], [3.0, 0.5]])
    for exponent in (-1000, -500, 500, 1000):
        scaled = min_norm_point(np.ldexp(base, exponent))
        assert scaled.norm == math.ldexp(1.0, exponent)
        assert scaled.lower <= math.ldexp(1.0, exponent) <= scaled.upper


def test_certificate_interval_is_tight_and_contains_the_exact_value():
    # conv{(1, t) : t ∈ {−1, 0.5, 2}} ∪ {(3, 0)}: min norm 1 at (1, 0)
    result = min_norm_point([[1.0, -1.0], [1.0, 0.5], [1.0, 2.0], [3.0, 0.0]])
    assert result.lower <= 1.0 <= result.upper
    assert result.gap <= 1e-13
    np.testing.assert_allclose(result.point, [1.0, 0.0], atol=1e-15)
    assert result.support.tolist() in ([0, 1], [0, 2])


def test_non_convergence_is_reported_and_the_interval_stays_valid():
    gradients = _family(rng_for("nonconv"), "sphere_cap", 400, 10)
    exact = min_norm_point(gradients)
    capped = min_norm_point(gradients, max_iterations=1)
    assert capped.iterations == 1 and not capped.converged
    assert capped.lower <= exact.norm <= capped.upper
    assert capped.gap > exact.gap
    loose = min_norm_point(gradients, tolerance=1e-2)
    assert loose.lower <= exact.norm <= loose.upper and loose.iterations <= exact.iterations


def test_large_instance_is_fast():
    rng = rng_for("large")
    gradients = rng.standard_normal((10_000, 50)) + 0.3
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        result = min_norm_point(gradients)
        timings.append(time.perf_counter() - start)
    assert min(timings) < 0.5
    assert result.converged and result.gap <= 1e-11 * float(np.max(np.linalg.norm(gradients, axis=1)))
    shifted = rng.standard_normal((10_000, 50)) + 1.0  # the origin outside the hull
    result = min_norm_point(shifted)
    assert result.converged and result.lower > 0
    assert result.lower <= nnls_min_norm(shifted[:2000]) + 1e-12  # a sub-hull's min norm is not smaller


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(gradients=[1.0, 2.0]), ValueError, "gradients must have 2 dimension"),
        (dict(gradients=np.zeros((2, 2, 2))), ValueError, "gradients must have 2 dimension"),
        (dict(gradients=np.zeros((0, 3))), ValueError, "gradients must have shape"),
        (dict(gradients=np.zeros((3, 0))), ValueError, "gradients must have shape"),
        (dict(gradients=[[1.0, np.nan]]), ValueError, "gradients must contain only finite"),
        (dict(gradients=[[1.0, np.inf]]), ValueError, "gradients must contain only finite"),
        (dict(gradients=[["a", "b"]]), TypeError, "gradients must be an array of real numbers"),
        (dict(gradients=to_mp(np.ones((2, 2)))), TypeError, "gradients must be float64"),
        (dict(gradients=[[1.0]], tolerance=0.0), ValueError, "tolerance must be > 0"),
        (dict(gradients=[[1.0]], tolerance=0.9), ValueError, "tolerance must be <= 0.5"),
        (dict(gradients=[[1.0]], tolerance=float("nan")), ValueError, "tolerance must be a finite"),
        (dict(gradients=[[1.0]], max_iterations=0), ValueError, "max_iterations must be >= 1"),
        (dict(gradients=[[1.0]], max_iterations=2.5), TypeError, "max_iterations must be an integer"),
    ],
)
def test_min_norm_point_validation(kwargs, error, message):
    with pytest.raises(error, match=message):
        min_norm_point(**kwargs)


# ---------------------------------------------------------------------------------------------------
# Exact values for one ridge


def exact_nonsmooth_by_hand(r, delta, profile, tau):
    """Definition 2.1 for L = 1, from the slope pattern of each profile (the docstring's case list)."""
    if profile == "abs":
        return 0.0 if abs(r) < delta else 1.0
    if profile == "capped":
        return 0.0 if (abs(r) < delta or abs(r) + delta > tau) else 1.0
    return 0.0 if any(r - delta < b < r + delta for b in (-tau, 0.0, tau)) else 1.0


@pytest.mark.parametrize("profile", PROFILES)
def test_exact_nonsmooth_ridge_matches_slope_pattern(profile):
    tau = 1.0
    for delta in (0.1, 0.25, 0.5, 2.0):
        for r in np.linspace(-3, 3, 241):
            value = exact_goldstein_ridge(float(r), delta, profile=profile, tau=tau, lipschitz=2.5)
            assert value == 2.5 * exact_nonsmooth_by_hand(float(r), delta, profile, tau)


def test_exact_nonsmooth_ridge_boundaries_are_decided_exactly():
    # |r| = δ: the open interval (0, 2δ) sees only slope +1
    assert exact_goldstein_ridge(0.5, 0.5) == 1.0
    assert exact_goldstein_ridge(-0.5, 0.5) == 1.0
    assert exact_goldstein_ridge(np.nextafter(0.5, 0), 0.5) == 0.0
    # capped: r + δ = τ exactly (0.7 + 0.3 rounds to 1.0 in float64 but is below 1 in exact arithmetic)
    assert 0.7 + 0.3 == 1.0 and exact_goldstein_ridge(0.7, 0.3, profile="capped", tau=1.0) == 1.0
    assert exact_goldstein_ridge(0.75, 0.25, profile="capped", tau=1.0) == 1.0  # (0.5, 1) has slopes +1 only
    assert exact_goldstein_ridge(0.75, np.nextafter(0.25, 1), profile="capped", tau=1.0) == 0.0
    # wshape: a kink on the boundary of the open interval does not count
    assert exact_goldstein_ridge(1.5, 0.5, profile="wshape", tau=1.0) == 1.0
    assert exact_goldstein_ridge(1.5, np.nextafter(0.5, 1), profile="wshape", tau=1.0) == 0.0


def smoothed_d1_range(low, high, s, profile, tau):
    """Min and max of ψ'(t) = (φ(t + s) − φ(t − s))/(2s) on [low, high] (d = 1: piecewise linear)."""
    kinks = [0.0] if profile == "abs" else [-tau, 0.0, tau]
    candidates = [low, high] + [b + e for b in kinks for e in (-s, s) if low < b + e < high]
    phi = lambda t: smoothing.ridge_profile(t, profile, tau)  # noqa: E731
    values = [(phi(t + s) - phi(t - s)) / (2 * s) for t in candidates]
    return min(values), max(values)


def distance_to_segment(low, high):
    return 0.0 if low <= 0 <= high else min(abs(low), abs(high))


@pytest.mark.parametrize("profile", PROFILES)
def test_exact_smoothed_ridge_d1_closed_form(profile):
    for s, delta, tau in [(0.5, 0.3, 1.0), (0.2, 0.5, 1.0), (1.5, 0.4, 1.0), (0.3, 0.3, 0.7)]:
        for r in np.linspace(-3, 3, 121):
            low, high = smoothed_d1_range(r - delta, r + delta, s, profile, tau)
            expected = distance_to_segment(low, high)
            value = exact_goldstein_ridge(float(r), delta, profile=profile, tau=tau, smoothing_radius=s, d=1)
            assert value == pytest.approx(expected, abs=1e-14)


def test_exact_smoothed_abs_closed_form():
    # ψ' = sign(t) I_{t²/s²}(1/2, (d+1)/2) is increasing: the value is |ψ'(|r| − δ)| for |r| > δ, else 0.
    for d in (1, 2, 3, 10, 100):
        for s in (0.2, 1.0):
            for r in np.linspace(-2, 2, 41):
                for delta in (0.1, 0.5):
                    t = abs(r) - delta
                    expected = 0.0 if t <= 0 else special.betainc(0.5, (d + 1) / 2, min(1.0, t * t / (s * s)))
                    value = exact_goldstein_ridge(float(r), delta, smoothing_radius=s, d=d, lipschitz=3.0)
                    assert value == pytest.approx(3.0 * expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("profile", ["capped", "wshape"])
@pytest.mark.parametrize("d", [2, 5, 20])
def test_exact_smoothed_ridge_against_dense_grid(profile, d):
    """The critical-point search against 10001 grid points: grid ≥ exact ≥ grid − Λh/2 (Λ = Lipschitz const of ψ')."""
    tau = 1.0
    density_max = math.exp(math.lgamma(d / 2 + 1) - math.lgamma((d + 1) / 2)) / math.sqrt(math.pi)
    for s, delta in [(0.5, 0.3), (1.5, 0.4), (0.3, 1.0)]:
        lipschitz_slope = 3 * 2 * density_max / s
        for r in np.linspace(-2.5, 2.5, 21):
            grid = np.linspace(r - delta, r + delta, 10001)
            slopes = smoothing.smoothed_ridge_slope(grid, s, d, profile, tau)
            grid_value = distance_to_segment(slopes.min(), slopes.max())
            value = exact_goldstein_ridge(float(r), delta, profile=profile, tau=tau, smoothing_radius=s, d=d)
            assert value <= grid_value + 1e-14
            assert value >= grid_value - lipschitz_slope * (grid[1] - grid[0]) / 2 - 1e-14


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(residual=float("nan"), radius=1.0), ValueError, "residual must be a finite"),
        (dict(residual=0.0, radius=0.0), ValueError, "radius must be > 0"),
        (dict(residual=0.0, radius=-1.0), ValueError, "radius must be > 0"),
        (dict(residual=0.0, radius=1.0, profile="huber"), ValueError, "profile must be one of"),
        (dict(residual=0.0, radius=1.0, tau=0.0), ValueError, "tau must be > 0"),
        (dict(residual=0.0, radius=1.0, lipschitz=-1.0), ValueError, "lipschitz must be >= 0"),
        (dict(residual=0.0, radius=1.0, smoothing_radius=0.0, d=2), ValueError, "smoothing_radius must be > 0"),
        (dict(residual=0.0, radius=1.0, smoothing_radius=1.0), ValueError, "d .*required"),
        (dict(residual=0.0, radius=1.0, d=3), ValueError, "d is only used with smoothing_radius"),
        (dict(residual=0.0, radius=1.0, smoothing_radius=1.0, d=0), ValueError, "d must be >= 1"),
        (dict(residual="0", radius=1.0), TypeError, "residual must be a real number"),
        (dict(residual=to_mp(np.array([0.5]))[0], radius=1.0), TypeError, "residual must be a float64"),
    ],
)
def test_exact_goldstein_ridge_validation(kwargs, error, message):
    with pytest.raises(error, match=message):
        exact_goldstein_ridge(**kwargs)


# ---------------------------------------------------------------------------------------------------
# Corollary 2.3: ‖∇F̂_δ(x)‖_δ ≤ ε implies ‖∇F(x)‖_{2δ} ≤ ε


@pytest.mark.parametrize("profile", PROFILES)
def test_corollary_2_3_on_a_grid(profile):
    """For every ε ≥ 0 the implication holds iff ‖∇F(x)‖_{2δ} ≤ ‖∇F̂_δ(x)‖_δ; check both forms on a grid of x."""
    lipschitz, tau = 2.0, 1.0
    epsilons = np.linspace(0, lipschitz, 41)
    for d in (1, 2, 5, 20):
        for delta in (0.1, 0.3, 0.6):
            for x1 in np.linspace(-3, 3, 73):
                smoothed = exact_goldstein_ridge(
                    float(x1), delta, profile=profile, tau=tau, lipschitz=lipschitz, smoothing_radius=delta, d=d
                )
                plain = exact_goldstein_ridge(float(x1), 2 * delta, profile=profile, tau=tau, lipschitz=lipschitz)
                assert plain <= smoothed + 1e-12
                for eps in epsilons:
                    if smoothed <= eps:
                        assert plain <= eps


def test_corollary_2_3_is_tight_for_abs_and_needs_radius_2delta():
    """F = L|x_1|: ‖∇F(x)‖_{2δ} = L = ‖∇F̂_δ(x)‖_δ for |x_1| ≥ 2δ; with radius δ instead of 2δ it fails."""
    lipschitz, delta = 1.5, 0.2
    for d in (1, 3, 10):
        for x1 in (0.4, 0.5, 1.0, -0.7):
            smoothed = exact_goldstein_ridge(x1, delta, lipschitz=lipschitz, smoothing_radius=delta, d=d)
            assert smoothed == lipschitz == exact_goldstein_ridge(x1, 2 * delta, lipschitz=lipschitz)
        x1 = 1.5 * delta  # ‖∇F(x)‖_δ = L but ‖∇F̂_δ(x)‖_δ = L·I_{1/4}(1/2, (d+1)/2) < L
        smoothed = exact_goldstein_ridge(x1, delta, lipschitz=lipschitz, smoothing_radius=delta, d=d)
        assert exact_goldstein_ridge(x1, delta, lipschitz=lipschitz) == lipschitz > smoothed + 0.1
        assert exact_goldstein_ridge(x1, 2 * delta, lipschitz=lipschitz) == 0.0


# ---------------------------------------------------------------------------------------------------
# goldstein_stationarity: an upper bound, close to the exact value with many samples


def ridge(d, profile, lipschitz=1.0, tau=1.0, seed=0):
    a = rng_for("direction", d, seed).standard_normal(d)
    a /= np.linalg.norm(a)
    return RidgeSum(a[None, :], [0.25], lipschitz=lipschitz, profile=profile, tau=tau), a


def point_with_residual(a, residual, rng):
    """A point x with <a, x> − 0.25 = residual, plus a random component orthogonal to a."""
    v = rng.standard_normal(a.shape[0])
    v -= (v @ a) * a
    return (0.25 + residual) * a + v


def smallest_piece_share(r, delta, d, profile, tau):
    """min over the pieces of φ met by (r − δ, r + δ) of the share of the ball B(x, δ) whose residual falls there."""
    kinks = [0.0] if profile == "abs" else [-tau, 0.0, tau]
    edges = [-np.inf] + kinks + [np.inf]
    shares = []
    for left, right in zip(edges[:-1], edges[1:]):
        lo, hi = max(left, r - delta), min(right, r + delta)
        if lo < hi:
            cdf = smoothing.ball_marginal_cdf(np.array([(lo - r) / delta, (hi - r) / delta]), d)
            shares.append(cdf[1] - cdf[0])
    return min(shares)


@pytest.mark.parametrize("profile", PROFILES)
def test_estimate_bounds_exact_nonsmooth_value(profile):
    d, delta, lipschitz = 3, 0.4, 2.0
    objective, a = ridge(d, profile, lipschitz)
    equal = 0
    for i, r in enumerate((0.0, 0.2, 0.39, 0.5, 0.75, 0.9, 1.3, 1.7, 2.5)):
        rng = rng_for("nonsmooth", profile, i)
        x = point_with_residual(a, r, rng)
        residual = float(a @ x - 0.25)
        exact = exact_goldstein_ridge(residual, delta, profile=profile, lipschitz=lipschitz)
        estimate = goldstein_stationarity(objective.empirical_gradient, x, delta, samples=400, rng=rng)
        assert isinstance(estimate, GoldsteinEstimate)
        assert estimate.upper_bound >= exact - 1e-12
        if smallest_piece_share(residual, delta, d, profile, 1.0) >= 0.03:  # missed with probability < 1e-5
            assert estimate.upper_bound <= exact + 1e-12
            equal += 1
    assert equal >= 6


@pytest.mark.parametrize("profile", PROFILES)
def test_estimate_bounds_exact_smoothed_value_and_converges(profile):
    d, delta, s, lipschitz = 2, 0.4, 0.5, 1.0
    objective, a = ridge(d, profile, lipschitz, seed=1)
    for i, r in enumerate((0.1, 0.45, 0.95, 1.4)):
        rng = rng_for("smoothed", profile, i)
        x = point_with_residual(a, r, rng)
        exact = exact_goldstein_ridge(
            float(a @ x - 0.25), delta, profile=profile, lipschitz=lipschitz, smoothing_radius=s, d=d
        )
        oracle = lambda y: objective.empirical_smoothed_gradient(y, s)  # noqa: E731
        few = goldstein_stationarity(oracle, x, delta, samples=20, rng=rng)
        many = goldstein_stationarity(oracle, x, delta, samples=1500, rng=rng)
        assert few.upper_bound >= exact - 1e-12 and many.upper_bound >= exact - 1e-12
        assert many.upper_bound <= exact + 0.03 * lipschitz


def test_estimate_with_center_is_at_most_the_gradient_norm_and_samples_zero_gives_it():
    objective = RidgeSum.random(4, 6, rng_for("sum"), profile="wshape")
    x = np.array([0.3, -0.2, 0.1, 0.5])
    g = objective.empirical_gradient(x)
    only_center = goldstein_stationarity(objective.empirical_gradient, x, 0.1, samples=0, rng=rng_for("c0"))
    assert only_center.points.shape == (1, 4) and only_center.samples == 0
    assert only_center.hull.lower <= np.linalg.norm(g) <= only_center.upper_bound <= np.linalg.norm(g) * (1 + 1e-13)
    estimate = goldstein_stationarity(objective.empirical_gradient, x, 0.1, samples=50, rng=rng_for("c1"))
    assert estimate.upper_bound <= np.linalg.norm(g) * (1 + 1e-13)
    larger = goldstein_stationarity(objective.empirical_gradient, x, 1.0, samples=300, rng=rng_for("c2"))
    assert larger.upper_bound <= np.linalg.norm(g) * (1 + 1e-13)


def test_center_on_a_kink_uses_the_clarke_midpoint():
    """F = |x_1| at x_1 = 0: the oracle's midpoint subgradient is 0, and the exact value is 0."""
    objective = RidgeSum(np.array([[1.0, 0.0]]), [0.0])
    estimate = goldstein_stationarity(objective.empirical_gradient, np.zeros(2), 0.5, samples=0, rng=rng_for("kink"))
    assert estimate.upper_bound == 0.0 == exact_goldstein_ridge(0.0, 0.5)


def test_points_lie_in_the_open_ball_and_follow_the_draw_schedule():
    d, radius = 5, 0.3
    x = np.linspace(-1, 1, d)
    estimate = goldstein_stationarity(Linear(np.eye(d)[:1]).empirical_gradient, x, radius, samples=200, rng=rng_for("draws"))
    assert estimate.points.shape == (201, d) and estimate.gradients.shape == (201, d)
    np.testing.assert_array_equal(estimate.points[0], x)
    assert np.all(np.linalg.norm(estimate.points - x, axis=1) < radius)
    np.testing.assert_array_equal(estimate.points[1:], x + sample_ball(rng_for("draws"), 200, d, radius))
    # a constant gradient: the bound is exactly its norm
    assert estimate.hull.lower <= 1.0 <= estimate.upper_bound <= 1.0 + 1e-14
    without = goldstein_stationarity(
        Linear(np.eye(d)[:1]).empirical_gradient, x, radius, samples=10, rng=rng_for("draws"), include_center=False
    )
    assert without.points.shape == (10, d) and not without.include_center
    np.testing.assert_array_equal(without.points, x + sample_ball(rng_for("draws"), 10, d, radius))


def test_estimate_is_monotone_in_the_samples_it_sees():
    objective = RidgeSum.random(3, 5, rng_for("mono"), profile="capped")
    x = np.array([0.2, 0.1, -0.3])
    full = goldstein_stationarity(objective.empirical_gradient, x, 0.5, samples=300, rng=rng_for("mono", 1))
    for m in (1, 10, 100):
        subset = min_norm_point(full.gradients[: m + 1])
        assert full.hull.lower <= subset.upper
        assert full.upper_bound <= subset.upper + 1e-13


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(gradient=3.0), TypeError, "gradient must be a callable"),
        (dict(x=[[0.0, 0.0]]), ValueError, "x must have 1 dimension"),
        (dict(x=[np.nan, 0.0]), ValueError, "x must contain only finite"),
        (dict(x=to_mp(np.zeros(2))), TypeError, "x must be float64"),
        (dict(radius=0.0), ValueError, "radius must be > 0"),
        (dict(radius=float("inf")), ValueError, "radius must be a finite"),
        (dict(radius=1e-20, x=[1e6, 0.0]), ValueError, "radius must be well above the float64 spacing"),
        (dict(samples=-1), ValueError, "samples must be >= 0"),
        (dict(samples=0, include_center=False), ValueError, "samples must be >= 1"),
        (dict(samples=2.0), TypeError, "samples must be an integer"),
        (dict(rng=np.random.RandomState(0)), TypeError, "rng must be a numpy.random.Generator"),
        (dict(include_center=1), TypeError, "include_center must be a bool"),
        (dict(gradient=lambda y: np.zeros(3)), ValueError, r"gradient must return a vector of shape \(2,\)"),
        (dict(gradient=lambda y: np.array([np.nan, 0.0])), ValueError, "gradient returned a non-finite"),
        (dict(gradient=lambda y: "ab"), TypeError, "gradient must return a real vector"),
    ],
)
def test_goldstein_stationarity_validation(kwargs, error, message):
    args = dict(gradient=lambda y: y, x=[0.5, 0.0], radius=0.1, samples=5, rng=rng_for("validation"))
    args.update(kwargs)
    with pytest.raises(error, match=message):
        goldstein_stationarity(args.pop("gradient"), args.pop("x"), args.pop("radius"), **args)


# ---------------------------------------------------------------------------------------------------
# proxy_stationarity: ‖(1/T) Σ_t ∇F̂_δ(w_t)‖ (proof of Lemma 4.6, Corollary 4.7)


def test_proxy_is_the_norm_of_the_mean_smoothed_gradient():
    objective = RidgeSum.random(3, 4, rng_for("proxy"), profile="capped")
    points = rng_for("proxy", "points").standard_normal((7, 3))
    delta = 0.3
    proxy = proxy_stationarity(lambda w: objective.empirical_smoothed_gradient(w, delta), points)
    mean = np.mean([objective.empirical_smoothed_gradient(w, delta) for w in points], axis=0)
    np.testing.assert_allclose(proxy.mean_gradient, mean, rtol=0, atol=1e-15)
    assert proxy.value == pytest.approx(np.linalg.norm(mean), rel=1e-15)
    np.testing.assert_allclose(proxy.center, points.mean(axis=0), rtol=0, atol=1e-15)
    assert proxy.spread == pytest.approx(np.max(np.linalg.norm(points - points.mean(axis=0), axis=1)), rel=1e-15)
    centered = proxy_stationarity(lambda w: objective.empirical_smoothed_gradient(w, delta), points, center=np.zeros(3))
    assert centered.spread == pytest.approx(np.max(np.linalg.norm(points, axis=1)), rel=1e-15)


@pytest.mark.parametrize("profile", PROFILES)
def test_proxy_upper_bounds_the_2delta_stationarity_of_the_average(profile):
    """Points within δ of their mean (as in Algorithm 3): proxy ≥ ‖∇F(w̄)‖_{2δ}, exact for one ridge."""
    d, delta, lipschitz = 3, 0.25, 1.5
    objective, a = ridge(d, profile, lipschitz, seed=2)
    oracle = lambda w: objective.empirical_smoothed_gradient(w, delta)  # noqa: E731
    for i, r in enumerate(np.linspace(-2, 2, 17)):
        rng = rng_for("proxy_bound", profile, i)
        center = point_with_residual(a, float(r), rng)
        offsets = sample_ball(rng, 8, d, delta)
        points = center + offsets - offsets.mean(axis=0)  # mean exactly (to rounding) the centre
        proxy = proxy_stationarity(oracle, points)
        rbar = float(a @ proxy.center - 0.25)
        radius = delta + proxy.spread
        exact = exact_goldstein_ridge(rbar, radius, profile=profile, lipschitz=lipschitz)
        assert proxy.value >= exact - 1e-12
        if proxy.spread <= delta:
            assert proxy.value >= exact_goldstein_ridge(rbar, 2 * delta, profile=profile, lipschitz=lipschitz) - 1e-12


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(smoothed_gradient=None), TypeError, "smoothed_gradient must be a callable"),
        (dict(points=[1.0, 2.0]), ValueError, "points must have 2 dimension"),
        (dict(points=np.zeros((0, 2))), ValueError, "points must have shape"),
        (dict(points=[[np.inf, 0.0]]), ValueError, "points must contain only finite"),
        (dict(center=[0.0]), ValueError, r"center must have shape \(2\)"),
        (dict(smoothed_gradient=lambda w: np.zeros(5)), ValueError, "smoothed_gradient must return a vector"),
    ],
)
def test_proxy_stationarity_validation(kwargs, error, message):
    args = dict(smoothed_gradient=lambda w: w, points=[[0.0, 1.0], [1.0, 0.0]])
    args.update(kwargs)
    with pytest.raises(error, match=message):
        proxy_stationarity(args.pop("smoothed_gradient"), args.pop("points"), **args)
