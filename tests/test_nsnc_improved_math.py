"""Unit tests of the nsnc_improved building blocks that the claims rely on.

* ``first_order_estimate`` (nsnc_improved Algorithm 5) in reference/estimators.py and its fast twin: shapes, the
  mpmath path, refusal of bad input naming the parameter, agreement with a hand computation, inputs never mutated,
  leading replicate axes in the twin, fast == reference on the same perturbations;
* the exact 1-D helpers of proofs_checks/claims/nsnc_improved/generalization.py (Goldstein norms of piecewise-linear
  functions and the zero-norm probability of the Proposition 5.1 counterexample), and the printed NODE loop of
  proofs_checks/claims/nsnc_improved/tree.py.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from proofs_checks.claims.nsnc_improved.generalization import (
    clarke_slopes_in_ball,
    goldstein_norm_1d,
    zero_norm_probability,
)
from proofs_checks.claims.nsnc_improved.tree import printed_node
from reference import estimators as ref
from reference.fast import estimators as fast
from reference.mechanisms import tree_node
from reference.precision import is_mp, to_mp, working_precision
from reference.rng import sample_ball

BACKENDS = [pytest.param(ref, id="reference"), pytest.param(fast, id="fast")]


def ridge_gradient(x, z):
    """∇|<a, x> − c| = sign(<a, x> − c)·a, z = (a, c): one point and row (mpmath or float64) or stacked float64."""
    if is_mp(x) or is_mp(z):
        a = [mpmath.mpf(v) for v in z[:-1]]
        r = mpmath.fsum(ai * xi for ai, xi in zip(a, x)) - mpmath.mpf(z[-1])
        return np.array([mpmath.sign(r) * ai for ai in a], dtype=object)
    z = np.asarray(z)
    r = np.sum(z[..., :-1] * x, axis=-1) - z[..., -1]
    return np.sign(r)[..., None] * z[..., :-1]


def linear_gradient(x, z):
    """∇<z, x> = z, broadcast to the points' shape."""
    return np.broadcast_to(np.asarray(z), np.broadcast_shapes(np.shape(x), np.shape(z))).copy()


#: Ridges |<e_k, x> − c_k| along the axes; at X the residuals are 0.2, −0.4 and 1.4.
BATCH = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.5], [0.0, 0.0, 1.0, -1.0]])
X = np.array([0.2, 0.1, 0.4])
#: Two perturbations per sample; the residuals at x + y are −0.3, 0.3 | −0.1, −0.6 | −0.6, 1.5.
Y = np.array([
    [[-0.5, 0.0, 0.0], [0.1, 0.3, 0.0]],
    [[0.0, 0.3, 0.0], [0.0, -0.2, 0.5]],
    [[0.0, 0.0, -2.0], [0.0, 0.0, 0.1]],
])
#: By hand: sample 0 gives (−e_0 + e_0)/2 = 0, sample 1 (−e_1 − e_1)/2 = −e_1, sample 2 (−e_2 + e_2)/2 = 0;
#: the mean over the three samples is (0, −1/3, 0).
EXPECTED = np.array([0.0, -1.0 / 3.0, 0.0])


# --- first_order_estimate ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_first_order_matches_a_hand_computation(backend):
    got = backend.first_order_estimate(ridge_gradient, X, BATCH, Y)
    assert got.shape == (3,) and got.dtype == np.float64
    np.testing.assert_allclose(got, EXPECTED, rtol=0, atol=1e-16)


@pytest.mark.parametrize("backend", BACKENDS)
def test_first_order_linear_is_the_batch_mean_for_any_perturbation(backend):
    rng = np.random.default_rng(5)
    batch = rng.standard_normal((4, 3))
    for radius in (1e-3, 1.0, 1e6):
        y = sample_ball(rng, (4, 7), 3, radius)
        np.testing.assert_allclose(backend.first_order_estimate(linear_gradient, X, batch, y), batch.mean(axis=0),
                                   rtol=1e-13, atol=1e-15)


def test_first_order_mpmath_path():
    with working_precision(50):
        got = ref.first_order_estimate(ridge_gradient, to_mp(X), BATCH, to_mp(Y))
        assert got.dtype == object and all(isinstance(v, mpmath.mpf) for v in got)
        assert got[0] == 0 and got[2] == 0 and abs(got[1] + mpmath.mpf(1) / 3) < mpmath.mpf(10) ** -48
        # the mpmath path also starts from any one mpmath operand, and keeps exact thirds
        third = ref.first_order_estimate(linear_gradient, X, to_mp(np.ones((3, 3))), Y)
        assert is_mp(third) and all(v == 1 for v in third)


