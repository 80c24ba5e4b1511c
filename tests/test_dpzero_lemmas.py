"""Closed forms used as ground truth by proofs_checks/claims/dpzero/lemmas.py (dpzero Lemma C.1(ii), Lemma C.2(i),
errata E1 and E4), checked against independent computations: mpmath quadrature of the sphere / ball marginal
densities written out here, scipy's betaincc, elementary closed forms for small d, and reference.smoothing.

The claims themselves (and their mutants) run in tests/test_claims.py; this file covers what they take on trust.
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from proofs_checks.claims.dpzero import lemmas as M
from reference.accounting.gaussian import gaussian_delta, gaussian_mu
from reference.algorithms.dpzero import privacy_plan
from reference.smoothing import ball_characteristic

DPS = 40


def sphere_marginal_quad(fn, d):
    """E[fn(t)] for t = u_1, u uniform on the unit sphere of R^d (d >= 2): density ∝ (1 − t²)^{(d−3)/2} on [−1, 1]."""
    half = mpmath.mpf(d - 3) / 2
    weight = lambda t: (1 - t**2) ** half  # noqa: E731
    norm = mpmath.quad(weight, [-1, 0, 1])
    return mpmath.quad(lambda t: fn(t) * weight(t), [-1, 0, 1]) / norm


def ball_marginal_quad(fn, d):
    """E[fn(t)] for t = v_1, v uniform in the unit ball of R^d: density ∝ (1 − t²)^{(d−1)/2} on [−1, 1]."""
    half = mpmath.mpf(d - 1) / 2
    weight = lambda t: (1 - t**2) ** half  # noqa: E731
    norm = mpmath.quad(weight, [-1, 0, 1])
    return mpmath.quad(lambda t: fn(t) * weight(t), [-1, 0, 1]) / norm


# ---------------------------------------------------------------------------------------------------------
# Lemma C.1(ii): the exact tail and the printed bound


@pytest.mark.parametrize("d", [2, 3, 5, 10, 100])
@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.4, 0.7, 0.95])
def test_exact_tail_matches_the_sphere_marginal(d, fraction):
    ratio = fraction * math.sqrt(d)
    with mpmath.workdps(DPS):
        exact = M.exact_tail(ratio, d)
        # |u^T a| >= C  <=>  |t| >= ratio/√d for the first coordinate t of u/√d (rotation invariance)
        cut = mpmath.mpf(ratio) / mpmath.sqrt(d)
        if d == 2:  # u/√2 = (cos θ, sin θ), θ uniform: P(|cos θ| >= c) = 2 arccos(c)/π
            quad = 2 * mpmath.acos(cut) / mpmath.pi
        else:  # the indicator is discontinuous, so the two symmetric tails are integrated directly
            half = mpmath.mpf(d - 3) / 2
            weight = lambda t: (1 - t**2) ** half  # noqa: E731
            quad = 2 * mpmath.quad(weight, [cut, 1]) / mpmath.quad(weight, [-1, 0, 1])
    assert abs(exact - quad) <= mpmath.mpf(10) ** (-25) * max(1, abs(quad))


def test_exact_tail_small_dimensions_closed_forms():
    with mpmath.workdps(DPS):
        # d = 3 (Archimedes): u_1/√3 ~ U[−1, 1], so P(|u^T a| >= t‖a‖) = 1 − t/√3
        for t in (0.0, 0.3, 1.0, 1.7):
            assert abs(M.exact_tail(t, 3) - (1 - mpmath.mpf(t) / mpmath.sqrt(3))) < mpmath.mpf(10) ** -30
        # d = 1: u = ±1
        assert M.exact_tail(0.5, 1) == 1 and M.exact_tail(1.0, 1) == 1 and M.exact_tail(1.0001, 1) == 0
        # beyond √d‖a‖ the tail is 0
        assert M.exact_tail(math.sqrt(10) * 1.000001, 10) == 0


@pytest.mark.parametrize("d", [2, 10, 100, 10_000])
def test_exact_tail_agrees_with_scipy_where_representable(d):
    with mpmath.workdps(DPS):
        for fraction in np.linspace(0.0, 0.99, 23):
            ratio = float(fraction * math.sqrt(d))
            reference = special.betaincc(0.5, (d - 1) / 2, ratio**2 / d)
            if reference > 1e-280:
                assert abs(float(M.exact_tail(ratio, d)) / reference - 1) < 1e-12


def test_exact_tail_far_below_float64_is_not_zero():
    # the upper-tail form 1 − I_x cancels to 0 in mpmath; the symmetric form keeps the value (App. Z check)
    with mpmath.workdps(30):
        tail = M.exact_tail(79.4, 10_000)
        assert 0 < tail < mpmath.mpf(10) ** -2000
        assert tail < M.printed_tail_bound(79.4, 1.0)


@settings(max_examples=60)
@given(st.sampled_from([1, 2, 3, 4, 7, 10, 30, 100, 1000, 10_000]), st.floats(0.0, 1.0))
def test_exact_tail_is_below_the_printed_bound(d, fraction):
    ratio = fraction * math.sqrt(d)
    with mpmath.workdps(30):
        assert M.exact_tail(ratio, d) <= M.printed_tail_bound(ratio, 1.0)


def test_printed_bound_scales_with_norm_and_is_vacuous_below_3_59():
    """The bound exceeds 1 for C/‖a‖ < √(8 log(2√(2π))) = 3.5912 (spec §4 says ≈ 2.56: an arithmetic slip)."""
    with mpmath.workdps(DPS):
        assert abs(M.printed_tail_bound(3.4, 1.7) - M.printed_tail_bound(2.0, 1.0)) < mpmath.mpf(10) ** -35
        threshold = mpmath.sqrt(8 * mpmath.log(2 * mpmath.sqrt(2 * mpmath.pi)))
        assert abs(M.printed_tail_bound(threshold, 1) - 1) < mpmath.mpf(10) ** -35
        assert abs(threshold - mpmath.mpf("3.59120")) < 1e-5


# ---------------------------------------------------------------------------------------------------------
# Lemma C.2(i): smoothed gradients of the ridge test functions


@pytest.mark.parametrize("d", [1, 2, 3, 7, 20])
@pytest.mark.parametrize("t", [0.0, 0.4, 2.6, 7.0])
def test_ball_characteristic_is_the_unit_ball_cosine_moment(d, t):
    with mpmath.workdps(DPS):
        value = M.ball_characteristic_mp(t, d)
        if d == 1:  # v_1 ~ U[−1, 1]
            expected = mpmath.sin(t) / t if t else mpmath.mpf(1)
        else:
            expected = ball_marginal_quad(lambda s: mpmath.cos(t * s), d)
        assert abs(value - expected) < mpmath.mpf(10) ** -25
    # the reference's convention is the same function: E cos(t v_1), v uniform in the UNIT ball
    assert abs(float(ball_characteristic(t, d)) - float(value)) <= 1e-14


@pytest.mark.parametrize("d", [2, 3, 5, 10])
@pytest.mark.parametrize("lam", [0.2, 1.0, 2.5])
def test_cosine_smoothed_gradient_is_the_mean_of_the_two_point_estimator(d, lam):
    """E_u[((f(x+λu) − f(x−λu))/(2λ)) u] for f = cos(b^T x): −sin(s) sin(λw)/λ·u with w = u^T b, and by symmetry
    E[sin(λw) u] = E[sin(λw) w] b/‖b‖²; w = √d‖b‖·t, t the first coordinate of u/√d (sphere marginal)."""
    rng = np.random.default_rng(d)
    b, x = rng.standard_normal(d), rng.standard_normal(d)
    nb = float(np.linalg.norm(b))
    s = float(b @ x)
    with mpmath.workdps(DPS):
        scale = mpmath.mpf(lam) * mpmath.sqrt(d) * nb
        moment = sphere_marginal_quad(lambda t: mpmath.sin(scale * t) * mpmath.sqrt(d) * nb * t, d)
        coefficient = -mpmath.sin(s) / lam * moment / nb**2
    expected = np.array([float(coefficient) * bj for bj in b])
    np.testing.assert_allclose(M.cosine_smoothed_gradient(b, x, lam), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("d", [2, 3, 7])
@pytest.mark.parametrize("lam", [0.1, 0.5, 2.0])
def test_cubic_smoothed_gradient_two_ways(d, lam):
    """(i) The ball average of ∇f(x + λv) = 3(b^T(x + λv))² b, v uniform in the ball of radius √d;
    (ii) the mean of the two-point estimator, (3s²w + λ²w³)u with w = u^T b, over the sphere of radius √d."""
    rng = np.random.default_rng(10 + d)
    b, x = rng.standard_normal(d), rng.standard_normal(d)
    nb = float(np.linalg.norm(b))
    s = float(b @ x)
    closed = M.cubic_smoothed_gradient(b, x, lam)
    with mpmath.workdps(DPS):
        radius = mpmath.mpf(lam) * mpmath.sqrt(d) * nb  # λ b^T v = λ√d‖b‖·t, t the unit-ball marginal
        ball = ball_marginal_quad(lambda t: 3 * (s + radius * t) ** 2, d)
        w = lambda t: mpmath.sqrt(d) * nb * t  # noqa: E731
        sphere = sphere_marginal_quad(lambda t: (3 * s**2 * w(t) + mpmath.mpf(lam) ** 2 * w(t) ** 3) * w(t), d) / nb**2
    np.testing.assert_allclose(closed, float(ball) * b, rtol=1e-12)
    np.testing.assert_allclose(closed, float(sphere) * b, rtol=1e-12)


def test_cosine_target_is_far_from_the_naive_gradient():
    """The claim's cosine setting smooths strongly: φ_3(λ√3‖b‖) = 0.469, so ∇f_λ ≈ 0.47 ∇f."""
    with mpmath.workdps(DPS):
        phi = M.ball_characteristic_mp(M.COSINE_LAMBDA * math.sqrt(3) * np.linalg.norm(M.RIDGE_B), 3)
    assert 0.46 < float(phi) < 0.48
    s = float(M.RIDGE_B @ M.RIDGE_X)
    np.testing.assert_allclose(M.cosine_smoothed_gradient(M.RIDGE_B, M.RIDGE_X, M.COSINE_LAMBDA),
                               -math.sin(s) * float(phi) * M.RIDGE_B, rtol=1e-14)


