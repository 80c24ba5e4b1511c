"""nsnc_improved theory (reference/algorithms/nsnc_improved_theory.py): the single- and multi-pass settings, their
invariants and scale invariance, the certified bounds and record counts, the explicit variance bounds (checked by
simulation), OGD's regret (the adversarial block against Lemma B.1's printed constant) and the rates.
"""

import dataclasses
import math
import re

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.algorithms import nsnc_improved_theory as th
from reference.smoothing import smoothness_constant

# The notes' scale check (Theorem 3.1, corrected): d = 8, n = 2·10⁴, α = 0.5, ε = 2, δ = 1e-5, L = Φ = 1 gives
# D ≈ 1.2e-3, M ≈ 103, Σ ≈ 147 and m_priv ≈ 7·10⁷ (CRN: m_reset ≈ 2.3·10³, m_increment ≈ 570).
SCALE = dict(n=20_000, d=8, lipschitz=1.0, initial_gap=1.0, smoothing_radius=0.5, epsilon=2.0, delta=1e-5)


def U(T, size, B1, B2):
    resets = math.ceil(T / size)
    return resets * B1 + (T - resets) * B2


def check_single_invariants(s):
    assert s.M * s.step_bound <= s.smoothing_radius / 4 * (1 + 1e-12)
    assert s.step_bound <= s.smoothing_radius / 4
    assert 1 <= s.tree_size <= s.T0 == s.n // 2
    assert s.B1 == s.tree_size and s.B2 == 1
    assert s.K >= 1 and s.T == s.K * s.M
    assert s.records_used == U(s.T, s.tree_size, s.B1, s.B2) <= s.n
    assert U(s.T + s.M, s.tree_size, s.B1, s.B2) > s.n  # T is the largest multiple of M that fits
    assert isinstance(s.m_reset, int) and isinstance(s.m_increment, int)
    if s.variant == "corrected" and s.directions is None:
        assert s.m_reset >= s.m_privacy_reset and s.m_increment >= s.m_privacy_increment
    assert s.delta_fail <= s.delta / 2 * (1 + 1e-12)
    assert s.plan.epsilon <= float(s.epsilon) * (1 + 1e-12)
    assert s.epsilon_exact == mpmath.mpf(s.plan.epsilon)
    assert s.G1 == pytest.approx(s.lipschitz + s.G0)
    assert s.step_size == pytest.approx(s.step_bound / (s.G1 * math.sqrt(s.M)))
    assert s.certified_bound == th.certified_bound_single_pass(s)


# --- single pass ------------------------------------------------------------------------------------------------------

def test_single_pass_reproduces_the_scale_check():
    s = th.single_pass_settings(**SCALE, allow_vacuous=True)
    assert s.step_bound == pytest.approx(1.2e-3, rel=0.02)
    assert s.M == 103 and s.tree_size == 147
    assert s.m_reset == s.m_increment == pytest.approx(7.3e7, rel=0.02)
    assert s.guarantee == "high-probability"
    check_single_invariants(s)
    crn = th.single_pass_settings(**SCALE, oracle="single_pass_crn", allow_vacuous=True)
    assert crn.m_reset == pytest.approx(2.3e3, rel=0.02) and crn.m_increment == pytest.approx(570, rel=0.02)
    check_single_invariants(crn)


def test_the_privacy_floor_makes_the_high_probability_bounds_small():
    # m_priv makes r ≤ L·min(1, κ_d D/α): s_reset ≤ 4L/B1 and s_inc ≤ 8HD/B2 (the sensitivities Lemma 3.3 promises).
    for oracle in th.SINGLE_PASS_THEORY_ORACLES:
        s = th.single_pass_settings(**SCALE, oracle=oracle, allow_vacuous=True)
        H = s.lipschitz * float(smoothness_constant(s.d)) / s.smoothing_radius
        assert float(s.sensitivity_reset) <= 4 * s.lipschitz / s.B1 * (1 + 1e-12)
        assert float(s.sensitivity_increment) <= 8 * H * s.step_bound / s.B2 * (1 + 1e-12)


