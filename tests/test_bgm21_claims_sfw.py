"""The bgm21 claims of the Frank–Wolfe and weakly convex area (proofs_checks/claims/bgm21/: estimator, sfw_runs,
settings, weakly_convex): the ground truth their checks compute by themselves — the test problem's derivatives and
constants, the exact second-moment recursion (against an enumeration of every batch), the printed bounds at hand-
computed points, the extremal curvature of the ℓ_p regulariser, bgm21.E13's numbers — and the protocols they declare.

Every claim holding on reference and fast and every mutant failing is tests/test_claims.py's job.
"""

import itertools
import math

import mpmath
import numpy as np
import pytest
from scipy import optimize

from proofs_checks import papers
from proofs_checks.claims import bgm21 as folder
from proofs_checks.claims.bgm21 import _sfw_problems as problems
from proofs_checks.claims.bgm21 import estimator, settings, sfw_runs, weakly_convex
from proofs_checks.claims.bgm21._protocols_sfw import PROTOCOLS as SFW_PROTOCOLS
from proofs_checks.folders import declared_protocols
from proofs_checks.registry import load_claims
from proofs_checks.subjects import reference_subject

MODULES = (estimator, sfw_runs, settings, weakly_convex)
CLAIMS = {c.id: c for c in load_claims() if c.paper == "bgm21" and c.check.__module__ in {m.__name__ for m in MODULES}}


# --- the folder ----------------------------------------------------------------------------------------------------

def test_the_area_declares_its_protocols_and_the_reference_provides_them():
    merged = declared_protocols()
    for name in SFW_PROTOCOLS:
        assert merged[name] == SFW_PROTOCOLS[name]
    for claim in CLAIMS.values():
        assert set(claim.requires) <= set(folder.PROTOCOLS), claim.id
    assert reference_subject().provides(SFW_PROTOCOLS)


def test_errata_of_the_area_name_these_claims():
    expected = {"bgm21.E5": "bgm21.thm8_11.round_count", "bgm21.E7": "bgm21.alg1_6.single_pass",
                "bgm21.E13": "bgm21.thm16.regularised_strong_convexity", "bgm21.E18": "bgm21.alg2.output_candidates",
                "bgm21.E22": "bgm21.alg1.first_step_vertex"}
    for erratum, claim_id in expected.items():
        record = papers.ERRATA_BY_ID[erratum]
        assert claim_id in CLAIMS and claim_id in str(record), erratum
        assert erratum in CLAIMS[claim_id].location
    assert CLAIMS["bgm21.thm16.regularised_strong_convexity"].erratum
    assert not CLAIMS["bgm21.alg1_6.single_pass"].erratum


def test_statistical_claims_state_their_power_and_have_a_near_miss():
    for claim in CLAIMS.values():
        if claim.kind == "monte_carlo":
            assert claim.mde_target is not None or claim.power_note, claim.id
    for full in estimator.FULL_BUDGET_MUTANTS + sfw_runs.FULL_BUDGET_MUTANTS:
        claim_id, name = full.split(":")
        assert name in {m.name for m in CLAIMS[claim_id].mutants}


# --- the test problem ----------------------------------------------------------------------------------------------

def test_curvature_constant_is_the_maximum_of_the_second_derivative():
    res = optimize.minimize_scalar(lambda s: -abs(2 * math.tanh(s) / math.cosh(s) ** 2), bounds=(0, 3),
                                   method="bounded", options={"xatol": 1e-12})
    assert -res.fun == pytest.approx(problems.CURVATURE, rel=1e-10)


def test_gradient_matches_finite_differences_and_label_flip_negates_it():
    pool = problems.make_pool(d=3, K=5, seed=1)
    w = np.array([0.2, -0.4, 0.1])
    h = 1e-6
    for row in pool.rows:
        numeric = [(1 - math.tanh(row[3] * row[:3] @ (w + h * e)) - (1 - math.tanh(row[3] * row[:3] @ (w - h * e))))
                   / (2 * h) for e in np.eye(3)]
        assert np.allclose(pool.gradient(w, row), numeric, atol=1e-9)
        flipped = row.copy()
        flipped[3] = -row[3]
        assert np.array_equal(pool.gradient(w, flipped), -pool.gradient(w, row))
    assert np.allclose(pool.population_gradient(w), np.mean([pool.gradient(w, r) for r in pool.rows], axis=0))


