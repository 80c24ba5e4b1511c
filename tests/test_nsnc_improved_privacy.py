"""nsnc_improved privacy (reference/algorithms/nsnc_improved_privacy.py): the concentration radius, the sensitivity
table of Lemmas 3.3/C.1 (worst case vs high probability), exact Gaussian-DP accounting of single- and multi-pass runs,
the calibration helpers and the privacy plans.

The values checked are independent of the module: the Gaussian privacy profile from scipy's normal CDF, the Pinelis
tail and the high-probability sensitivities by simulation, the worst case by an explicit adversarial pair, the reset
counts by enumerating the steps, and the (ε, δ) of every calibration by re-accounting it.
"""

import dataclasses
import json
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from reference.accounting.gaussian import gaussian_delta
from reference.algorithms import nsnc_improved_privacy as pr
from reference.smoothing import smoothness_constant

ORACLE_KINDS = {"single_pass": "zo", "single_pass_crn": "zo", "first_order": "fo", "multi_pass": "zo",
                "multi_pass_first_order": "fo"}


def base(**over):
    """A single-pass configuration with m large enough that every high-probability branch is active (d = 8)."""
    kw = dict(oracle="single_pass", d=8, lipschitz=1.0, smoothing_radius=0.5, step_bound=1.2e-3, tree_size=147,
              B1=147, B2=1, m_reset=73_000_000, m_increment=73_000_000, gamma=1e-5 / 8)
    kw.update(over)
    return kw


def multi(**over):
    kw = dict(oracle="multi_pass", d=4, lipschitz=1.0, smoothing_radius=0.5, step_bound=1e-3, n=5000, tree_size=100,
              T=2000, m=10**8, gamma=1e-5 / (8 * 2000))
    kw.update(over)
    return kw


def sens_kwargs(kw):
    out = {k: v for k, v in kw.items() if k not in ("tree_size",)}
    return out


# --- the Gaussian profile and the concentration radius -------------------------------------------------------------

def test_gaussian_profile_reference_value_is_independent():
    # δ_GDP(1; 1) = Φ(−1/2) − e·Φ(−3/2), from scipy's normal CDF.
    expected = norm.cdf(-0.5) - math.e * norm.cdf(-1.5)
    assert abs(expected - 0.1269367375066) < 1e-12
    assert abs(float(pr.nsnc_delta(1, 1, 0)) - expected) < 1e-14
    assert abs(float(pr.nsnc_delta(1, 1, 0.25)) - expected - 0.25) < 1e-14


def test_pinelis_radius_formula_and_monotonicity():
    r = pr.pinelis_radius(3, 50, 0.01)
    assert abs(float(r) - 3 * math.sqrt(2 * math.log(200) / 50)) < 1e-14
    assert pr.pinelis_radius(3, 200, 0.01) < r < pr.pinelis_radius(3, 50, 0.001)
    assert pr.pinelis_radius(0, 5, 0.5) == 0


def test_pinelis_tail_holds_by_simulation():
    # m iid uniform vectors on the sphere of radius b in R^3: P[‖mean‖ ≥ radius] ≤ γ (Pinelis 1994).
    rng = np.random.default_rng(7)
    b, m, gamma, reps = 2.0, 40, 0.05, 20_000
    x = rng.standard_normal((reps, m, 3))
    x *= b / np.linalg.norm(x, axis=2, keepdims=True)
    freq = np.mean(np.linalg.norm(x.mean(axis=1), axis=1) >= float(pr.pinelis_radius(b, m, gamma)))
    assert freq <= gamma