@settings(max_examples=25)
@given(n=st.integers(2_000, 10**7), d=st.integers(1, 64), alpha=st.floats(0.01, 1.0), eps=st.floats(0.1, 10),
       delta=st.floats(1e-12, 1e-3), variant=st.sampled_from(th.VARIANTS), accountant=st.sampled_from(th.ACCOUNTANTS),
       oracle=st.sampled_from(th.SINGLE_PASS_THEORY_ORACLES))
def test_single_pass_invariants(n, d, alpha, eps, delta, variant, accountant, oracle):
    try:
        s = th.single_pass_settings(n, d, 1.0, 1.0, alpha, eps, delta, variant=variant, accountant=accountant,
                                    oracle=oracle, allow_vacuous=True)
    except ValueError as err:
        assert "records" in str(err)
        return
    check_single_invariants(s)


@settings(max_examples=20)
@given(n=st.integers(5_000, 10**6), d=st.integers(1, 32), alpha=st.floats(0.02, 0.9), eps=st.floats(0.2, 8),
       k=st.integers(-6, 6), oracle=st.sampled_from(th.SINGLE_PASS_THEORY_ORACLES))
def test_single_pass_scale_invariance(n, d, alpha, eps, k, oracle):
    # x → c·x (c = 2^k): α → cα, D → cD, L → L/c; Φ, ε, δ unchanged. Σ, M, m, T and μ must not move.
    c = 2.0**k
    a = th.single_pass_settings(n, d, 1.0, 1.0, alpha, eps, 1e-6, oracle=oracle, allow_vacuous=True)
    b = th.single_pass_settings(n, d, 1.0 / c, 1.0, c * alpha, eps, 1e-6, oracle=oracle, allow_vacuous=True)
    assert (a.tree_size, a.M, a.m_reset, a.m_increment, a.T) == (
        b.tree_size, b.M, b.m_reset, b.m_increment, b.T)
    assert b.step_bound == pytest.approx(c * a.step_bound, rel=1e-12)
    assert float(b.mu) == pytest.approx(float(a.mu), rel=1e-12)
    assert b.certified_bound == pytest.approx(a.certified_bound / c, rel=1e-9)


def test_directions_override_falls_back_to_the_worst_case_where_smaller():
    # m = 16 (d = 8): r = 9·√(2 log(2/γ)/16) ≈ 12, so 2L + 2r > 2Ld and 4HD + 4r > 4Ld: both worst cases apply.
    s = th.single_pass_settings(**SCALE, directions=16, allow_vacuous=True)
    assert s.m_reset == s.m_increment == 16
    assert (s.plan.reset_branch, s.plan.increment_branch) == ("worst-case", "worst-case")
    assert s.guarantee == "worst-case" and s.delta_fail == 0
    assert float(s.sensitivity_reset) == pytest.approx(2 * s.lipschitz * s.d / s.B1, rel=1e-12)
    assert float(s.sensitivity_increment) == pytest.approx(4 * s.lipschitz * s.d / s.B2, rel=1e-12)
    # m = 64: the reset's high-probability bound (2L + 2r ≈ 14 < 16) is the smaller one again
    assert th.single_pass_settings(**SCALE, directions=64, allow_vacuous=True).plan.reset_branch == "high-probability"
    fo = th.single_pass_settings(**SCALE, oracle="first_order", directions=64, allow_vacuous=True)
    assert fo.m_reset == 1 and fo.m_increment == 64
    check_single_invariants(s)
    check_single_invariants(fo)


def test_clip_hardening_removes_the_failure_probability():
    s = th.single_pass_settings(**SCALE, clip_hardening=True, allow_vacuous=True)
    assert s.delta_fail == 0 and s.guarantee == "clip-hardened"
    plain = th.single_pass_settings(**SCALE, allow_vacuous=True)
    assert s.noise_std < plain.noise_std  # all of δ goes to the Gaussian part


