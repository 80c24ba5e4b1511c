"""``reference.objectives_bgm21``: every exact population quantity against an independent computation.

* g(a) = E|a − ξ| against mpmath quadrature over the normal law;
* the sphere problem's F (Theorem 5) against an mpmath quadrature in the ANGLE θ (c = cos θ, density ∝ sin^{d−2}θ),
  another parametrisation than the cosine density the module integrates, and against Monte Carlo of the records;
* the cube problem's F (Theorem 6) against brute-force enumeration in mpmath, and Monte Carlo of the records; the
  common-random-numbers estimate against the exact value;
* the sigmoid problem (Theorems 8, 11): F against an mpmath sum, ∇F against mpmath numerical differentiation, the
  Frank–Wolfe gap against brute force over the vertices and the closed form λ‖g‖_q of a ball, L0 and L1 against the
  definitions on the pool, max|φ″| against scipy's maximiser;
* the weakly convex problem (Theorem 16): ρ-weak convexity (eq. (2)) at random triples, and the prox against scipy's
  SLSQP on the same subproblem and against a much longer run of the module's own solver (its certified bound).

Monte Carlo checks are two-sided z-tests at level 1e-6 (|z| ≤ 4.892), seeded from the test's name; each states the
standard error it resolves.
"""

import itertools
import math
import zlib

import mpmath
import numpy as np
import pytest
from scipy import optimize

from reference.geometry import LpBall
from reference.objectives_bgm21 import (CUBE_EXACT_MAX_D, SIGMOID_CURVATURE, abs_cube_problem, abs_deviation,
                                        abs_sphere_problem, sigmoid_pool_problem, sphere_cosine_mean,
                                        weakly_convex_sigmoid_problem)

Z_LEVEL = 4.892  # two-sided normal quantile at level 1e-6


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def mp_abs_deviation(a, s):
    a, s = mpmath.mpf(a), mpmath.mpf(s)
    return a * mpmath.erf(a / (s * mpmath.sqrt(2))) + s * mpmath.sqrt(2 / mpmath.pi) * mpmath.exp(-a * a / (2 * s * s))


@pytest.mark.parametrize("a, s", [(0.0, 0.5), (0.3, 0.5), (-2.0, 0.1), (5.0, 1.0), (1e-3, 2.0)])
def test_abs_deviation_is_the_mean_absolute_deviation(a, s):
    with mpmath.workdps(30):
        density = lambda x: mpmath.npdf(x, 0, s)  # noqa: E731
        exact = mpmath.quad(lambda x: abs(a - x) * density(x), [-mpmath.inf, a, mpmath.inf])
    assert abs(float(abs_deviation(a, s)) - float(exact)) <= 4e-16 * (abs(a) + s)


@pytest.mark.parametrize("d", [2, 3, 5, 20, 50, 51, 200, 1000])
def test_sphere_risk_against_an_angle_quadrature(d):
    problem = abs_sphere_problem(d, noise_std=0.3)
    rng = rng_for(f"sphere-angle-{d}")
    for _ in range(2):
        w = problem.W.project(rng.standard_normal(d))
        r = problem.R_x * float(np.linalg.norm(w - problem.w0))
        s = problem.noise_std
        with mpmath.workdps(30):
            nodes = mpmath.linspace(0, mpmath.pi, 17)
            num = mpmath.quad(lambda t: mp_abs_deviation(r * mpmath.cos(t), s) * mpmath.sin(t) ** (d - 2), nodes)
            den = mpmath.quad(lambda t: mpmath.sin(t) ** (d - 2), nodes)
            exact = problem.L0 * num / den
        value, error = problem.population_risk_with_error(w)
        # the quadrature's tolerance is 1e-13·L0(s + r); allow 10 times that plus the estimate it reports
        assert abs(value - float(exact)) <= 1e-12 * problem.L0 * (s + r) + error, (value, float(exact), error)


def test_sphere_cosine_mean_of_moments():
    """E c² = 1/d and E c⁴ = 3/(d(d + 2)) for a uniform direction (the density's normalisation and shape)."""
    for d in (1, 2, 3, 7, 50, 51, 400):
        m2, _ = sphere_cosine_mean(lambda c: c * c, d)
        m4, _ = sphere_cosine_mean(lambda c: c**4, d)
        assert m2 == pytest.approx(1.0 / d, rel=1e-12) and m4 == pytest.approx(3.0 / (d * (d + 2)), rel=1e-12)