def test_concentration_radius_kinds():
    kw = dict(d=8, lipschitz=2.0, smoothing_radius=0.5, m=1000, gamma=1e-3)
    root = math.sqrt(2 * math.log(2 / 1e-3) / 1000)
    assert abs(float(pr.concentration_radius("zo", **kw)) - 2.0 * 9 * root) < 1e-13
    assert abs(float(pr.concentration_radius("fo", **kw)) - 4.0 * root) < 1e-13
    kappa = float(smoothness_constant(8))
    crn = pr.concentration_radius("crn", step_norm=0.01, **kw)
    assert abs(float(crn) - (8 + kappa) * 2.0 * 0.01 / 0.5 * root) < 1e-13
    with pytest.raises(ValueError, match="step_norm"):
        pr.concentration_radius("crn", **kw)
    with pytest.raises(ValueError, match="step_norm"):
        pr.concentration_radius("zo", step_norm=0.1, **kw)
    with pytest.raises(ValueError, match="kind"):
        pr.concentration_radius("gaussian", **kw)


# --- the sensitivity table -------------------------------------------------------------------------------------------

def test_worst_case_is_attained_by_the_adversarial_linear_pair():
    # f = L<e, x>, f' = −L<e, x>, every direction = e: each two-point summand is ±Ld·e, so the reset estimates differ
    # by 2Ld (nsnc_improved.E1: eq. (5) says Ld/B); and the worst-case table entry is exactly that over B1.
    d, L, alpha, B1 = 6, 1.5, 0.3, 4
    e = np.zeros(d)
    e[0] = 1.0
    z = np.full(d, 0.2)

    def summand(sign):
        f = lambda x: sign * L * (e @ x)  # noqa: E731
        return d / (2 * alpha) * (f(z + alpha * e) - f(z - alpha * e)) * e

    gap = np.linalg.norm(summand(1) - summand(-1)) / B1
    s = pr.nsnc_sensitivities("single_pass", d=d, lipschitz=L, smoothing_radius=alpha, step_bound=0.01, B1=B1, B2=1,
                              m_reset=3, m_increment=3, gamma=0.1)
    assert abs(float(s.worst_case_reset) - gap) < 1e-12
    assert s.reset_branch == "worst-case"  # m = 3 directions: no concentration, the worst case is smaller


def test_high_probability_bounds_hold_by_simulation():
    # The worst-case pair for the reset (linear losses c = Le1 vs c' = −Le1, directions coupled by slot): the two
    # estimates differ by more than the high-probability bound (B1 = 1) with probability ≤ 2γ. For the increment
    # (independent directions y at z_t and y2 at z_{t−1}, the same in both runs) the bound holds w.p. ≥ 1 − 4γ.
    rng = np.random.default_rng(11)
    d, L, m, gamma, reps = 4, 1.0, 30, 0.05, 20_000

    def sphere():
        y = rng.standard_normal((reps, m, d))
        return y / np.linalg.norm(y, axis=2, keepdims=True)

    y, y2 = sphere(), sphere()
    c = np.zeros(d)
    c[0] = L
    est = lambda dirs, cc: d * np.mean((dirs @ cc)[..., None] * dirs, axis=1)  # noqa: E731 - linear two-point estimate
    s = pr.nsnc_sensitivities("single_pass", d=d, lipschitz=L, smoothing_radius=1.0, step_bound=0.01, B1=1, B2=1,
                              m_reset=m, m_increment=m, gamma=gamma)
    reset = np.linalg.norm(est(y, c) - est(y, -c), axis=1)
    assert np.mean(reset > float(s.high_probability_reset)) <= 2 * gamma
    increment = np.linalg.norm((est(y, c) - est(y2, c)) - (est(y, -c) - est(y2, -c)), axis=1)
    assert np.mean(increment > float(s.high_probability_increment)) <= 4 * gamma


