"""The spider_sosp claim folder (proofs_checks/claims/spider_sosp/): its protocols, its errata records, and the
ground truth its checks compute by themselves (tree counts, exact batch ceilings, Lemma 3.10's parameters, the
closed-form uniform deviation, the Lemma 3.3 counterexample's constants, the statistical helpers).

Every claim holding on reference and fast and every mutant failing is tests/test_claims.py's job; this file tests
what those verdicts rest on.
"""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from proofs_checks import papers
from proofs_checks.authoring import ERRATUM, FAIL, PASS, CheckContext, Evidence
from proofs_checks.claim import BUDGETS
from proofs_checks.claims import spider_sosp as folder
from proofs_checks.claims.spider_sosp import _problems as problems
from proofs_checks.claims.spider_sosp import _stats, escape, generalization, privacy
from proofs_checks.folders import declared_protocols
from proofs_checks.registry import load_claims
from proofs_checks.subjects import fast_subject, reference_subject
from reference.accounting.gaussian import gaussian_delta
from reference.algorithms import spider_sosp as sp
from reference.algorithms.spider_sosp_privacy import spider_sosp_node_counts_bruteforce, spider_sosp_sigma
from reference.precision import working_precision

CLAIMS = {c.id: c for c in load_claims() if c.paper == "spider_sosp"}
CTX = CheckContext(budget=BUDGETS["quick"], seed=1)


# --- the folder ----------------------------------------------------------------------------------------------

def test_protocols_are_declared_once_and_cover_every_claim():
    merged = declared_protocols()  # raises when two folders declare one protocol
    for name in folder.PROTOCOLS:
        assert merged[name] == folder.PROTOCOLS[name]
    for claim in CLAIMS.values():
        assert set(claim.requires) <= set(folder.PROTOCOLS) | {"gaussian_delta"}, claim.id


def test_reference_and_fast_provide_the_protocols_and_fast_runs_its_twin():
    reference, fast = reference_subject(), fast_subject()
    assert reference.provides(folder.PROTOCOLS) and fast.provides(folder.PROTOCOLS)
    own = {"stochastic_spider", "GradientOracles", "o1_batch_size", "adaptive_batch_size"}
    assert own.isdisjoint(fast.borrowed)
    assert fast.stochastic_spider.__module__ == "reference.fast.spider_sosp"


def test_statistical_claims_state_their_power():
    for claim in CLAIMS.values():
        if claim.kind == "monte_carlo":
            assert claim.mde_target is not None or claim.power_note, claim.id
            assert len(claim.mutants) >= 2, claim.id


def test_errata_records_point_at_claims_that_cite_them():
    expected = {
        "spider_sosp.E1": "spider_sosp.lemma3_7.replace_one_sensitivity",
        "spider_sosp.E2": "spider_sosp.alg2.drift_bound",
        "spider_sosp.E3": "spider_sosp.sec5.printed_rules_exact_accounting",
        "spider_sosp.E9": "spider_sosp.lemma3_8.batch_sizes",
        "spider_sosp.E13": "spider_sosp.alg2.drift_reset_at_perturbation",
        "spider_sosp.E18": "spider_sosp.lemma3_3.adversarial_errors",
        "spider_sosp.E24": "spider_sosp.thm_a2.uniform_gradient_deviation",
    }
    for erratum_id, claim_id in expected.items():
        record = papers.ERRATA_BY_ID[erratum_id]
        assert record.evidence == claim_id
        assert erratum_id in CLAIMS[claim_id].location
        if CLAIMS[claim_id].erratum:
            assert record.status == "erratum"


# --- the tree -------------------------------------------------------------------------------------------------

def test_brute_force_counts_match_the_closed_form_and_the_reference_brute_force():
    global_counts, segment_counts = problems.exact_node_counts(130)
    for sigma in range(1, 131):
        assert global_counts[sigma] == problems.node_count_formula(sigma, "global")
        assert segment_counts[sigma] == problems.node_count_formula(sigma, "segment")
        if sigma <= 70:
            assert global_counts[sigma] == spider_sosp_node_counts_bruteforce(sigma, "global")
            assert segment_counts[sigma] == spider_sosp_node_counts_bruteforce(sigma, "segment")
    # values quoted by the claims: 39 nodes at Σ = 1e6 (a-priori 2L = 42), 33 at 1e5 (36)
    assert problems.node_count_formula(10**6, "global") == 39 and problems.tree_levels(10**6) == 21
    assert problems.node_count_formula(10**5, "global") == 33 and problems.node_count_formula(10**5, "segment") == 17


# --- batch sizes and Lemma 3.10 -----------------------------------------------------------------------------------

def _ceil_by_search(v, alpha, eps, d, kappa):
    V, A, K = Fraction(v), Fraction(alpha), Fraction(kappa)
    k = 1
    while not (k >= K * V / (A * A) and (math.isinf(eps) or k * k * (A * Fraction(eps)) ** 2 >= V * V * d)):
        k += 1
    return k