def test_sphere_minimum_and_monotonicity():
    problem = abs_sphere_problem(6, noise_std=0.2, L0=2.0, radius=3.0)
    assert np.linalg.norm(problem.w0) == pytest.approx(1.5, rel=1e-15)
    assert problem.population_risk(problem.w0) == problem.optimal_risk == 2.0 * 0.2 * math.sqrt(2 / math.pi)
    direction = rng_for("sphere-monotone").standard_normal(6)
    direction /= np.linalg.norm(direction)
    values = [problem.population_risk(problem.w0 + t * direction) for t in np.linspace(0.0, 1.5, 16)]
    assert all(b > a for a, b in zip(values, values[1:]))  # F grows with ‖w − w0‖: g is increasing on [0, ∞)
    assert problem.accuracy(problem.w0) == 0.0


@pytest.mark.parametrize("d", [3, 12])
def test_sphere_risk_against_monte_carlo_of_the_records(d):
    """The mean loss over N = 200 000 records drawn by ``sample`` estimates F(w) with standard error ≈ 1e-3."""
    problem = abs_sphere_problem(d, noise_std=0.3, L0=1.5)
    rng = rng_for(f"sphere-mc-{d}")
    X, y = problem.sample(200_000, rng)
    assert np.allclose(np.linalg.norm(X, axis=1), problem.R_x, rtol=1e-14)
    w = problem.W.project(rng.standard_normal(d))
    losses = problem.L0 * np.abs(X @ w - y)
    se = losses.std(ddof=1) / math.sqrt(losses.size)
    assert abs(losses.mean() - problem.population_risk(w)) <= Z_LEVEL * se


@pytest.mark.parametrize("d", [1, 2, 5, 8])
def test_cube_risk_against_brute_force_enumeration(d):
    problem = abs_cube_problem(d, noise_std=0.4, L0=1.3, R_x=0.7)
    assert np.sum(np.abs(problem.w0)) == pytest.approx(0.5, rel=1e-14)
    w = rng_for(f"cube-brute-{d}").uniform(-0.3, 0.3, size=d)
    with mpmath.workdps(30):
        total = mpmath.fsum(mp_abs_deviation(0.7 * sum(sg * (mpmath.mpf(float(a)) - mpmath.mpf(float(b)))
                                                          for sg, a, b in zip(signs, w, problem.w0)), 0.4)
                            for signs in itertools.product((-1, 1), repeat=d))
        exact = 1.3 * total / 2**d
    assert abs(problem.population_risk(w) - float(exact)) <= 1e-14 * float(exact)


def test_cube_risk_against_monte_carlo_and_its_limits():
    """200 000 records (standard error of the mean loss ≈ 2e-4); the CRN estimate with 10⁵ sign vectors."""
    problem = abs_cube_problem(CUBE_EXACT_MAX_D, noise_std=0.2)
    rng = rng_for("cube-mc")
    X, y = problem.sample(200_000, rng)
    assert set(np.unique(X)) == {-1.0, 1.0}
    w = rng.uniform(-0.05, 0.05, size=CUBE_EXACT_MAX_D)
    losses = np.abs(X @ w - y)
    se = losses.std(ddof=1) / math.sqrt(losses.size)
    assert abs(losses.mean() - problem.population_risk(w)) <= Z_LEVEL * se
    assert problem.population_risk(problem.w0) == pytest.approx(problem.optimal_risk, rel=1e-14)
    with pytest.raises(ValueError, match="too large for the exact enumeration"):
        abs_cube_problem(CUBE_EXACT_MAX_D + 1)
    # the common-random-numbers estimate: within its own standard error of the exact value, the same at every call
    crn = abs_cube_problem(10, noise_std=0.2, crn_samples=100_000)
    exact = abs_cube_problem(10, noise_std=0.2)
    w = rng.uniform(-0.1, 0.1, size=10)
    value, se = crn.population_risk_with_error(w)
    assert 0.0 < se and abs(value - exact.population_risk(w)) <= Z_LEVEL * se
    assert crn.population_risk_with_error(w) == (value, se)
    assert exact.W.J == 20 and exact.J == 20 and exact.C1 == 1.0 and exact.D == 2.0