def test_single_pass_refusals():
    with pytest.raises(ValueError, match="smoothing_radius"):
        th.single_pass_settings(1000, 4, 2.0, 1.0, 0.6, 1.0, 1e-5, allow_vacuous=True)  # α > Φ/L
    with pytest.raises(ValueError, match=r"n = 1 records.*n = (\d+) suffices") as info:
        th.single_pass_settings(1, 8, 1.0, 1.0, 0.5, 2.0, 1e-5, allow_vacuous=True)
    needed = int(info.value.args[0].rsplit("n = ", 1)[1].split()[0])
    check_single_invariants(th.single_pass_settings(needed, 8, 1.0, 1.0, 0.5, 2.0, 1e-5, allow_vacuous=True))
    with pytest.raises(ValueError, match="variant"):
        th.single_pass_settings(**SCALE, variant="printed", allow_vacuous=True)
    with pytest.raises(ValueError, match="oracle"):
        th.single_pass_settings(**SCALE, oracle="multi_pass", allow_vacuous=True)
    with pytest.raises(ValueError, match="directions"):
        th.single_pass_settings(**SCALE, directions=0, allow_vacuous=True)


def test_corrected_variant_has_the_extra_sqrt_d_and_larger_tree():
    # The corrected first D entry carries 1/√d (so D is never larger), and Σ ≥ α/(D√d) balances L/√Σ.
    for d in (1, 4, 64):
        kw = dict(SCALE, d=d)
        c = th.single_pass_settings(**kw, allow_vacuous=True)
        p = th.single_pass_settings(**kw, variant="paper", allow_vacuous=True)
        assert c.step_bound <= p.step_bound * (1 + 1e-12)
        assert c.tree_size >= min(c.T0, math.ceil(c.smoothing_radius / (c.step_bound * math.sqrt(d))))


def test_min_records_single_pass_suffices():
    beta = 1.0
    n = th.min_records_single_pass(beta, 2, 1.0, 1.0, 0.5, 2.0, 1e-5)
    assert th.single_pass_settings(n, 2, 1.0, 1.0, 0.5, 2.0, 1e-5, allow_vacuous=True).certified_bound <= beta
    with pytest.raises(ValueError, match="no n"):
        th.min_records_single_pass(1e-3, 8, 1.0, 1.0, 0.5, 2.0, 1e-5, directions=16)


# --- multi pass -------------------------------------------------------------------------------------------------------

MULTI = dict(d=4, lipschitz=1.0, initial_gap=1.0, smoothing_radius=0.5, target_stationarity=0.5, epsilon=1.0,
             delta=1e-5)


def test_min_records_multi_pass_is_the_smallest():
    args = {k: v for k, v in MULTI.items() if k != "target_stationarity"}
    n = th.min_records_multi_pass(MULTI["target_stationarity"], **args)
    s = th.multi_pass_settings(n, **MULTI, allow_vacuous=True)
    assert s.certified_bound <= MULTI["target_stationarity"] and s.meets_target
    with pytest.raises(ValueError, match=rf"n = {n} is the smallest"):
        th.multi_pass_settings(n - 1, **MULTI, allow_vacuous=True)


def test_multi_pass_invariants():
    args = {k: v for k, v in MULTI.items() if k != "target_stationarity"}
    for c in (None, 30.0):
        n = th.min_records_multi_pass(MULTI["target_stationarity"], **args, paper_constant=c)
        s = th.multi_pass_settings(2 * n, **MULTI, paper_constant=c, allow_vacuous=True)
        beta, alpha, L = s.target_stationarity, s.smoothing_radius, s.lipschitz
        assert s.step_bound == pytest.approx(alpha * beta**2 / (225 * L**2))
        assert s.T % s.M == 0 and s.K == s.T // s.M
        assert (s.initial_gap + 2 * L * alpha) / (s.step_bound * s.T) <= beta / 3 * (1 + 1e-12)
        assert s.M * s.step_bound <= alpha / 4 * (1 + 1e-12)
        assert s.resets == math.ceil(s.T / s.tree_size) and s.resets + s.increments == s.T
        assert s.m == max(s.m_privacy, s.m_variance) and isinstance(s.m, int)
        assert float(s.gamma) == pytest.approx(s.delta / (8 * s.T))
        assert s.delta_fail <= s.delta / 2 * (1 + 1e-12)
        assert s.plan.m_reset == s.m and s.plan.epsilon <= float(s.epsilon) * (1 + 1e-12)
        assert s.privacy_meets_target and s.records_used == s.n
        assert s.certified_bound == th.certified_bound_multi_pass(s) <= beta
    assert s.noise_rule == "paper"


