"""The ground truths behind the nsnc_improved privacy and rate claims (proofs_checks/claims/nsnc_improved/privacy.py,
rate.py).

The claims compute by themselves what the subject must agree with: the Gaussian-DP profile in float64 log space, the
sensitivity table of Lemmas 3.3 / C.1, the single-pass μ from the tree's participation counts, the multi-pass μ from
an enumeration of the steps, the certified bound of Proposition 2.6 with Lemma 3.5 / 4.4 at given settings, the
printed parameters of Theorem 3.1 (rebuilt from Theorem C.4 and Lemma 3.4) and the privacy floors on m. Each is
checked here against an independent computation (mpmath, the reference's own functions) so that a claim's pass means
what it says; and the erratum claims' numbers are pinned (what the printed statements give).
"""

import math

import mpmath
import numpy as np
import pytest

from proofs_checks.adapters.dpref import reference_implementations
from proofs_checks.claims.nsnc_improved import privacy, rate
from reference.accounting.gaussian import gaussian_delta
from reference.algorithms import nsnc_improved_privacy as pr
from reference.algorithms import nsnc_improved_theory as th


def test_gdp_delta_matches_mpmath_over_a_wide_range():
    assert float(privacy._gdp_delta(1.0, 1.0)) == pytest.approx(0.12693673750664, rel=1e-12)
    gen = np.random.default_rng(5)
    eps = 10 ** gen.uniform(-2, 1.5, 300)
    mu = 10 ** gen.uniform(-1.5, 1, 300)
    got = privacy._gdp_delta(eps, mu)
    with mpmath.workdps(40):
        want = np.array([float(gaussian_delta(mpmath.mpf(e), mpmath.mpf(m))) for e, m in zip(eps, mu)])
    keep = want > 1e-250
    assert np.allclose(got[keep], want[keep], rtol=1e-10, atol=0)
    assert float(privacy._gdp_delta(3.0, 0.0)) == 0.0


@pytest.mark.parametrize("oracle", pr.ORACLES)
def test_sensitivity_table_is_the_reference_table(oracle):
    gen = np.random.default_rng(11)
    for _ in range(40):
        d = int(gen.integers(1, 12))
        L, alpha = float(gen.uniform(0.5, 3)), float(gen.uniform(0.05, 2))
        D = float(alpha * 10 ** gen.uniform(-3, -0.5))
        B1, B2 = (int(gen.integers(1, 50)), int(gen.integers(1, 5)))
        m = int(10 ** gen.uniform(0, 7))
        gamma = float(10 ** gen.uniform(-9, -2))
        reset, increment = privacy._table(oracle, d, L, alpha, D, B1, B2, m, m, gamma)
        ref = pr.nsnc_sensitivities(oracle, d=d, lipschitz=L, smoothing_radius=alpha, step_bound=D, B1=B1, B2=B2,
                                    m_reset=m, m_increment=m, gamma=gamma)
        for step, value, branch, fail in ((reset, ref.sensitivity_reset, ref.reset_branch, ref.delta_fail_reset),
                                          (increment, ref.sensitivity_increment, ref.increment_branch,
                                           ref.delta_fail_increment)):
            assert step.sensitivity == pytest.approx(float(value), rel=1e-12)
            assert step.uses_high_probability == (branch == "high-probability")
            assert step.delta_fail == pytest.approx(float(fail), rel=1e-12, abs=0)


@pytest.mark.parametrize("size", list(range(1, 40)) + [63, 64, 65, 1000, 1024])
def test_participation_counts_give_the_exact_single_pass_mu(size):
    config = ("", "single_pass", 2, 1.0, 0.5, 0.05, 1, size, size, 3, 1, 7, None, 1.0)
    table, effective, _, _ = privacy._single_exact(config)
    want = pr.nsnc_single_pass_effective_sensitivity(table[0].sensitivity, table[1].sensitivity, size)
    assert effective == pytest.approx(float(want), rel=1e-12)


def test_claim_configurations_exercise_both_branches():
    """The run claims see the worst-case and the high-probability branches (else a bug in one goes unseen)."""
    branches = set()
    for config in privacy.SINGLE:
        table = privacy._single_exact(config)[0]
        branches |= {step.uses_high_probability for step in table}
    assert branches == {True, False}
    multi = [privacy._table(c[1], c[2], c[3], c[4], c[5], c[9], c[9], c[10], c[10],
                            privacy.DP_DELTA / (8 * c[6] * c[7])) for c in privacy.MULTI]
    assert {step.uses_high_probability for table in multi for step in table} == {True, False}
    # and the multi-pass configurations have T not a multiple of Σ (N1 = ⌈T/Σ⌉ ≠ ⌊T/Σ⌋)
    assert all((c[6] * c[7]) % c[8] for c in privacy.MULTI)