def _mp_risk(problem, w):
    """F(w) in mpmath at the working precision; w a sequence of mpf (or floats)."""
    w = [mpmath.mpf(v) for v in w]
    return mpmath.fsum(1 - mpmath.tanh(mpmath.mpf(float(yi)) * mpmath.fsum(mpmath.mpf(float(a)) * b
                                                                          for a, b in zip(xi, w)))
                       for xi, yi in zip(problem.pool_x, problem.pool_y)) / problem.M


def test_sigmoid_risk_and_gradient_against_mpmath():
    problem = sigmoid_pool_problem(4, pool_size=64)
    w = rng_for("sigmoid-grad").uniform(-0.25, 0.25, size=4)
    with mpmath.workdps(40):
        assert abs(problem.population_risk(w) - float(_mp_risk(problem, w))) <= 2e-15
        numeric = [mpmath.diff(lambda t, j=j: _mp_risk(problem, [*w[:j], t, *w[j + 1:]]), mpmath.mpf(float(w[j])))
                   for j in range(4)]
    # ∇F is a float64 sum of 64 terms of size ≤ 1: rounding below 1e-14
    assert np.max(np.abs(problem.population_gradient(w) - np.array([float(v) for v in numeric]))) <= 1e-14


def test_record_gradient_batch_and_loss():
    problem = sigmoid_pool_problem(7, pool_size=256)
    rng = rng_for("sigmoid-records")
    rows = problem.sample(300, rng)
    assert rows.shape == (300, 8)
    pool = {tuple(r) for r in problem.records}
    assert all(tuple(r) in pool for r in rows)
    w = rng.uniform(-0.2, 0.2, size=7)
    G = problem.gradients(w, rows)
    assert np.array_equal(G, np.array([problem.gradient(w, z) for z in rows]))  # bit for bit
    h = 1e-6
    for z in rows[:5]:  # central differences of the loss: error O(h²·max|φ‴|·‖x‖³) ≤ 1e-10 here
        fd = [(problem.loss(w + h * e, z) - problem.loss(w - h * e, z)) / (2 * h) for e in np.eye(7)]
        assert np.max(np.abs(problem.gradient(w, z) - fd)) <= 1e-8


def test_sigmoid_constants_are_the_definitions():
    res = optimize.minimize_scalar(lambda t: -abs(2 * math.tanh(t) / math.cosh(t) ** 2), bounds=(0, 3),
                                   method="bounded", options={"xatol": 1e-12})
    assert -res.fun == pytest.approx(SIGMOID_CURVATURE, rel=1e-12)  # max|φ″|, φ″(t) = 2 tanh t sech² t
    rng = rng_for("sigmoid-constants")
    for geometry, p in (("polytope", 1.0), ("lp_ball", 2.0), ("lp_ball", 1.5)):
        problem = sigmoid_pool_problem(6, pool_size=500, geometry=geometry, p=p)
        q = math.inf if p == 1.0 else p / (p - 1)
        assert problem.L0 == max(np.linalg.norm(x, ord=q) for x in problem.pool_x)
        for _ in range(200):
            z = problem.records[rng.integers(problem.M)]
            w, v = rng.uniform(-0.5, 0.5, size=(2, 6))
            assert np.linalg.norm(problem.gradient(w, z), ord=q) <= problem.L0 * (1 + 1e-15)
            change = np.linalg.norm(problem.gradient(w, z) - problem.gradient(v, z), ord=q)
            assert change <= problem.L1 * np.linalg.norm(w - v, ord=p) * (1 + 1e-12)


def test_frank_wolfe_gap_against_brute_force():
    rng = rng_for("sigmoid-gap")
    poly = sigmoid_pool_problem(5, pool_size=300, geometry="polytope")
    assert poly.J == 10 and poly.W.J == 10
    for _ in range(5):
        w = LpBall(1.0, 1.0, np.zeros(5)).project(rng.standard_normal(5))
        g = poly.population_gradient(w)
        brute = max(float(np.dot(g, w - v)) for v in poly.W.vertices)
        assert poly.accuracy(w) == pytest.approx(brute, abs=1e-15)
    for p in (2.0, 1.5):
        ball = sigmoid_pool_problem(5, pool_size=300, geometry="lp_ball", p=p, radius=0.8)
        q = p / (p - 1)
        for _ in range(5):
            w = ball.W.project(rng.standard_normal(5))
            g = ball.population_gradient(w)
            closed = float(np.dot(g, w)) + 0.8 * float(np.linalg.norm(g, ord=q))  # max_{‖v‖_p ≤ λ} ⟨g, −v⟩ = λ‖g‖_q
            assert ball.accuracy(w) == pytest.approx(closed, rel=1e-12, abs=1e-15)
    candidates = rng.uniform(-0.1, 0.1, size=(6, 5))
    assert poly.mean_accuracy(candidates) == pytest.approx(np.mean([poly.accuracy(w) for w in candidates]), rel=1e-15)