@settings(max_examples=10)
@given(k=st.integers(-5, 5), d=st.integers(1, 16), beta=st.floats(0.05, 0.9))
def test_multi_pass_scale_invariance_and_the_printed_parameters_break_it(k, d, beta):
    # x → c·x: α → cα, L → L/c, β → β/c (a gradient norm). The corrected D, T are invariant; Theorem 4.1's printed
    # D = α²β²/L² becomes c·(that), so M = α/(4D) moves with c: the dimension error the printed form carries.
    c = 2.0**k
    n = 10**12  # large enough for every β here to be certified
    a = th.multi_pass_settings(n, d, 1.0, 1.0, 0.4, beta, 1.0, 1e-6, allow_vacuous=True)
    b = th.multi_pass_settings(n, d, 1.0 / c, 1.0, 0.4 * c, beta / c, 1.0, 1e-6, allow_vacuous=True)
    assert (a.tree_size, a.M, a.T, a.m) == (b.tree_size, b.M, b.T, b.m)
    assert b.step_bound == pytest.approx(c * a.step_bound, rel=1e-12)
    assert float(b.mu) == pytest.approx(float(a.mu), rel=1e-9)
    assert b.certified_bound == pytest.approx(a.certified_bound / c, rel=1e-9)
    pa = th.multi_pass_settings(1000, d, 1.0, 1.0, 0.01, beta, 1.0, 1e-6, variant="paper", allow_vacuous=True)
    pb = th.multi_pass_settings(1000, d, 1.0 / 64, 1.0, 0.01 * 64, beta / 64, 1.0, 1e-6, variant="paper", allow_vacuous=True)
    assert (pa.M, pa.T) != (pb.M, pb.T)  # a pure change of units moves M or T


def test_multi_pass_paper_variant_is_labelled_and_reported():
    s = th.multi_pass_settings(1000, **MULTI, variant="paper", paper_constant=13, allow_vacuous=True)
    assert s.variant == "paper" and "printed" in s.note and "dimensionally" in s.note
    assert s.step_bound == pytest.approx(min(0.5**2 * 0.5**2, 0.5 / 4))
    assert not s.meets_target and s.certified_bound > MULTI["target_stationarity"]
    with pytest.raises(ValueError, match="no number of records"):
        th.min_records_multi_pass(0.1, 4, 1.0, 1.0, 0.5, 1.0, 1e-5, variant="paper")
    with pytest.raises(ValueError, match="smoothing_radius"):
        th.multi_pass_settings(1000, **dict(MULTI, smoothing_radius=2.0), allow_vacuous=True)


# --- variance bounds (Lemmas 3.5, C.3, 4.4) --------------------------------------------------------------------------

def sphere(rng, shape, d):
    y = rng.standard_normal((*shape, d))
    return y / np.linalg.norm(y, axis=-1, keepdims=True)