def test_exact_batch_helpers_are_exact():
    gen = np.random.default_rng(3)
    for _ in range(300):
        v, alpha, kappa = float(gen.uniform(0, 3)), float(gen.uniform(0.2, 2)), float(gen.uniform(0.05, 3))
        eps, d = float(gen.choice([gen.uniform(0.5, 5), math.inf])), int(gen.integers(1, 20))
        assert problems.exact_batch(v, alpha, eps, d, kappa) == _ceil_by_search(v, alpha, eps, d, kappa)
        G = float(gen.uniform(0.2, 3))
        assert problems.exact_o1_batch(G, d, eps, alpha) == sp.o1_batch_size(G, d, eps, alpha)
    # the boundary the float-ceiling mutant gets wrong: 10 × float(0.1) exceeds 1 exactly
    assert problems.exact_batch(0.1, 1.0, math.inf, 3, 10.0) == 2 and math.ceil(10.0 * 0.1) == 1


def test_lemma310_parameters_and_leaf_sensitivity():
    alpha, kappa, b, coefficient = problems.lemma310_parameters(**problems.FIXTURES[1])
    assert abs(alpha - 0.0245565588) <= 1e-10 and kappa == 1.0 and b == 1788
    assert abs(coefficient - 1658.307192) <= 1e-6
    assert abs(problems.leaf_sensitivity(problems.FIXTURES[1], "replace_one") - 1.20604916e-3) <= 1e-11
    assert abs(problems.leaf_sensitivity(problems.FIXTURES[2], "replace_one") - 2.18993049e-3) <= 1e-11
    assert problems.leaf_sensitivity(problems.FIXTURES[2], "zero_out") * 2 == problems.leaf_sensitivity(
        problems.FIXTURES[2], "replace_one")


# --- privacy: the printed rules' table and Theorem 3.11's first release -------------------------------------

def test_theorem_3_11_first_release_is_a_gaussian_mechanism_beyond_delta():
    params = problems.FIXTURES[2]
    with working_precision(40):
        sigma = spider_sosp_sigma("thm3.11", allow_nonprivate=True, **params)
        b = problems.lemma310_parameters(**params)[2]
        zero_out = gaussian_delta(params["epsilon"], (mpmath.mpf(1) / b) / sigma)
        replace_one = gaussian_delta(params["epsilon"], (mpmath.mpf(2) / b) / sigma)
    assert b == 997
    assert 0.0066 < float(zero_out) < 0.0068 and 0.035 < float(replace_one) < 0.036
    assert float(zero_out) > params["delta"]


def test_exact_table_is_consistent_with_the_fixtures():
    for (rule, fixture, adjacency, scope), (mu, delta) in privacy.EXACT_TABLE.items():
        assert rule in ("lemma3.8", "thm3.11") and scope in ("global", "segment")
        exact = privacy._exact_delta(problems.FIXTURES[fixture]["epsilon"], mu)
        assert abs(exact - delta) <= 1e-6 * delta  # μ given to 9 digits


# --- Lemma 3.3's counterexample ------------------------------------------------------------------------------

def test_counterexample_constants_and_hypotheses():
    assert escape.STEPS == 459
    assert abs(escape.ALPHA - 0.4391) <= 1e-4 and abs(escape.ZETA - 3.8048e-4) <= 1e-7
    assert escape.SADDLE.saddle_curvature() == -1.0 <= -math.sqrt(escape.ALPHA)
    # the adversary's errors stay within γ, rounding included, and undo a small perturbation exactly
    adversary = escape._Adversary()
    x = np.zeros(escape.D)
    x[0] = 0.6 * escape.GAMMA  # needs an error of about 1.2 γ: clipped
    error = adversary(1, x, escape.SADDLE.population_gradient(x))
    assert np.linalg.norm(error) <= escape.GAMMA
    path = sp.perturbed_inexact_descent(escape.SADDLE.population_gradient, np.zeros(escape.D), smoothness=1.0,
                                        gamma=escape.GAMMA, steps=escape.STEPS, perturbation_scale=escape.ZETA,
                                        initial_error=np.zeros(escape.D), error_oracle=escape._Adversary(),
                                        rng=np.random.default_rng(5))
    assert np.all(path.iterates[-1] == 0.0)


def test_binomial_upper_test():
    result = escape._binomial_upper(8, 8, 5e-7)
    assert abs(result.p_value - 0.01**8) <= 1e-20
    assert escape._binomial_upper(0, 24, 5e-7).p_value == 1.0
    assert 0.3 < escape._binomial_upper(0, 24, 5e-7).mde < 0.4


# --- Theorem A.2's closed form -----------------------------------------------------------------------------------

