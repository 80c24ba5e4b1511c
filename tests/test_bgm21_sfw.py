"""Tests of reference.algorithms.bgm21_sfw: bgm21 Algorithm 1 (A_polySFW) and Algorithm 6 (A_nSFW)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from reference.algorithms.bgm21_sfw import (
    NoisySFWConfig,
    PolySFWConfig,
    RecursiveGradientEstimator,
    inverse_sqrt_step,
    noisy_sfw,
    poly_sfw,
    printed_lap_scale,
    printed_noise_factor,
    sfw_batch_sizes,
    sfw_data_budget,
)
from reference.batching import public_order
from reference.geometry import LpBall, Polytope, fw_gap
from reference.rng import Streams
from reference.selection import laplace_noisy_argmin

SEED, SECRET = 11, 2**100 + 12345
D4 = 4
TARGET = np.array([0.1, 0.2, 0.3, 0.4])


def quad_grad(w, z):
    """f(w, z) = ½‖w − TARGET − z‖²: ∇f = w − TARGET − z (1-smooth; z a (d,) row)."""
    return w - TARGET - z


def simplex():
    return Polytope(np.eye(D4))


def poly_config(**kw):
    base = dict(n_rounds=4, batch_size=16, epsilon=1.0, delta=1e-5, lipschitz=2.0, smoothness=1.0)
    base.update(kw)
    return PolySFWConfig(**base)


def noisy_config(**kw):
    base = dict(n_rounds=4, batch_size=16, epsilon=1.0, delta=1e-5, lipschitz=2.0, smoothness=1.0)
    base.update(kw)
    return NoisySFWConfig(**base)


def small_data(n, d=D4, seed=0):
    return 0.05 * np.random.default_rng(seed).standard_normal((n, d))


# ---------------------------------------------------------------------------------------------------
# Batch schedule and data budget


def test_batch_schedule_is_b_then_ceil_b_over_t_plus_1():
    assert sfw_batch_sizes(10, 3) == [[10], [10, 5], [10, 5, 4, 3]]
    assert sfw_batch_sizes(10, 3, rounding="floor") == [[10], [10, 5], [10, 5, 3, 2]]
    assert sfw_data_budget(10, 3) == 10 + 15 + 22
    for b, R in [(1, 1), (7, 3), (64, 7), (100, 5)]:
        sizes = sfw_batch_sizes(b, R)
        assert [len(s) for s in sizes] == [2**r for r in range(R)]
        for s in sizes:
            assert all(m == math.ceil(b / (t + 1)) and m >= 1 for t, m in enumerate(s))
        assert sfw_data_budget(b, R) == sum(map(sum, sizes))


def test_batch_schedule_refuses_empty_batches():
    with pytest.raises(ValueError, match="2\\*\\*\\(n_rounds - 1\\)"):
        sfw_batch_sizes(3, 4)  # 2^3 = 8 > 3
    with pytest.raises(ValueError):
        sfw_batch_sizes(0, 1)
    with pytest.raises(ValueError):
        sfw_batch_sizes(4, 0)
    with pytest.raises(ValueError, match="rounding"):
        sfw_batch_sizes(4, 1, rounding="round")


# ---------------------------------------------------------------------------------------------------
# Single pass


@pytest.mark.parametrize("algorithm", ["poly", "noisy"])
def test_single_pass_each_record_read_in_one_step_only(algorithm):
    cfg = poly_config() if algorithm == "poly" else noisy_config()
    budget = sfw_data_budget(cfg.batch_size, cfg.n_rounds)
    n = budget + 7
    data = np.column_stack([np.arange(n, dtype=float), np.zeros((n, D4 - 1))])  # row i carries its index
    reads: list[tuple[int, tuple]] = []

    def grad(w, z):
        reads.append((int(z[0]), tuple(w)))
        return w - TARGET

    if algorithm == "poly":
        res = poly_sfw(grad, data, simplex(), cfg, seed=SEED, noise_seed=SECRET)
    else:
        res = noisy_sfw(grad, data, LpBall(2.0, 1.0, np.zeros(D4)), cfg, seed=SEED, noise_seed=SECRET)
    tr = res.trace
    used = np.concatenate(tr.batch_indices)
    assert len(used) == len(set(used.tolist())) == budget == tr.records_used
    assert tr.records_available == n and res.data_fraction == pytest.approx(budget / n)
    expected_order = public_order(SEED, n, key=("bgm21", "poly_sfw" if algorithm == "poly" else "noisy_sfw", "order"))
    np.testing.assert_array_equal(used, expected_order[:budget])
    assert list(tr.batch_sizes) == [m for s in sfw_batch_sizes(cfg.batch_size, cfg.n_rounds) for m in s]
    # each record read only in its own step: once at t = 0, twice (w_r^t and w_r^{t−1}) at t ≥ 1
    counts = {}
    for i, _ in reads:
        counts[i] = counts.get(i, 0) + 1
    for k, batch in enumerate(tr.batch_indices):
        for i in batch.tolist():
            assert counts[i] == (1 if tr.steps[k] == 0 else 2)
    assert set(counts) == set(used.tolist()) and res.debug.evaluations == len(reads)


@pytest.mark.parametrize("algorithm", ["poly", "noisy"])
def test_budget_larger_than_data_is_refused_before_reading(algorithm):
    cfg = poly_config() if algorithm == "poly" else noisy_config()
    n = sfw_data_budget(cfg.batch_size, cfg.n_rounds) - 1
    calls = []

    def grad(w, z):
        calls.append(1)
        return w - TARGET

    with pytest.raises(ValueError, match="single pass"):
        if algorithm == "poly":
            poly_sfw(grad, np.zeros((n, 1)), simplex(), cfg, seed=SEED, noise_seed=SECRET)
        else:
            noisy_sfw(grad, np.zeros((n, 1)), LpBall(2.0, 1.0, np.zeros(D4)), cfg, seed=SEED, noise_seed=SECRET)
    assert calls == []


def test_exact_budget_uses_all_data():
    cfg = poly_config()
    n = sfw_data_budget(cfg.batch_size, cfg.n_rounds)
    res = poly_sfw(quad_grad, small_data(n), simplex(), cfg, seed=SEED, noise_seed=SECRET)
    assert res.trace.records_used == n and res.data_fraction == 1.0
    assert res.iterates.shape == (2**cfg.n_rounds - 1, D4)
    assert 0 <= res.trace.output_index < 2**cfg.n_rounds - 1
    np.testing.assert_array_equal(res.output, res.iterates[res.trace.output_index])


# ---------------------------------------------------------------------------------------------------
# The recursive estimator


def test_estimator_recursion_identity_on_quadratic():
    rng = np.random.default_rng(3)
    A = np.diag([1.0, 2.0, 0.5])
    data = rng.standard_normal((20, 3))
    grad = lambda w, z: A @ w - z  # f(w, z) = ½wᵀAw − ⟨z, w⟩
    est = RecursiveGradientEstimator(grad, data, 3)
    w0, w1, w2 = rng.standard_normal((3, 3))
    g0 = est.start(w0, np.array([0, 1, 2, 3]))
    np.testing.assert_allclose(g0, A @ w0 - data[:4].mean(0), rtol=0, atol=1e-14)
    eta = 0.7
    B = np.array([5, 6])
    g1 = est.update(w1, w0, B, eta)
    delta = A @ (w1 - w0)  # exact: differences of a quadratic do not depend on z
    fresh = A @ w1 - data[B].mean(0)
    np.testing.assert_allclose(est.last_difference, delta, atol=1e-14)
    np.testing.assert_allclose(g1, (1 - eta) * (g0 + delta) + eta * fresh, atol=1e-14)
    # error recursion e_t = (1 − η)e_{t−1} + η(mean z̄ ... ) with ∇F(w) = A w − μ
    mu = data.mean(0)
    e0 = g0 - (A @ w0 - mu)
    e1 = g1 - (A @ w1 - mu)
    np.testing.assert_allclose(e1, (1 - eta) * e0 - eta * (data[B].mean(0) - mu), atol=1e-13)
    # noise enters additively where Algorithm 6 puts it
    est2 = RecursiveGradientEstimator(grad, data, 3)
    n0, nh, n1 = rng.standard_normal((3, 3))
    h0 = est2.start(w0, np.array([0, 1, 2, 3]), noise=n0)
    h1 = est2.update(w1, w0, B, eta, difference_noise=nh, gradient_noise=n1)
    np.testing.assert_allclose(h0, g0 + n0, atol=1e-14)
    np.testing.assert_allclose(h1, (1 - eta) * (g0 + n0 + delta + nh) + eta * (fresh + n1), atol=1e-13)


def test_estimator_is_exactly_unbiased_by_enumeration():
    """Population = K points, batches of one record drawn uniformly: average over all K^T choices is exact."""
    pop = np.array([[1.0, -2.0], [0.5, 3.0], [-4.0, 0.25]])
    A = np.array([[2.0, 0.3], [0.3, 1.0]])
    grad = lambda w, z: A @ w - z
    ws = [np.array([0.1, 0.2]), np.array([-0.3, 0.5]), np.array([0.7, -0.1])]  # frozen trajectory
    etas = [1.0, 1 / math.sqrt(2), 1 / math.sqrt(3)]
    mean_error = np.zeros((3, 2))
    for choice in itertools.product(range(3), repeat=3):
        est = RecursiveGradientEstimator(grad, pop, 2)
        g = est.start(ws[0], np.array([choice[0]]))
        errors = [g - (A @ ws[0] - pop.mean(0))]
        for t in (1, 2):
            g = est.update(ws[t], ws[t - 1], np.array([choice[t]]), etas[t])
            errors.append(g - (A @ ws[t] - pop.mean(0)))
        mean_error += np.array(errors) / 27
    np.testing.assert_allclose(mean_error, 0.0, atol=1e-14)


def test_estimator_refuses_misuse():
    est = RecursiveGradientEstimator(quad_grad, small_data(5), D4)
    with pytest.raises(RuntimeError):
        est.update(np.zeros(D4), np.zeros(D4), np.array([0]), 0.5)
    with pytest.raises(ValueError):
        est.start(np.zeros(D4), np.array([5]))
    with pytest.raises(ValueError):
        est.start(np.zeros(D4), np.array([], dtype=int))
    est.start(np.zeros(D4), np.array([0]))
    for bad in (0.0, 1.5, math.nan):
        with pytest.raises(ValueError):
            est.update(np.zeros(D4), np.zeros(D4), np.array([1]), bad)
    with pytest.raises(TypeError):
        RecursiveGradientEstimator("grad", small_data(5), D4)
    bad_shape = RecursiveGradientEstimator(lambda w, z: np.zeros(3), small_data(5), D4)
    with pytest.raises(ValueError, match="shape"):
        bad_shape.start(np.zeros(D4), np.array([0]))


def test_nonfinite_record_contributes_zero():
    data = small_data(3)
    grad = lambda w, z: np.full(D4, np.nan) if z[0] == data[1, 0] else w - z
    est = RecursiveGradientEstimator(grad, data, D4)
    g = est.start(np.zeros(D4), np.array([0, 1, 2]))
    np.testing.assert_allclose(g, -(data[0] + data[2]) / 3)
    assert est.nonfinite_counts == [1]


# ---------------------------------------------------------------------------------------------------
# Randomness contract


def test_same_secret_same_run_and_public_seed_does_not_fix_noise():
    cfg = poly_config(lap_scales=(5.0, 5.0, 5.0, 5.0))  # large noise: selections are mostly noise-driven
    data = small_data(sfw_data_budget(16, 4))
    a = poly_sfw(quad_grad, data, simplex(), cfg, seed=SEED, noise_seed=SECRET)
    b = poly_sfw(quad_grad, data, simplex(), cfg, seed=SEED, noise_seed=SECRET)
    np.testing.assert_array_equal(a.trace.selected, b.trace.selected)
    np.testing.assert_array_equal(a.iterates, b.iterates)
    c = poly_sfw(quad_grad, data, simplex(), cfg, seed=SEED, noise_seed=SECRET + 1)
    assert not np.array_equal(a.trace.selected, c.trace.selected)
    fresh1 = poly_sfw(quad_grad, data, simplex(), cfg, seed=SEED)  # None: fresh OS entropy
    fresh2 = poly_sfw(quad_grad, data, simplex(), cfg, seed=SEED)
    assert fresh1.secret_seed_source == "os_entropy"
    assert not np.array_equal(fresh1.trace.selected, fresh2.trace.selected)
    # public order and output index come from the public seed only
    for f in (c, fresh1, fresh2):
        assert f.trace.output_index == a.trace.output_index
        for x, y in zip(f.trace.batch_indices, a.trace.batch_indices):
            np.testing.assert_array_equal(x, y)


def test_noisy_sfw_noise_comes_from_the_secret_stream():
    cfg = noisy_config()
    data = small_data(sfw_data_budget(16, 4))
    ball = LpBall(1.5, 1.0, np.zeros(D4))
    a = noisy_sfw(quad_grad, data, ball, cfg, seed=SEED, noise_seed=SECRET)
    b = noisy_sfw(quad_grad, data, ball, cfg, seed=SEED, noise_seed=SECRET)
    np.testing.assert_array_equal(a.iterates, b.iterates)
    c = noisy_sfw(quad_grad, data, ball, cfg, seed=SEED, noise_seed=SECRET + 1)
    assert not np.array_equal(a.trace.noisy_estimates, c.trace.noisy_estimates)
    streams = Streams(SECRET)
    for k, (r, t) in enumerate(zip(a.trace.rounds, a.trace.steps)):
        rng = streams.generator("bgm21", "noisy_sfw", "noise", int(r), int(t))
        np.testing.assert_array_equal(a.debug.gradient_noise[k], a.trace.sigma[k] * rng.standard_normal(D4))
        if t >= 1:
            np.testing.assert_array_equal(a.debug.difference_noise[k], a.trace.sigma_hat[k] * rng.standard_normal(D4))


def test_secret_seed_equal_to_public_seed_is_refused():
    data = small_data(sfw_data_budget(16, 4))
    with pytest.raises(ValueError, match="public seed"):
        poly_sfw(quad_grad, data, simplex(), poly_config(), seed=SEED, noise_seed=SEED)
    with pytest.raises(ValueError, match="public seed"):
        noisy_sfw(quad_grad, data, LpBall(2.0, 1.0, np.zeros(D4)), noisy_config(), seed=SEED, noise_seed=SEED)


# ---------------------------------------------------------------------------------------------------
# LMO choices = Laplace report-noisy-min of ⟨v, ∇⟩


def test_selected_vertices_are_the_noisy_argmin_of_the_scores():
    cfg = poly_config(epsilon=0.5)
    data = small_data(sfw_data_budget(16, 4))
    P = LpBall(1.0, 1.0, np.zeros(D4))
    P = Polytope(P.vertices())
    res = poly_sfw(quad_grad, data, P, cfg, seed=SEED, noise_seed=SECRET)
    streams = Streams(SECRET)
    tr = res.trace
    for k, (r, t) in enumerate(zip(tr.rounds, tr.steps)):
        scores = P.vertices @ res.debug.estimates[k]
        j = laplace_noisy_argmin(scores, tr.lap_scales[k], streams.generator("bgm21", "poly_sfw", "noise", int(r), int(t)))
        assert j == tr.selected[k]
        # the next iterate is the Frank–Wolfe step toward that vertex
        nxt = res.iterates[k + 1] if k + 1 < len(res.iterates) else res.final_iterate
        eta = tr.step_sizes[k]
        np.testing.assert_allclose(nxt, (1 - eta) * res.iterates[k] + eta * P.vertices[j], atol=1e-15)
    # η_{r,0} = 1: each round's second iterate is the selected vertex itself
    for k in np.flatnonzero((tr.steps == 0)):
        nxt = res.iterates[k + 1] if k + 1 < len(res.iterates) else res.final_iterate
        np.testing.assert_array_equal(nxt, P.vertices[tr.selected[k]])


def test_printed_lap_scale_and_sensitivities_in_trace():
    cfg = poly_config()
    data = small_data(sfw_data_budget(16, 4))
    P = simplex()
    res = poly_sfw(quad_grad, data, P, cfg, seed=SEED, noise_seed=SECRET)
    tr = res.trace
    D = P.diameter(1.0)  # = 2
    assert D == 2.0 and res.noise_scales == "printed"
    L0, L1, b = 2.0, 1.0, 16
    for k, (r, t) in enumerate(zip(tr.rounds, tr.steps)):
        s = 2 * D * (L0 + L1 * D) * 2.0**r * math.sqrt(math.log(1e5)) / (b * 1.0)
        assert tr.lap_scales[k] == pytest.approx(s, rel=1e-14)
        m = tr.batch_sizes[k]
        if t == 0:
            G = 2 * L0 / b
        else:
            G = (2 / m) * ((1 - inverse_sqrt_step(r, t)) * inverse_sqrt_step(r, t - 1) * L1 * D
                          + inverse_sqrt_step(r, t) * L0)
            assert G <= 2 * (L1 * D + L0) * math.sqrt(t + 1) / b + 1e-15  # the bound G_t ≤ 2(L1D + L0)√(t+1)/b
        assert tr.estimator_sensitivity[k] == pytest.approx(G, rel=1e-14)
        assert tr.score_sensitivity[k] == pytest.approx(0.5 * D * G, rel=1e-14)
        assert tr.affected_steps[k] == 2**r - t
    assert printed_lap_scale(2, diameter=2, lipschitz=2, smoothness=1, b=16, epsilon=math.inf, delta=0.1) == 0.0


# ---------------------------------------------------------------------------------------------------
# Noise 0: deterministic Frank–Wolfe


def _hand_fw(grad_F, vertices, w0, R):
    """Exact Frank–Wolfe with Algorithm 1's schedule: rounds of 2^r steps, η_{r,t} = 1/√(t+1)."""
    w, out = np.array(w0), []
    for r in range(R):
        for t in range(2**r):
            out.append(w.copy())
            g = grad_F(w)
            j = int(np.argmin([float(np.dot(v, g)) for v in vertices]))
            eta = 1 / math.sqrt(t + 1)
            w = (1 - eta) * w + eta * vertices[j]
    return np.array(out)