def test_single_pass_variance_bound_by_simulation():
    # Linear losses f(x; ξ) = <c_ξ, x>, c_ξ uniform on a finite population of norm-≤-L vectors: the two-point estimate
    # of one record is d<c, y>y averaged over m directions, and E‖g̃_τ − c̄‖² is exactly
    # [(d−1)E‖c‖²/m + E‖c − c̄‖²]/B1 + (τ−1)·2(d−1)E‖c‖²/(m B2) + dσ²·popcount(τ) — below the bound (H·D slack).
    rng = np.random.default_rng(3)
    d, L, m, B1, B2, sigma, reps = 5, 1.0, 3, 4, 2, 0.2, 20_000
    pop = sphere(rng, (6,), d) * rng.uniform(0.3, 1.0, (6, 1))
    cbar = pop.mean(axis=0)
    est = lambda c, y: d * np.mean(np.sum(c[..., None, :] * y, axis=-1)[..., None] * y, axis=-2)  # noqa: E731
    g = est(pop[rng.integers(0, 6, (reps, B1))], sphere(rng, (reps, B1, m), d)).mean(axis=1)
    second = np.mean(np.sum(pop**2, axis=1))
    spread = np.mean(np.sum((pop - cbar) ** 2, axis=1))
    for tau in range(1, 7):
        if tau > 1:
            c = pop[rng.integers(0, 6, (reps, B2))]
            g = g + (est(c, sphere(rng, (reps, B2, m), d)) - est(c, sphere(rng, (reps, B2, m), d))).mean(axis=1)
        pc = bin(tau).count("1")
        released = g + sigma * math.sqrt(pc) * rng.standard_normal((reps, d))
        err = np.sum((released - cbar) ** 2, axis=1)
        exact = ((d - 1) * second / m + spread) / B1 + (tau - 1) * 2 * (d - 1) * second / (m * B2) + d * sigma**2 * pc
        assert abs(err.mean() - exact) <= 5 * err.std() / math.sqrt(reps)
        bound = th.single_pass_variance_bound(tau, d=d, lipschitz=L, smoothing_radius=0.5, step_bound=0.01, B1=B1,
                                              B2=B2, m_reset=m, m_increment=m, noise_std=sigma)
        assert exact <= bound
        fo = th.single_pass_variance_bound(tau, d=d, lipschitz=L, smoothing_radius=0.5, step_bound=0.01, B1=B1, B2=B2,
                                           m_reset=m, m_increment=m, noise_std=sigma, oracle="first_order")
        assert fo < bound  # the first-order estimate has no d² factor


def test_multi_pass_variance_bound_by_simulation():
    # Algorithm 4 on linear losses: E‖g̃_τ − c̄‖² = (2τ−1)(d−1)Σ‖c_i‖²/(n²m) + dσ1² + (τ−1)dσ2² ≤ Lemma 4.4's bound.
    rng = np.random.default_rng(5)
    d, n, m, s1, s2, reps = 4, 3, 5, 0.05, 0.02, 20_000
    cs = sphere(rng, (n,), d) * np.array([[1.0], [0.5], [0.8]])
    cbar = cs.mean(axis=0)
    est = lambda y: d * np.mean(np.sum(cs[None, :, None, :] * y, axis=-1)[..., None] * y, axis=-2)  # noqa: E731
    g = est(sphere(rng, (reps, n, m), d)).mean(axis=1) + s1 * rng.standard_normal((reps, d))
    for tau in range(1, 5):
        if tau > 1:
            g = (g + (est(sphere(rng, (reps, n, m), d)) - est(sphere(rng, (reps, n, m), d))).mean(axis=1)
                 + s2 * rng.standard_normal((reps, d)))
        err = np.sum((g - cbar) ** 2, axis=1)
        exact = (2 * tau - 1) * (d - 1) * np.sum(cs**2) / (n**2 * m) + d * s1**2 + (tau - 1) * d * s2**2
        assert abs(err.mean() - exact) <= 5 * err.std() / math.sqrt(reps)
        bound = th.multi_pass_variance_bound(tau, d=d, lipschitz=1.0, n=n, m=m, noise_std_reset=s1,
                                             noise_std_increment=s2)
        assert exact <= bound
        assert bound == pytest.approx((2 * tau - 1) * d**2 / (n * m) + d * s1**2 + (tau - 1) * d * s2**2)