def test_table_values_in_closed_form():
    kw = base()
    s = pr.nsnc_sensitivities(**sens_kwargs(kw))
    d, L, alpha, D, gamma, m = 8, 1.0, 0.5, 1.2e-3, 1e-5 / 8, 73_000_000
    H = L * float(smoothness_constant(d)) / alpha
    r = L * (d + 1) * math.sqrt(2 * math.log(2 / gamma) / m)
    assert abs(float(s.smoothness) - H) < 1e-12
    assert abs(float(s.worst_case_reset) - 2 * L * d / 147) < 1e-15
    assert abs(float(s.high_probability_reset) - (2 * L + 2 * r) / 147) < 1e-14
    assert abs(float(s.worst_case_increment) - 4 * L * d) < 1e-12
    assert abs(float(s.high_probability_increment) - (4 * H * D + 4 * r)) < 1e-12
    assert (s.reset_branch, s.increment_branch) == ("high-probability", "high-probability")
    assert float(s.fail_reset) == pytest.approx(2 * gamma) and float(s.fail_increment) == pytest.approx(4 * gamma)
    fo = pr.nsnc_sensitivities(**sens_kwargs(base(oracle="first_order")))
    assert fo.high_probability_reset is None and fo.fail_reset == 0 and fo.reset_branch == "worst-case"
    assert abs(float(fo.sensitivity_reset) - 2 * L / 147) < 1e-15
    r_fo = 2 * L * math.sqrt(2 * math.log(2 / gamma) / m)
    assert abs(float(fo.high_probability_increment) - (4 * H * D + 4 * r_fo)) < 1e-12
    crn = pr.nsnc_sensitivities(**sens_kwargs(base(oracle="single_pass_crn", m_increment=600)))
    kappa = float(smoothness_constant(d))
    r_crn = (d + kappa) * L * 2 * D / alpha * math.sqrt(2 * math.log(2 / gamma) / 600)
    assert abs(float(crn.high_probability_increment) - (4 * H * D + 2 * r_crn)) < 1e-12
    assert abs(float(crn.worst_case_increment) - 4 * d * L * D / alpha) < 1e-12
    assert float(crn.fail_increment) == pytest.approx(2 * gamma)
    assert crn.high_probability_increment <= 8 * H * D * (1 + 1e-12)  # m_inc ≈ 2((d + κ)/κ)² log(2/γ) suffices


oracles = st.sampled_from(pr.ORACLES)


@settings(max_examples=60)
@given(oracle=oracles, d=st.integers(1, 50), L=st.floats(0.1, 10), alpha=st.floats(0.01, 2),
       D_frac=st.floats(1e-4, 0.25), B1=st.integers(1, 300), B2=st.integers(1, 5), m_reset=st.integers(1, 10**9),
       m_increment=st.integers(1, 10**9), gamma=st.floats(1e-12, 0.1), clip=st.booleans())
def test_sensitivity_is_min_of_worst_case_and_high_probability(oracle, d, L, alpha, D_frac, B1, B2, m_reset,
                                                               m_increment, gamma, clip):
    kw = dict(d=d, lipschitz=L, smoothing_radius=alpha, step_bound=D_frac * alpha, B1=B1, B2=B2, m_reset=m_reset,
              m_increment=m_increment, gamma=gamma)
    auto = pr.nsnc_sensitivities(oracle, clip_hardening=clip, **kw)
    worst = pr.nsnc_sensitivities(oracle, sensitivity_mode="worst_case", clip_hardening=clip, **kw)
    for step in ("reset", "increment"):
        wc = getattr(auto, f"worst_case_{step}")
        hp = getattr(auto, f"high_probability_{step}")
        used = getattr(auto, f"sensitivity_{step}")
        assert used == (wc if hp is None else min(wc, hp))
        fail = getattr(auto, f"delta_fail_{step}")
        hp_used = hp is not None and hp < wc
        if clip or not hp_used:
            assert fail == 0
        else:
            assert fail == getattr(auto, f"fail_{step}") > 0
        assert getattr(worst, f"sensitivity_{step}") == wc and getattr(worst, f"delta_fail_{step}") == 0
        assert getattr(worst, f"{step}_branch") == "worst-case"
    assert pr.nsnc_single_pass_delta_fail(auto) <= 4 * mpmath.mpf(gamma) * (1 + 1e-12)