# ---------------------------------------------------------------------------------------------------------
# mutant helpers


def test_forward_difference_mutant_is_the_forward_difference():
    from proofs_checks.subjects import reference_subject

    mutant = next(m for m in M.FULL_BATCH_DIFFERENCE_BOUND.mutants if m.name == "forward_difference")
    forward = mutant.apply(reference_subject()).per_sample_finite_differences
    loss = lambda p, z: float(np.sum(z * p**2))  # noqa: E731
    x, u, batch, lam = np.array([0.5, -1.0]), np.array([1.0, 1.0]), np.array([[1.0, 2.0], [0.5, -1.0]]), 0.25
    got = forward(loss, x, batch, u, lam)
    expected = [(loss(x + lam * u, z) - loss(x, z)) / lam for z in batch]
    np.testing.assert_allclose(got, expected, rtol=1e-14)


# ---------------------------------------------------------------------------------------------------------
# Errata E1 and E4: the numbers quoted in the claims' statements


def test_e1_variance_reading_threshold():
    """Reading V = 4C√(2T Lg)/(nε) as a variance gives μ = μ_{2.2}·√V, μ_{2.2} = ε/(2√(2 Lg)); it is private iff
    μ <= μ*(ε, δ), i.e. V <= (μ*/μ_{2.2})² = 6.62 at ε = 1, δ = 1e-5. The brief's n = 100, T = 1000 (V = 6.07) is
    below it; the claim's settings are above it."""
    with mpmath.workdps(DPS):
        eps, delta = mpmath.mpf(1), mpmath.mpf(1e-5)
        mu_lemma = eps / (2 * mpmath.sqrt(2 * mpmath.log(mpmath.e + eps / delta)))
        threshold = (gaussian_mu(eps, delta) / mu_lemma) ** 2
    assert 6.6 < float(threshold) < 6.63
    for clip, n, steps, epsilon, d_ in M.E1_SETTINGS + ((1.0, 100, 1000, 1.0, 1e-5),):
        plan = privacy_plan(clip_threshold=clip, n=n, steps=steps, epsilon=epsilon, delta=d_)
        mu_var = math.sqrt(steps) * (2 * clip / n) / math.sqrt(plan.noise_std)
        fails = float(gaussian_delta(epsilon, mu_var)) > d_
        assert fails == ((clip, n, steps, epsilon, d_) in M.E1_SETTINGS)


