"""Tests of reference/algorithms/zo_o2nc_theory.py (zo_o2nc Theorem 4.9, Lemma 4.8, Corollary 4.5, App. E settings
and Theorem 4.9's explicit bound) and of the whole-run accounting in reference/algorithms/zo_o2nc_privacy.py
(Corollary 4.4, Theorem 4.3 exact vs printed, the plan's ε under each rule).

Reference values are the paper's formulas evaluated here independently (plain mpmath), and compared with the
published-style rounded values for M = 1e5, d = 10, L = 1, δ = 0.1, ρ = 1, F* = 1."""

import math
import re

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.accounting.conversions import epsilon_from_zcdp
from reference.accounting.rdp import rdp_tree_exact
from reference.algorithms.zo_o2nc_privacy import (
    zo_o2nc_cor44_sigma,
    zo_o2nc_leaf_sensitivities,
    zo_o2nc_naive_noise_std,
    zo_o2nc_naive_privacy_plan,
    zo_o2nc_privacy_plan,
    zo_o2nc_rdp_to_dp,
    zo_o2nc_tree_noise_std,
    zo_o2nc_tree_rho_squared,
)
from reference.algorithms.zo_o2nc_theory import (
    lemma48_variance_bound,
    naive_settings,
    osd_step_size,
    thm49_bound,
    thm49_bound_terms,
    thm49_settings,
    tree_norm_bound,
)
from reference.mechanisms import fenwick_chain

GOLDEN = dict(M=100_000, d=10, lipschitz=1, smoothing_radius=0.1, rho=1, initial_gap=1)
PAPER_RULES = dict(count_rule="paper_2lnT", tree_norm_rule="paper_2lnT")


def _paper_formulas(M, d, L, delta, rho, F, rule):
    """Theorem 4.9 with Corollary 4.4's σ and Corollary 4.5's 2 ln T, evaluated from the printed formulas."""
    M, d, L, delta, rho, F = (mpmath.mpf(v) for v in (M, d, L, delta, rho, F))
    T1 = (mpmath.sqrt(d) * L * delta * M / (F + L * delta)) ** (mpmath.mpf(2) / 3)
    T2 = (d ** mpmath.mpf(1.5) * L * delta * M / ((F + L * delta) * rho)) ** (mpmath.mpf(1) / 2)
    T = int(mpmath.floor(min(T1, T2) if rule == "paper_min" else max(T1, T2)))
    K = int(M) // (2 * T)
    B1, B2 = T + 1, 1
    D = delta / T
    sigma = 4 * mpmath.sqrt(2 * mpmath.log(T)) * d * L / (B2 * T * rho)
    V = 16 * d * L**2 / B1 + 64 * d * L**2 / (B2 * T)
    N = 2 * mpmath.log(T) * d * sigma**2
    G = mpmath.sqrt(3 * V + 3 * L**2 + 3 * N)
    return dict(T=T, K=K, B1=B1, D=D, sigma=sigma, G=G, eta=D / (G * mpmath.sqrt(T)), used=K * (B1 + B2 * (T - 1)),
                T1=T1, T2=T2, V=V, N=N)


# --- Theorem 4.9 settings: golden values ---------------------------------------------------------------------------


@pytest.mark.parametrize("rule", ["paper_min", "max"])
def test_thm49_settings_match_the_printed_formulas(rule):
    s = thm49_settings(**GOLDEN, T_rule=rule, **PAPER_RULES)
    ref = _paper_formulas(1e5, 10, 1, 0.1, 1, 1, rule)
    assert (s.T, s.K, s.B1, s.B2, s.records_used) == (ref["T"], ref["K"], ref["B1"], 1, ref["used"])
    for field, key in [("step_bound", "D"), ("noise_std", "sigma"), ("gradient_bound", "G"), ("step_size", "eta"),
                       ("T_gradient", "T1"), ("T_privacy", "T2"), ("variance_bound", "V"), ("tree_norm_bound", "N")]:
        assert mpmath.almosteq(getattr(s, field), ref[key], rel_eps=mpmath.mpf(10) ** -12), field
    assert isinstance(s.T, int) and isinstance(s.K, int) and 2 * s.K * s.T <= s.M
    assert s.records_used + s.records_unused == s.M