@pytest.mark.parametrize("polytope", ["simplex", "l1ball"])
def test_noise_zero_is_deterministic_frank_wolfe_and_gap_decreases(polytope):
    R, b = 6, 64
    P = simplex() if polytope == "simplex" else Polytope(LpBall(1.0, 1.0, np.zeros(D4)).vertices())
    data = np.zeros((sfw_data_budget(b, R), 1))  # gradient independent of z: the estimator is exact
    grad = lambda w, z: w - TARGET
    cfg = poly_config(n_rounds=R, batch_size=b, epsilon=math.inf)
    a = poly_sfw(grad, data, P, cfg, seed=SEED, noise_seed=SECRET)
    c = poly_sfw(grad, data, P, cfg, seed=SEED + 1)  # other seeds: same iterates, no noise at all
    assert np.all(a.trace.lap_scales == 0.0)
    np.testing.assert_array_equal(a.iterates, c.iterates)
    np.testing.assert_allclose(a.debug.estimates, a.iterates - TARGET, atol=1e-14)  # ∇_r^t = ∇F(w_r^t)
    np.testing.assert_allclose(a.iterates, _hand_fw(lambda w: w - TARGET, P.vertices, P.vertices[0], R), atol=1e-14)
    gaps = np.array([fw_gap(w - TARGET, w, P) for w in a.iterates])
    best = [gaps[a.trace.rounds == r].min() for r in range(R)]
    assert all(x >= y for x, y in zip(best, best[1:]))  # the best gap of a round never gets worse ...
    assert all(x > y for x, y in zip(best[1:], best[2:]))  # ... and improves strictly once rounds have > 1 step
    assert best[-1] < 0.05 * best[0]
    final_gap = fw_gap(a.final_iterate - TARGET, a.final_iterate, P)
    assert final_gap < 0.1 * gaps[0]
    assert final_gap <= 2.0 * 2.0 * (1 + 2.0) / math.sqrt(2 ** (R - 1))  # O(D(L0 + L1D)/√(2^{R−1})) scale


