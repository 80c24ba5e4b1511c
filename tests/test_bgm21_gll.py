"""Tests for reference.algorithms.bgm21_gll: bgm21 Theorem 5 (Phased-SGD + Algorithm 3) and Theorem 6 (Algorithm 5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reference.accounting.composition import calibrate_pure_steps, certify_pure
from reference.algorithms import bgm21_gll as mod
from reference.algorithms.bgm21_gll import (
    NoisyFWConfig,
    PhasedSGDConfig,
    noisy_frank_wolfe,
    phase_schedule,
    phased_sgd,
    theorem5_params,
    theorem6_params,
)
from reference.geometry import LpBall, Polytope
from reference.gll import AbsoluteLoss, bisection_steps, moreau_gradient
from reference.secrets import secret_seed


def _gll_problem(n, d, seed=0, radius=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]  # ‖x‖_2 ≤ 1
    w_star = np.full(d, 0.5 / math.sqrt(d))
    return X, X @ w_star, w_star


def _run_psgd(n=256, d=3, eps=1.0, seed=5, noise_seed=77, W=None, **kw):
    X, y, _ = _gll_problem(n, d)
    params = theorem5_params(n, d, 1.0, 1.0, 2.0, eps, 1e-5)
    W = LpBall(2, 1.0, np.zeros(d)) if W is None else W
    return phased_sgd(X, y, AbsoluteLoss(1.0), W, np.zeros(d), params.config(**kw), seed=seed, noise_seed=noise_seed)


# ---- Phased-SGD -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [97, 1000, 1024])
def test_phase_schedule(n):
    sizes = phase_schedule(n)
    assert len(sizes) == int(math.floor(math.log2(n)))
    assert sizes == [n // 2**i for i in range(1, len(sizes) + 1)]
    assert sum(sizes) <= n
    p = theorem5_params(n, 4, 1.5, 2.0, 3.0, 2.0, 1e-6)
    assert p.phase_sizes == tuple(sizes)
    for i, (eta_i, sigma_i) in enumerate(zip(p.phase_step_sizes, p.phase_sigmas), start=1):
        assert eta_i == pytest.approx(p.step_size / 4**i, rel=1e-15)
        assert sigma_i == pytest.approx(4 * p.lipschitz * eta_i * math.sqrt(math.log(1e6)) / 2.0, rel=1e-12)


def test_theorem5_params_formulas():
    n, d, L0, R, D, eps, delta = 1024, 3, 1.5, 2.0, 3.0, 100.0, 1e-5  # large ε: the 4/√n branch
    p = theorem5_params(n, d, L0, R, D, eps, delta)
    assert p.beta_smooth == pytest.approx(math.sqrt(n) * L0 / (R * D), rel=1e-15)
    assert p.alpha == pytest.approx(L0 * R / (n * math.log(n)), rel=1e-15)
    assert p.lipschitz == 2 * L0 * R and p.smoothness == pytest.approx(p.beta_smooth * R**2)
    assert p.step_size == pytest.approx(2.0 / p.smoothness, rel=1e-12)  # η = 2/β_s with the corrected β
    printed = theorem5_params(n, d, L0, R, D, eps, delta, beta_variant="printed")
    assert printed.beta_smooth == pytest.approx(math.sqrt(n) * L0 / R)
    small_eps = theorem5_params(n, d, L0, R, D, 0.1, delta)
    assert small_eps.step_size == pytest.approx((D / (2 * L0 * R)) * 0.1 / math.sqrt(d * math.log(1 / delta)))
    assert theorem5_params(n, d, L0, R, 1.0, eps, delta, "printed").beta_smooth == pytest.approx(
        theorem5_params(n, d, L0, R, 1.0, eps, delta).beta_smooth)


def test_single_pass_records_never_reused(monkeypatch):
    n, d = 300, 3
    X, y, _ = _gll_problem(n, d)
    rows = {tuple(x): i for i, x in enumerate(X)}
    seen = []
    real = mod.moreau_glm_gradient

    def spy(w, Xb, yb, loss, beta, alpha, R):
        seen.extend(rows[tuple(x)] for x in Xb)
        return real(w, Xb, yb, loss, beta, alpha, R)

    monkeypatch.setattr(mod, "moreau_glm_gradient", spy)
    p = theorem5_params(n, d, 1.0, 1.0, 2.0, 1.0, 1e-5)
    res = phased_sgd(X, y, AbsoluteLoss(1.0), LpBall(2, 1.0, np.zeros(d)), np.zeros(d), p.config(), seed=3,
                     noise_seed=9)
    assert len(seen) == len(set(seen)) == sum(phase_schedule(n))  # each record read at most once
    flat = np.concatenate(res.trace.batch_indices)
    assert flat.tolist() == seen  # read in the public order, phase by phase
    assert [len(b) for b in res.trace.batch_indices] == list(res.trace.phase_sizes)
    assert res.trace.records_used == len(seen) and res.trace.fraction_used == len(seen) / n
    assert res.trace.passes == 1 and res.trace.oracle_calls == len(seen)


def test_oracle_wired_with_error_at_most_alpha(monkeypatch):
    n, d = 128, 3
    X, y, _ = _gll_problem(n, d)
    p = theorem5_params(n, d, 1.0, 1.0, 2.0, 1.0, 1e-5)
    loss = AbsoluteLoss(1.0)
    errors = []
    real = mod.moreau_glm_gradient

    def spy(w, Xb, yb, loss_, beta, alpha, R):
        assert (beta, alpha, R) == (p.beta_smooth, p.alpha, 1.0)
        out = real(w, Xb, yb, loss_, beta, alpha, R)
        exact = np.asarray(moreau_gradient(Xb @ w, yb, loss, beta))[:, None] * Xb  # closed-form ∇f_β
        errors.append(np.max(np.linalg.norm(out - exact, axis=1)))
        return out

    monkeypatch.setattr(mod, "moreau_glm_gradient", spy)
    res = phased_sgd(X, y, loss, LpBall(2, 1.0, np.zeros(d)), np.zeros(d), p.config(), seed=1, noise_seed=2)
    assert len(errors) == res.trace.oracle_calls
    assert max(errors) <= p.alpha * (1 + 1e-12)
    assert res.trace.bisection_steps == bisection_steps(1.0, 1.0, p.alpha) == p.bisection_steps


def test_noise_parameters_in_trace():
    res = _run_psgd()
    cfg = res.config
    for i, (sig, sens, bnd, mu) in enumerate(zip(res.trace.noise_stds, res.trace.sensitivities,
                                                 res.trace.sensitivity_bounds, res.trace.noise_multipliers), 1):
        eta_i = cfg.step_size / 4**i
        assert sens == pytest.approx(2 * eta_i * cfg.lipschitz)
        assert bnd <= sens
        assert sig == pytest.approx(4 * cfg.lipschitz * eta_i * math.sqrt(math.log(1e5)) / cfg.epsilon, rel=1e-12)
        assert mu == pytest.approx(cfg.epsilon / (2 * math.sqrt(math.log(1e5))), rel=1e-12)


def test_noise_only_from_secret_stream():
    a, b = _run_psgd(noise_seed=77), _run_psgd(noise_seed=77)
    np.testing.assert_array_equal(a.output, b.output)
    c = _run_psgd(noise_seed=78)
    assert not np.array_equal(a.output, c.output)
    assert all(np.array_equal(u, v) for u, v in zip(a.trace.batch_indices, c.trace.batch_indices))  # public order
    # the noise is exactly σ_i·N(0, I) from the keyed secret stream
    streams = secret_seed(77).streams()
    for i, (noise, sig) in enumerate(zip(a.debug.noises, a.trace.noise_stds), start=1):
        expected = sig * streams.generator("bgm21", "phased_sgd", "noise", i).standard_normal(3)
        np.testing.assert_array_equal(noise, expected)
    np.testing.assert_array_equal(a.output, a.debug.phase_averages[-1] + a.debug.noises[-1])


def test_noise_zero_is_deterministic_and_reaches_minimizer():
    n, d = 2048, 3
    X, y, w_star = _gll_problem(n, d, seed=4)
    D = 2.0
    p = theorem5_params(n, d, 1.0, 1.0, D, math.inf, 1e-5)
    assert all(s == 0.0 for s in p.phase_sigmas)
    W = LpBall(2, 1.0, np.zeros(d))
    run = [phased_sgd(X, y, AbsoluteLoss(1.0), W, np.zeros(d), p.config(), seed=11, noise_seed=s) for s in (1, 2)]
    np.testing.assert_array_equal(run[0].output, run[1].output)
    # empirical risk of the realizable absolute-loss problem (minimum 0 at w*); the bound of Theorem 5 at ε = ∞ with
    # [FKT20]'s constant 10 and L = 2L0R, plus the smoothing gap L0²/(2β) and the oracle bias αD
    risk = np.mean(np.abs(X @ run[0].output - y))
    bound = 10 * 2 * D / math.sqrt(n) + 1.0 / (2 * p.beta_smooth) + p.alpha * D
    assert risk <= bound
    assert risk < 0.25 * np.mean(np.abs(y))  # well below the risk of the start w_0 = 0
    assert np.linalg.norm(run[0].output - w_star) < 1e-2  # the minimizer itself is reached


def test_project_output():
    res = _run_psgd(eps=0.01, project_output=True)
    assert np.linalg.norm(res.output) <= 1.0 + 1e-12


def test_unconstrained_w_is_allowed():
    X, y, _ = _gll_problem(64, 2)
    p = theorem5_params(64, 2, 1.0, 1.0, 1.0, 1.0, 1e-5)
    res = phased_sgd(X, y, AbsoluteLoss(1.0), None, np.zeros(2), p.config(), seed=0, noise_seed=1)
    assert np.all(np.isfinite(res.output))


def test_phased_sgd_hostile_inputs():
    X, y, _ = _gll_problem(64, 2)
    loss, W, w0 = AbsoluteLoss(1.0), LpBall(2, 1.0, np.zeros(2)), np.zeros(2)
    cfg = theorem5_params(64, 2, 1.0, 1.0, 1.0, 1.0, 1e-5).config()

    def run(**kw):
        args = dict(X=X, y=y, loss=loss, W=W, w0=w0, config=cfg)
        args.update(kw)
        return phased_sgd(args["X"], args["y"], args["loss"], args["W"], args["w0"], args["config"],
                          seed=kw.get("seed", 0), noise_seed=kw.get("noise_seed", 1))

    bad = X.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        run(X=bad)
    with pytest.raises(ValueError, match="feature_bound"):
        run(X=3 * X + 1)
    with pytest.raises(ValueError, match="noise_seed"):
        run(seed=5, noise_seed=5)
    with pytest.raises(ValueError, match="p = 1"):
        run(W=LpBall(1, 1.0, np.zeros(2)))
    with pytest.raises(TypeError, match="W"):
        run(W=Polytope(np.eye(2)))
    with pytest.raises(ValueError, match="y"):
        run(y=y[:-1])
    with pytest.raises(ValueError, match="w0"):
        run(w0=np.zeros(3))
    with pytest.raises(ValueError, match="n = 2"):
        run(X=X[:1], y=y[:1])
    with pytest.raises(TypeError, match="config"):
        run(config={"step_size": 1.0})
    with pytest.raises(ValueError, match="step_size"):  # printed β with D > 4: expansive steps
        run(config=theorem5_params(64, 2, 1.0, 1.0, 10.0, 100.0, 1e-5, "printed").config())
    with pytest.raises(ValueError, match="alpha"):
        run(config=PhasedSGDConfig(cfg.beta_smooth, 1.0, 1.0, cfg.lipschitz, cfg.step_size, 1.0, 1e-5))
    for kw, err in [(dict(eps=0.0), ValueError), (dict(eps=float("nan")), ValueError), (dict(delta=1.0), ValueError),
                    (dict(delta=0.0), ValueError), (dict(n=True), TypeError), (dict(n=1), ValueError),
                    (dict(D=-1.0), ValueError), (dict(beta_variant="paper"), ValueError)]:
        args = dict(n=64, d=2, L0=1.0, R_x=1.0, D=1.0, eps=1.0, delta=1e-5)
        args.update(kw)
        with pytest.raises(err):
            theorem5_params(**args)
    with pytest.raises(TypeError):
        PhasedSGDConfig(1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1e-5, project_output=1)


# ---- Algorithm 5 (noisy Frank–Wolfe) ------------------------------------------------------------------------------


def _fw_problem(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))  # ‖x‖_∞ ≤ 1
    w_star = np.zeros(d)
    w_star[0] = 0.3
    ball = LpBall(1, 0.5, np.zeros(d))
    return X, X @ w_star, Polytope(ball.vertices()), w_star


def test_theorem6_params_formulas_and_scale_factor():
    n, d, J, L0, R, D, C1, eps, delta = 2000, 8, 16, 1.5, 2.0, 1.0, 0.5, 1.0, 1e-6
    p = theorem6_params(n, d, J, L0, R, D, C1, eps, delta)
    beta = L0 * math.sqrt(n * eps) / (R * D * math.log(1 / delta) ** 0.25 * math.sqrt(math.log(J) * math.log(n)))
    assert p.beta_smooth == pytest.approx(beta, rel=1e-14)
    assert p.alpha == pytest.approx(L0 * R / (n * math.log(n)), rel=1e-14)
    assert theorem6_params(n, d, J, L0, R, D, C1, eps, delta, alpha_variant="printed").alpha == pytest.approx(
        1 / (n * math.log(n)))
    T = math.ceil((beta * R**2 * D**2 * n * eps / (L0 * R * C1)) ** (2 / 3))
    assert p.steps == T
    eps_step = float(calibrate_pure_steps(T - 1, eps, delta))
    assert p.lap_scale_certified == pytest.approx(2 * L0 * R * D / n / eps_step, rel=1e-12)
    assert p.lap_scale_ttz15 == pytest.approx(L0 * R * C1 * math.sqrt(8 * T * math.log(1 / delta)) / (n * eps))
    # the factor between the printed and the certified scale
    factor = C1 * math.sqrt(8 * T * math.log(1 / delta)) * eps_step / (2 * D * eps)
    assert p.lap_scale_ttz15 / p.lap_scale_certified == pytest.approx(factor, rel=1e-12)
    assert p.scale_ratio == pytest.approx(factor, rel=1e-12) and factor < 0.6
    assert p.certified_epsilon <= eps * (1 + 1e-9)
    ttz = theorem6_params(n, d, J, L0, R, D, C1, eps, delta, noise="ttz15")
    assert T >= 100 and 1.9 * eps <= ttz.certified_epsilon <= 2.4 * eps  # the printed scale certifies ≈ 2ε
    assert ttz.config().noise == "ttz15" and p.config().noise == "certified"


def test_noisy_fw_selected_vertex_is_noisy_argmin():
    X, y, poly, _ = _fw_problem()
    p = theorem6_params(60, 4, poly.J, 1.0, 1.0, poly.diameter(1), 0.5, 1.0, 1e-5)
    cfg = NoisyFWConfig(p.beta_smooth, p.alpha, 1.0, 12, p.lap_scale, 1e-5, "certified")
    res = noisy_frank_wolfe(X, y, AbsoluteLoss(1.0), poly, cfg, noise_seed=123)
    streams = secret_seed(123).streams()
    theta = poly.vertices[0]
    for t, (j, g) in enumerate(zip(res.trace.selected, res.debug.gradients), start=1):
        np.testing.assert_allclose(g, mod.moreau_glm_gradient(theta, X, y, AbsoluteLoss(1.0), p.beta_smooth,
                                                              p.alpha, 1.0).mean(axis=0), rtol=0, atol=0)
        u = streams.generator("bgm21", "noisy_fw", "noise", t).laplace(0.0, p.lap_scale, poly.J)
        assert j == int(np.argmin(poly.vertices @ g + u))
        mu = 2 / (t + 2)
        theta = (1 - mu) * theta + mu * poly.vertices[j]
        np.testing.assert_allclose(res.trace.iterates[t], theta, rtol=0, atol=1e-15)
    np.testing.assert_allclose(res.output, theta, rtol=0, atol=1e-15)
    assert len(res.trace.selected) == 11 and res.trace.passes == 11 and res.trace.fraction_used == 1.0
    assert res.trace.oracle_calls == 60 * 11


def test_noisy_fw_trace_noise_parameters_and_determinism():
    X, y, poly, w_star = _fw_problem()
    D = poly.diameter(1)
    p = theorem6_params(60, 4, poly.J, 1.0, 1.0, D, 0.5, 1.0, 1e-5)
    res = noisy_frank_wolfe(X, y, AbsoluteLoss(1.0), poly, p.config(), noise_seed=5)
    assert res.trace.score_sensitivity == pytest.approx(1.0 * D / 60)
    assert res.trace.epsilon_per_step == pytest.approx(2 * res.trace.score_sensitivity / p.lap_scale)
    assert res.trace.certified_epsilon == pytest.approx(
        float(certify_pure([res.trace.epsilon_per_step] * (p.steps - 1), 1e-5)))
    assert res.trace.certified_epsilon <= 1.0 * (1 + 1e-9)
    again = noisy_frank_wolfe(X, y, AbsoluteLoss(1.0), poly, p.config(), noise_seed=5)
    np.testing.assert_array_equal(res.output, again.output)
    # λ = 0: exact LMO, deterministic without a secret seed, and converges towards w*
    cfg0 = NoisyFWConfig(p.beta_smooth * 50, p.alpha, 1.0, 400, 0.0, 1e-5)
    a = noisy_frank_wolfe(X, y, AbsoluteLoss(1.0), poly, cfg0)
    b = noisy_frank_wolfe(X, y, AbsoluteLoss(1.0), poly, cfg0)
    np.testing.assert_array_equal(a.output, b.output)
    assert a.trace.certified_epsilon == math.inf
    assert np.mean(np.abs(X @ a.output - y)) < 0.05


def test_noisy_fw_hostile_inputs():
    X, y, poly, _ = _fw_problem()
    cfg = NoisyFWConfig(1.0, 1e-3, 1.0, 5, 0.1, 1e-5)
    loss = AbsoluteLoss(1.0)
    with pytest.raises(ValueError, match="feature_bound"):
        noisy_frank_wolfe(2 * X + 1, y, loss, poly, cfg, noise_seed=1)
    with pytest.raises(TypeError, match="polytope"):
        noisy_frank_wolfe(X, y, loss, LpBall(1, 0.5, np.zeros(4)), cfg, noise_seed=1)
    with pytest.raises(ValueError, match="dimension"):
        noisy_frank_wolfe(X, y, loss, Polytope(np.eye(3)), cfg, noise_seed=1)
    with pytest.raises(ValueError, match="noise_seed"):
        noisy_frank_wolfe(X, y, loss, poly, cfg, noise_seed=7, public_seeds=(7,))
    with pytest.raises(ValueError, match="theta1"):
        noisy_frank_wolfe(X, y, loss, poly, cfg, theta1=np.full(4, np.inf), noise_seed=1)
    for kw in [dict(steps=1), dict(lap_scale=-1.0), dict(lap_scale=float("nan")), dict(noise="laplace"),
               dict(delta=2.0)]:
        args = dict(beta_smooth=1.0, alpha=1e-3, feature_bound=1.0, steps=5, lap_scale=0.1, delta=1e-5)
        args.update(kw)
        with pytest.raises(ValueError):
            NoisyFWConfig(**args)
    for kw, err in [(dict(J=1), ValueError), (dict(noise="paper"), ValueError), (dict(eps=math.inf), ValueError),
                    (dict(C1=0.0), ValueError), (dict(alpha_variant="x"), ValueError), (dict(J=2.5), TypeError)]:
        args = dict(n=100, d=4, J=8, L0=1.0, R_x=1.0, D=1.0, C1=0.5, eps=1.0, delta=1e-5)
        args.update(kw)
        with pytest.raises(err):
            theorem6_params(**args)
