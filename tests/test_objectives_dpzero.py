"""dpzero.md §6.3 synthetic problems (reference/objectives_dpzero.py): (P1) PseudoHuber and (P2)
SubspaceLogistic, the two finite sums that satisfy Assumption 3.5 of DPZero exactly.

Checked: the documented draw schedules; gradients against central differences (float64) and
mpmath.diff (40 digits); Hessians against differences of gradients; L (‖∇f‖ <= L), ℓ (gradient
Lipschitz on random pairs, ‖∇²f‖₂ <= ℓ) and Assumption 3.5(b) (−H ⪯ ∇²F ⪯ H, ‖H‖₂ <= ℓ,
Tr(H) = r‖H‖₂) at random points; float64 vs mpmath; the O(dk + nk) empirical averages vs the
generic Objective ones.
"""

import math
import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.algorithms.dpzero_theory import effective_rank
from reference.objectives import QUADRATIC_MODES, EffectiveRankQuadratic, Objective
from reference.objectives_dpzero import PseudoHuber, SubspaceLogistic
from reference.precision import to_float, to_mp, working_precision
from reference.rng import Streams, sample_ball, sample_sphere

D, N, K = 7, 9, 3


def rng_for(*key):
    return Streams(2024).generator("tests", "objectives_dpzero", *key)


def make_objectives():
    return [
        SubspaceLogistic(D, N, K, rng_for("logistic")),
        SubspaceLogistic(D, N, 2, rng_for("logistic-sphere"), features="sphere", label_flip=0.3),
        PseudoHuber(D, N, "harmonic", 0.5, rng_for("huber-h")),
        PseudoHuber(D, N, "sqrt", 2.0, rng_for("huber-s")),
        PseudoHuber(D, N, "identity", 0.1, rng_for("huber-i")),
    ]


OBJECTIVES = make_objectives()
IDS = [f"{o.name}-{i}" for i, o in enumerate(OBJECTIVES)]


def random_points(obj, count, key, scale=1.5):
    rng = rng_for("points", obj.name, key)
    return [(scale * rng.standard_normal(obj.d), obj.data[rng.integers(obj.n)]) for _ in range(count)]


def central(fn, x, h):
    out = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        out.append((fn(x + e) - fn(x - e)) / (2 * h))
    return np.array(out)


# ---------------------------------------------------------------------------------------------------
# construction


def test_subspace_logistic_draw_schedule():
    obj = SubspaceLogistic(6, 11, 3, rng_for("schedule"), label_flip=0.25)
    rng = rng_for("schedule")
    g = rng.standard_normal((6, 3))
    q, r = np.linalg.qr(g)
    basis = q * np.sign(np.diag(r))
    c = sample_ball(rng, 11, 3)
    w = sample_sphere(rng, (), 3)
    flips = rng.random(11) < 0.25
    b = np.where(c @ w >= 0, 1.0, -1.0) * np.where(flips, -1.0, 1.0)
    np.testing.assert_array_equal(obj.basis, basis)
    np.testing.assert_array_equal(obj.coefficients, c)
    np.testing.assert_array_equal(obj.labels, b)
    assert obj.data.shape == (11, 4) and obj.k == 3 and obj.features == "ball" and obj.label_flip == 0.25
    # U is determined by G: G = U·R' with R' upper triangular with a non-negative diagonal
    r_signed = basis.T @ g
    assert np.allclose(np.tril(r_signed, -1), 0, atol=1e-12) and np.all(np.diag(r_signed) >= 0)
    np.testing.assert_allclose(basis.T @ basis, np.eye(3), atol=1e-14)
    same = SubspaceLogistic.from_parts(basis, c, b)
    np.testing.assert_array_equal(same.data, obj.data)
    assert same.effective_rank == obj.effective_rank


