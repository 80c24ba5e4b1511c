"""Tests of reference.algorithms.bgm21_ledgers: the privacy ledgers of bgm21's Algorithms 1, 2, 5, 6 and Phased-SGD.

Each ledger is checked against a hand computation from the run's SETTINGS (not its trace): the per-record releases
the paper's privacy arguments charge (Theorems 5–7, 10, 16), composed in mpmath by formulas written here — the
exact randomized-response composition of Kairouz–Oh–Viswanath (direct binomial sum), Bun–Steinke zCDP, basic
composition and Lemma 1 for pure steps, and the exact Gaussian privacy profile (Balle–Wang) for Gaussian releases.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import pytest

from reference.algorithms.bgm21_gll import (NoisyFWConfig, noisy_frank_wolfe, phased_sgd, theorem5_params,
                                            theorem6_params)
from reference.algorithms.bgm21_ledgers import ledger_of, privacy_report
from reference.algorithms.bgm21_prox import ASCConfig, ProxConfig, prox_guided_psmd
from reference.algorithms.bgm21_sfw import NoisySFWConfig, PolySFWConfig, noisy_sfw, poly_sfw, sfw_data_budget
from reference.geometry import LpBall, Polytope
from reference.gll import AbsoluteLoss
from reference.precision import working_precision

SEED, SECRET = 5, 2**90 + 17
TARGET = np.array([0.1, 0.2, 0.3, 0.4])
EPS, DELTA = 1.0, 1e-5
REL = 1e-8  # both sides are bisections to ~1e-15 relative on the same mathematical quantity


@pytest.fixture(autouse=True)
def _precision():
    with working_precision(30):
        yield


def quad_grad(w, z):
    return w - TARGET - z


# ---------------------------------------------------------------------------------------------------
# Independent hand computations (mpmath)


def _bisect_smallest(ok, lo, hi, iters=200):
    """Smallest x in [lo, hi] with ok(x) (ok monotone, ok(hi) true), to ~working precision."""
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    assert ok(hi)
    if ok(lo):
        return lo
    for _ in range(iters):
        mid = (lo + hi) / 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def hand_pure(eps0, k, delta):
    """Best of basic, Lemma 1, zCDP and the exact KOV optimum for k homogeneous ε0-DP steps at δ."""
    eps0, delta = mpmath.mpf(eps0), mpmath.mpf(delta)
    L = mpmath.log(1 / delta)
    basic = k * eps0
    lemma1 = eps0 * mpmath.sqrt(2 * k * L) + k * eps0 * (mpmath.exp(eps0) - 1)
    rho = k * eps0**2 / 2
    zcdp = rho + 2 * mpmath.sqrt(rho * L)

    def kov_delta(eps):  # KOV 2015 Thm 3.3: hockey-stick of the flip-count laws of k-fold randomized response
        with mpmath.workprec(mpmath.mp.prec + 64 + int(k * eps0)):
            total = mpmath.fsum(mpmath.binomial(k, i) * max(mpmath.exp(eps0 * (k - i)) - mpmath.exp(eps + eps0 * i), 0)
                                for i in range(k + 1))
            return total / (1 + mpmath.exp(eps0)) ** k

    kov = _bisect_smallest(lambda e: kov_delta(e) <= delta, 0, k * eps0)
    return min(basic, lemma1, zcdp, kov)


def hand_gaussian_epsilon(mu, delta):
    """Smallest ε with Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) ≤ δ (Balle–Wang 2018 Thm 8), via mpmath.erfc."""
    mu, delta = mpmath.mpf(mu), mpmath.mpf(delta)

    def profile(eps):
        Phi = lambda x: mpmath.erfc(-x / mpmath.sqrt(2)) / 2
        return Phi(-eps / mu + mu / 2) - mpmath.exp(eps) * Phi(-eps / mu - mu / 2)

    return _bisect_smallest(lambda e: profile(e) <= delta, 0, 100)


# ---------------------------------------------------------------------------------------------------
# Algorithm 1 (Theorem 7)


def _poly_run(R=4, b=8, eps=EPS, delta=DELTA, L0=2.0, L1=1.0):
    cfg = PolySFWConfig(n_rounds=R, batch_size=b, epsilon=eps, delta=delta, lipschitz=L0, smoothness=L1)
    n = sfw_data_budget(b, R)
    data = 0.05 * np.random.default_rng(0).standard_normal((n, 4))
    return poly_sfw(quad_grad, data, Polytope(np.eye(4)), cfg, seed=SEED, noise_seed=SECRET)


def hand_poly_sfw(R, b, eps, delta, L0, L1, D):
    """Worst batch of Algorithm 1 from its settings: record of B_r^t pays 2^r − t steps of ε0 = 2·(½D·G_t)/s_r."""
    worst = mpmath.mpf(0)
    for r in range(R):
        s_r = 2 * D * (L0 + L1 * D) * mpmath.mpf(2) ** r * mpmath.sqrt(mpmath.log(1 / mpmath.mpf(delta))) / (b * eps)
        for t in range(2**r):
            m = -(-b // (t + 1))
            if t == 0:
                G = mpmath.mpf(2) * L0 / m
            else:
                eta, eta_prev = 1 / mpmath.sqrt(t + 1), 1 / mpmath.sqrt(t)
                G = (mpmath.mpf(2) / m) * ((1 - eta) * eta_prev * L1 * D + eta * L0)
            worst = max(worst, hand_pure(D * G / s_r, 2**r - t, delta))
    return worst


@pytest.mark.parametrize("R, b", [(3, 8), (4, 16)])
def test_poly_sfw_ledger_meets_target_and_matches_hand_computation(R, b):
    res = _poly_run(R=R, b=b)
    rep = privacy_report(res, EPS, DELTA)
    assert rep.meets_target and rep.epsilon <= EPS
    hand = hand_poly_sfw(R, b, EPS, DELTA, 2.0, 1.0, 2.0)  # the simplex has ℓ1-diameter 2
    assert float(rep.epsilon) == pytest.approx(float(hand), rel=REL)
    ledger = ledger_of(res)
    # a record of B_r^t pays for exactly 2^r − t report-noisy-min steps
    for r in range(R):
        for t in range(2**r):
            assert sum(("B", r, t) in rel.batches for rel in ledger.releases) == 2**r - t
    assert all(len(rel.batches) == 1 for rel in ledger.releases)


def test_poly_sfw_ledger_reads_only_the_public_trace():
    res = _poly_run()
    scrambled = dataclasses.replace(res.debug, estimates=res.debug.estimates * np.nan, evaluations=-1)
    other = dataclasses.replace(res, debug=scrambled)
    assert privacy_report(other, EPS, DELTA).epsilon == privacy_report(res, EPS, DELTA).epsilon


def test_poly_sfw_ledger_refuses_non_private_run():
    res = _poly_run(eps=math.inf)
    with pytest.raises(ValueError, match="not private"):
        ledger_of(res)


# ---------------------------------------------------------------------------------------------------
# Algorithm 6 (Theorem 10)


def _noisy_run(sigma_hat_eta="prev", R=4, b=16, delta=DELTA, p=1.5, d=4):
    cfg = NoisySFWConfig(n_rounds=R, batch_size=b, epsilon=EPS, delta=delta, lipschitz=2.0, smoothness=1.0,
                         sigma_hat_eta=sigma_hat_eta)
    data = 0.05 * np.random.default_rng(0).standard_normal((sfw_data_budget(b, R), d))
    return noisy_sfw(quad_grad, data, LpBall(p, 1.0, np.zeros(d)), cfg, seed=SEED, noise_seed=SECRET)


def hand_noisy_sfw(R, b, eps, delta, L0, L1, D, p, d, sigma_hat_eta):
    L = mpmath.log(1 / mpmath.mpf(delta))
    dim = mpmath.mpf(d) ** (1 / mpmath.mpf(p) - mpmath.mpf(1) / 2)
    c = 4 * dim * mpmath.sqrt(L) / (b * eps)
    worst = mpmath.mpf(0)
    for r in range(R):
        for t in range(2**r):
            m = -(-b // (t + 1))
            mu2 = (2 * L0 * dim / m / (c * L0 * (t + 1))) ** 2
            if t >= 1:
                eta_prev, eta = 1 / mpmath.sqrt(t), 1 / mpmath.sqrt(t + 1)
                eta_hat = eta_prev if sigma_hat_eta == "prev" else eta
                mu2 += (2 * L1 * D * eta_prev * dim / m / (c * L1 * D * eta_hat * (t + 1))) ** 2
            worst = max(worst, hand_gaussian_epsilon(mpmath.sqrt(mu2), delta))
    return worst


@pytest.mark.parametrize("variant", ["prev", "printed"])
def test_noisy_sfw_ledger_matches_hand_computation(variant):
    res = _noisy_run(variant)
    rep = privacy_report(res, EPS, DELTA)
    hand = hand_noisy_sfw(4, 16, EPS, DELTA, 2.0, 1.0, 2.0, 1.5, 4, variant)  # the ℓ_1.5 unit ball: D = 2
    assert float(rep.epsilon) == pytest.approx(float(hand), rel=REL)
    if variant == "prev":
        assert rep.meets_target
    ledger = ledger_of(res)
    assert sum(("B", 0, 0) in rel.batches for rel in ledger.releases) == 1  # t = 0: one Gaussian
    assert sum(("B", 3, 5) in rel.batches for rel in ledger.releases) == 2  # t ≥ 1: two Gaussians


def test_noisy_sfw_printed_sigma_hat_costs_more_than_prev():
    prev = privacy_report(_noisy_run("prev", delta=1e-8), EPS, 1e-8)
    printed = privacy_report(_noisy_run("printed", delta=1e-8), EPS, 1e-8)
    assert prev.meets_target and not printed.meets_target  # bgm21.E10 at ε = 1, δ = 1e-8
    assert printed.worst_batch[2] == 1  # step t = 1 is the worst (√2 too little noise there)


# ---------------------------------------------------------------------------------------------------
# Phased-SGD (Theorem 5), Algorithm 5 (Theorem 6), Algorithm 2 (Theorem 16)


def test_phased_sgd_ledger_matches_hand_computation():
    n, d = 256, 3
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    p = theorem5_params(n, d, 1.0, 1.0, 2.0, EPS, DELTA)
    res = phased_sgd(X, X @ np.full(d, 0.3), AbsoluteLoss(1.0), LpBall(2, 1.0, np.zeros(d)), np.zeros(d), p.config(),
                     seed=SEED, noise_seed=SECRET)
    rep = privacy_report(res, EPS, DELTA)
    # σ_i = 4Lη_i√ln(1/δ)/ε for sensitivity 2η_iL: μ = ε/(2√ln(1/δ)) in every phase, one release per record
    mu = mpmath.mpf(EPS) / (2 * mpmath.sqrt(mpmath.log(1 / mpmath.mpf(DELTA))))
    assert float(rep.epsilon) == pytest.approx(float(hand_gaussian_epsilon(mu, DELTA)), rel=REL)
    assert rep.meets_target
    assert len(ledger_of(res).batches()) == len(p.phase_sizes)


def test_noisy_frank_wolfe_ledger_matches_hand_computation():
    n, d = 60, 4
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (n, d))
    poly = Polytope(LpBall(1, 0.5, np.zeros(d)).vertices())
    p = theorem6_params(n, d, poly.J, 1.0, 1.0, poly.diameter(1), 0.5, EPS, DELTA)
    T = 12
    cfg = NoisyFWConfig(p.beta_smooth, p.alpha, 1.0, T, p.lap_scale, DELTA, "certified")
    res = noisy_frank_wolfe(X, X @ np.array([0.3, 0, 0, 0]), AbsoluteLoss(1.0), poly, cfg, noise_seed=SECRET)
    rep = privacy_report(res, EPS, DELTA)
    delta_c = mpmath.mpf(1.0) * 1.0 * 1.0 / n  # L0·R·diam_1(V)/n, diam_1 of the ℓ1 ball of radius ½ is 1
    hand = hand_pure(2 * delta_c / mpmath.mpf(p.lap_scale), T - 1, DELTA)
    assert float(rep.epsilon) == pytest.approx(float(hand), rel=REL)
    assert rep.meets_target and ledger_of(res).batches() == ["S"]


def test_prox_guided_psmd_ledger_matches_hand_computation():
    A = np.diag([1.0, 3.0])
    data = np.random.default_rng(0).normal([0.5, -0.4], 0.1, (40, 2))
    T = 5
    cfg = ProxConfig(n_rounds=4, weak_convexity=1.0, solver=ASCConfig(epsilon=EPS, delta=DELTA, lipschitz=10.0,
                                                                      n_steps=T))
    res = prox_guided_psmd(lambda w, z: A @ w - z, data, LpBall(2, 5.0, np.zeros(2)), cfg, seed=SEED,
                           noise_seed=SECRET)
    rep = privacy_report(res, EPS, DELTA)
    L = mpmath.log(1 / mpmath.mpf(DELTA))
    rho = (mpmath.sqrt(L + EPS) - mpmath.sqrt(L)) ** 2  # σ = (2L0/m)√(T/(2ρ)): μ = √T·(2L0/m)/σ = √(2ρ)
    assert float(rep.epsilon) == pytest.approx(float(hand_gaussian_epsilon(mpmath.sqrt(2 * rho), DELTA)), rel=REL)
    assert rep.meets_target and len(ledger_of(res).batches()) == 4


def test_ledger_of_refuses_other_types():
    with pytest.raises(TypeError, match="result must be"):
        ledger_of(object())
    with pytest.raises(ValueError, match="kov_max_steps"):
        ledger_of(_poly_run(R=2, b=2), kov_max_steps=-1)