def test_noisy_sfw_noise_zero_is_deterministic_frank_wolfe_over_l2_ball():
    R, b = 5, 32
    ball = LpBall(2.0, 1.0, np.zeros(D4))
    target = np.array([2.0, -1.0, 0.5, 0.0])  # outside the ball: the minimizer is on the sphere
    data = np.zeros((sfw_data_budget(b, R), 1))
    cfg = noisy_config(n_rounds=R, batch_size=b, noise_factor=0.0)
    res = noisy_sfw(lambda w, z: w - target, data, ball, cfg, seed=SEED, noise_seed=SECRET)
    assert res.noise_scales == "input" and np.all(res.trace.sigma == 0) and np.all(res.debug.gradient_noise == 0)
    w, expect = np.zeros(D4), []
    for r in range(R):
        for t in range(2**r):
            expect.append(w.copy())
            eta = 1 / math.sqrt(t + 1)
            w = (1 - eta) * w + eta * ball.lmo(w - target)
    np.testing.assert_allclose(res.iterates, np.array(expect), atol=1e-13)
    gaps = [fw_gap(x - target, x, ball) for x in res.iterates]
    assert fw_gap(res.final_iterate - target, res.final_iterate, ball) < 0.1 * gaps[0]


# ---------------------------------------------------------------------------------------------------
# Algorithm 6 noise: printed vs corrected σ̂ (the erratum)