def test_subspace_logistic_features_and_labels():
    ball = SubspaceLogistic(5, 400, 3, rng_for("ball"), label_flip=0.0)
    sphere = SubspaceLogistic(5, 400, 3, rng_for("sphere"), features="sphere", label_flip=0.0)
    assert np.all(np.linalg.norm(ball.coefficients, axis=1) <= 1)
    assert np.linalg.norm(ball.coefficients, axis=1).min() < 0.5  # really inside the ball
    np.testing.assert_allclose(np.linalg.norm(sphere.coefficients, axis=1), 1.0, rtol=1e-15)
    for obj in (ball, sphere):
        assert set(np.unique(obj.labels)) <= {-1.0, 1.0}
        # without flips the labels are planted: b_i = sign(<c_i, w>) for one w, a separable problem
        rng = rng_for("ball" if obj is ball else "sphere")
        rng.standard_normal((5, 3))
        c = (sample_ball if obj is ball else sample_sphere)(rng, 400, 3)
        w = sample_sphere(rng, (), 3)
        assert np.all(obj.labels * (c @ w) >= 0)
    flipped = SubspaceLogistic(5, 4000, 3, rng_for("flips"), label_flip=0.2)
    rng = rng_for("flips")
    rng.standard_normal((5, 3))
    c = sample_ball(rng, 4000, 3)
    w = sample_sphere(rng, (), 3)
    disagreement = np.mean(flipped.labels * np.where(c @ w >= 0, 1, -1) < 0)
    assert abs(disagreement - 0.2) < 4.5 * math.sqrt(0.2 * 0.8 / 4000)


def test_pseudo_huber_data_and_constants():
    obj = PseudoHuber(6, 9, "harmonic", 0.25, rng_for("ph"))
    quad = EffectiveRankQuadratic(6, 9, "harmonic", rng_for("ph"))
    np.testing.assert_array_equal(obj.data, quad.data)  # same draws as the §6.1 quadratic
    np.testing.assert_array_equal(obj.hessian_diagonal, quad.hessian_diagonal)
    assert obj.lipschitz == 1.0 and obj.smoothness == 4.0 and obj.smoothing_scale == 0.25
    assert obj.effective_rank == pytest.approx(math.fsum(1 / i for i in range(1, 7)), rel=1e-15)
    np.testing.assert_array_equal(obj.hessian_bound(), np.diag(quad.hessian_diagonal) / 0.25)
    assert effective_rank(obj.hessian_bound()) == pytest.approx(obj.effective_rank, rel=1e-14)
    for mode in QUADRATIC_MODES:
        other = PseudoHuber.from_data(obj.data, mode, 1.0)
        ref = EffectiveRankQuadratic.from_data(obj.data, mode)
        np.testing.assert_array_equal(other.hessian_diagonal, ref.hessian_diagonal)
        assert other.effective_rank == ref.effective_rank
    with working_precision(40):
        hb = PseudoHuber.from_data(obj.data, "sqrt", 0.5).hessian_bound(arithmetic="mpmath")
        assert abs(hb[1, 1] - 2 / mpmath.sqrt(2)) < mpmath.mpf(10) ** -38 and hb[0, 1] == 0


@pytest.mark.parametrize("k", [1, 2, 4])
def test_subspace_logistic_effective_rank_and_hessian_bound(k):
    obj = SubspaceLogistic(8, 30, k, rng_for("rank", k))
    h = obj.hessian_bound()
    a = obj.coefficients @ obj.basis.T  # the features a_i = U c_i (formed only here, in the test)
    np.testing.assert_allclose(h, a.T @ a / (4 * obj.n), atol=1e-15)
    assert 1 - 1e-12 <= obj.effective_rank <= k + 1e-12
    assert obj.effective_rank == pytest.approx(effective_rank(h), rel=1e-10)
    assert np.linalg.eigvalsh(h)[-1] <= obj.smoothness * (1 + 1e-12)  # ‖H‖₂ <= ℓ
    assert np.linalg.matrix_rank(h, tol=1e-12) <= k
    with working_precision(40):
        hm = obj.hessian_bound(arithmetic="mpmath")
    np.testing.assert_allclose(to_float(hm), h, atol=1e-16)


