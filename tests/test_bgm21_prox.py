"""Tests of reference.algorithms.bgm21_prox: bgm21 Algorithm 2 (proximally guided private SMD, p = 2) and the
strongly convex subproblem solver asc_dp_gd (rebuilt A_SC)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import optimize

from reference.algorithms.bgm21_prox import (
    ASCConfig,
    ProxConfig,
    asc_dp_gd,
    calibrated_noise_std,
    prox_guided_psmd,
    zcdp_budget,
)
from reference.batching import public_order
from reference.geometry import LpBall

SEED, SECRET, SECRET2 = 7, 2**100 + 99, 2**100 + 100
A = np.diag([1.0, 3.0])


def quad_grad(w, z):
    """f(w, z) = ½wᵀAw − zᵀw: ∇f = Aw − z (convex, 3-smooth)."""
    return A @ w - z


def quad_data(m=10, seed=0):
    return np.random.default_rng(seed).normal([0.5, -0.4], 0.1, size=(m, 2))


def ball2(radius=5.0, center=(0.0, 0.0)):
    return LpBall(2, radius, np.array(center, dtype=float))


def asc(**kw):
    base = dict(epsilon=1.0, delta=1e-5, lipschitz=10.0)
    base.update(kw)
    return ASCConfig(**base)


# ---------------------------------------------------------------------------------------------------
# asc_dp_gd: exact convergence with noise 0


def test_constant_step_linear_rate_to_closed_form_minimizer():
    data, beta, c = quad_data(), 0.5, np.array([0.2, 0.1])
    mu, L_h = 1.0 + beta, 3.0 + beta  # λ_min(A) + β, λ_max(A) + β
    cfg = asc(noise_std=0.0, step="constant", smoothness=3.0, n_steps=60)
    res = asc_dp_gd(quad_grad, data, ball2(), cfg, center=c, beta=beta, mu=mu, noise_seed=SECRET)
    w_star = np.linalg.solve(A + beta * np.eye(2), data.mean(axis=0) + beta * c)  # interior of the ball
    q = 1.0 - mu / L_h
    assert res.rate == pytest.approx(q)
    err = np.linalg.norm(res.iterates - w_star, axis=1)
    for t in range(len(err)):  # ‖w_{t+1} − w*‖ ≤ q^t ‖w_1 − w*‖ (iterates[0] = w_1 = center)
        assert err[t] <= q**t * err[0] * (1 + 1e-9) + 1e-14
    ratios = err[11:31] / err[10:30]  # the slow eigendirection contracts by exactly q: the rate is attained
    np.testing.assert_allclose(ratios, q, rtol=1e-6)
    np.testing.assert_allclose(res.output, w_star, atol=1e-12)


def test_constant_step_constrained_minimizer_is_projection():
    # isotropic h: the constrained minimizer is the projection of the unconstrained one
    def grad(w, z):
        return 2.0 * w - z

    data = np.tile([4.0, 3.0], (5, 1))
    beta, c, ball = 1.0, np.zeros(2), ball2(radius=1.0)
    cfg = asc(noise_std=0.0, step="constant", smoothness=2.0, n_steps=80)
    res = asc_dp_gd(grad, data, ball, cfg, center=c, beta=beta, mu=3.0, noise_seed=SECRET)
    unconstrained = np.array([4.0, 3.0]) / 3.0
    np.testing.assert_allclose(res.output, ball.project(unconstrained), atol=1e-12)
    assert res.rate == 0.0  # μ = L_h: one step lands on the minimizer
    np.testing.assert_allclose(res.iterates[1], res.output, atol=1e-12)


def test_decreasing_step_bound():
    data, beta, c = quad_data(), 0.5, np.array([0.2, 0.1])
    mu, T, ball = 1.0 + beta, 200, ball2(radius=2.0)
    zbar = data.mean(axis=0)
    H = A + beta * np.eye(2)

    def h(w):
        return 0.5 * w @ A @ w - zbar @ w + 0.5 * beta * np.sum((w - c) ** 2)

    w_star = np.linalg.solve(H, zbar + beta * c)
    assert np.linalg.norm(w_star) < 2.0
    G = np.linalg.norm(H, 2) * 2.0 + np.linalg.norm(zbar + beta * c)  # ‖∇h‖_2 on W
    res = asc_dp_gd(quad_grad, data, ball, asc(noise_std=0.0, n_steps=T), center=c, beta=beta, mu=mu,
                    noise_seed=SECRET)
    gap = h(res.output) - h(w_star)
    assert 0.0 <= gap <= 2.0 * G**2 / (mu * (T + 1))
    assert res.rate is None
    np.testing.assert_allclose(res.trace.step_sizes, 2.0 / (mu * (np.arange(1, T + 1) + 1)))


# ---------------------------------------------------------------------------------------------------
# asc_dp_gd: noise, calibration, trace


def test_calibrated_noise_certifies_epsilon():
    data = quad_data(m=20)
    res = asc_dp_gd(quad_grad, data, ball2(), asc(n_steps=15), center=np.zeros(2), beta=0.5, mu=1.5,
                    noise_seed=SECRET)
    tr = res.trace
    assert tr.step_sensitivity == pytest.approx(2 * 10.0 / 20)
    assert tr.noise_std == pytest.approx(calibrated_noise_std(lipschitz=10.0, batch_size=20, n_steps=15,
                                                              epsilon=1.0, delta=1e-5))
    assert tr.rho_zcdp == pytest.approx(zcdp_budget(1.0, 1e-5), rel=1e-12)
    assert tr.epsilon_at_delta == pytest.approx(1.0, rel=1e-12)
    # the noises are σ·N(0, I) from the secret stream (debug only)
    assert res.debug.noises.shape == (15, 2)
    assert res.debug.evaluations == 15 * 20


def test_zcdp_budget_edge_cases():
    assert zcdp_budget(math.inf, 0.5) == math.inf
    assert calibrated_noise_std(lipschitz=1.0, batch_size=3, n_steps=2, epsilon=math.inf, delta=0.1) == 0.0
    rho = zcdp_budget(0.3, 1e-6)
    assert rho + 2 * math.sqrt(rho * math.log(1e6)) == pytest.approx(0.3, rel=1e-12)


def test_solver_noise_only_from_secret_stream():
    data = quad_data()
    kw = dict(center=np.zeros(2), beta=0.5, mu=1.5)
    r1 = asc_dp_gd(quad_grad, data, ball2(), asc(n_steps=5), noise_seed=SECRET, **kw)
    r2 = asc_dp_gd(quad_grad, data, ball2(), asc(n_steps=5), noise_seed=SECRET, **kw)
    r3 = asc_dp_gd(quad_grad, data, ball2(), asc(n_steps=5), noise_seed=SECRET2, **kw)
    np.testing.assert_array_equal(r1.output, r2.output)
    assert not np.allclose(r1.output, r3.output)
    assert r1.secret_seed_source == "user"


# ---------------------------------------------------------------------------------------------------
# Algorithm 2


def quartic_grad(w, z):
    """f(w, z) = Σ_i ¼(w_i² − 1)² + zᵀw: 1-weakly convex (f'' = 3w² − 1 ≥ −1)."""
    return w**3 - w + z


def prox_gap(w, zbar, beta, ball):
    """‖prox^β_F(w) − w‖ for F(v) = ¼(v² − 1)² + z̄v on a 1-D ball (bounded Brent; the prox problem is convex)."""
    assert ball.d == 1
    lo, hi = ball.center[0] - ball.radius, ball.center[0] + ball.radius

    def obj(v):
        return 0.25 * (v * v - 1.0) ** 2 + zbar[0] * v + 0.5 * beta * (v - w[0]) ** 2

    v = optimize.minimize_scalar(obj, bounds=(lo, hi), method="bounded", options=dict(xatol=1e-12)).x
    return abs(v - w[0])


def test_prox_guided_drives_proximal_gap_down_1d():
    rng = np.random.default_rng(3)
    n, R = 200, 10
    data = 0.01 * rng.standard_normal((n, 1))
    ball = LpBall(2, 2.0, np.zeros(1))
    solver = asc(lipschitz=7.0, noise_std=0.0, step="constant", smoothness=11.0, n_steps=200)
    cfg = ProxConfig(n_rounds=R, weak_convexity=1.0, solver=solver)
    assert cfg.beta == 2.0 and cfg.mu == 1.0
    res = prox_guided_psmd(quartic_grad, data, ball, cfg, seed=SEED, noise_seed=SECRET, w_init=[0.3])
    zbar = data.mean(axis=0)
    gaps = [prox_gap(w, zbar, cfg.beta, ball) for w in res.iterates]
    assert gaps[0] > 0.05
    assert gaps[-1] < 0.02 * gaps[0]
    assert all(b <= a * 1.01 + 1e-6 for a, b in zip(gaps, gaps[1:]))
    assert abs(res.final_iterate[0] - 1.0) < 0.05  # near the stationary point +1
    assert res.data_fraction == 1.0 and res.trace.records_used == 200
    np.testing.assert_array_equal(res.output, res.iterates[res.trace.output_index])


def test_prox_guided_2d_default_solver_gradient_mapping():
    rng = np.random.default_rng(4)
    n, R = 160, 8
    data = 0.01 * rng.standard_normal((n, 2))
    ball = LpBall(2, 1.6, np.zeros(2))
    cfg = ProxConfig(n_rounds=R, weak_convexity=1.0, solver=asc(lipschitz=5.0, noise_std=0.0, n_steps=150))
    res = prox_guided_psmd(quartic_grad, data, ball, cfg, seed=SEED, noise_seed=SECRET, w_init=[0.5, -0.6])
    zbar = data.mean(axis=0)

    def gap(w):  # ‖prox^β_F(w) − w‖ by a fine projected-GD solve of the strongly convex prox problem
        v = w.copy()
        for _ in range(3000):
            v = ball.project(v - (1.0 / 12.0) * (v**3 - v + zbar + cfg.beta * (v - w)))
        return np.linalg.norm(v - w)

    gaps = [gap(w) for w in res.iterates]
    assert gaps[0] > 0.1
    assert gaps[-1] < 0.05 * gaps[0]
    assert all(b < a for a, b in zip(gaps, gaps[1:]))
    np.testing.assert_allclose(np.abs(res.final_iterate), [1.0, 1.0], atol=0.01)


def id_data(n, seed=0):
    """Rows (record id, z): the gradient ignores the id but a spy records it."""
    z = 0.01 * np.random.default_rng(seed).standard_normal(n)
    return np.column_stack([np.arange(n, dtype=float), z])


def test_single_pass_and_rounds_read_only_their_batch():
    n, R, T = 53, 5, 3
    data = id_data(n)
    calls = []

    def grad(w, z):
        calls.append(int(z[0]))
        return w**3 - w + z[1]

    cfg = ProxConfig(n_rounds=R, weak_convexity=1.0, solver=asc(lipschitz=7.0, n_steps=T))
    res = prox_guided_psmd(grad, data, LpBall(2, 2.0, np.zeros(1)), cfg, seed=SEED, noise_seed=SECRET)
    m = n // R
    batches = res.trace.batch_indices
    assert [len(b) for b in batches] == [m] * R
    flat = np.concatenate(batches)
    assert len(set(flat.tolist())) == R * m  # disjoint
    np.testing.assert_array_equal(flat, public_order(SEED, n, key=("bgm21", "prox_psmd", "order"))[: R * m])
    assert res.trace.records_used == R * m and res.trace.records_available == n
    assert res.data_fraction == pytest.approx(R * m / n)
    assert len(calls) == R * T * m
    for r in range(R):  # round r touches only (and all of) its own batch
        chunk = calls[r * T * m:(r + 1) * T * m]
        assert set(chunk) == set(batches[r].tolist())
    assert res.iterates.shape == (R, 1)
    for r in range(R):  # each round is centred at the previous iterate
        np.testing.assert_array_equal(res.trace.solver_traces[r].center, res.iterates[r])


def test_prox_noise_only_from_secret_stream():
    data = id_data(40)

    def grad(w, z):
        return w**3 - w + z[1]

    cfg = ProxConfig(n_rounds=4, weak_convexity=1.0, solver=asc(lipschitz=7.0, n_steps=4))
    ball = LpBall(2, 2.0, np.zeros(1))
    r1 = prox_guided_psmd(grad, data, ball, cfg, seed=SEED, noise_seed=SECRET, w_init=[0.5])
    r2 = prox_guided_psmd(grad, data, ball, cfg, seed=SEED, noise_seed=SECRET, w_init=[0.5])
    r3 = prox_guided_psmd(grad, data, ball, cfg, seed=SEED, noise_seed=SECRET2, w_init=[0.5])
    np.testing.assert_array_equal(r1.iterates, r2.iterates)
    np.testing.assert_array_equal(r1.output, r2.output)
    assert not np.allclose(r1.iterates[1:], r3.iterates[1:])
    for a, b in zip(r1.trace.batch_indices, r3.trace.batch_indices):  # public parts do not move
        np.testing.assert_array_equal(a, b)
    assert r1.trace.output_index == r3.trace.output_index
    assert r1.noise_scales == "calibrated"
    # without noise the secret seed is irrelevant
    cfg0 = ProxConfig(n_rounds=4, weak_convexity=1.0, solver=asc(lipschitz=7.0, n_steps=4, noise_std=0.0))
    a = prox_guided_psmd(grad, data, ball, cfg0, seed=SEED, noise_seed=SECRET, w_init=[0.5])
    b = prox_guided_psmd(grad, data, ball, cfg0, seed=SEED, noise_seed=SECRET2, w_init=[0.5])
    np.testing.assert_array_equal(a.iterates, b.iterates)
    assert a.noise_scales == "input"
    # every round's solver is calibrated to the whole (ε, δ) (parallel composition)
    for tr in r1.trace.solver_traces:
        assert tr.epsilon_at_delta == pytest.approx(1.0, rel=1e-12)


# ---------------------------------------------------------------------------------------------------
# Hostile inputs


def test_hostile_inputs():
    data = quad_data()
    ok = dict(center=np.zeros(2), beta=0.5, mu=1.5, noise_seed=SECRET)
    with pytest.raises(ValueError, match="Euclidean"):
        asc_dp_gd(quad_grad, data, LpBall(1, 1.0, np.zeros(2)), asc(), **ok)
    with pytest.raises(TypeError):
        asc_dp_gd(quad_grad, data, "ball", asc(), **ok)
    with pytest.raises(TypeError):
        asc_dp_gd("grad", data, ball2(), asc(), **ok)
    with pytest.raises(ValueError):
        asc_dp_gd(quad_grad, np.array([[np.nan, 1.0]]), ball2(), asc(), **ok)
    with pytest.raises(ValueError):
        asc_dp_gd(quad_grad, np.zeros((0, 2)), ball2(), asc(), **ok)
    with pytest.raises(ValueError, match="lie in W"):
        asc_dp_gd(quad_grad, data, ball2(radius=1.0), asc(), **{**ok, "center": np.array([3.0, 0.0])})
    with pytest.raises(ValueError):
        asc_dp_gd(quad_grad, data, ball2(), asc(), **{**ok, "mu": 0.0})
    with pytest.raises(ValueError):
        asc_dp_gd(quad_grad, data, ball2(), asc(), **{**ok, "beta": -1.0})
    with pytest.raises(ValueError):
        asc_dp_gd(quad_grad, data, ball2(), asc(), **{**ok, "center": np.array([np.inf, 0.0])})
    with pytest.raises(ValueError):  # wrong gradient shape
        asc_dp_gd(lambda w, z: np.zeros(3), data, ball2(), asc(n_steps=1), **ok)
    for bad in (dict(epsilon=0.0), dict(epsilon=float("nan")), dict(delta=1.0), dict(delta=0.0),
                dict(lipschitz=-1.0), dict(n_steps=0), dict(n_steps=2.5), dict(noise_std=-0.1),
                dict(step="sideways"), dict(step="constant")):
        with pytest.raises((ValueError, TypeError)):
            asc(**bad)
    with pytest.raises(TypeError):
        asc(epsilon=mpmath.mpf(1))
    with pytest.raises(TypeError):
        asc_dp_gd(quad_grad, np.array([[mpmath.mpf(1), mpmath.mpf(2)]], dtype=object), ball2(), asc(), **ok)


def test_hostile_inputs_algorithm2():
    data = id_data(20)
    ball = LpBall(2, 2.0, np.zeros(1))

    def grad(w, z):
        return w**3 - w + z[1]

    solver = asc(lipschitz=7.0, n_steps=2)
    with pytest.raises(ValueError, match="exceed"):
        ProxConfig(n_rounds=2, weak_convexity=1.0, beta=1.0, solver=solver)
    with pytest.raises(ValueError, match="exceed"):
        ProxConfig(n_rounds=2, weak_convexity=0.0, solver=solver)  # β = 2ρ = 0
    with pytest.raises(TypeError):
        ProxConfig(n_rounds=2, weak_convexity=1.0, solver=dict(epsilon=1.0))
    with pytest.raises(ValueError):
        ProxConfig(n_rounds=0, weak_convexity=1.0, solver=solver)
    cfg = ProxConfig(n_rounds=2, weak_convexity=1.0, solver=solver)
    with pytest.raises(ValueError, match="single pass"):
        prox_guided_psmd(grad, data, ball, ProxConfig(n_rounds=21, weak_convexity=1.0, solver=solver), seed=SEED,
                         noise_seed=SECRET)
    with pytest.raises(ValueError, match="single pass"):
        prox_guided_psmd(grad, data, ball, ProxConfig(n_rounds=2, weak_convexity=1.0, solver=solver,
                                                      batch_size=11), seed=SEED, noise_seed=SECRET)
    with pytest.raises(ValueError):  # secret equal to the public seed
        prox_guided_psmd(grad, data, ball, cfg, seed=SEED, noise_seed=SEED)
    with pytest.raises(ValueError):
        prox_guided_psmd(grad, data, ball, cfg, seed=-1, noise_seed=SECRET)
    with pytest.raises(ValueError, match="lie in W"):
        prox_guided_psmd(grad, data, ball, cfg, seed=SEED, noise_seed=SECRET, w_init=[5.0])
    with pytest.raises(ValueError, match="Euclidean"):
        prox_guided_psmd(grad, data, LpBall(math.inf, 1.0, np.zeros(1)), cfg, seed=SEED, noise_seed=SECRET)
    with pytest.raises(TypeError):
        prox_guided_psmd(grad, data, ball, solver, seed=SEED, noise_seed=SECRET)
    # a record with a non-finite gradient contributes zero (no error decided by one record), counted in debug
    def spiky(w, z):
        return np.array([np.nan]) if int(z[0]) == 0 else w**3 - w + z[1]

    res = prox_guided_psmd(spiky, data, ball, ProxConfig(n_rounds=1, weak_convexity=1.0, solver=solver,
                                                          batch_size=20), seed=SEED, noise_seed=SECRET)
    assert np.all(np.isfinite(res.final_iterate))
    assert res.debug[0].nonfinite_counts.tolist() == [1, 1]
