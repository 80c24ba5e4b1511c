"""Test problems with data (reference/objectives.py): dpzero §6.1, zo_o2nc §1.5/§6, spider_sosp §6 COS.

Gradients are checked against central differences of the loss (float64) and against mpmath.diff at
40 digits; smoothed values and gradients against Monte Carlo over v ~ U(ball) with reference.rng at
fixed seeds, within 6 standard errors per coordinate (two-sided CLT false-alarm ≈ 2e−9 each).
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import smoothing
from reference.objectives import QUADRATIC_MODES, CosineSaddle, EffectiveRankQuadratic, Linear, RidgeSum
from reference.precision import to_mp, working_precision
from reference.rng import Streams, sample_ball, sample_sphere

MC_SIGMAS = 6.0
D = 5


def rng_for(*key):
    return Streams(31337).generator("tests", "objectives", *key)


def make_objectives():
    """One instance of every class (d = 5); ridge profiles all three."""
    return [
        EffectiveRankQuadratic(D, 12, "harmonic", rng_for("quad")),
        EffectiveRankQuadratic(D, 12, "sqrt", rng_for("quad-sqrt")),
        RidgeSum.random(D, 12, rng_for("abs"), lipschitz=1.5, profile="abs"),
        RidgeSum.random(D, 12, rng_for("capped"), lipschitz=2.0, profile="capped", tau=1.0, offset_scale=0.5),
        RidgeSum.random(D, 12, rng_for("wshape"), lipschitz=0.7, profile="wshape", tau=0.8, offset_scale=0.5),
        Linear(rng_for("linear").standard_normal((12, D))),
        CosineSaddle([1.0, 2.0, 0.5, 1.5, 0.8], [1, -1, 1, -1, -1], 0.5, 12, rng_for("cos")),
    ]


OBJECTIVES = make_objectives()
IDS = [o.name for o in OBJECTIVES]


def near_kink(obj, x, z, margin=1e-3):
    if not isinstance(obj, RidgeSum):
        return False
    r = float(np.dot(x, z[: obj.d]) - z[obj.d])
    kinks = [0.0] if obj.profile == "abs" else [-obj.tau, 0.0, obj.tau]
    return min(abs(r - b) for b in kinks) < margin


def random_points(obj, count, key):
    rng = rng_for("points", obj.name, key)
    out = []
    while len(out) < count:
        x = 1.5 * rng.standard_normal(obj.d)
        z = obj.data[rng.integers(obj.n)]
        if not near_kink(obj, x, z):
            out.append((x, z))
    return out


def central_gradient(fn, x, h=1e-6):
    grad = np.empty_like(x)
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        grad[j] = (fn(x + e) - fn(x - e)) / (2 * h)
    return grad


# ---------------------------------------------------------------------------------------------------
# Data generation and attributes


def test_quadratic_data_and_spectrum():
    obj = EffectiveRankQuadratic(6, 9, "harmonic", rng_for("q-data"))
    np.testing.assert_array_equal(obj.data, rng_for("q-data").standard_normal((9, 6)) + 1.0)
    assert obj.data.shape == (9, 6) and obj.n == 9 and obj.d == 6
    i = np.arange(1, 7)
    np.testing.assert_array_equal(obj.hessian_diagonal, 1.0 / i)
    assert obj.effective_rank == pytest.approx(math.fsum(1 / k for k in i), rel=1e-15)  # H_d
    sq = EffectiveRankQuadratic.from_data(obj.data, "sqrt")
    assert sq.effective_rank == pytest.approx(math.fsum(k**-0.5 for k in i), rel=1e-15)
    ident = EffectiveRankQuadratic.from_data(obj.data, "identity")
    assert ident.effective_rank == 6.0
    for o in (obj, sq, ident):
        assert o.smoothness == 1.0 and o.lipschitz is None and max(o.hessian_diagonal) == 1.0
    np.testing.assert_allclose(obj.minimizer(), obj.data.mean(axis=0), rtol=1e-15)
    assert np.max(np.abs(obj.empirical_gradient(obj.minimizer()))) < 1e-15
    with working_precision(40):
        m = obj.minimizer(arithmetic="mpmath")
        grad = obj.empirical_gradient(m)
        assert all(isinstance(g, mpmath.mpf) and abs(g) < mpmath.mpf(10) ** -38 for g in grad)
    with pytest.raises(ValueError, match="read-only"):
        obj.data[0, 0] = 1.0


@pytest.mark.parametrize("mode", QUADRATIC_MODES)
def test_quadratic_modes_have_unit_spectral_norm(mode):
    obj = EffectiveRankQuadratic(50, 2, mode, rng_for("modes"))
    assert obj.hessian_diagonal[0] == 1.0 and np.all(np.diff(obj.hessian_diagonal) <= 0)
    assert obj.effective_rank == pytest.approx(obj.hessian_diagonal.sum() / obj.hessian_diagonal.max(), rel=1e-15)


def test_lists_of_mpf_stay_mpmath():
    obj = OBJECTIVES[0]
    with working_precision(40):
        x = [mpmath.mpf(1) / 3] * obj.d
        assert isinstance(obj.loss(x, obj.data[0]), mpmath.mpf)
        assert isinstance(obj.empirical_loss(x), mpmath.mpf)


def test_ridge_random_draw_order_and_data_layout():
    obj = RidgeSum.random(4, 7, rng_for("r-data"), lipschitz=2.0, profile="capped", tau=0.5, offset_scale=3.0)
    rng = rng_for("r-data")
    directions = sample_sphere(rng, 7, 4)
    offsets = rng.normal(0.0, 3.0, size=7)
    np.testing.assert_array_equal(obj.directions, directions)
    np.testing.assert_array_equal(obj.offsets, offsets)
    assert obj.data.shape == (7, 5)
    assert obj.lipschitz == 2.0 and obj.smoothness is None and obj.profile == "capped" and obj.tau == 0.5


def test_linear_attributes():
    a = np.array([[3.0, 4.0], [1.0, 0.0]])
    obj = Linear(a)
    assert obj.lipschitz == 5.0 and obj.smoothness == 0.0 and obj.d == 2
    np.testing.assert_array_equal(obj.gradient(np.array([7.0, -1.0]), a[0]), a[0])


def test_cosine_saddle_data_and_constants():
    c, s = [1.0, 2.0, 0.5], [1, -1, 1]
    obj = CosineSaddle(c, s, 0.7, 8, rng_for("c-data"))
    np.testing.assert_array_equal(obj.data, 0.7 * rng_for("c-data").standard_normal((8, 3)))
    assert obj.lipschitz == pytest.approx(math.sqrt(1 + 4 + 0.25), rel=1e-15)
    assert obj.smoothness == 2.0 and obj.hessian_lipschitz == 2.0
    det = CosineSaddle(c, s, 0.0, 4, None)
    assert np.all(det.data == 0) and not np.any(np.signbit(det.data)) and det.name == "cosine_saddle_det"
    det_drawn = CosineSaddle(c, s, 0.0, 4, rng_for("c-det"))
    assert np.all(det_drawn.data == 0) and not np.any(np.signbit(det_drawn.data))


# ---------------------------------------------------------------------------------------------------
# Gradients against finite differences


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_gradient_matches_central_differences(obj):
    for x, z in random_points(obj, 6, "fd"):
        fd = central_gradient(lambda p: obj.loss(p, z), x)
        np.testing.assert_allclose(obj.gradient(x, z), fd, rtol=0, atol=1e-7)


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_smoothed_gradient_matches_central_differences_of_smoothed_loss(obj):
    for delta in (0.3, 1.7):
        for x, z in random_points(obj, 4, f"sfd-{delta}"):
            fd = central_gradient(lambda p: obj.smoothed_loss(p, z, delta), x)
            np.testing.assert_allclose(obj.smoothed_gradient(x, z, delta), fd, rtol=0, atol=1e-7)


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_mpmath_gradient_matches_high_precision_derivative(obj):
    (x, z), = random_points(obj, 1, "mp-diff")
    with working_precision(40):
        xm = to_mp(x)
        grad = obj.gradient(xm, z)
        sgrad = obj.smoothed_gradient(xm, z, mpmath.mpf("0.5"))
        for j in range(obj.d):
            e = np.array([mpmath.mpf(int(k == j)) for k in range(obj.d)], dtype=object)
            deriv = mpmath.diff(lambda t: obj.loss(xm + t * e, z), 0)
            assert abs(grad[j] - deriv) < mpmath.mpf(10) ** -30
            sderiv = mpmath.diff(lambda t: obj.smoothed_loss(xm + t * e, z, mpmath.mpf("0.5")), 0)
            assert abs(sgrad[j] - sderiv) < mpmath.mpf(10) ** -25


# ---------------------------------------------------------------------------------------------------
# Arithmetic: mpmath in -> mpmath out, agreeing with float64 and correct to the working precision


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_mpmath_outputs_and_agreement_with_float64(obj):
    (x, z), = random_points(obj, 1, "mp")
    delta = 0.6
    with working_precision(40):
        xm = to_mp(x)
        values = {
            "loss": (obj.loss(xm, z), obj.loss(x, z)),
            "smoothed_loss": (obj.smoothed_loss(xm, z, delta), obj.smoothed_loss(x, z, delta)),
            "empirical_loss": (obj.empirical_loss(xm), obj.empirical_loss(x)),
            "empirical_smoothed_loss": (obj.empirical_smoothed_loss(xm, delta), obj.empirical_smoothed_loss(x, delta)),
        }
        for name, (mp_value, float_value) in values.items():
            assert isinstance(mp_value, mpmath.mpf), name
            assert isinstance(float_value, float), name
            assert abs(mp_value - float_value) <= 1e-12 * max(1.0, abs(float_value)), name
        vectors = {
            "gradient": (obj.gradient(xm, z), obj.gradient(x, z)),
            "smoothed_gradient": (obj.smoothed_gradient(xm, z, delta), obj.smoothed_gradient(x, z, delta)),
            "empirical_gradient": (obj.empirical_gradient(xm), obj.empirical_gradient(x)),
            "empirical_smoothed_gradient": (
                obj.empirical_smoothed_gradient(xm, delta),
                obj.empirical_smoothed_gradient(x, delta),
            ),
        }
        for name, (mp_vec, float_vec) in vectors.items():
            assert mp_vec.dtype == object and mp_vec.shape == (obj.d,), name
            assert all(isinstance(v, mpmath.mpf) for v in mp_vec), name
            assert float_vec.dtype == np.float64 and float_vec.shape == (obj.d,), name
            np.testing.assert_allclose([float(v) for v in mp_vec], float_vec, rtol=0, atol=1e-12, err_msg=name)
        # a float point with an mpmath smoothing radius, or an mpmath data row, also switches to mpmath
        assert isinstance(obj.smoothed_loss(x, z, mpmath.mpf(delta)), mpmath.mpf)
        assert isinstance(obj.loss(x, to_mp(z)), mpmath.mpf)


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_mpmath_values_correct_to_working_precision(obj):
    (x, z), = random_points(obj, 1, "prec")
    results = {}
    for dps in (40, 70):
        with working_precision(dps):
            xm = to_mp(x)
            results[dps] = [obj.loss(xm, z), obj.smoothed_loss(xm, z, mpmath.mpf("0.25"))] + list(
                obj.smoothed_gradient(xm, z, mpmath.mpf("0.25"))
            )
    with working_precision(40):
        for low, high in zip(results[40], results[70]):
            assert abs(low - high) <= mpmath.mpf(10) ** -38 * max(1, abs(high))


# ---------------------------------------------------------------------------------------------------
# Broadcasting


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_loss_and_gradient_broadcast_over_leading_axes(obj):
    rng = rng_for("broadcast", obj.name)
    x = rng.standard_normal((3, 4, obj.d))
    z = obj.data[:4]
    losses = obj.loss(x, z)
    grads = obj.gradient(x, z)
    slosses = obj.smoothed_loss(x, z, 0.4)
    sgrads = obj.smoothed_gradient(x, z, 0.4)
    assert losses.shape == (3, 4) and grads.shape == (3, 4, obj.d)
    assert slosses.shape == (3, 4) and sgrads.shape == (3, 4, obj.d)
    for i in range(3):
        for k in range(4):
            assert losses[i, k] == obj.loss(x[i, k], z[k])
            np.testing.assert_array_equal(grads[i, k], obj.gradient(x[i, k], z[k]))
            assert slosses[i, k] == pytest.approx(obj.smoothed_loss(x[i, k], z[k], 0.4), rel=1e-15, abs=1e-15)
            np.testing.assert_allclose(sgrads[i, k], obj.smoothed_gradient(x[i, k], z[k], 0.4), rtol=1e-15, atol=1e-15)
    # one point against all rows, and all points against one row
    assert obj.loss(x[0, 0], obj.data).shape == (obj.n,)
    assert obj.loss(x, obj.data[0]).shape == (3, 4)
    assert obj.empirical_loss(x[0, 0]) == pytest.approx(np.mean([obj.loss(x[0, 0], zz) for zz in obj.data]), rel=1e-14)


def test_mpmath_broadcast_over_leading_axes():
    obj = OBJECTIVES[3]
    x = rng_for("mp-broadcast").standard_normal((2, obj.d))
    with working_precision(30):
        out = obj.loss(to_mp(x), obj.data[0])
        grads = obj.gradient(to_mp(x), obj.data[:2])
        assert out.shape == (2,) and out.dtype == object and all(isinstance(v, mpmath.mpf) for v in out)
        assert grads.shape == (2, obj.d) and all(isinstance(v, mpmath.mpf) for v in grads.flat)
        np.testing.assert_allclose([float(v) for v in out], obj.loss(x, obj.data[0]), atol=1e-14)


def test_bad_broadcast_and_shapes_raise():
    obj = OBJECTIVES[0]
    with pytest.raises(ValueError, match="^x must have shape"):
        obj.loss(np.zeros(obj.d + 1), obj.data[0])
    with pytest.raises(ValueError, match="^z must have shape"):
        obj.loss(np.zeros(obj.d), np.zeros(obj.d + 2))
    with pytest.raises(ValueError, match="^x and z leading shapes"):
        obj.loss(np.zeros((3, obj.d)), np.zeros((2, obj.d)))
    with pytest.raises(ValueError, match="^x must contain only finite"):
        obj.loss(np.full(obj.d, np.nan), obj.data[0])
    with pytest.raises(ValueError, match="^x must have shape"):
        obj.empirical_loss(np.zeros((2, obj.d)))
    with pytest.raises(ValueError, match="^smoothing_radius"):
        obj.smoothed_gradient(np.zeros(obj.d), obj.data[0], 0.0)
    with pytest.raises(TypeError, match="^smoothing_radius"):
        obj.smoothed_loss(np.zeros(obj.d), obj.data[0], "big")


# ---------------------------------------------------------------------------------------------------
# Smoothing closed forms against Monte Carlo over v ~ U(unit ball)


def assert_mc_close(samples, exact, label):
    samples = np.asarray(samples)
    n = samples.shape[0]
    se = samples.std(axis=0, ddof=1) / math.sqrt(n)
    flat = samples.reshape(n, -1)
    # exactly rounded means, so that a constant integrand (linear f, ridge far from its kinks) compares exactly
    mean = np.array([math.fsum(flat[:, j]) / n for j in range(flat.shape[1])]).reshape(samples.shape[1:])
    diff = np.abs(mean - exact)
    slack = 1e-14 * (1 + np.abs(exact))
    assert np.all(diff <= MC_SIGMAS * se + slack), f"{label}: diff {diff}, 6·SE {MC_SIGMAS * se}"


@pytest.mark.parametrize("obj", OBJECTIVES, ids=IDS)
def test_smoothed_loss_and_gradient_match_monte_carlo(obj):
    n, delta = 100_000, 0.9
    v = sample_ball(rng_for("mc", obj.name), n, obj.d)
    x, z = random_points(obj, 1, "mc")[0]
    points = x + delta * v
    assert_mc_close(obj.loss(points, z), obj.smoothed_loss(x, z, delta), f"{obj.name} value")
    assert_mc_close(obj.gradient(points, z), obj.smoothed_gradient(x, z, delta), f"{obj.name} gradient")


def test_dpzero_smoothing_convention_is_radius_lambda_sqrt_d():
    # dpzero Lemma C.2: f_λ(x) = E_{v ~ Unif(√d B^d)} f(x + λv) equals smoothed_loss(x, z, λ√d).
    obj = OBJECTIVES[4]
    lam, n = 0.2, 100_000
    v = sample_ball(rng_for("dpzero-conv"), n, obj.d, radius=math.sqrt(obj.d))
    x, z = random_points(obj, 1, "dpzero")[0]
    assert_mc_close(obj.loss(x + lam * v, z), obj.smoothed_loss(x, z, lam * math.sqrt(obj.d)), "f_lambda")


def test_quadratic_smoothing_shift_exact():
    obj = OBJECTIVES[0]
    x, z = random_points(obj, 1, "shift")[0]
    delta = 0.7
    shift = delta**2 * obj.effective_rank / (2 * (obj.d + 2))
    assert obj.smoothed_loss(x, z, delta) == pytest.approx(obj.loss(x, z) + shift, rel=1e-15)
    np.testing.assert_array_equal(obj.smoothed_gradient(x, z, delta), obj.gradient(x, z))
    with working_precision(40):
        trace = mpmath.fsum(mpmath.mpf(1) / i for i in range(1, obj.d + 1))
        exact_shift = mpmath.mpf(delta) ** 2 * trace / (2 * (obj.d + 2))
        got = obj.smoothed_loss(to_mp(x), z, delta) - obj.loss(to_mp(x), z)
        assert abs(got - exact_shift) < mpmath.mpf(10) ** -38


def test_ridge_smoothed_gradient_is_closed_form():
    obj = OBJECTIVES[3]
    x, z = random_points(obj, 1, "closed")[0]
    a, c = z[: obj.d], z[obj.d]
    r = float(a @ x - c)
    expected = obj.lipschitz * a * smoothing.smoothed_ridge_slope(r, 0.5, obj.d, "capped", 1.0)
    np.testing.assert_allclose(obj.smoothed_gradient(x, z, 0.5), expected, rtol=1e-14, atol=1e-15)
    expected_value = obj.lipschitz * smoothing.smoothed_ridge_value(r, 0.5, obj.d, "capped", 1.0)
    assert obj.smoothed_loss(x, z, 0.5) == pytest.approx(expected_value, rel=1e-14)


@given(st.integers(0, 2), st.floats(-4, 4), st.floats(1e-3, 5), st.integers(0, 11))
@settings(max_examples=60, deadline=None)
def test_ridge_lemma_2_2_on_objectives(which, shift, delta, row):
    obj = OBJECTIVES[2 + which]
    z = obj.data[row]
    x = shift * z[: obj.d]
    assert np.linalg.norm(obj.smoothed_gradient(x, z, delta)) <= obj.lipschitz * (1 + 1e-12)
    assert abs(obj.smoothed_loss(x, z, delta) - obj.loss(x, z)) <= obj.lipschitz * delta * (1 + 1e-12)
    assert np.linalg.norm(obj.gradient(x, z)) <= obj.lipschitz * (1 + 1e-12)


def test_ridge_gradient_at_kink_is_a_clarke_subgradient():
    a = np.array([[0.6, 0.8]])
    obj = RidgeSum(a, [0.5], lipschitz=2.0, profile="capped", tau=1.0)
    x_kink = np.array([0.9, 1.2])  # <a, x> − c = 1.0 = τ
    np.testing.assert_allclose(obj.gradient(x_kink, obj.data[0]), 2.0 * 0.5 * a[0], rtol=1e-15)
    x_zero = np.array([0.3, 0.4])  # residual 0
    np.testing.assert_array_equal(obj.gradient(x_zero, obj.data[0]), [0.0, 0.0])


# ---------------------------------------------------------------------------------------------------
# COS: Hessian, population quantities, saddle (spider_sosp §6)


def test_cosine_hessian_matches_gradient_differences():
    obj = OBJECTIVES[-1]
    for x, z in random_points(obj, 4, "hess"):
        fd = np.column_stack([central_gradient(lambda p: obj.gradient(p, z)[j], x) for j in range(obj.d)])
        np.testing.assert_allclose(obj.hessian(x, z), fd, rtol=0, atol=1e-7)
    assert obj.hessian(np.zeros((3, obj.d)), obj.data[:3]).shape == (3, obj.d, obj.d)
    with working_precision(30):
        h = obj.hessian(to_mp(np.ones(obj.d)), obj.data[0])
        assert h.shape == (obj.d, obj.d) and all(isinstance(v, mpmath.mpf) for v in h.flat)


def test_cosine_population_quantities_match_monte_carlo_over_data():
    c, s, tau = [1.0, 2.0, 0.5], [1, -1, 1], 0.8
    obj = CosineSaddle(c, s, tau, 1, rng_for("pop-obj"))
    n = 100_000
    zs = tau * rng_for("pop-z").standard_normal((n, 3))
    x = np.array([0.4, -1.1, 2.5])
    assert_mc_close(obj.loss(x, zs), obj.population_loss(x), "F")
    assert_mc_close(obj.gradient(x, zs), obj.population_gradient(x), "grad F")
    hess = obj.hessian(x, zs).reshape(n, 9)
    assert_mc_close(hess, obj.population_hessian(x).reshape(9), "hess F")


def test_cosine_population_closed_forms_and_saddle():
    c, s, tau = np.array([1.0, 2.0, 0.5]), np.array([1, -1, 1]), 0.8
    obj = CosineSaddle(c, s, tau, 3, rng_for("pop"))
    phi = math.exp(-tau**2 / 2)
    x = np.array([0.4, -1.1, 2.5])
    assert obj.population_loss(x) == pytest.approx(phi * np.sum(c * s * np.cos(x)), rel=1e-15)
    np.testing.assert_allclose(obj.population_gradient(x), -phi * c * s * np.sin(x), rtol=1e-15)
    np.testing.assert_allclose(obj.population_hessian(x), np.diag(-phi * c * s * np.cos(x)), rtol=1e-15)
    saddle = obj.saddle_point()
    np.testing.assert_array_equal(obj.population_gradient(saddle), np.zeros(3))
    eigenvalues = np.linalg.eigvalsh(obj.population_hessian(saddle))
    assert eigenvalues.min() == pytest.approx(-phi * 1.0, rel=1e-15)  # −φ max_{s_j=+1} c_j
    assert eigenvalues.max() > 0
    assert obj.population_infimum() == pytest.approx(-phi * c.sum(), rel=1e-15)
    assert obj.population_loss(obj.population_minimizer()) == pytest.approx(obj.population_infimum(), rel=1e-15)
    with working_precision(40):
        inf_mp = obj.population_infimum(arithmetic="mpmath")
        at_min = obj.population_loss(to_mp(np.array([0.0, 0.0, 0.0])) + np.array([mpmath.pi, 0, mpmath.pi], dtype=object))
        assert abs(inf_mp - at_min) < mpmath.mpf(10) ** -38
        g = obj.population_gradient(to_mp(x))
        assert all(isinstance(v, mpmath.mpf) for v in g)


def test_cosine_smoothed_uses_ball_characteristic():
    obj = OBJECTIVES[-1]
    x, z = random_points(obj, 1, "char")[0]
    psi = smoothing.ball_characteristic(1.3, obj.d)
    np.testing.assert_allclose(obj.smoothed_gradient(x, z, 1.3), psi * obj.gradient(x, z), rtol=1e-15)
    assert obj.smoothed_loss(x, z, 1.3) == pytest.approx(psi * obj.loss(x, z), rel=1e-15)


# ---------------------------------------------------------------------------------------------------
# Validation: errors name the parameter


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: EffectiveRankQuadratic(0, 5, "identity", rng_for("v")), ValueError, "d"),
        (lambda: EffectiveRankQuadratic(3, 0, "identity", rng_for("v")), ValueError, "n"),
        (lambda: EffectiveRankQuadratic(3, 5, "cubic", rng_for("v")), ValueError, "mode"),
        (lambda: EffectiveRankQuadratic(3, 5, "identity", 42), TypeError, "rng"),
        (lambda: EffectiveRankQuadratic.from_data(np.zeros(3), "identity"), ValueError, "data"),
        (lambda: EffectiveRankQuadratic.from_data([[1.0, np.nan]], "identity"), ValueError, "data"),
        (lambda: RidgeSum([[1.0, 1.0]], [0.0]), ValueError, "directions"),
        (lambda: RidgeSum([[1.0, 0.0]], [0.0, 1.0]), ValueError, "offsets"),
        (lambda: RidgeSum([[1.0, 0.0]], [np.inf]), ValueError, "offsets"),
        (lambda: RidgeSum([[1.0, 0.0]], [0.0], lipschitz=0.0), ValueError, "lipschitz"),
        (lambda: RidgeSum([[1.0, 0.0]], [0.0], profile="huber"), ValueError, "profile"),
        (lambda: RidgeSum([[1.0, 0.0]], [0.0], profile="capped", tau=-1.0), ValueError, "tau"),
        (lambda: RidgeSum.random(0, 3, rng_for("v")), ValueError, "d"),
        (lambda: RidgeSum.random(2, 3, rng_for("v"), offset_scale=-1.0), ValueError, "offset_scale"),
        (lambda: RidgeSum.random(2, 3, None), TypeError, "rng"),
        (lambda: Linear(np.zeros(3)), ValueError, "vectors"),
        (lambda: Linear([[1.0, np.nan]]), ValueError, "vectors"),
        (lambda: CosineSaddle([1.0, -1.0], [1, 1], 0.5, 3, rng_for("v")), ValueError, "c"),
        (lambda: CosineSaddle([], [], 0.5, 3, rng_for("v")), ValueError, "c"),
        (lambda: CosineSaddle([1.0, 1.0], [1, 0.5], 0.5, 3, rng_for("v")), ValueError, "s"),
        (lambda: CosineSaddle([1.0, 1.0], [1], 0.5, 3, rng_for("v")), ValueError, "s"),
        (lambda: CosineSaddle([1.0], [1], -0.1, 3, rng_for("v")), ValueError, "tau"),
        (lambda: CosineSaddle([1.0], [1], 0.1, 0, rng_for("v")), ValueError, "n"),
        (lambda: CosineSaddle([1.0], [1], 0.1, 3, None), ValueError, "rng"),
        (lambda: CosineSaddle([np.nan], [1], 0.1, 3, rng_for("v")), ValueError, "c"),
        (lambda: CosineSaddle([1.0], [1], 0.1, 3, rng_for("v")).population_infimum(arithmetic="x"), ValueError, "arithmetic"),
        (lambda: OBJECTIVES[2].loss(np.zeros(D), np.ones(D + 1)), ValueError, "z"),
    ],
)
def test_bad_inputs_raise_naming_the_parameter(call, exc, name):
    with pytest.raises(exc, match=rf"^{name}\b"):
        call()