def test_sigma_hat_prev_is_calibrated_and_printed_is_not():
    eps, delta = 1.0, 1e-5
    L = math.log(1 / delta)
    data = small_data(sfw_data_budget(16, 4))
    ball = LpBall(1.5, 1.0, np.zeros(D4))
    prev = noisy_sfw(quad_grad, data, ball, noisy_config(), seed=SEED, noise_seed=SECRET)
    printed = noisy_sfw(quad_grad, data, ball, noisy_config(sigma_hat_eta="printed"), seed=SEED, noise_seed=SECRET)
    c = printed_noise_factor(d=D4, p=1.5, b=16, epsilon=eps, delta=delta)
    assert c == pytest.approx(4 * D4 ** (1 / 1.5 - 0.5) * math.sqrt(L) / 16)
    tr = prev.trace
    for k, (r, t) in enumerate(zip(tr.rounds, tr.steps)):
        assert tr.sigma[k] == pytest.approx(c * 2.0 * (t + 1))
        if t == 0:
            assert tr.mu[k] == pytest.approx(eps / (2 * math.sqrt(L)))
        else:
            assert tr.sigma_hat[k] == pytest.approx(c * 1.0 * 2.0 * inverse_sqrt_step(r, t - 1) * (t + 1))
            assert tr.mu[k] <= eps / math.sqrt(2 * L) * (1 + 1e-12)
    t1 = np.flatnonzero(tr.steps == 1)
    np.testing.assert_allclose(tr.mu[t1], eps / math.sqrt(2 * L), rtol=1e-12)  # b = 16 even: m_1 = b/2 exactly
    np.testing.assert_allclose(printed.trace.mu[t1], math.sqrt(3) * eps / (2 * math.sqrt(L)), rtol=1e-12)
    assert np.all(printed.trace.mu[t1] > tr.mu[t1])