def test_thm49_golden_values():
    """M = 1e5, d = 10, L = 1, δ = 0.1, ρ = 1, F* = 1: T1 = 938.436, T2 = 536.171; "paper_min": T = 536, K = 93,
    B1 = 537, D = 1.8657e−4, σ = 0.264565, G = 5.81957, η = 1.38472e−6, 99696 records; "max": T = 938, K = 53,
    σ = 0.157768."""
    s = thm49_settings(**GOLDEN, T_rule="paper_min", **PAPER_RULES)
    assert float(s.T_gradient) == pytest.approx(938.436, abs=5e-4)
    assert float(s.T_privacy) == pytest.approx(536.171, abs=5e-4)
    assert (s.T, s.K, s.B1, s.records_used) == (536, 93, 537, 99696)
    assert float(s.step_bound) == pytest.approx(1.8657e-4, rel=5e-5)
    assert float(s.noise_std) == pytest.approx(0.264565, abs=5e-7)
    assert float(s.gradient_bound) == pytest.approx(5.81957, abs=5e-6)
    assert float(s.step_size) == pytest.approx(1.38472e-6, rel=5e-6)
    m = thm49_settings(**GOLDEN, T_rule="max", **PAPER_RULES)
    assert (m.T, m.K) == (938, 53)
    assert float(m.noise_std) == pytest.approx(0.157768, abs=5e-7)


def test_thm49_default_rules_are_max_and_exact():
    s = thm49_settings(**GOLDEN)
    assert (s.T_rule, s.count_rule, s.tree_norm_rule, s.T) == ("max", "exact", "exact", 938)
    # exact count: σ² = max(s_1²(⌊log2 T⌋+1), s_2²⌊log2 T⌋)/ρ², s_1 = 2dL/(T+1), s_2 = 4dL/T
    s1, s2 = 20 / mpmath.mpf(939), 40 / mpmath.mpf(938)
    assert mpmath.almosteq(s.noise_std, mpmath.sqrt(max(s1**2 * 10, s2**2 * 9)), rel_eps=1e-14)
    assert mpmath.almosteq(s.tree_norm_bound, 9 * 10 * s.noise_std**2, rel_eps=1e-14)  # ⌊log2 939⌋ = 9


def test_thm49_nonprivate_uses_T1_and_no_noise():
    for rule in ("max", "paper_min"):
        s = thm49_settings(**{**GOLDEN, "rho": None}, T_rule=rule)
        assert s.T == 938 and s.noise_std == 0 and s.tree_norm_bound == 0 and s.T_privacy is None


def test_thm49_refuses_too_little_data_and_names_a_sufficient_count():
    with pytest.raises(ValueError, match=r"M = 3 records.*2T = 4 records per epoch.*M = (\d+) suffices") as info:
        thm49_settings(3, 10, 1, 0.1, 1, 1)
    needed = int(re.search(r"M = (\d+) suffices", str(info.value)).group(1))
    s = thm49_settings(needed, 10, 1, 0.1, 1, 1)
    assert s.K >= 1 and 2 * s.T * s.K <= needed
    with pytest.raises(ValueError, match=r"M = (\d+) suffices") as info:
        thm49_settings(50, 1000, 1, 1, 1, 0.0)
    needed = int(re.search(r"M = (\d+) suffices", str(info.value)).group(1))
    assert thm49_settings(needed, 1000, 1, 1, 1, 0.0).K >= 1


@pytest.mark.parametrize("kwargs, error, name", [
    (dict(M=0), ValueError, "M"), (dict(d=1.5), TypeError, "d"), (dict(lipschitz=0), ValueError, "lipschitz"),
    (dict(smoothing_radius=math.inf), ValueError, "smoothing_radius"), (dict(rho=-1), ValueError, "rho"),
    (dict(initial_gap=-1), ValueError, "initial_gap"), (dict(T_rule="min"), ValueError, "T_rule"),
    (dict(count_rule="ln"), ValueError, "count_rule"), (dict(tree_norm_rule="ln"), ValueError, "tree_norm_rule"),
])
def test_thm49_validation(kwargs, error, name):
    args = {**GOLDEN, **kwargs}
    with pytest.raises(error, match=name):
        thm49_settings(**args)


# --- the pieces: Lemma 4.8, Corollary 4.5, η ------------------------------------------------------------------------