def test_printed_tree_sigma_adapter_rounds_up():
    sigma = reference_implementations()["nsnc_tree_sigma_as_printed"]
    for size, eps, delta in ((2, 1.0, 1e-5), (1000, 0.37, 1e-9), (10**6, 7.0, 1e-12)):
        got = sigma(1.3, size, eps, delta)
        with mpmath.workdps(50):
            exact = pr.nsnc_tree_sigma_as_printed(1.3, size, eps, delta)
            assert exact <= mpmath.mpf(got) <= exact * (1 + mpmath.mpf(2) ** -51)
    with pytest.raises(ValueError, match="tree_size must be >= 2"):
        sigma(1.0, 1, 1.0, 1e-5)


SINGLE_SETTINGS = [
    dict(n=20_000, d=8, lipschitz=1.0, initial_gap=1.0, smoothing_radius=0.5, epsilon=2.0, delta=1e-5),
    dict(n=10**6, d=4, lipschitz=1.0, initial_gap=1.0, smoothing_radius=0.5, epsilon=1.0, delta=1e-6, variant="paper"),
    dict(n=50_000, d=3, lipschitz=2.0, initial_gap=1.0, smoothing_radius=0.25, epsilon=4.0, delta=1e-6,
         oracle="first_order"),
    dict(n=50_000, d=3, lipschitz=1.0, initial_gap=1.0, smoothing_radius=0.5, epsilon=1.0, delta=1e-6,
         oracle="single_pass_crn"),
]


@pytest.mark.parametrize("kw", SINGLE_SETTINGS)
def test_single_pass_bound_is_the_theory_bound(kw):
    s = th.single_pass_settings(**kw, allow_vacuous=True)
    bound, G0 = rate._single_bound(s)
    assert bound == pytest.approx(s.certified_bound, rel=1e-12)
    assert G0 == pytest.approx(s.G0, rel=1e-12)


@pytest.mark.parametrize("args", rate.MULTI)
def test_multi_pass_bound_is_the_theory_bound(args):
    s = th.multi_pass_settings(*args, allow_vacuous=True)
    bound, G0 = rate._multi_bound(s)
    assert bound == pytest.approx(s.certified_bound, rel=1e-12)
    assert G0 == pytest.approx(s.G0, rel=1e-12)


@pytest.mark.parametrize("kw", [k for k in SINGLE_SETTINGS if k.get("variant") != "paper"])
def test_privacy_floors_are_the_settings_floors(kw):
    s = th.single_pass_settings(**kw, allow_vacuous=True)
    floors = rate._floors(s.oracle, s.d, s.smoothing_radius, s.step_bound, math.log(16 / kw["delta"]))
    assert (s.m_privacy_reset, s.m_privacy_increment) == tuple(max(1, math.ceil(f)) for f in floors)


def test_largest_steps_is_the_budget_search():
    gen = np.random.default_rng(2)
    for _ in range(200):
        n, S, B1, B2 = int(gen.integers(1, 5000)), int(gen.integers(1, 40)), int(gen.integers(1, 40)), int(
            gen.integers(1, 4))
        T = rate._largest_steps(n, S, B1, B2)
        assert th.records_used(T, S, B1, B2) <= n < th.records_used(T + 1, S, B1, B2)


def test_printed_rate_slope_tends_to_two_ninths():
    """The erratum's mechanism: with the printed parameters the bound's slope tends to −2/9 (the sampling term
    L/√Σ), between the claim's window (≈ −0.28) and far beyond it; the corrected parameters keep −1/3."""
    c = rate.RATE
    ns = [10**k for k in range(16, 23, 2)]
    slopes = {}
    for variant in ("paper", "corrected"):
        bounds = [rate._single_bound(th.single_pass_settings(n, c["d"], c["lipschitz"], c["gap"], c["alpha"],
                                                             c["epsilon"], c["delta"], variant=variant, allow_vacuous=True))[0]
                  for n in ns]
        slopes[variant] = float(np.polyfit(np.log(np.asarray(ns, dtype=np.float64)), np.log(bounds), 1)[0])
    assert slopes["paper"] == pytest.approx(-2 / 9, abs=0.02)
    assert slopes["corrected"] == pytest.approx(-1 / 3, abs=0.02)