def test_delta_fail_switches_off():
    auto = pr.nsnc_single_pass_plan(**base(), noise_std=0.3, dp_delta=1e-5)
    assert auto.guarantee == "high-probability" and auto.delta_fail == pytest.approx(4 * 1e-5 / 8)
    worst = pr.nsnc_single_pass_plan(**base(), noise_std=0.3, dp_delta=1e-5, sensitivity_mode="worst_case")
    assert worst.delta_fail == 0 and worst.guarantee == "worst-case"
    assert worst.sensitivity_increment == worst.worst_case_increment > auto.sensitivity_increment
    clipped = pr.nsnc_single_pass_plan(**base(), noise_std=0.3, dp_delta=1e-5, clip_hardening=True)
    assert clipped.delta_fail == 0 and clipped.guarantee == "clip-hardened"
    assert clipped.mu == auto.mu  # same sensitivities, now deterministic
    assert clipped.epsilon < auto.epsilon  # the whole δ goes to the Gaussian part
    assert "clipped" in clipped.condition


def test_single_pass_delta_fail_is_the_largest_active_failure():
    # Only the reset uses the high-probability bound (m_increment tiny ⇒ increment falls back to the worst case).
    plan = pr.nsnc_single_pass_plan(**base(m_increment=2), noise_std=0.3, dp_delta=1e-5)
    assert (plan.reset_branch, plan.increment_branch) == ("high-probability", "worst-case")
    assert plan.delta_fail == pytest.approx(2 * 1e-5 / 8)
    crn = pr.nsnc_single_pass_plan(**base(oracle="single_pass_crn", m_reset=2, m_increment=600), noise_std=0.3,
                                   dp_delta=1e-5)
    assert (crn.reset_branch, crn.increment_branch) == ("worst-case", "high-probability")
    assert crn.delta_fail == pytest.approx(2 * 1e-5 / 8)


# --- exact accounting ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [1, 2, 3, 4, 7, 8, 100, 1024, 1025])
def test_single_pass_mu_counts_the_nodes_of_the_differing_leaf(size):
    from reference.mechanisms import participation_count

    plan = pr.nsnc_single_pass_plan(**base(tree_size=size), noise_std=0.5, dp_delta=1e-5)
    first = participation_count(1, size)  # the reset record's leaf
    rest = max((participation_count(q, size) for q in range(2, size + 1)), default=0)  # an increment record's
    assert pr.nsnc_tree_leaf_counts(size) == (first, rest)
    exact = math.sqrt(max(first * plan.sensitivity_reset**2, rest * plan.sensitivity_increment**2)) / 0.5
    assert plan.mu == pytest.approx(exact, rel=1e-14)
    bits = len(bin(size)) - 2
    s = max(plan.sensitivity_reset, plan.sensitivity_increment)
    assert plan.mu <= math.sqrt(bits) * s / 0.5 * (1 + 1e-15)  # every leaf in bitlen(Σ) nodes: an upper bound


def test_plan_epsilon_is_the_smallest_certifying_epsilon():
    for kw in (base(gamma=1e-7), base(oracle="first_order", gamma=1e-7), base(m_reset=5, m_increment=5, gamma=1e-7)):
        plan = pr.nsnc_single_pass_plan(**kw, noise_std=0.4, dp_delta=1e-6)
        with mpmath.workprec(128):
            at = gaussian_delta(plan.epsilon, plan.mu) + mpmath.mpf(plan.delta_fail)
            below = gaussian_delta(plan.epsilon * (1 - 1e-9), plan.mu) + mpmath.mpf(plan.delta_fail)
        assert at <= 1e-6 * (1 + 1e-12) and below > 1e-6