def test_lemma48_and_step_size_formulas():
    assert mpmath.almosteq(lemma48_variance_bound(10, 2, 50, 51, 3), 16 * 10 * 4 / mpmath.mpf(51) + 64 * 10 * 4 /
                           mpmath.mpf(150), rel_eps=1e-14)
    assert mpmath.almosteq(osd_step_size(0.01, 4, 25), mpmath.mpf("0.01") / 20, rel_eps=1e-14)
    with pytest.raises(ValueError, match="gradient_bound"):
        osd_step_size(0.01, 0, 25)


def test_tree_norm_bound_is_max_popcount_and_paper_rule_dominates():
    for T in range(1, 300):
        exact = tree_norm_bound(3, 0.5, T, "exact")
        assert exact == max(bin(t).count("1") for t in range(1, T + 1)) * 3 * mpmath.mpf(0.25)
    for T in range(2, 4097):  # Corollary 4.5's 2 ln T ≥ ⌊log2(T+1)⌋ for every T ≥ 2 (zo_o2nc.E4)
        assert 2 * math.log(T) >= (T + 1).bit_length() - 1
    with pytest.raises(ValueError, match="T must be >= 2"):
        tree_norm_bound(3, 0.5, 1, "paper_2lnT")


# --- Theorem 4.9's explicit bound --------------------------------------------------------------------------------


def test_thm49_bound_formula_and_vacuity():
    s = thm49_settings(10**6, 2, 1, 0.5, 10, 1, **PAPER_RULES)
    L, delta = 1, mpmath.mpf(0.5)
    expected = ((1 + 2 * L * delta) / (delta * s.K) + s.gradient_bound / mpmath.sqrt(s.T)
                + 2 * (mpmath.sqrt(s.variance_bound) + mpmath.sqrt(s.tree_norm_bound)))
    assert mpmath.almosteq(thm49_bound(s), expected, rel_eps=1e-14)
    terms = thm49_bound_terms(s)
    assert mpmath.almosteq(terms["total"], sum(v for k, v in terms.items() if k != "total"), rel_eps=1e-14)
    assert 0.38 < float(thm49_bound(s)) < 0.42  # non-vacuous (< L) at d = 2, M = 1e6, δ = 0.5, ρ = 10
    assert thm49_bound(thm49_settings(**GOLDEN)) >= 1  # vacuous (≥ L) at d = 10, M = 1e5
    with pytest.raises(TypeError, match="Theorem49Settings"):
        thm49_bound(naive_settings(**GOLDEN))


# --- App. E (naive oracle) settings ------------------------------------------------------------------------------