def test_difference_term_pair_reaches_the_secant_slope():
    """The hand-picked step of the Algorithm 6 sensitivity claim: the ratio is the secant slope of sech² over
    [0.15, 1.1] divided by its maximum 4/(3√3) (about 0.85), whatever p."""
    slope = (1 / math.cosh(0.15) ** 2 - 1 / math.cosh(1.1) ** 2) / 0.95
    for p in (1.25, 1.5, 2.0):
        ratio = sfw_runs._difference_term_attained(reference_subject(), p, 4)
        assert ratio == pytest.approx(slope / problems.CURVATURE, rel=1e-9)


def test_lp_setting_constants():
    L0, L1, radius, D = sfw_runs._lp_setting(1.5, 4)
    assert L0 == pytest.approx(4 ** (1 / 3))  # ‖(1, −1, 1, −1)‖_3
    assert L1 == pytest.approx(problems.CURVATURE * L0**2)
    assert radius * L0 == pytest.approx(0.3) and D == pytest.approx(2 * radius)


# --- the estimator's exact second moment ------------------------------------------------------------------------------

def test_second_moment_recursion_matches_enumeration_of_every_batch():
    """With one record per batch, every (z_0, …, z_3) ∈ pool⁴ is enumerated and the estimator of Algorithm 1 lines 5,
    10, 11 computed here by hand: the exact mean of ‖e_3‖² and of ‖e_t‖² equals the recursion (noise-free part)."""
    pool = estimator.POOL
    points, etas, _ = estimator._trajectory()
    grads = [pool.record_gradients(w) for w in points]
    truth = [pool.population_gradient(w) for w in points]
    totals = np.zeros(estimator.STEPS)
    for combo in itertools.product(range(pool.K), repeat=estimator.STEPS):
        value = grads[0][combo[0]]
        totals[0] += np.sum((value - truth[0]) ** 2)
        for t in range(1, estimator.STEPS):
            z = combo[t]
            value = (1 - etas[t]) * (value + grads[t][z] - grads[t - 1][z]) + etas[t] * grads[t][z]
            totals[t] += np.sum((value - truth[t]) ** 2)
    exact = totals / pool.K**estimator.STEPS
    assert np.allclose(exact, estimator.exact_second_moments(False, sizes=[1] * estimator.STEPS), rtol=1e-12)


def test_noise_adds_its_variance_to_the_recursion():
    sigma, sigma_hat = estimator._noise_scales(True)
    _, etas, _ = estimator._trajectory()
    d = estimator.POOL.d
    extra = [d * sigma[0] ** 2]
    for t in range(1, estimator.STEPS):
        extra.append((1 - etas[t]) ** 2 * (extra[-1] + d * sigma_hat[t] ** 2) + etas[t] ** 2 * d * sigma[t] ** 2)
    assert np.allclose(estimator.exact_second_moments(True) - estimator.exact_second_moments(False), extra, rtol=1e-12)


# --- the printed bounds and settings --------------------------------------------------------------------------------

def test_lemma9_bound_at_a_hand_computed_point():
    # t = 0: 4L0√(ln J/b)·0 + 4(L1D + L0)(ln J/√b)·1 with J = 6, b = 48, L0 = 1, L1D = 0.5
    assert sfw_runs._lemma9_bound(0, 48, 6, 1.0, 0.5, 1.0) == pytest.approx(4 * 1.5 * math.log(6) / math.sqrt(48))
    # t = 3: (1 − 1/2)^4 = 1/16, (t+1)^{1/4} = √2
    expected = 4 * math.sqrt(math.log(6) / 48) / 16 + 4 * 1.5 * math.log(6) / math.sqrt(48) * math.sqrt(2)
    assert sfw_runs._lemma9_bound(3, 48, 6, 1.0, 0.5, 1.0) == pytest.approx(expected)


def test_lemma12_bound_at_p2_has_kappa_one():
    # p = 2: κ = min(1, 2 ln d) = 1, κ̃ = 1
    b, d, eps, delta = 100, 4, 1.0, 1e-5
    priv = math.sqrt(d * math.log(1 / delta)) / (b * eps)
    expected = 16 * 2.0 * (1 / math.sqrt(b) + priv)
    assert sfw_runs._lemma12_bound(0, b, d, 2.0, eps, delta, 1.0, 1.0, 1.0) == pytest.approx(expected)