def test_e4_identities_hold_for_the_paper_formulas_written_out():
    """The two proof identities with the paper's formulas typed in directly (no subject, no reference)."""
    with mpmath.workdps(DPS):
        n, d, r, eps, delta, L, ell, mu = 1000, 100, 5, mpmath.mpf(2), mpmath.mpf(1e-5), 1, 1, mpmath.mpf("0.1")
        lg = mpmath.log(mpmath.e + eps / delta)
        pi2 = mpmath.sqrt(2 * mpmath.pi)
        # Theorem 3
        lt2 = L**2 * mpmath.log(2 * pi2 * d * (r + 2) * n**3 * eps**2 / (r * lg))
        T = n * (r + 2) * eps / (4 * mpmath.sqrt(r * lg))
        c0 = 4 * mpmath.sqrt(lt2) / mpmath.sqrt(2)
        lhs = 8 * pi2 * L**2 * n * d * T * mpmath.exp(-c0**2 / (8 * L**2))
        assert abs(lhs / (L**2 * mpmath.sqrt(r * lg) / (n * eps)) - 1) < mpmath.mpf(10) ** -30
        assert abs(lt2 - mpmath.mpf("26.1613536")) < 1e-7
        # Corollary F.4
        kappa = ell / mu
        lt2f = 64 * L**2 * mpmath.log(32 * pi2 * kappa * n**3 * d * (r + 2) * eps**2 / (r * lg))
        A = n**2 * eps**2 / (kappa * r * lg)
        T = 8 * kappa * (r + 2) * mpmath.log(A)
        c0 = mpmath.sqrt(lt2f) / 2 / mpmath.sqrt(2)
        lhs = 4 * pi2 * L**2 * n * d * T * mpmath.exp(-c0**2 / (8 * L**2)) / mu
        assert abs(lhs / (L**2 * mpmath.log(A) * r * lg / (mu * n**2 * eps**2)) - 1) < mpmath.mpf(10) ** -30
        # and the two L̃ differ: one L̃ would make C 8.7x smaller in F.4
        assert 8.7 < float(mpmath.sqrt(lt2f) / mpmath.sqrt(lt2)) < 8.8