def test_naive_settings_appendix_e():
    s = naive_settings(**GOLDEN, T_rule="paper_min")
    M, d, L, delta, rho, F = (mpmath.mpf(v) for v in (1e5, 10, 1, 0.1, 1, 1))
    T1 = (mpmath.sqrt(d) * L * delta * M / (F + L * delta)) ** (mpmath.mpf(2) / 3)
    T2 = (d ** mpmath.mpf(1.5) * L * delta * M / ((F + L * delta) * rho)) ** (mpmath.mpf(2) / 3)
    assert mpmath.almosteq(s.T_gradient, T1, rel_eps=1e-12) and mpmath.almosteq(s.T_privacy, T2, rel_eps=1e-12)
    T = int(mpmath.floor(min(T1, T2)))
    assert (s.batch_size, s.T, s.K) == (1, T, 100_000 // T)
    assert s.noise_std == 2 * d * L / rho  # σ = 2dL/(Bρ), zo_o2nc.E8
    assert mpmath.almosteq(s.gradient_bound, mpmath.sqrt(L**2 + d**2 * L**2 + d * s.noise_std**2), rel_eps=1e-14)
    assert mpmath.almosteq(s.step_size, delta / T / (s.gradient_bound * mpmath.sqrt(T)), rel_eps=1e-14)
    assert naive_settings(**GOLDEN, sigma_rule="paper").noise_std == d * L / rho
    wide = naive_settings(**GOLDEN, batch_size="dimension")
    assert wide.batch_size == 32 and wide.records_used == wide.K * wide.T * 32 <= 100_000  # round(10^1.5 / 1)
    assert naive_settings(**GOLDEN, batch_size=5).batch_rule == "given"
    with pytest.raises(ValueError, match=r"B·T = \d+ records; more records are needed: M = \d+ suffices"):
        naive_settings(10, 10, 1, 0.1, 1, 1, batch_size=8)
    with pytest.raises(ValueError, match="batch_size"):
        naive_settings(**GOLDEN, batch_size="many")
    with pytest.raises(ValueError, match="sigma_rule"):
        naive_settings(**GOLDEN, sigma_rule="half")


# --- Corollary 4.4 and the tree accounting ---------------------------------------------------------------------------


@pytest.mark.parametrize("T", [2, 3, 8, 100, 536, 938])
def test_cor44_printed_formula_and_general_rule(T):
    d, L, rho, delta = 10, 1.5, 0.7, 0.1
    printed = 4 * mpmath.sqrt(2 * mpmath.log(T)) * d * L / (1 * T * rho)
    assert mpmath.almosteq(zo_o2nc_cor44_sigma(d, L, T, T + 1, 1, rho, count_rule="paper_2lnT"), printed, rel_eps=1e-12)
    for rule in ("exact", "paper_2lnT"):  # any D: with D = δ/T and B1 ≥ T·B2/2 it is Corollary 4.4
        assert mpmath.almosteq(zo_o2nc_tree_noise_std(d, L, T, T + 1, 1, delta, delta / T, rho, rule),
                               zo_o2nc_cor44_sigma(d, L, T, T + 1, 1, rho, count_rule=rule), rel_eps=1e-12)


def test_cor44_refusals():
    with pytest.raises(ValueError, match="B1 must be >= T"):
        zo_o2nc_cor44_sigma(10, 1, 10, 4, 1, 1)
    with pytest.raises(ValueError, match="T must be >= 2"):
        zo_o2nc_cor44_sigma(10, 1, 1, 2, 1, 1, count_rule="paper_2lnT")
    with pytest.raises(ValueError, match="T must be >= 2"):
        zo_o2nc_tree_noise_std(10, 1, 1, 2, 1, 0.1, 0.1, 1, "paper_2lnT")


def _linear_algebra_rho_squared(s, stds):
    """max_q s_q² (P e_q)^T (R Σ R^T)^{−1} (P e_q): the release x = P m + R ξ of Theorem 4.3's proof, P the prefix
    sums, R_{t,b} = 1[b ∈ NODE(t)'s right ends], Σ = diag(σ_b²)."""
    n = len(s)
    P = np.tril(np.ones((n, n)))
    R = np.zeros((n, n))
    for t in range(1, n + 1):
        R[t - 1, [b - 1 for b in fenwick_chain(t)]] = 1.0
    cov = R @ np.diag(np.asarray(stds) ** 2) @ R.T
    quad = np.einsum("ij,ij->j", P, np.linalg.solve(cov, P))
    return float(np.max(np.asarray(s) ** 2 * quad))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 13, 16, 33, 64, 100, 257, 512])
def test_exact_tree_rule_equals_linear_algebra_form(n):
    rng = np.random.default_rng(n)
    s = rng.uniform(0.1, 2.0, n)
    stds = rng.uniform(0.5, 3.0, n)
    exact = float(zo_o2nc_tree_rho_squared(s, stds, "exact"))
    assert exact == pytest.approx(_linear_algebra_rho_squared(s, stds), rel=1e-9)
    assert exact == pytest.approx(float(rdp_tree_exact(2, s, stds)), rel=1e-12)  # α = 2: RDP = ρ²


def test_printed_tree_rule_formula():
    s, stds = [1.0, 3.0, 2.0], [1.0, 2.0, 0.5]
    # 2 ln 3 · max_b max_{i ≤ b} s_i²/σ_b² = 2 ln 3 · max(1, 9/4, 9/0.25)
    assert float(zo_o2nc_tree_rho_squared(s, stds, "paper_2lnT")) == pytest.approx(2 * math.log(3) * 36, rel=1e-14)
    assert zo_o2nc_tree_rho_squared([1.0], [1.0], "paper_2lnT") == 0  # 2 ln 1 = 0 (zo_o2nc.E3)
    with pytest.raises(ValueError, match="rule"):
        zo_o2nc_tree_rho_squared(s, stds, "ln")
    with pytest.raises(ValueError, match="noise_stds"):
        zo_o2nc_tree_rho_squared(s, stds[:2])