# ---------------------------------------------------------------------------------------------------
# Hostile inputs


@pytest.mark.parametrize("kwargs, error", [
    (dict(epsilon=math.nan), ValueError),
    (dict(epsilon=0.0), ValueError),
    (dict(epsilon=-1.0), ValueError),
    (dict(delta=0.0), ValueError),
    (dict(delta=1.0), ValueError),
    (dict(delta="0.1"), TypeError),
    (dict(n_rounds=0), ValueError),
    (dict(n_rounds=2.0), TypeError),
    (dict(n_rounds=100), ValueError),
    (dict(batch_size=0), ValueError),
    (dict(batch_size=True), TypeError),
    (dict(n_rounds=6, batch_size=16), ValueError),  # 2^5 > 16
    (dict(lipschitz=0.0), ValueError),
    (dict(lipschitz=math.inf), ValueError),
    (dict(smoothness=-1.0), ValueError),
    (dict(diameter=0.0), ValueError),
])
def test_hostile_configs(kwargs, error):
    with pytest.raises(error):
        poly_config(**kwargs)
    with pytest.raises(error):
        noisy_config(**kwargs)


def test_hostile_config_specific_fields():
    with pytest.raises(ValueError, match="one scale per round"):
        poly_config(lap_scales=(1.0,))
    with pytest.raises(ValueError):
        poly_config(lap_scales=(1.0, -1.0, 1.0, 1.0))
    with pytest.raises(ValueError):
        poly_config(lap_scales=(1.0, math.nan, 1.0, 1.0))
    with pytest.raises(ValueError, match="norm_p"):
        poly_config(norm_p=0.5)
    with pytest.raises(ValueError, match="sigma_hat_eta"):
        noisy_config(sigma_hat_eta="paper")
    with pytest.raises(ValueError):
        noisy_config(noise_factor=-1.0)