# --- OGD regret (Lemma B.1) -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("M, ratio", [(1, 2.0), (4, 2.5), (16, 2.25)])
def test_adversarial_block_exceeds_the_printed_lemma_b1(M, ratio):
    # Δ_start = D·e, u = −D·e, g_t ≡ G·e, η = D/(G√M): regret/(D·G·√M) = 2.0, 2.5, 2.25 at M = 1, 4, 16.
    D, G = 0.3, 2.0
    eta = D / (G * math.sqrt(M))
    losses = np.tile([G, 0.0], (M, 1))
    regret = th.ogd_regret(losses, [-D, 0.0], step_bound=D, step_size=eta, start=[D, 0.0])
    assert regret / (D * G * math.sqrt(M)) == pytest.approx(ratio, rel=1e-12)
    assert regret > th.lemma_b1_printed_bound(D, G, M)
    assert regret <= th.ogd_regret_bound(D, eta, losses, restarted=False) * (1 + 1e-12)
    assert th.ogd_regret_bound(D, eta, losses, restarted=False) == pytest.approx(2.5 * D * G * math.sqrt(M))
    # a restarted block (Δ_start = 0) obeys D·G·√M ≤ the printed constant
    restarted = th.ogd_regret(losses, [-D, 0.0], step_bound=D, step_size=eta)
    assert restarted <= th.ogd_regret_bound(D, eta, losses, restarted=True) * (1 + 1e-12)
    assert th.ogd_regret_bound(D, eta, losses, restarted=True) <= th.lemma_b1_printed_bound(D, G, M)


@settings(max_examples=60)
@given(M=st.integers(1, 30), d=st.integers(1, 4), seed=st.integers(0, 2**32 - 1), eta=st.floats(1e-3, 10))
def test_ogd_regret_bound_holds_pathwise(M, d, seed, eta):
    rng = np.random.default_rng(seed)
    D = 1.5
    g = rng.standard_normal((M, d)) * rng.uniform(0.1, 5)
    u = sphere(rng, (), d) * D * rng.uniform(0, 1)
    start = sphere(rng, (), d) * D * rng.uniform(0, 1)
    assert th.ogd_regret(g, u, step_bound=D, step_size=eta, start=start) <= th.ogd_regret_bound(
        D, eta, g, restarted=False) + 1e-9
    assert th.ogd_regret(g, u, step_bound=D, step_size=eta) <= th.ogd_regret_bound(D, eta, g, restarted=True) + 1e-9


def test_certified_bound_uses_the_corrected_constants():
    b = th.o2nc_certified_bound(1.0, 1.0, 0.5, 0.01, 100, 10, 0.2, 1.2)
    assert b == pytest.approx(2.0 / 1.0 + 2.5 * 1.2 / math.sqrt(10) + 0.4)
    r = th.o2nc_certified_bound(1.0, 1.0, 0.5, 0.01, 100, 10, 0.2, 1.2, restarted=True)
    assert r == pytest.approx(2.0 + 1.2 / math.sqrt(10) + 0.4)
    with pytest.raises(ValueError, match="multiple of block_length"):
        th.o2nc_certified_bound(1.0, 1.0, 0.5, 0.01, 101, 10, 0.2, 1.2)
    with pytest.raises(ValueError, match="smoothing_radius"):
        th.o2nc_certified_bound(1.0, 1.0, 0.05, 0.01, 100, 10, 0.2, 1.2)


# --- rates ------------------------------------------------------------------------------------------------------------

rate_args = dict(n=st.floats(10, 1e12), d=st.integers(1, 10**5), L=st.floats(0.01, 100), gap=st.floats(0.01, 100),
                 alpha_frac=st.floats(1e-4, 1.0), eps=st.floats(0.01, 10))