def test_fast_rounds_mpmath_inputs():
    got = fast.first_order_estimate(ridge_gradient, X, BATCH, to_mp(Y))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, EXPECTED, rtol=0, atol=1e-16)


def test_fast_equals_reference_and_takes_replicate_axes():
    rng = np.random.default_rng(11)
    batch = np.column_stack([sample_ball(rng, 3, 3, 1.0), rng.normal(0.0, 0.3, 3)])
    y = sample_ball(rng, (6, 3, 5), 3, 0.4)
    stacked = fast.first_order_estimate(ridge_gradient, X, batch, y)
    assert stacked.shape == (6, 3)
    for k in range(6):
        single = ref.first_order_estimate(ridge_gradient, X, batch, y[k])
        np.testing.assert_allclose(stacked[k], single, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(fast.first_order_estimate(ridge_gradient, X, batch, y[k]), single, rtol=1e-12,
                                   atol=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
def test_first_order_never_mutates_its_inputs(backend):
    x, batch, y = X.copy(), BATCH.copy(), Y.copy()

    def vandal(points, rows):
        value = ridge_gradient(points, rows)
        points[...] = 99.0  # the points are fresh arrays: harmless
        return value

    backend.first_order_estimate(vandal, x, batch, y)
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(batch, BATCH)
    np.testing.assert_array_equal(y, Y)

    def writes_rows(points, rows):
        rows[...] = 0.0
        return ridge_gradient(points, rows)

    with pytest.raises(ValueError, match="read-only"):
        backend.first_order_estimate(writes_rows, x, batch, y)
    np.testing.assert_array_equal(batch, BATCH)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "arguments, error, pattern",
    [
        (dict(gradient="not callable"), TypeError, "gradient must be callable"),
        (dict(x=np.zeros(2)), ValueError, "perturbations must have shape"),
        (dict(x=np.array([0.0, np.nan, 0.0])), ValueError, "x must contain only finite values"),
        (dict(batch=np.zeros((0, 4))), ValueError, "batch must have at least one row"),
        (dict(batch=np.zeros(4)), ValueError, "batch must have 2 dimension"),
        (dict(perturbations=np.zeros((2, 2, 3))), ValueError, "perturbations must have shape"),
        (dict(perturbations=np.zeros((3, 0, 3))), ValueError, "perturbations must have at least one entry"),
        (dict(perturbations=np.full((3, 2, 3), np.inf)), ValueError, "perturbations must contain only finite"),
    ],
)
def test_first_order_refuses_bad_input_naming_the_parameter(backend, arguments, error, pattern):
    call = dict(gradient=ridge_gradient, x=X, batch=BATCH, perturbations=Y) | arguments
    with pytest.raises(error, match=pattern):
        backend.first_order_estimate(**call)


@pytest.mark.parametrize("backend", BACKENDS)
def test_first_order_refuses_bad_gradients_naming_the_sample(backend):
    def nan_at_sample_two(points, rows):
        value = np.array(ridge_gradient(points, rows), dtype=np.float64)
        value[..., 0] = np.where(np.asarray(rows)[..., 3] == -1.0, np.nan, value[..., 0])
        return value

    with pytest.raises(ValueError, match=r"non-finite value .*sample i=2, perturbation j=0"):
        backend.first_order_estimate(nan_at_sample_two, X, BATCH, Y)
    with pytest.raises(ValueError, match="gradient must return shape"):
        backend.first_order_estimate(lambda p, z: np.zeros(np.shape(p)[:-1] + (2,)), X, BATCH, Y)
    with pytest.raises(TypeError, match="gradient must return real numbers"):
        backend.first_order_estimate(lambda p, z: np.zeros(np.shape(p), dtype=complex), X, BATCH, Y)


def test_reference_refuses_a_gradient_returning_strings():
    with pytest.raises(TypeError, match="gradient must return real numbers, got str at sample i=0"):
        ref.first_order_estimate(lambda p, z: np.array(["a", "b", "c"]), X, BATCH, Y)


# --- exact 1-D Goldstein norms ---------------------------------------------------------------------------------------

def test_goldstein_norm_of_abs_and_linear():
    # |x|: slopes −1, +1 with the kink at 0
    for x, radius, expected in ((0.5, 0.2, 1.0), (0.5, 0.5, 0.0), (-2.0, 1.0, 1.0), (0.0, 1e-9, 0.0)):
        assert goldstein_norm_1d([0.0], [-1.0, 1.0], x, radius) == expected
    # closed vs open ball at the kink on the boundary
    assert goldstein_norm_1d([0.0], [-1.0, 1.0], 0.5, 0.5, closed=True) == 0.0
    assert goldstein_norm_1d([0.0], [-1.0, 1.0], 0.5, 0.5, closed=False) == 1.0
    assert goldstein_norm_1d([], [-0.7], 3.0, 10.0) == 0.7


def test_goldstein_norm_is_the_distance_to_the_slope_interval():
    rng = np.random.default_rng(2)
    for _ in range(200):
        p = np.sort(rng.uniform(-1, 1, 6))
        s = rng.normal(0.5, 1.0, 7)
        x, r = rng.uniform(-1, 1), rng.uniform(0, 0.5)
        seen = clarke_slopes_in_ball(p, s, x, r)
        # brute force: the slope at a fine grid of points of the ball, plus the pieces at the ends
        grid = np.linspace(x - r, x + r, 2001)
        pieces = np.searchsorted(p, grid, side="left")
        assert set(np.unique(s[pieces])) <= set(seen)
        low, high = seen.min(), seen.max()
        assert goldstein_norm_1d(p, s, x, r) == (low if low > 0 else (-high if high < 0 else 0.0))


def test_clarke_slopes_refuses_bad_input():
    with pytest.raises(ValueError, match="one more entry"):
        clarke_slopes_in_ball([0.0, 1.0], [1.0, 2.0], 0.0, 1.0)
    with pytest.raises(ValueError, match="strictly increasing"):
        clarke_slopes_in_ball([1.0, 0.0], [1.0, 2.0, 3.0], 0.0, 1.0)
    with pytest.raises(ValueError, match="radius"):
        clarke_slopes_in_ball([0.0], [1.0, 2.0], 0.0, -1.0)


def test_zero_norm_probability_matches_known_values_and_enumeration():
    p40 = stats.binom(40, 0.75).cdf(20)
    assert p40 == pytest.approx(5.72e-4, rel=1e-3)
    assert zero_norm_probability(40, 1000) == pytest.approx(0.436, abs=5e-4)
    assert zero_norm_probability(40, 5000) == pytest.approx(0.943, abs=1e-3)
    assert zero_norm_probability(40, 1000, closed=False) == zero_norm_probability(40, 1000)  # differs by < 1e-3000
    # small cases by enumeration over the column counts (n = 3 and 4 samples, J = 2 columns, both balls)
    for n in (3, 4):
        law = stats.binom(n, 0.75)
        for closed in (True, False):
            total = 0.0
            for c1 in range(n + 1):
                for c2 in range(n + 1):
                    slopes = [2 * c1 / n - 1, 2 * c2 / n - 1]
                    norm = goldstein_norm_1d([0.4, 0.5, 0.6], [0.5, *slopes, 0.5], 0.5, 0.1, closed=closed)
                    total += law.pmf(c1) * law.pmf(c2) * (norm == 0.0)
            assert zero_norm_probability(n, 2, closed=closed) == pytest.approx(total, abs=1e-14)


# --- the printed NODE loop of Algorithm 1 ----------------------------------------------------------------------------

def test_printed_node_fails_exactly_at_powers_of_two():
    assert printed_node(7, 8) == ((1, 4), (5, 6), (7, 7))
    assert printed_node(8, 8) == ((1, 4), (5, 6), (7, 7))  # [1, 8] is never covered
    assert printed_node(8, 9) == ((1, 8),)
    assert printed_node(1, 1) == ()
    assert all(printed_node(t, 100, literal=True) == () for t in range(1, 101))
    for sigma in range(1, 130):
        for t in range(1, sigma + 1):
            ok = sorted(printed_node(t, sigma)) == sorted(tree_node(t))
            assert ok == (not (t == sigma and sigma & (sigma - 1) == 0)), (sigma, t)
    assert math.ceil(math.log2(1000)) == 10