def test_thm49_settings_are_private_for_every_T_and_boundary_case_fails_at_2_and_4():
    """zo_o2nc Corollary 4.4 with σ = √(2 ln T)·s_2/ρ: under Theorem 4.9's B1 = T + 1, B2 = 1 the exact ρ never exceeds
    ρ (2 ≤ T ≤ 4096); in the boundary case s_1 = s_2 (B1 = T·B2/2) it does exactly at T ∈ {2, 4} (zo_o2nc.E3); the
    exact count rule never does. Counts c_1 = ⌊log2 T⌋ + 1, max_{q ≥ 2} c_q = ⌊log2 T⌋."""
    boundary_failures = []
    for T in range(2, 4097):
        c1, c2 = T.bit_length(), T.bit_length() - 1
        s2 = 4.0 / T
        sigma_sq = 2 * math.log(T) * s2**2  # ρ = 1
        thm49 = max((2.0 / (T + 1)) ** 2 * c1, s2**2 * c2) / sigma_sq
        assert thm49 <= 1 + 1e-12, T
        if max(s2**2 * c1, s2**2 * c2) / sigma_sq > 1 + 1e-12:
            boundary_failures.append(T)
        exact_sigma_sq = max(s2**2 * c1, s2**2 * c2)
        assert max(s2**2 * c1, s2**2 * c2) / exact_sigma_sq <= 1 + 1e-12
    assert boundary_failures == [2, 4]
    # the same through the accounting functions (loops over the leaves), a few T
    for T in (2, 3, 4, 5, 8, 31, 64):
        for B1 in (T + 1, max(1, T // 2)):
            if 2 * B1 < T:
                continue
            s = zo_o2nc_leaf_sensitivities(10, 1, T, B1, 1, 0.1, 0.1 / T)
            sigma = zo_o2nc_cor44_sigma(10, 1, T, B1, 1, 1, count_rule="paper_2lnT")
            rho_sq = zo_o2nc_tree_rho_squared(s, [sigma] * T, "exact")
            assert (rho_sq > 1 + 1e-12) == (T in (2, 4) and 2 * B1 == T), (T, B1)
            sigma_exact = zo_o2nc_tree_noise_std(10, 1, T, B1, 1, 0.1, 0.1 / T, 1, "exact")
            assert zo_o2nc_tree_rho_squared(s, [sigma_exact] * T, "exact") <= 1 + 1e-12


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 50), st.integers(1, 4), st.floats(0.01, 2.0), st.floats(0.1, 5.0))
def test_exact_calibration_hits_rho(T, B1, B2, step_ratio, rho):
    delta = 0.1
    D = step_ratio * delta / T
    sigma = zo_o2nc_tree_noise_std(3, 1.0, T, B1, B2, delta, D, rho, "exact")
    s = zo_o2nc_leaf_sensitivities(3, 1.0, T, B1, B2, delta, D)
    assert mpmath.almosteq(zo_o2nc_tree_rho_squared(s, [sigma] * T, "exact"), mpmath.mpf(rho) ** 2, rel_eps=1e-12)


def test_leaf_sensitivities_use_the_realised_step_bound():
    s = zo_o2nc_leaf_sensitivities(5, 2, 4, 8, 3, 0.2, 0.01)
    assert mpmath.almosteq(s[0], 2 * 5 * 2 / mpmath.mpf(8), rel_eps=1e-15)
    assert all(mpmath.almosteq(v, 2 * 5 * 2 * mpmath.mpf("0.02") / (3 * mpmath.mpf("0.2")), rel_eps=1e-14)
               for v in s[1:])
    assert len(s) == 4


# --- the privacy plan: ε under each rule --------------------------------------------------------------------------