def test_weak_convexity_inequality():
    problem = weakly_convex_sigmoid_problem(4, pool_size=400)
    assert problem.rho == problem.L1 and problem.beta == 2 * problem.rho
    rng = rng_for("weak-convexity")
    worst = -math.inf
    for _ in range(300):
        w, v = (problem.W.project(u) for u in rng.standard_normal((2, 4)))
        lam = rng.random()
        lhs = problem.population_risk(lam * w + (1 - lam) * v)
        rhs = (lam * problem.population_risk(w) + (1 - lam) * problem.population_risk(v)
               + problem.rho * lam * (1 - lam) / 2 * float(np.sum((w - v) ** 2)))
        worst = max(worst, lhs - rhs)
    assert worst <= 1e-15  # eq. (2) with ρ = L1 (Corollary 25)


def test_prox_against_scipy_and_a_longer_run():
    problem = weakly_convex_sigmoid_problem(4, pool_size=400, radius=0.5)
    long_run = weakly_convex_sigmoid_problem(4, pool_size=400, radius=0.5, tol=1e-15)
    rng = rng_for("prox")
    for w in [np.zeros(4), *(problem.W.project(2 * u) for u in rng.standard_normal((3, 4)))]:
        point = problem.prox(w)
        assert point.error_bound <= problem.tol and 0 < point.rate < 1
        assert np.linalg.norm(point.point - long_run.prox(w).point) <= problem.tol + 1e-14

        def h(v):
            return problem.population_risk(v) + problem.beta / 2 * float(np.sum((v - w) ** 2))

        def grad(v):
            return problem.population_gradient(v) + problem.beta * (v - w)

        res = optimize.minimize(h, w, jac=grad, method="SLSQP",
                                constraints=[{"type": "ineq", "fun": lambda v: 0.25 - float(v @ v),
                                              "jac": lambda v: -2 * v}], options={"ftol": 1e-15, "maxiter": 500})
        assert res.success
        # h is (β − ρ)-strongly convex: ‖v − v*‖² ≤ 2(h(v) − h(v*))/(β − ρ); SLSQP's point is at least as good
        # as this bound allows for a gap of its ftol
        assert h(point.point) <= h(res.x) + 1e-14
        assert np.linalg.norm(point.point - res.x) <= math.sqrt(2 * max(h(res.x) - h(point.point), 0) / problem.rho
                                                                + 1e-13) + problem.tol + 1e-7
        assert problem.accuracy(w) == pytest.approx(float(np.linalg.norm(point.point - w)), abs=1e-15)
    assert problem.normalised(0.1) == pytest.approx(max(1.0, problem.beta * problem.D) * 0.1)
    with pytest.raises(ValueError, match="must exceed rho"):
        weakly_convex_sigmoid_problem(4, pool_size=400, beta=1.0)


def test_refusals_name_the_parameter():
    with pytest.raises(ValueError, match="p must be 1"):
        sigmoid_pool_problem(3, geometry="polytope", p=2.0)
    with pytest.raises(ValueError, match="1 < p <= 2"):
        sigmoid_pool_problem(3, geometry="lp_ball", p=1.0)
    with pytest.raises(ValueError, match="geometry"):
        sigmoid_pool_problem(3, geometry="simplex")
    with pytest.raises(ValueError, match="noise_std"):
        abs_sphere_problem(3, noise_std=0.0)
    with pytest.raises(TypeError, match="rng"):
        abs_sphere_problem(3).sample(10, 3)
    with pytest.raises(ValueError, match="candidates"):
        abs_sphere_problem(3).mean_accuracy(np.zeros((0, 3)))
    with pytest.raises(ValueError):
        abs_cube_problem(3).population_risk([np.nan, 0.0, 0.0])