def test_corrected_multi_pass_settings_are_invariant_for_a_non_dyadic_scale():
    """Powers of 2 keep every float exact (the claim's scales). At c = 3 the integers still agree away from a
    rounding edge: β = 0.45 (at the claim's β = 0.5, 3(Φ + 2Lα)/(Dβ) = 21600 exactly, and a one-ulp error in the
    scaled instance moves ⌈·⌉, hence T, by a whole block)."""
    n, d, L, gap, alpha, beta, eps, delta = rate.SCALE_BASE
    beta = 0.45
    base = th.multi_pass_settings(n, d, L, gap, alpha, beta, eps, delta, allow_vacuous=True)
    scaled = th.multi_pass_settings(n, d, L / 3, gap, alpha * 3, beta / 3, eps, delta, allow_vacuous=True)
    assert [getattr(base, k) for k in rate.INTEGERS] == [getattr(scaled, k) for k in rate.INTEGERS]
    assert scaled.step_bound == pytest.approx(3 * base.step_bound, rel=1e-12)
    assert scaled.certified_bound == pytest.approx(base.certified_bound / 3, rel=1e-9)


def test_printed_variant_is_not_invariant():
    n, d, L, gap, alpha, beta, eps, delta = rate.SCALE_BASE
    base = th.multi_pass_settings(n, d, L, gap, alpha, beta, eps, delta, variant="paper", allow_vacuous=True)
    scaled = th.multi_pass_settings(n, d, L / 4, gap, alpha * 4, beta / 4, eps, delta, variant="paper", allow_vacuous=True)
    assert scaled.T == base.T // 4  # T = ΦL²/(α²β³) scales like 1/c


def test_floor_erratum_numbers():
    """At the printed m the reset's high-probability bound is above the worst case (first configuration), and the
    exact ε of the σ sized for the high-probability sensitivities is far above the target in both."""
    for n, d, L, gap, alpha, beta, eps, delta in privacy.FLOOR_CONFIGS:
        s = th.multi_pass_settings(n, d, L, gap, alpha, beta, eps, delta, allow_vacuous=True)
        assert s.m_variance < s.m_privacy
        plan = pr.nsnc_multi_pass_plan(oracle="multi_pass", d=d, lipschitz=L, smoothing_radius=alpha,
                                       step_bound=s.step_bound, n=n, tree_size=s.tree_size, T=s.T, m=s.m_variance,
                                       gamma=s.gamma, noise_std_reset=s.noise_std_reset,
                                       noise_std_increment=s.noise_std_increment, dp_delta=delta)
        assert plan.epsilon > 100 * eps
        assert s.plan.epsilon <= eps * (1 + 1e-12)
    first = privacy.FLOOR_CONFIGS[0]
    s = th.multi_pass_settings(*first, allow_vacuous=True)
    table = privacy._table("multi_pass", first[1], first[2], first[4], s.step_bound, first[0], first[0],
                           s.m_variance, s.m_variance, float(s.gamma))
    assert not table[0].uses_high_probability


def test_some_single_pass_configuration_is_reset_dominated():
    """The 'leaf in one node fewer' mutant changes μ only where bitlen(Σ)·s_reset² is the larger term of
    max(bitlen(Σ)·s_reset², (bitlen(Σ) − 1)·s_increment²): the claim must have such a configuration."""
    dominated = []
    for config in privacy.SINGLE:
        reset, increment = privacy._single_exact(config)[0]
        depth = config[8].bit_length()
        dominated.append(depth * reset.sensitivity**2 > (depth - 1) * increment.sensitivity**2)
    assert any(dominated) and not all(dominated)


def test_claim_modules_define_the_expected_claims():
    ids = {c.id for module in (privacy, rate) for c in vars(module).values()
           if type(c).__name__ == "Claim"}
    assert ids == {
        "nsnc_improved.prop2_5.printed_tree_calibration",
        "nsnc_improved.lemma3_4.single_pass_privacy_exact",
        "nsnc_improved.lemma4_3.multi_pass_privacy_exact",
        "nsnc_improved.thm4_1.privacy_floor_on_m",
        "nsnc_improved.lemma_c1.reset_sensitivity",
        "nsnc_improved.thm3_1.printed_rate_exponent",
        "nsnc_improved.thm4_1.scale_invariance",
        "nsnc_improved.thm3_1_thm4_1.settings_invariants",
        "nsnc_improved.thm3_1_thm4_1.certified_bound_at_min_records",
        "nsnc_improved.thm3_1.printed_parameters_reconstructed",
        "nsnc_improved.lemma3_4.directions_from_explicit_radius",
    }