def test_multi_pass_counts_and_mu_by_enumeration():
    kw = multi()
    T, size = kw["T"], kw["tree_size"]
    resets = sum(1 for t in range(1, T + 1) if (t - 1) % size == 0)
    assert pr.nsnc_reset_counts(T, size) == (resets, T - resets)
    plan = pr.nsnc_multi_pass_plan(**kw, noise_std_reset=0.01, noise_std_increment=0.002, dp_delta=1e-5)
    assert (plan.resets, plan.increments) == (resets, T - resets)
    mu2 = resets * (plan.sensitivity_reset / 0.01) ** 2 + (T - resets) * (plan.sensitivity_increment / 0.002) ** 2
    assert plan.mu == pytest.approx(math.sqrt(mu2), rel=1e-12)
    assert plan.guarantee == "high-probability"
    gamma = kw["gamma"]
    assert plan.delta_fail == pytest.approx(2 * gamma * resets + 4 * gamma * (T - resets), rel=1e-12)
    assert plan.B1 == plan.B2 == plan.n == 5000 and plan.noise_std is None


def test_multi_pass_without_increments():
    plan = pr.nsnc_multi_pass_plan(**multi(T=3, tree_size=1), noise_std_reset=0.01, noise_std_increment=None,
                                   dp_delta=1e-5)
    assert (plan.resets, plan.increments) == (3, 0)
    with pytest.raises(ValueError, match="noise_std_increment"):
        pr.nsnc_multi_pass_plan(**multi(), noise_std_reset=0.01, noise_std_increment=None, dp_delta=1e-5)
    sigma1, sigma2 = pr.nsnc_multi_pass_noise_stds(**multi(T=3, tree_size=1), epsilon=1, delta=1e-5)
    assert sigma2 is None
    again = pr.nsnc_multi_pass_plan(**multi(T=3, tree_size=1), noise_std_reset=float(sigma1), noise_std_increment=None,
                                    dp_delta=1e-5)
    assert again.epsilon == pytest.approx(1, abs=1e-9)


# --- calibration -----------------------------------------------------------------------------------------------------

SINGLE_CASES = [
    base(),
    base(oracle="first_order", m_increment=4_000_000),
    base(oracle="single_pass_crn", m_reset=2315, m_increment=563),
    base(m_reset=64, m_increment=64),  # practical mode: reset falls back to the worst case
    base(tree_size=1, B1=1),
]


@pytest.mark.parametrize("kw", SINGLE_CASES)
@pytest.mark.parametrize("eps", [0.1, 1.0, 8.0])
@pytest.mark.parametrize("mode", ["auto", "worst_case"])
def test_single_pass_exact_calibration_reaccounts_to_the_target(kw, eps, mode):
    sigma = pr.nsnc_single_pass_noise_std(**kw, epsilon=eps, delta=1e-5, sensitivity_mode=mode)
    plan = pr.nsnc_single_pass_plan(**kw, noise_std=float(sigma), dp_delta=1e-5, sensitivity_mode=mode)
    assert abs(plan.epsilon - eps) <= 1e-9 * eps


@pytest.mark.parametrize("oracle", pr.MULTI_PASS_ORACLES)
@pytest.mark.parametrize("eps", [0.5, 4.0])
def test_multi_pass_exact_calibration_reaccounts_to_the_target(oracle, eps):
    kw = multi(oracle=oracle)
    sigma1, sigma2 = pr.nsnc_multi_pass_noise_stds(**kw, epsilon=eps, delta=1e-5)
    plan = pr.nsnc_multi_pass_plan(**kw, noise_std_reset=float(sigma1), noise_std_increment=float(sigma2),
                                   dp_delta=1e-5)
    assert abs(plan.epsilon - eps) <= 1e-9 * eps
    # equal split of μ²: each kind of step spends half of it
    resets, increments = pr.nsnc_reset_counts(kw["T"], kw["tree_size"])
    part1 = resets * (plan.sensitivity_reset / float(sigma1)) ** 2
    part2 = increments * (plan.sensitivity_increment / float(sigma2)) ** 2
    assert part1 == pytest.approx(part2, rel=1e-9)