# ---------------------------------------------------------------------------------------------------
# derivatives


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_gradient_matches_central_differences(obj):
    for x, z in random_points(obj, 5, "fd"):
        numeric = central(lambda y: obj.loss(y, z), x, 1e-6)
        np.testing.assert_allclose(obj.gradient(x, z), numeric, atol=1e-8)
        hess_numeric = np.array(central(lambda y: obj.gradient(y, z), x, 1e-6))
        np.testing.assert_allclose(obj.hessian(x, z), hess_numeric, atol=1e-7)


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_gradient_matches_mpmath_diff(obj):
    with working_precision(40):
        for x, z in random_points(obj, 2, "mpdiff"):
            xm, zm = to_mp(x), to_mp(z)
            grad = obj.gradient(xm, zm)
            for j in range(obj.d):
                def along(t, j=j):
                    y = xm.copy()
                    y[j] = y[j] + t
                    return obj.loss(y, zm)

                exact = mpmath.diff(along, 0)
                assert abs(grad[j] - exact) < mpmath.mpf(10) ** -30


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_float64_and_mpmath_agree(obj):
    with working_precision(40):
        for x, z in random_points(obj, 3, "agree"):
            xm, zm = to_mp(x), to_mp(z)
            loss_mp, grad_mp, hess_mp = obj.loss(xm, zm), obj.gradient(xm, zm), obj.hessian(xm, zm)
            assert isinstance(loss_mp, mpmath.mpf) and grad_mp.dtype == object
            assert float(loss_mp) == pytest.approx(obj.loss(x, z), rel=1e-14, abs=1e-300)
            np.testing.assert_allclose(obj.gradient(x, z), to_float(grad_mp), rtol=1e-13, atol=1e-15)
            np.testing.assert_allclose(obj.hessian(x, z), to_float(hess_mp), rtol=1e-12, atol=1e-15)
        x = random_points(obj, 1, "agree-emp")[0][0]
        xm = to_mp(x)
        assert float(obj.empirical_loss(xm)) == pytest.approx(obj.empirical_loss(x), rel=1e-14)
        np.testing.assert_allclose(obj.empirical_gradient(x), to_float(obj.empirical_gradient(xm)), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(obj.empirical_hessian(x), to_float(obj.empirical_hessian(xm)), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_empirical_averages_match_the_generic_objective_ones(obj):
    x = random_points(obj, 1, "generic")[0][0]
    assert obj.empirical_loss(x) == pytest.approx(Objective.empirical_loss(obj, x), rel=1e-14)
    np.testing.assert_allclose(obj.empirical_gradient(x), Objective.empirical_gradient(obj, x), rtol=1e-12, atol=1e-16)
    per_sample = np.mean([obj.hessian(x, z) for z in obj.data], axis=0)
    np.testing.assert_allclose(obj.empirical_hessian(x), per_sample, rtol=1e-12, atol=1e-16)
    numeric = central(lambda y: obj.empirical_gradient(y), x, 1e-6)
    np.testing.assert_allclose(obj.empirical_hessian(x), numeric, atol=1e-7)
    with working_precision(30):
        xm = to_mp(x)
        mine, generic = obj.empirical_gradient(xm), Objective.empirical_gradient(obj, xm)
        assert all(abs(a - b) < mpmath.mpf(10) ** -27 for a, b in zip(mine, generic))
        assert abs(obj.empirical_loss(xm) - Objective.empirical_loss(obj, xm)) < mpmath.mpf(10) ** -27


def test_broadcasting_shapes():
    obj = OBJECTIVES[0]
    x = rng_for("bcast").standard_normal((4, 1, D))
    z = obj.data[:5]
    assert obj.loss(x, z).shape == (4, 5) and obj.gradient(x, z).shape == (4, 5, D)
    assert obj.hessian(x[0, 0], z).shape == (5, D, D)
    np.testing.assert_allclose(obj.loss(x, z)[2, 3], obj.loss(x[2, 0], z[3]), rtol=1e-15)
    np.testing.assert_allclose(obj.gradient(x, z)[1, 4], obj.gradient(x[1, 0], z[4]), rtol=1e-15)
    assert isinstance(obj.loss(x[0, 0], z[0]), float)
    ph = OBJECTIVES[2]
    assert ph.loss(x, ph.data[:5]).shape == (4, 5) and ph.hessian(x, ph.data[:5]).shape == (4, 5, D, D)


def test_logistic_is_stable_at_huge_margins():
    obj = OBJECTIVES[0]
    rng = rng_for("huge")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow in exp
        for sign in (1.0, -1.0):
            z = obj.data[0]
            x = sign * 1e4 * (obj.basis @ z[:K]) / np.linalg.norm(z[:K]) * z[K]  # margin b·m = ±1e4‖c‖
            loss, grad = obj.loss(x, z), obj.gradient(x, z)
            assert np.isfinite(loss) and np.all(np.isfinite(grad))
            with working_precision(30):
                assert float(obj.loss(to_mp(x), to_mp(z))) == pytest.approx(loss, rel=1e-13, abs=1e-300)
        x = 1e5 * rng.standard_normal(D)
        assert np.isfinite(obj.empirical_loss(x)) and np.all(np.isfinite(obj.empirical_gradient(x)))


# ---------------------------------------------------------------------------------------------------
# the constants of Assumption 3.5


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_lipschitz_and_smoothness_constants_hold(obj):
    rng = rng_for("constants", obj.name)
    for scale in (0.1, 1.0, 10.0):
        for x, z in random_points(obj, 20, f"L-{scale}", scale=scale):
            assert np.linalg.norm(obj.gradient(x, z)) <= obj.lipschitz * (1 + 1e-12)
            assert np.linalg.norm(obj.hessian(x, z), 2) <= obj.smoothness * (1 + 1e-12)
            y = x + scale * rng.standard_normal(obj.d)
            change = np.linalg.norm(obj.gradient(x, z) - obj.gradient(y, z))
            assert change <= obj.smoothness * np.linalg.norm(x - y) * (1 + 1e-12)
            assert abs(obj.loss(x, z) - obj.loss(y, z)) <= obj.lipschitz * np.linalg.norm(x - y) * (1 + 1e-12)


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_assumption_3_5b_hessian_sandwich(obj):
    """−H ⪯ ∇²F(x) ⪯ H at random points, with ‖H‖₂ <= ℓ and Tr(H) = r‖H‖₂."""
    h = obj.hessian_bound()
    top = np.linalg.eigvalsh(h)[-1]
    assert top <= obj.smoothness * (1 + 1e-12)
    assert np.trace(h) == pytest.approx(obj.effective_rank * top, rel=1e-10)
    for scale in (0.1, 1.0, 5.0):
        for x, _ in random_points(obj, 6, f"H-{scale}", scale=scale):
            hess = obj.empirical_hessian(x)
            assert np.linalg.eigvalsh(h - hess)[0] >= -1e-13
            assert np.linalg.eigvalsh(h + hess)[0] >= -1e-13
            if isinstance(obj, PseudoHuber):
                assert np.linalg.eigvalsh(hess)[0] >= -1e-13  # convex
    if isinstance(obj, SubspaceLogistic):
        # at x = 0 every σ(m)(1−σ(m)) = 1/4, so ∇²F(0) = H exactly
        np.testing.assert_allclose(obj.empirical_hessian(np.zeros(obj.d)), h, atol=1e-16)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 4), extra=st.integers(0, 5),
       scale=st.floats(0.01, 30.0))