def test_plan_epsilons():
    T, d, delta, dp_delta = 536, 10, 0.1, 1e-5
    sigma = float(zo_o2nc_cor44_sigma(d, 1, T, T + 1, 1, 1, count_rule="paper_2lnT"))
    plan = zo_o2nc_privacy_plan(d=d, lipschitz=1, T=T, K=93, B1=T + 1, B2=1, smoothing_radius=delta,
                                step_bound=delta / T, noise_std=sigma, dp_delta=dp_delta, rho_target=1,
                                noise_rule="paper_2lnT")
    s1, s2 = 2 * d / (T + 1), 4 * d / T
    rho_exact = math.sqrt(max(s1**2 * 10, s2**2 * 9)) / sigma  # c_1 = ⌊log2 536⌋ + 1 = 10
    assert plan.rho_exact == pytest.approx(rho_exact, rel=1e-12)
    assert plan.rho_printed == pytest.approx(1.0, rel=1e-9)  # the printed accounting is what σ was chosen for
    ell = math.log(1 / dp_delta)
    assert plan.epsilon_exact == pytest.approx(rho_exact**2 / 2 + rho_exact * math.sqrt(2 * ell), rel=1e-12)
    assert plan.epsilon_printed == pytest.approx(0.5 + math.sqrt(2 * ell), rel=1e-9)
    assert plan.epsilon_exact == pytest.approx(float(zo_o2nc_rdp_to_dp(plan.rho_exact, dp_delta)), rel=1e-12)
    # accountant: TreeAggregationEvent(z = σ/max s, T) has RDP (⌊log2 T⌋ + 1)α/(2z²) — a zCDP curve
    z = sigma / max(s1, s2)
    assert plan.epsilon_accountant == pytest.approx(float(epsilon_from_zcdp(10 / (2 * z**2), dp_delta)), rel=1e-12)
    assert plan.epsilon_tight == pytest.approx(float(epsilon_from_zcdp(rho_exact**2 / 2, dp_delta)), rel=1e-12)
    assert plan.epsilon_claimed == plan.epsilon_tight <= min(plan.epsilon_exact, plan.epsilon_accountant)
    assert plan.epsilon_exact < plan.epsilon_printed  # with B1 = T + 1 the printed count is conservative
    loop = zo_o2nc_tree_rho_squared(zo_o2nc_leaf_sensitivities(d, 1, T, T + 1, 1, delta, delta / T), [sigma] * T)
    assert plan.rho_exact == pytest.approx(math.sqrt(float(loop)), rel=1e-12)  # closed form = the general rule
    assert plan.accountant_event.steps == T and plan.accountant_event.restarts == 1


def test_plan_flags_the_small_T_erratum():
    sigma = float(zo_o2nc_cor44_sigma(10, 1, 2, 1, 1, 1, count_rule="paper_2lnT"))  # s_1 = s_2 at T = 2
    plan = zo_o2nc_privacy_plan(d=10, lipschitz=1, T=2, K=1, B1=1, B2=1, smoothing_radius=0.1, step_bound=0.05,
                                noise_std=sigma, dp_delta=1e-5, rho_target=1, noise_rule="paper_2lnT")
    assert plan.rho_exact == pytest.approx(math.sqrt(2 / (2 * math.log(2))), rel=1e-9)  # ×1.443 in ρ²
    assert plan.rho_exact > plan.rho_printed and "zo_o2nc.E3" in plan.note and "over budget" in plan.note


def test_naive_plan():
    sigma = float(zo_o2nc_naive_noise_std(10, 1, 4, 0.5, "paper"))
    plan = zo_o2nc_naive_privacy_plan(d=10, lipschitz=1, T=100, K=5, batch_size=4, noise_std=sigma, dp_delta=1e-6,
                                      rho_target=0.5, noise_rule="paper")
    assert sigma == 5.0 and plan.sensitivities == (5.0, 5.0)  # σ = dL/(Bρ) as printed; s = 2dL/B
    assert plan.rho_exact == pytest.approx(1.0) and plan.rho_printed == pytest.approx(0.5)
    assert plan.epsilon_accountant == pytest.approx(plan.epsilon_tight, rel=1e-12)  # one Gaussian: the event is exact


@pytest.mark.parametrize("kwargs, name", [
    (dict(noise_std=0.0), "noise_std"), (dict(dp_delta=0.0), "dp_delta"), (dict(T=0), "T"),
    (dict(step_bound=-1.0), "step_bound"), (dict(noise_rule="ln"), "noise_rule"), (dict(B2=0), "B2"),
])
def test_plan_validation(kwargs, name):
    args = dict(d=3, lipschitz=1, T=4, K=2, B1=5, B2=1, smoothing_radius=0.1, step_bound=0.025, noise_std=1.0,
                dp_delta=1e-5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        zo_o2nc_privacy_plan(**args)
