"""reference.geometry: ℓ_p norms, polytope and ℓ_p-ball oracles, Euclidean projections, the Frank–Wolfe gap.

Property tests run with fixed seeds (``derandomize=True``): LMO optimality against brute force over the
vertices and against scipy.optimize, the closed-form value ⟨v − c, g⟩ = −λ‖g‖_q to a stated rounding bound,
Hölder's inequality, projection optimality through the variational inequality ⟨w − P(w), u − P(w)⟩ ≤ tol,
idempotence, fw_gap ≥ 0 with equality at the minimizer of the linear function, and hostile inputs.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from scipy.spatial.distance import pdist

from reference.geometry import LpBall, Polytope, dual_exponent, dual_norm, fw_gap, lp_norm

U = 2.0**-53  # float64 unit roundoff
FIXED = settings(derandomize=True, max_examples=60, deadline=None)
FEW = settings(derandomize=True, max_examples=25, deadline=None)

dims = st.integers(1, 6)
middle_p = st.floats(1.05, 20.0)
any_p = st.one_of(st.sampled_from([1.0, 2.0, math.inf, 1.5, 3.0]), middle_p)
seeds = st.integers(0, 2**32 - 1)


def _vec(rng, d, scale=1.0):
    return rng.normal(size=d) * scale


def _q_hat(q: float) -> float:
    return 0.0 if math.isinf(q) else q


def _random_in_ball(ball: LpBall, rng) -> np.ndarray:
    """A point of the ball: c + λ·r·x/‖x‖_p with r ∈ [0, 1] (shrunk by 1e-12 against rounding)."""
    x = rng.normal(size=ball.d)
    r = rng.uniform() * (1 - 1e-12)
    return ball.center + ball.radius * r * x / lp_norm(x, ball.p)


# ---------------------------------------------------------------------------------------------------
# Norms and duality


def test_dual_exponent_values():
    assert dual_exponent(1) == math.inf
    assert dual_exponent(math.inf) == 1.0
    assert dual_exponent(2) == 2.0
    assert dual_exponent(3.0) == 1.5
    assert dual_exponent(1.5) == pytest.approx(3.0, rel=4 * U)


@FIXED
@given(middle_p)
def test_dual_exponent_is_an_involution(p):
    q = dual_exponent(p)
    assert 1 / p + 1 / q == pytest.approx(1.0, abs=4 * U)
    assert dual_exponent(q) == pytest.approx(p, rel=64 * U * q)


@FIXED
@given(dims, any_p, seeds)
def test_lp_norm_matches_numpy_and_is_scale_safe(d, p, seed):
    x = _vec(np.random.default_rng(seed), d)
    assert lp_norm(x, p) == pytest.approx(np.linalg.norm(x, ord=p), rel=1e-13)
    # numpy's formula overflows / underflows at these scales; ours rescales by max|x_i|
    for scale in (1e250, 1e-250):
        assert lp_norm(x * scale, p) == pytest.approx(lp_norm(x, p) * scale, rel=1e-13)


def test_lp_norm_of_zero_and_dual_norm():
    assert lp_norm([0.0, 0.0], 3.0) == 0.0
    g = np.array([3.0, -4.0])
    assert dual_norm(g, 2) == 5.0
    assert dual_norm(g, 1) == 4.0
    assert dual_norm(g, math.inf) == 7.0


@FIXED
@given(dims, any_p, seeds)
def test_hoelder_inequality(d, p, seed):
    rng = np.random.default_rng(seed)
    x, g = _vec(rng, d), _vec(rng, d)
    q = dual_exponent(p)
    assert abs(np.dot(x, g)) <= lp_norm(x, p) * lp_norm(g, q) * (1 + 8 * (d + p + _q_hat(q) + 2) * U)


@FIXED
@given(dims, any_p, seeds)
def test_dual_norm_is_the_max_over_the_unit_ball(d, p, seed):
    """‖g‖_* = max_{‖x‖_p ≤ 1} ⟨g, x⟩ (bgm21 §2): attained at −lmo of the unit ball, never exceeded by samples."""
    rng = np.random.default_rng(seed)
    g = _vec(rng, d)
    unit = LpBall(p, 1.0, np.zeros(d))
    attained = -np.dot(unit.lmo(g), g)
    q = dual_exponent(p)
    assert attained == pytest.approx(dual_norm(g, p), rel=8 * (d + _q_hat(q) + 2) * U)
    for _ in range(20):
        assert np.dot(g, _random_in_ball(unit, rng)) <= dual_norm(g, p) * (1 + 1e-12)


# ---------------------------------------------------------------------------------------------------
# Polytope


@FIXED
@given(st.integers(1, 8), dims, seeds)
def test_polytope_lmo_is_the_brute_force_argmin(J, d, seed):
    rng = np.random.default_rng(seed)
    V = rng.normal(size=(J, d))
    g = _vec(rng, d)
    v, j = Polytope(V).lmo(g)
    scores = [float(np.dot(V[i], g)) for i in range(J)]
    assert j == int(np.argmin(scores))  # np.argmin also returns the first minimizer
    assert np.array_equal(v, V[j])


def test_polytope_lmo_lowest_index_on_ties():
    V = np.array([[1.0, 0.0], [0.0, -1.0], [-1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]])
    P = Polytope(V)
    assert P.lmo([1.0, 1.0])[1] == 1  # rows 1, 2, 3, 4 all score −1
    assert P.lmo([0.0, 0.0])[1] == 0  # all tie at g = 0
    v, _ = P.lmo([1.0, 1.0])
    v[0] = 99.0  # the returned vertex is a copy
    assert P.vertices[1, 0] == 0.0


@FIXED
@given(st.integers(1, 7), dims, any_p, seeds)
def test_polytope_diameter_is_the_max_pairwise_distance(J, d, p, seed):
    V = np.random.default_rng(seed).normal(size=(J, d))
    if J == 1:
        assert Polytope(V).diameter(p) == 0.0
        return
    metric = ("chebyshev", {}) if math.isinf(p) else ("minkowski", {"p": p})
    expected = pdist(V, metric[0], **metric[1]).max()
    assert Polytope(V).diameter(p) == pytest.approx(expected, rel=1e-13)


# ---------------------------------------------------------------------------------------------------
# ℓ_p ball: linear minimization oracle


def _lmo_value_bound(ball: LpBall, g: np.ndarray) -> float:
    """The stated rounding bound of |⟨v − c, g⟩ + λ‖g‖_q|: 8(d + q + 2)·u·(λ‖g‖_q + ‖c‖_∞‖g‖_1), q = 0 at p = 1.

    (Derivation: |g|/‖g‖_q carries a relative error of about (d + 3)u; raising it to q − 1 multiplies that by
    q − 1; the inner product adds d·u; v − c loses u·|c_i| per coordinate.)
    """
    q = _q_hat(ball.q)
    scale = ball.radius * dual_norm(g, ball.p) + np.max(np.abs(ball.center)) * lp_norm(g, 1)
    return 8 * (ball.d + q + 2) * U * scale


@FIXED
@given(dims, any_p, st.floats(1e-3, 1e3), seeds)
def test_lmo_value_is_minus_radius_times_dual_norm(d, p, radius, seed):
    """⟨v − c, g⟩ = −λ‖g‖_q up to the stated rounding bound, and v lies on the sphere ‖v − c‖_p = λ.

    With Hölder (⟨u − c, g⟩ ≥ −λ‖g‖_q for every u of the ball) this is a proof that v is a minimizer.
    """
    rng = np.random.default_rng(seed)
    ball = LpBall(p, radius, _vec(rng, d, 10.0))
    g = _vec(rng, d)
    v = ball.lmo(g)
    assert abs(np.dot(v - ball.center, g) + radius * dual_norm(g, p)) <= _lmo_value_bound(ball, g)
    on_sphere = LpBall(p, radius, np.zeros(d)).lmo(g)
    q = _q_hat(ball.q)
    assert lp_norm(on_sphere, p) == pytest.approx(radius, rel=8 * (d + p + q + 2) * U) if math.isfinite(p) else True
    assert ball.contains(v, tol=8 * (d + q + 2) * U * (radius + np.max(np.abs(ball.center))))


@pytest.mark.parametrize("p", [1.001, 1.01, 60.0, 1e6])
def test_lmo_value_at_extreme_exponents(p):
    rng = np.random.default_rng(7)
    for _ in range(20):
        ball = LpBall(p, 2.0, _vec(rng, 5))
        g = _vec(rng, 5)
        assert abs(np.dot(ball.lmo(g) - ball.center, g) + 2.0 * dual_norm(g, p)) <= _lmo_value_bound(ball, g)


@FIXED
@given(st.integers(1, 5), st.sampled_from([1.0, math.inf]), seeds)
def test_lmo_of_polyhedral_balls_against_brute_force_over_vertices(d, p, seed):
    rng = np.random.default_rng(seed)
    ball = LpBall(p, 1.7, _vec(rng, d))
    g = _vec(rng, d)
    if p == 1.0:
        V = ball.vertices()
        assert V.shape == (2 * d, d)
    else:  # the 2^d vertices of the cube c + λ{−1, 1}^d
        V = np.array([ball.center + 1.7 * np.array(s) for s in itertools.product((-1.0, 1.0), repeat=d)])
    best = min(float(np.dot(row, g)) for row in V)
    assert np.dot(ball.lmo(g), g) <= best + 16 * (d + 2) * U * float(np.abs(V).max() * np.abs(g).sum())


def test_l1_vertices_order_and_tie_rule_match_the_polytope():
    ball = LpBall(1, 2.0, np.zeros(3))
    V = ball.vertices()
    assert np.array_equal(V[0], [2.0, 0, 0]) and np.array_equal(V[1], [-2.0, 0, 0])
    assert np.array_equal(V[5], [0, 0, -2.0])
    poly = Polytope(V)
    for g in itertools.product((-2.0, -1.0, 0.0, 1.0, 2.0), repeat=3):  # exact scores, many ties
        if any(g):
            assert np.array_equal(poly.lmo(g)[0], ball.lmo(g))
    assert np.array_equal(ball.lmo(np.zeros(3)), np.zeros(3))


@FEW
@given(st.integers(2, 5), middle_p, seeds)
def test_lmo_against_scipy_optimize(d, p, seed):
    """SLSQP on min ⟨v, g⟩ s.t. ‖v − c‖_p^p ≤ λ^p never beats the closed form by more than its tolerance."""
    rng = np.random.default_rng(seed)
    ball = LpBall(p, 1.3, _vec(rng, d))
    g = _vec(rng, d)
    v = ball.lmo(g)
    cons = {"type": "ineq", "fun": lambda x: 1.3**p - np.sum(np.abs(x - ball.center) ** p)}
    res = optimize.minimize(lambda x: np.dot(x, g), ball.center, method="SLSQP", constraints=[cons],
                            options={"ftol": 1e-12, "maxiter": 500})
    if ball.contains(res.x, tol=1e-9):
        assert np.dot(v, g) <= res.fun + 1e-7 * (1 + abs(res.fun))
    assert np.dot(v, g) <= np.dot(ball.center, g)


def test_lmo_zero_gradient_returns_center_and_sign_rules():
    c = np.array([1.0, -2.0, 3.0])
    for p in (1, 1.5, 2, math.inf):
        v = LpBall(p, 1.0, c).lmo(np.zeros(3))
        assert np.array_equal(v, c)
    assert np.array_equal(LpBall(math.inf, 1.0, c).lmo([1.0, 0.0, -1.0]), [0.0, -2.0, 4.0])
    assert np.array_equal(LpBall(1, 1.0, c).lmo([1.0, -3.0, 3.0]), [1.0, -1.0, 3.0])  # lowest index i* = 1
    assert np.allclose(LpBall(2, 2.0, np.zeros(2)).lmo([3.0, 4.0]), [-1.2, -1.6], rtol=0, atol=4 * U)


def test_lmo_tiny_and_huge_gradients():
    for p in (1.2, 2.0, 7.0):
        ball = LpBall(p, 1.0, np.zeros(3))
        ref = ball.lmo([1.0, -2.0, 0.5])
        for s in (1e-300, 1e300):
            assert np.allclose(ball.lmo(np.array([1.0, -2.0, 0.5]) * s), ref, rtol=1e-14, atol=0)


# ---------------------------------------------------------------------------------------------------
# ℓ_p ball: diameter and membership


def test_ball_diameter():
    assert LpBall(3.0, 1.25, np.zeros(4)).diameter() == 2.5
    assert LpBall(3.0, 1.25, np.zeros(4)).diameter(3.0) == 2.5
    assert LpBall(math.inf, 1.0, np.zeros(4)).diameter(2) == pytest.approx(4.0)  # 2·√4
    assert LpBall(1, 1.0, np.zeros(4)).diameter(2) == 2.0
    assert LpBall(2, 1.0, np.zeros(4)).diameter(1) == pytest.approx(4.0)  # 2·4^{1/2}


@FIXED
@given(st.integers(1, 4), st.sampled_from([1.0, math.inf]), any_p)
def test_ball_diameter_matches_its_vertices(d, p, r):
    ball = LpBall(p, 0.75, np.arange(d, dtype=float))
    if p == 1.0:
        V = ball.vertices()
    else:
        V = np.array([ball.center + 0.75 * np.array(s) for s in itertools.product((-1.0, 1.0), repeat=d)])
    assert ball.diameter(r) == pytest.approx(Polytope(V).diameter(r), rel=1e-14)


def test_contains():
    ball = LpBall(2, 1.0, [0.0, 0.0])
    assert ball.contains([0.6, 0.8])
    assert not ball.contains([0.6, 0.81])
    assert ball.contains([0.6, 0.81], tol=0.01)


# ---------------------------------------------------------------------------------------------------
# ℓ_p ball: projection


def _check_projection(ball: LpBall, w: np.ndarray, rng) -> np.ndarray:
    P = ball.project(w)
    q_scale = np.abs(ball.center).max() + ball.radius + np.abs(w - ball.center).max()
    assert ball.contains(P, tol=8 * (ball.d + 2) * U * q_scale + 1e-14 * ball.radius)
    r = w - P
    for _ in range(30):  # variational inequality: ⟨w − P, u − P⟩ ≤ 0 for every u in the set
        u = _random_in_ball(ball, rng)
        tol = 1e-12 * (np.linalg.norm(r) * np.linalg.norm(u - P) + q_scale**2 * U * 1e3)
        assert np.dot(r, u - P) <= tol
    # idempotence (P may sit a rounding error outside the sphere, so compare to rounding)
    assert np.allclose(ball.project(P), P, rtol=1e-13, atol=1e-13 * q_scale)
    return P


@FIXED
@given(dims, any_p, st.floats(0.05, 20.0), seeds)
def test_projection_is_optimal_and_idempotent(d, p, radius, seed):
    rng = np.random.default_rng(seed)
    ball = LpBall(p, radius, _vec(rng, d, 3.0))
    for scale in (0.3, 3.0, 30.0):
        w = ball.center + _vec(rng, d, scale * radius)
        _check_projection(ball, w, rng)


@FIXED
@given(dims, any_p, seeds)
def test_projection_leaves_points_inside_unchanged(d, p, seed):
    rng = np.random.default_rng(seed)
    ball = LpBall(p, 2.0, _vec(rng, d))
    u = _random_in_ball(ball, rng)
    assert np.array_equal(ball.project(u), u)


@FEW
@given(st.integers(2, 5), middle_p, seeds)
def test_projection_against_scipy_optimize(d, p, seed):
    rng = np.random.default_rng(seed)
    ball = LpBall(p, 1.0, np.zeros(d))
    w = _vec(rng, d, 3.0)
    P = ball.project(w)
    cons = {"type": "ineq", "fun": lambda x: 1.0 - np.sum(np.abs(x) ** p)}
    res = optimize.minimize(lambda x: 0.5 * np.sum((x - w) ** 2), np.zeros(d), method="SLSQP",
                            constraints=[cons], options={"ftol": 1e-14, "maxiter": 1000})
    if ball.contains(res.x, tol=1e-9):
        assert np.linalg.norm(P - w) <= np.linalg.norm(res.x - w) + 1e-9


def test_projection_closed_forms():
    assert np.allclose(LpBall(2, 1.0, [0.0, 0.0]).project([3.0, 4.0]), [0.6, 0.8], atol=4 * U)
    assert np.array_equal(LpBall(math.inf, 1.0, [0.0, 0.0]).project([3.0, -0.5]), [1.0, -0.5])
    # ℓ_1 (Duchi et al. 2008): y = (3, 1, −0.5), λ = 1 → θ = 2, P = (1, 0, 0)
    assert np.allclose(LpBall(1, 1.0, [0.0, 0.0, 0.0]).project([3.0, 1.0, -0.5]), [1.0, 0.0, 0.0], atol=4 * U)
    # ties: y = (2, 2), λ = 1 → (0.5, 0.5)
    assert np.allclose(LpBall(1, 1.0, [0.0, 0.0]).project([2.0, 2.0]), [0.5, 0.5], atol=4 * U)
    # symmetric point for generic p: the projection of s·(1, …, 1) is d^{-1/p}·(1, …, 1)
    for p in (1.3, 3.0, 11.0):
        assert np.allclose(LpBall(p, 1.0, np.zeros(4)).project(np.full(4, 5.0)), 4 ** (-1 / p), rtol=1e-13)


def test_projection_extreme_exponents_and_scales():
    rng = np.random.default_rng(3)
    for p in (1.001, 1.02, 50.0):
        for scale in (1e-6, 1.0, 1e6):
            ball = LpBall(p, scale, np.zeros(4))
            _check_projection(ball, _vec(rng, 4, 5 * scale), rng)


# ---------------------------------------------------------------------------------------------------
# Frank–Wolfe gap


@FIXED
@given(dims, any_p, seeds)
def test_fw_gap_nonnegative_and_zero_at_the_minimizer(d, p, seed):
    rng = np.random.default_rng(seed)
    ball = LpBall(p, 1.5, _vec(rng, d))
    g = _vec(rng, d)
    for _ in range(10):
        assert fw_gap(g, _random_in_ball(ball, rng), ball) >= 0.0
    v = ball.lmo(g)  # the minimizer of w ↦ ⟨g, w⟩ over the ball
    assert fw_gap(g, v, ball) == 0.0
    assert fw_gap(g, v, ball.lmo) == 0.0
    # at the centre the gap is λ‖g‖_q
    assert fw_gap(g, ball.center, ball) == pytest.approx(1.5 * dual_norm(g, p), rel=1e-12)


@FIXED
@given(st.integers(1, 6), dims, seeds)
def test_fw_gap_on_a_polytope(J, d, seed):
    rng = np.random.default_rng(seed)
    poly = Polytope(rng.normal(size=(J, d)))
    g = _vec(rng, d)
    weights = rng.dirichlet(np.ones(J))
    w = weights @ poly.vertices
    assert fw_gap(g, w, poly) >= 0.0
    assert fw_gap(g, poly.lmo(g)[0], poly) == 0.0
    assert fw_gap(g, poly.lmo(g)[0], poly.lmo) == 0.0  # (vertex, index) pairs accepted


def test_fw_gap_rejects_points_outside_and_wrong_oracles():
    ball = LpBall(2, 1.0, np.zeros(2))
    g = np.array([1.0, 0.0])
    with pytest.raises(ValueError, match="not in the set"):
        fw_gap(g, [-5.0, 0.0], ball)
    with pytest.raises(ValueError, match="minimizer"):
        fw_gap(g, [-1.0, 0.0], lambda grad: np.array([0.0, 0.0]))  # a "maximizing" oracle
    with pytest.raises(TypeError, match="lmo must be callable"):
        fw_gap(g, [0.0, 0.0], 3.0)
    with pytest.raises(ValueError, match=r"lmo\(gradient\) must have shape"):
        fw_gap(g, [0.0, 0.0], lambda grad: np.zeros(3))
    with pytest.raises(ValueError, match="tuple of length 3"):
        fw_gap(g, [0.0, 0.0], lambda grad: (np.zeros(2), 0, 0))
    with pytest.raises(ValueError, match="w must have shape"):
        fw_gap(g, [0.0, 0.0, 0.0], ball)


# ---------------------------------------------------------------------------------------------------
# Hostile inputs


@pytest.mark.parametrize(
    "p, exc, message",
    [
        (0.5, ValueError, "p must be >= 1"),
        (-1, ValueError, "p must be >= 1"),
        (float("nan"), ValueError, "p must be a finite real number, got nan"),
        (-math.inf, ValueError, "p must be >= 1"),
        ("2", TypeError, "p must be a real number"),
        (True, TypeError, "p must be a real number"),
        (None, TypeError, "p must be a real number"),
        (mpmath.mpf(2), TypeError, "p must be float64"),
        (2 + 0j, TypeError, "p must be a real number"),
    ],
)
def test_hostile_exponent(p, exc, message):
    with pytest.raises(exc, match=message):
        dual_exponent(p)
    with pytest.raises(exc, match=message):
        lp_norm([1.0], p)
    with pytest.raises(exc, match=message):
        LpBall(p, 1.0, [0.0])
    with pytest.raises(exc, match=message):
        Polytope([[0.0]]).diameter(p)


@pytest.mark.parametrize(
    "x, exc, message",
    [
        ([1.0, float("nan")], ValueError, "x must contain only finite values"),
        ([1.0, math.inf], ValueError, "x must contain only finite values"),
        ([], ValueError, "x must not be empty"),
        ([[1.0, 2.0]], ValueError, "x must have 1 dimension"),
        (3.0, ValueError, "x must have 1 dimension"),
        ([True, False], TypeError, "dtype bool"),
        (np.array([1 + 1j]), TypeError, "dtype complex"),
        ("12", TypeError, "x must be an array of real numbers"),
        ([mpmath.mpf(1)], TypeError, "x must be float64"),
        (np.array([mpmath.mpf(1)], dtype=object), TypeError, "x must be float64"),
        (np.array([None], dtype=object), TypeError, "x entries must be real numbers"),
        ([[1.0], [1.0, 2.0]], TypeError, "x must be an array of real numbers"),
    ],
)
def test_hostile_vectors(x, exc, message):
    with pytest.raises(exc, match=message):
        lp_norm(x, 2)


def test_hostile_sets():
    with pytest.raises(ValueError, match="radius must be > 0"):
        LpBall(2, 0.0, [0.0])
    with pytest.raises(ValueError, match="radius must be > 0"):
        LpBall(2, -1.0, [0.0])
    with pytest.raises(ValueError, match="radius must be a finite real number"):
        LpBall(2, math.inf, [0.0])
    with pytest.raises(TypeError, match="radius must be float64"):
        LpBall(2, mpmath.mpf(1), [0.0])
    with pytest.raises(ValueError, match="center must contain only finite values"):
        LpBall(2, 1.0, [math.nan])
    with pytest.raises(ValueError, match="center must not be empty"):
        LpBall(2, 1.0, [])
    with pytest.raises(ValueError, match="vertices must have 2 dimension"):
        Polytope([1.0, 2.0])
    with pytest.raises(ValueError, match="vertices must not be empty"):
        Polytope(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="vertices must contain only finite values"):
        Polytope([[0.0, math.inf]])
    ball = LpBall(2, 1.0, [0.0, 0.0])
    with pytest.raises(ValueError, match=r"g must have shape \(2,\)"):
        ball.lmo([1.0])
    with pytest.raises(ValueError, match=r"g must have shape \(2,\)"):
        Polytope([[0.0, 0.0]]).lmo([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"w must have shape \(2,\)"):
        ball.project([1.0])
    with pytest.raises(ValueError, match="tol must be >= 0"):
        ball.contains([0.0, 0.0], tol=-1e-9)
    with pytest.raises(ValueError, match="vertices\\(\\) is defined for the ℓ_1 ball only"):
        ball.vertices()
    with pytest.raises(ValueError, match="norm_p must be >= 1"):
        ball.diameter(0.5)


def test_read_only_state_and_overflow():
    ball = LpBall(3.0, 1.0, [0.0, 0.0])
    with pytest.raises(ValueError):
        ball.center[0] = 1.0
    poly = Polytope([[0.0, 1.0]])
    with pytest.raises(ValueError):
        poly.vertices[0, 0] = 1.0
    far = LpBall(2, 1.0, [-1e308, 0.0])
    with pytest.raises(ValueError, match="overflows float64"):
        far.project([1e308, 0.0])
    with pytest.raises(ValueError, match="overflows float64"):
        Polytope([[1e308, 0.0], [-1e308, 0.0]]).diameter(2)
    with pytest.raises(ValueError, match="overflows float64"):
        lp_norm([1e308, 1e308], 1)
    tiny = LpBall(3.0, 1e-300, [0.0, 0.0])
    with pytest.raises(ValueError, match="too large relative to radius"):
        tiny.project([1e10, 1e10])