@pytest.mark.parametrize("size", [2, 3, 8, 100, 1024])
@pytest.mark.parametrize("eps", [0.1, 1.0, 8.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-10])
def test_printed_tree_sigma_spends_at_most_half_of_delta(size, eps, delta):
    # Proposition 2.5 with δ/2 reserved for the tree: the Gaussian part is ≤ δ/2 (exactly accounted).
    cal = pr.nsnc_single_pass_calibration(**base(tree_size=size, B1=size, gamma=delta / 8), epsilon=eps, delta=delta,
                                          rule="paper")
    assert cal.achieved_delta - cal.delta_fail <= delta / 2
    assert cal.meets_target and cal.achieved_epsilon <= eps
    s = max(cal.sensitivity_reset, cal.sensitivity_increment)
    expected = 4 * s * mpmath.sqrt(mpmath.log(max(size, 2)) * mpmath.log(2 / mpmath.mpf(delta))) / eps
    assert abs(cal.noise_std_reset / expected - 1) < 1e-12


def test_exact_calibration_is_below_the_printed_rule():
    exact = pr.nsnc_single_pass_noise_std(**base(), epsilon=1, delta=1e-5)
    paper = pr.nsnc_single_pass_noise_std(**base(), epsilon=1, delta=1e-5, rule="paper")
    assert exact < paper


def test_multi_pass_printed_rule_reports_what_it_achieves():
    kw = multi()
    small = pr.nsnc_multi_pass_calibration(**kw, epsilon=1, delta=1e-5, rule="paper", paper_constant=1)
    large = pr.nsnc_multi_pass_calibration(**kw, epsilon=1, delta=1e-5, rule="paper", paper_constant=30)
    assert not small.meets_target and small.achieved_epsilon > 1
    assert large.meets_target and large.achieved_epsilon < 1
    for cal, c in ((small, 1), (large, 30)):
        expected = c * math.sqrt(kw["T"] * math.log(1e5) / kw["tree_size"]) / (kw["n"] * 1)
        assert float(cal.noise_std_reset) == pytest.approx(expected, rel=1e-12)
        mu = pr.nsnc_multi_pass_mu(cal.sensitivity_reset, cal.sensitivity_increment, cal.noise_std_reset,
                                   cal.noise_std_increment, kw["T"], kw["tree_size"])
        assert cal.achieved_delta == gaussian_delta(1, mu) + cal.delta_fail
    with pytest.raises(ValueError, match="paper_constant"):
        pr.nsnc_multi_pass_calibration(**kw, epsilon=1, delta=1e-5, rule="paper")


# --- refusals --------------------------------------------------------------------------------------------------------

def test_delta_fail_at_least_delta_is_refused_naming_gamma():
    with pytest.raises(ValueError, match=r"gamma = 0\.001 .*4\*gamma.*dp_delta.*gamma < dp_delta/4"):
        pr.nsnc_single_pass_plan(**base(gamma=1e-3), noise_std=0.3, dp_delta=1e-3)
    with pytest.raises(ValueError, match="gamma"):
        pr.nsnc_single_pass_noise_std(**base(gamma=1e-3), epsilon=1, delta=1e-3)
    with pytest.raises(ValueError, match="gamma"):
        pr.nsnc_multi_pass_plan(**multi(gamma=1e-6), noise_std_reset=0.01, noise_std_increment=0.01, dp_delta=1e-5)
    # the suggested γ works, and so do the two switches
    ok = pr.nsnc_single_pass_plan(**base(gamma=1e-3 / 8), noise_std=0.3, dp_delta=1e-3)
    assert ok.delta_fail <= 1e-3 / 2 * (1 + 1e-12)
    hardened = pr.nsnc_single_pass_plan(**base(gamma=1e-3), noise_std=0.3, dp_delta=1e-3, clip_hardening=True)
    assert hardened.delta_fail == 0