def test_subspace_logistic_properties(seed, k, extra, scale):
    d = k + extra
    rng = np.random.default_rng(seed)
    obj = SubspaceLogistic(d, 12, k, rng)
    x = scale * rng.standard_normal(d)
    grad = obj.empirical_gradient(x)
    assert np.linalg.norm(grad) <= 1 + 1e-12
    # ∇F lies in span(U): the component orthogonal to the subspace vanishes
    np.testing.assert_allclose(grad - obj.basis @ (obj.basis.T @ grad), 0, atol=1e-15)
    assert obj.effective_rank <= k + 1e-12
    h = obj.hessian_bound()
    assert np.linalg.eigvalsh(h - obj.empirical_hessian(x))[0] >= -1e-13
    # F depends on x only through U^T x: moving orthogonally to the subspace changes nothing
    orth = rng.standard_normal(d)
    orth -= obj.basis @ (obj.basis.T @ orth)
    assert obj.empirical_loss(x + orth) == pytest.approx(obj.empirical_loss(x), rel=1e-12)


# ---------------------------------------------------------------------------------------------------
# smoothing and validation


@pytest.mark.parametrize("obj", [OBJECTIVES[0], OBJECTIVES[2]], ids=["logistic", "huber"])
def test_smoothed_hooks_say_there_is_no_closed_form(obj):
    x, z = np.zeros(obj.d), obj.data[0]
    for call in (lambda: obj.smoothed_loss(x, z, 0.1), lambda: obj.smoothed_gradient(x, z, 0.1),
                 lambda: obj.empirical_smoothed_gradient(x, 0.1)):
        with pytest.raises(NotImplementedError, match=f"{type(obj).__name__} has no closed-form ball-smoothed"):
            call()
    with working_precision(30), pytest.raises(NotImplementedError, match="Monte Carlo"):
        obj.smoothed_loss(to_mp(x), to_mp(z), mpmath.mpf("0.1"))