@settings(max_examples=100)
@given(**rate_args)
def test_corrected_rate_is_never_below_the_printed(n, d, L, gap, alpha_frac, eps):
    alpha = alpha_frac * gap / L
    printed = th.rate_thm31_printed(n, d, L, gap, alpha, eps)
    corrected = th.rate_thm31_corrected(n, d, L, gap, alpha, eps)
    assert corrected >= printed * (1 - 1e-12)
    # the difference is exactly the √d missing from the first term: (d^{1/6} − 1)·(ΦL²/(nα))^{1/3}
    first = (gap * L**2 / (n * alpha)) ** (1 / 3)
    assert corrected == pytest.approx(printed + (d ** (1 / 6) - 1) * first, rel=1e-12)


def test_corrected_rate_is_strictly_larger_when_sampling_dominates():
    # Non-private regime (ε large): the first term dominates and the corrected rate is d^{1/6} times larger.
    args = dict(n=1e6, lipschitz=1.0, initial_gap=1.0, smoothing_radius=0.5, epsilon=1e15)
    ratio = th.rate_thm31_corrected(d=64, **args) / th.rate_thm31_printed(d=64, **args)
    assert ratio == pytest.approx(2.0, rel=0.01)  # 64^{1/6} = 2


@settings(max_examples=100)
@given(beta=st.floats(1e-3, 10), d=st.integers(1, 10**5), L=st.floats(0.01, 100), gap=st.floats(0.01, 100),
       alpha_frac=st.floats(1e-4, 1.0), eps=st.floats(0.01, 10))
def test_sample_complexities(beta, d, L, gap, alpha_frac, eps):
    # Corrected: a + b with a = ΦL²√d/(αβ³), b = ΦLd/(εαβ²). Printed: a/√d + b + √(ab) — its third term is the
    # geometric mean of the corrected two, so never more than their average (it adds nothing to the order).
    alpha = alpha_frac * gap / L
    a = gap * L**2 * math.sqrt(d) / (alpha * beta**3)
    b = gap * L * d / (eps * alpha * beta**2)
    assert th.samples_thm31_corrected(beta, d, L, gap, alpha, eps) == pytest.approx(a + b, rel=1e-12)
    printed = th.samples_thm31_printed(beta, d, L, gap, alpha, eps)
    assert printed == pytest.approx(a / math.sqrt(d) + b + math.sqrt(a * b), rel=1e-12)
    assert printed <= 1.5 * (a + b) * (1 + 1e-12)
    n41 = th.samples_thm41(beta, d, L, gap, alpha, eps)
    assert th.rate_thm41(n41, d, L, gap, alpha, eps) == pytest.approx(beta, rel=1e-9)


def test_settings_are_frozen():
    s = th.single_pass_settings(**SCALE, allow_vacuous=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.T = 1
    assert dataclasses.asdict(s)["M"] == 103


def test_vacuous_settings_are_refused_unless_allowed():
    """A certified bound >= L says nothing (every 2α-Goldstein norm of an L-Lipschitz F is <= L): refused by default,
    returned flagged with allow_vacuous=True; the refusal names a record count whose settings are not vacuous."""
    with pytest.raises(ValueError, match=r"vacuous: the certified bound .* is >= L = 1.*n = (\d+) records") as caught:
        th.single_pass_settings(**SCALE)
    flagged = th.single_pass_settings(**SCALE, allow_vacuous=True)
    assert flagged.vacuous and flagged.certified_bound >= 1.0
    needed = int(re.search(r"n = (\d+) records certify", str(caught.value)).group(1))
    fine = th.single_pass_settings(**dict(SCALE, n=needed))
    assert not fine.vacuous and fine.certified_bound < 1.0
    with pytest.raises(ValueError, match="vacuous.*target_stationarity below L"):
        th.multi_pass_settings(2000, **dict(MULTI, target_stationarity=1.5))
    with pytest.raises(TypeError, match="allow_vacuous must be a bool"):
        th.single_pass_settings(**SCALE, allow_vacuous="yes")
    with pytest.raises(TypeError, match="allow_vacuous must be a bool"):
        th.multi_pass_settings(1000, **MULTI, allow_vacuous=1)