@pytest.mark.parametrize("call, name", [
    (lambda: pr.nsnc_single_pass_plan(**base(oracle="multi_pass"), noise_std=0.3, dp_delta=1e-5), "oracle"),
    (lambda: pr.nsnc_multi_pass_plan(**multi(oracle="single_pass"), noise_std_reset=0.1, noise_std_increment=0.1,
                                     dp_delta=1e-5), "oracle"),
    (lambda: pr.nsnc_single_pass_plan(**base(), noise_std=0.0, dp_delta=1e-5), "noise_std"),
    (lambda: pr.nsnc_single_pass_plan(**base(), noise_std=0.3, dp_delta=1.5), "dp_delta"),
    (lambda: pr.nsnc_single_pass_plan(**base(tree_size=0), noise_std=0.3, dp_delta=1e-5), "tree_size"),
    (lambda: pr.nsnc_single_pass_plan(**base(gamma=0), noise_std=0.3, dp_delta=1e-5), "gamma"),
    (lambda: pr.nsnc_single_pass_plan(**base(step_bound=-1), noise_std=0.3, dp_delta=1e-5), "step_bound"),
    (lambda: pr.nsnc_single_pass_plan(**base(), noise_std=0.3, dp_delta=1e-5, sensitivity_mode="best"),
     "sensitivity_mode"),
    (lambda: pr.nsnc_single_pass_noise_std(**base(), epsilon=1, delta=1e-5, rule="printed"), "rule"),
    (lambda: pr.pinelis_radius(1, 0, 0.1), "m"),
    (lambda: pr.nsnc_epsilon(1, 1e-3, 1e-4), "delta_fail"),
])
def test_refusals_name_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


# --- the plan as a ledger entry --------------------------------------------------------------------------------------

def test_plan_is_frozen_json_ready_and_summarised_on_one_line():
    plan = pr.nsnc_single_pass_plan(**base(), noise_std=0.3, dp_delta=1e-5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.epsilon = 0.0
    json.dumps(dataclasses.asdict(plan))
    line = plan.summary()
    assert "\n" not in line and "high-probability" in line and f"{plan.epsilon:.6g}" in line
    mplan = pr.nsnc_multi_pass_plan(**multi(), noise_std_reset=0.01, noise_std_increment=0.002, dp_delta=1e-5)
    json.dumps(dataclasses.asdict(mplan))
    assert "\n" not in mplan.summary() and "T=2000" in mplan.summary()


def test_plan_signatures_are_keyword_only():
    import inspect

    for fn in (pr.nsnc_single_pass_plan, pr.nsnc_multi_pass_plan):
        params = inspect.signature(fn).parameters.values()
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    single = list(inspect.signature(pr.nsnc_single_pass_plan).parameters)
    assert single == ["oracle", "d", "lipschitz", "smoothing_radius", "step_bound", "tree_size", "B1", "B2",
                      "m_reset", "m_increment", "gamma", "noise_std", "dp_delta", "clip_hardening", "sensitivity_mode"]
    many = list(inspect.signature(pr.nsnc_multi_pass_plan).parameters)
    assert many == ["oracle", "d", "lipschitz", "smoothing_radius", "step_bound", "n", "tree_size", "T", "m", "gamma",
                    "noise_std_reset", "noise_std_increment", "dp_delta", "sensitivity_mode"]


@settings(max_examples=30)
@given(sigma=st.floats(0.05, 5), factor=st.floats(1.01, 4), size=st.integers(1, 5000))
def test_more_noise_never_costs_more_epsilon(sigma, factor, size):
    a = pr.nsnc_single_pass_plan(**base(tree_size=size), noise_std=sigma, dp_delta=1e-4)
    b = pr.nsnc_single_pass_plan(**base(tree_size=size), noise_std=sigma * factor, dp_delta=1e-4)
    assert b.mu < a.mu and b.epsilon <= a.epsilon