def test_validation_names_the_parameter():
    rng = rng_for("validation")
    with pytest.raises(ValueError, match="k must be <= 3"):
        SubspaceLogistic(3, 5, 4, rng)
    with pytest.raises(ValueError, match="k must be >= 1"):
        SubspaceLogistic(3, 5, 0, rng)
    with pytest.raises(ValueError, match="n must be >= 1"):
        SubspaceLogistic(3, 0, 1, rng)
    with pytest.raises(ValueError, match="features must be one of"):
        SubspaceLogistic(3, 5, 1, rng, features="cube")
    with pytest.raises(ValueError, match="label_flip must be <= 0.5"):
        SubspaceLogistic(3, 5, 1, rng, label_flip=0.7)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        SubspaceLogistic(3, 5, 1, 42)
    basis = np.linalg.qr(rng.standard_normal((4, 2)))[0]
    c, b = 0.5 * np.ones((3, 2)) / math.sqrt(2), np.array([1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="basis must have orthonormal columns"):
        SubspaceLogistic.from_parts(2 * basis, c, b)
    with pytest.raises(ValueError, match=r"basis must have shape \(d, k\) with 1 <= k <= d"):
        SubspaceLogistic.from_parts(basis.T, c, b)
    with pytest.raises(ValueError, match="coefficients must have rows with ‖c_i‖ <= 1"):
        SubspaceLogistic.from_parts(basis, 3 * c, b)
    with pytest.raises(ValueError, match=r"coefficients must have shape \(n, k\)"):
        SubspaceLogistic.from_parts(basis, np.ones((3, 3)) / 3, b)
    with pytest.raises(ValueError, match="labels must have entries in"):
        SubspaceLogistic.from_parts(basis, c, np.array([1.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match=r"labels must have shape \(3\)"):
        SubspaceLogistic.from_parts(basis, c, b[:2])
    with pytest.raises(ValueError, match="coefficients must have a nonzero row"):
        SubspaceLogistic.from_parts(basis, np.zeros((3, 2)), b)
    with pytest.raises(TypeError, match="basis must be float64"):
        SubspaceLogistic.from_parts(to_mp(basis), c, b)
    obj = SubspaceLogistic.from_parts(basis, c, b)
    with pytest.raises(ValueError, match=r"z must hold a label b in \{-1, \+1\}"):
        obj.loss(np.zeros(4), np.array([0.1, 0.1, 0.5]))
    with pytest.raises(ValueError, match="z must hold coefficients c with ‖c‖ <= 1"):
        obj.gradient(np.zeros(4), np.array([1.0, 1.0, 1.0]))
    with working_precision(30), pytest.raises(ValueError, match="z must hold a label"):
        obj.loss(to_mp(np.zeros(4)), to_mp(np.array([0.1, 0.1, 2.0])))
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., 4\)"):
        obj.loss(np.zeros(3), obj.data[0])
    with pytest.raises(ValueError, match="arithmetic must be"):
        obj.hessian_bound(arithmetic="float32")
    with pytest.raises(ValueError, match="smoothing_scale must be > 0"):
        PseudoHuber(3, 4, "identity", 0.0, rng)
    with pytest.raises(ValueError, match="mode must be one of"):
        PseudoHuber(3, 4, "cubic", 1.0, rng)
    with pytest.raises(ValueError, match="d must be >= 1"):
        PseudoHuber(0, 4, "identity", 1.0, rng)
    with pytest.raises(ValueError, match="data must have at least one row"):
        PseudoHuber.from_data(np.zeros((0, 3)), "identity", 1.0)
    with pytest.raises(ValueError, match="x must contain only finite values"):
        OBJECTIVES[2].loss(np.full(D, np.nan), OBJECTIVES[2].data[0])