def test_uniform_deviation_closed_form_against_a_grid():
    data = generalization.FAMILY.sample(np.random.default_rng(7), 9)
    x_star, sup = generalization._sup(data)
    w = np.mean(np.exp(-1j * data), axis=0) - generalization.FAMILY.phi
    grid = np.linspace(-np.pi, np.pi, 20001)
    for j in range(generalization.D):
        # coordinate j of ∇F_D − ∇F_P over a fine grid of x_j: its largest magnitude is c_j |w_j|
        values = -generalization.FAMILY.c[j] * generalization.FAMILY.s[j] * (
            np.mean(np.sin(grid[:, None] - data[None, :, j]), axis=1) - generalization.FAMILY.phi * np.sin(grid))
        assert np.max(np.abs(values)) <= generalization.FAMILY.c[j] * abs(w[j]) + 1e-12
        assert np.max(np.abs(values)) >= generalization.FAMILY.c[j] * abs(w[j]) * (1 - 1e-6)
    oracles = sp.GradientOracles(generalization.FAMILY.gradient, data, np.arange(9), d=generalization.D)
    deviation = oracles.o1(x_star, 9) - generalization.FAMILY.population_gradient(x_star)
    assert abs(np.linalg.norm(deviation) - sup) <= 1e-13


# --- the statistical helpers -----------------------------------------------------------------------------------

def test_mean_part_handles_constant_samples():
    constant = np.tile([1.0, 2.0], (50, 1))
    assert _stats.mean_part(constant, np.array([1.0, 2.0]), CTX, "c").verdict == PASS
    assert _stats.mean_part(constant, np.array([1.0, 2.5]), CTX, "c").verdict == FAIL
    nan = constant.copy()
    nan[3, 1] = np.nan
    assert _stats.mean_part(nan, np.array([1.0, 2.0]), CTX, "c").verdict == FAIL
    noisy = np.random.default_rng(0).normal(size=(400, 2)) + [1.0, 2.0]
    evidence = _stats.mean_part(noisy, np.array([1.0, 2.0]), CTX, "n")
    assert evidence.p_value is not None and evidence.relative_mde is not None


def test_zero_mean_part_and_statistical_erratum():
    assert _stats.zero_mean_part(np.zeros(20), 1.0, CTX, "z").verdict == PASS
    assert _stats.zero_mean_part(np.full(20, 0.5), 1.0, CTX, "z").verdict == FAIL
    corrected = Evidence(verdict=PASS, p_value=0.3, relative_mde=0.1, mde=0.1)
    assert _stats.statistical_erratum(True, corrected).verdict == ERRATUM
    assert _stats.statistical_erratum(True, corrected).p_value == pytest.approx(0.6)
    assert _stats.statistical_erratum(False, corrected).verdict == FAIL
    assert _stats.statistical_erratum(True, Evidence(verdict=FAIL)).p_value is None


# --- the backend claim (spider_sosp.backend.run): its bound is neither vacuous nor too tight ---------------------

def _backend_run(case_index=0):
    from proofs_checks.claims.spider_sosp import backend

    case = backend.QUICK[case_index]
    seed, noise_seed, rng = backend._seeds(CTX, case)
    config = case.config()
    data = case.family.sample(rng, case.n)
    x0 = np.array(case.x0, dtype=np.float64)
    result = sp.stochastic_spider(case.family.gradient, data, x0, config, seed=seed, noise_seed=noise_seed)
    return backend, case, config, data, x0, seed, noise_seed, result


def _with_release(result, t, ulps):
    import dataclasses

    released = np.array(result.trace.released, dtype=np.float64)
    released[t] = released[t] + ulps * np.spacing(released[t])
    return dataclasses.replace(result, trace=dataclasses.replace(result.trace, released=released))


def test_backend_bound_admits_an_ulp_and_rejects_a_thousandth():
    backend, case, config, data, x0, seed, noise_seed, result = _backend_run()
    same = backend._compare(case, config, data, x0, seed, noise_seed, result, result)
    assert same.verdict == PASS and same.statistic == 0.0
    nudged = backend._compare(case, config, data, x0, seed, noise_seed, _with_release(result, 5, 1), result)
    assert nudged.verdict == PASS and 0.0 < nudged.statistic <= 1.0, nudged.detail
    far = backend._compare(case, config, data, x0, seed, noise_seed, _with_release(result, 5, 2**20), result)
    assert far.verdict == FAIL, far.detail


def test_backend_step_checks_see_value_bugs_that_keep_the_trace():
    import dataclasses

    backend, case, config, data, x0, seed, noise_seed, result = _backend_run()
    debug = result.debug
    for field, row in (("tree_noise", 3), ("estimates", 2), ("perturbations", result.trace.perturbation_steps[0])):
        values = np.array(getattr(debug, field), dtype=np.float64)
        values[row] = values[row] * (1 + 2.0**-30)  # a relative change far below any float32 rounding
        bugged = dataclasses.replace(result, debug=dataclasses.replace(debug, **{field: values}))
        evidence = backend._compare(case, config, data, x0, seed, noise_seed, bugged, result)
        assert evidence.verdict == FAIL, (field, evidence.detail)
    off = np.array(debug.perturbations, dtype=np.float64)
    off[0] = 1e-300  # a perturbation row off the perturbation steps
    bugged = dataclasses.replace(result, debug=dataclasses.replace(debug, perturbations=off))
    assert backend._compare(case, config, data, x0, seed, noise_seed, bugged, result).verdict == FAIL