def test_hostile_run_arguments():
    data = small_data(sfw_data_budget(16, 4))
    P, cfg = simplex(), poly_config()
    ball = LpBall(2.0, 1.0, np.zeros(D4))
    with pytest.raises(TypeError):
        poly_sfw(quad_grad, data, ball, cfg, seed=SEED, noise_seed=SECRET)  # not a polytope
    with pytest.raises(TypeError):
        poly_sfw(quad_grad, data, P, noisy_config(), seed=SEED, noise_seed=SECRET)
    with pytest.raises(TypeError):
        poly_sfw("grad", data, P, cfg, seed=SEED, noise_seed=SECRET)
    with pytest.raises(ValueError):
        poly_sfw(quad_grad, np.full_like(data, np.nan), P, cfg, seed=SEED, noise_seed=SECRET)
    with pytest.raises(ValueError):
        poly_sfw(quad_grad, data, P, cfg, seed=-1, noise_seed=SECRET)
    with pytest.raises(TypeError):
        poly_sfw(quad_grad, data, P, cfg, seed=SEED, noise_seed=1.5)
    with pytest.raises(ValueError, match="diameter"):
        poly_sfw(quad_grad, data, P, poly_config(diameter=1.0), seed=SEED, noise_seed=SECRET)  # true D = 2
    with pytest.raises(ValueError, match="Conv"):
        poly_sfw(quad_grad, data, P, cfg, seed=SEED, noise_seed=SECRET, w_init=np.ones(D4))
    ok = poly_sfw(quad_grad, data, P, cfg, seed=SEED, noise_seed=SECRET, w_init=np.full(D4, 0.25))
    np.testing.assert_array_equal(ok.iterates[0], np.full(D4, 0.25))
    for bad_eta in (lambda r, t: 0.0, lambda r, t: 1.5, lambda r, t: math.nan):
        with pytest.raises(ValueError, match="eta"):
            poly_sfw(quad_grad, data, P, cfg, seed=SEED, noise_seed=SECRET, eta=bad_eta)
    with pytest.raises(TypeError):
        poly_sfw(quad_grad, data, P, cfg, seed=SEED, noise_seed=SECRET, eta=0.5)
    cfg6 = noisy_config()
    for p in (1.0, 3.0, math.inf):
        with pytest.raises(ValueError, match="1 < p <= 2"):
            noisy_sfw(quad_grad, data, LpBall(p, 1.0, np.zeros(D4)), cfg6, seed=SEED, noise_seed=SECRET)
    with pytest.raises(TypeError):
        noisy_sfw(quad_grad, data, P, cfg6, seed=SEED, noise_seed=SECRET)
    with pytest.raises(ValueError, match="lie in W"):
        noisy_sfw(quad_grad, data, ball, cfg6, seed=SEED, noise_seed=SECRET, w_init=np.ones(D4))
    with pytest.raises(ValueError, match="diameter"):
        noisy_sfw(quad_grad, data, ball, noisy_config(diameter=1.0), seed=SEED, noise_seed=SECRET)
    with pytest.raises(ValueError):
        printed_noise_factor(d=4, p=1.0, b=16, epsilon=1.0, delta=1e-5)