def test_budget_is_the_sum_of_ceilings():
    assert sfw_runs._budget(6, 3) == 6 + (6 + 3) + (6 + 3 + 2 + 2)
    assert settings._budget(6, 3) == sfw_runs._budget(6, 3)


def test_round_count_points_separate_log2_from_natural_log():
    for n, eps, delta, J in settings.THEOREM8_POINTS[:3]:
        inner = n * eps / (math.log(J) ** 2 * math.log(n) ** 2 * math.sqrt(math.log(1 / delta)))
        assert math.floor(2 / 3 * math.log2(inner)) != math.floor(2 / 3 * math.log(inner))


def test_remark17_reduces_to_hand_values():
    # p = 2, n = 1, every other argument 1 and δ = e^{-1}: ϑ = max{1, 2}(1 + 1) = 4
    with mpmath.workdps(30):
        assert float(settings._remark17(1, 1, 1, 1, 1, 1, math.exp(-1), 2)) == pytest.approx(4.0)


# --- the weakly convex part ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("p, d", [(2.0, 4), (1.5, 8), (1.25, 6)])
def test_extremal_curvature_of_the_squared_norm_is_p_minus_one(p, d):
    with mpmath.workdps(40):
        h = lambda w: weakly_convex._mp_norm(w, p) ** 2 / 2
        measured = weakly_convex._curvature(h, [mpmath.mpf(1)] * d, weakly_convex._alternating(d), p)
    assert float(measured) == pytest.approx(p - 1, rel=1e-9)


def test_beta_erratum_numbers_by_hand():
    # d = 10: p̄ = 1 + 1/ln 10, ν_eff = (p̄ − 1)·10^{−2(1 − 1/p̄)}, 2κν_eff ≈ 0.496
    pb = 1 + 1 / math.log(10)
    nu = (pb - 1) * 10 ** (-2 * (1 - 1 / pb))
    assert 2 * math.log(10) * nu == pytest.approx(0.4960, abs=5e-4)
    # at p = 1, 2κν_eff = 2 ln d·(1/ln d)·d^{−2/(ln d + 1)} = 2·exp(−2 ln d/(ln d + 1)), decreasing to 2e^{−2}
    for d in (10, 1e3, 1e6):
        pb = 1 + 1 / math.log(d)
        product = 2 * math.log(d) * (pb - 1) * d ** (-2 * (1 - 1 / pb))
        assert product == pytest.approx(2 * math.exp(-2 * math.log(d) / (math.log(d) + 1)), rel=1e-12)
    assert 2 * math.exp(-2 * math.log(1e6) / (math.log(1e6) + 1)) == pytest.approx(0.3098, abs=5e-4)


def test_quadratic_counterexample_is_weakly_convex_in_l1():
    rng = np.random.default_rng(0)
    with mpmath.workdps(30):
        f = weakly_convex._quadratic(10, 1.0, 1.0)
        for _ in range(50):
            w, v, lam = rng.normal(size=10), rng.normal(size=10), rng.uniform()
            mid = lam * w + (1 - lam) * v
            lhs = f(list(map(mpmath.mpf, mid)))
            rhs = lam * f(list(map(mpmath.mpf, w))) + (1 - lam) * f(list(map(mpmath.mpf, v))) + lam * (1 - lam) / 2 \
                * float(np.sum(np.abs(w - v))) ** 2
            assert lhs <= rhs + mpmath.mpf(10) ** -20


def test_exact_prox_is_a_fixed_point():
    L0 = max(problems.lp_norm(x, 2) for x in weakly_convex.POOL14.X)
    rho = problems.CURVATURE * L0**2
    w = np.array([0.5, -0.6, 0.2])
    v = weakly_convex._exact_prox(w, 2 * rho, rho, 1.0)
    step = v - (weakly_convex.POOL14.population_gradient(v) + 2 * rho * (v - w)) / (3 * rho)
    step *= min(1.0, 1.0 / np.linalg.norm(step))
    assert np.allclose(step, v, atol=1e-14)
