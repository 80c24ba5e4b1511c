"""The bgm21 privacy claims (proofs_checks/claims/bgm21/{composition, selection, privacy}.py): the ground truth their
checks compute by themselves, tested against independent computations (mpmath quadrature, the reference accountants,
the reference algorithms' traces), and the folder's declarations.

Every claim holding on reference and fast and every mutant failing is tests/test_claims.py's job.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from proofs_checks import papers
from proofs_checks.authoring import ERRATUM, PASS, CheckContext
from proofs_checks.claim import BUDGETS
from proofs_checks.claims import bgm21 as folder
from proofs_checks.claims.bgm21 import _privacy_ground as ground
from proofs_checks.claims.bgm21 import composition, privacy, selection
from proofs_checks.claims.bgm21._protocols_privacy import PROTOCOLS as AREA_PROTOCOLS
from proofs_checks.folders import declared_protocols
from proofs_checks.registry import load_claims
from proofs_checks.subjects import reference_subject
from reference.accounting.gaussian import gaussian_delta
from reference.algorithms.bgm21_accounting import certify_pure, kov_exact_epsilon
from reference.algorithms.bgm21_sfw import PolySFWConfig, poly_sfw, sfw_data_budget
from reference.precision import working_precision

AREA_MODULES = (composition, selection, privacy)
AREA_CLAIMS = [c for module in AREA_MODULES for c in vars(module).values() if type(c).__name__ == "Claim"]


# --- the folder -------------------------------------------------------------------------------------------------

def test_area_protocols_are_declared_and_cover_every_claim():
    merged = declared_protocols()  # raises when two folders declare one protocol
    for name, value in AREA_PROTOCOLS.items():
        assert merged[name] == value
    for claim in AREA_CLAIMS:
        for name in claim.requires:
            assert name in folder.PROTOCOLS, (claim.id, name)
    subject = reference_subject()
    for name in AREA_PROTOCOLS:
        assert callable(getattr(subject, name)), name


def test_erratum_records_name_these_claims():
    registered = {c.id for c in load_claims() if c.paper == "bgm21"}
    for erratum_id, claim_id, erratum in (("bgm21.E9", "bgm21.thm7.centred_ledger", False),
                                          ("bgm21.E10", "bgm21.thm10.printed_sigma_hat", True),
                                          ("bgm21.E28", "bgm21.thm6.printed_laplace_scale", True)):
        record = papers.ERRATA_BY_ID[erratum_id]
        assert claim_id in registered and claim_id in repr(record)
        claim = next(c for c in AREA_CLAIMS if c.id == claim_id)
        assert claim.erratum is erratum and erratum_id in claim.location


def test_full_budget_mutants_exist():
    for entry in selection.FULL_BUDGET_MUTANTS:
        claim_id, name = entry.split(":")
        claim = next(c for c in AREA_CLAIMS if c.id == claim_id)
        assert name in {m.name for m in claim.mutants}


# --- ground truth -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps, mu", [(0.0, 0.5), (1.0, 1.0), (1.0, 0.2018), (5.0, 1.04), (0.3, 0.05)])
def test_gaussian_profile_matches_the_reference_accountant(eps, mu):
    with working_precision(40):
        ref = gaussian_delta(mpmath.mpf(eps), mpmath.mpf(mu))
    assert float(ground.gaussian_profile(eps, mu)) == pytest.approx(float(ref), rel=1e-20, abs=0.0)
    assert float(ground.gaussian_profile(1.0, 1.0)) == pytest.approx(0.12693673750, rel=1e-10)


@pytest.mark.parametrize("gap, scale", [(0.0, 1.0), (0.7, 0.5), (3.0, 1.0), (12.0, 2.0)])
def test_two_candidate_probability_by_quadrature(gap, scale):
    # P(u1 − u2 > gap) for iid Lap(scale): integrate the Laplace density of u1 times P(u2 < u1 − gap)
    with mpmath.workdps(30):
        s, g = mpmath.mpf(scale), mpmath.mpf(gap)

        def cdf(x):
            return mpmath.exp(x / s) / 2 if x < 0 else 1 - mpmath.exp(-x / s) / 2

        value = mpmath.quad(lambda x: mpmath.exp(-abs(x) / s) / (2 * s) * cdf(x - g), [-mpmath.inf, 0, g, mpmath.inf])
    assert float(ground.rnm_two_candidate_probability(gap, scale)) == pytest.approx(float(value), rel=1e-20)


@pytest.mark.parametrize("eps0, k, delta", [(0.01, 100, 1e-5), (0.3, 20, 1e-8), (1.0, 3, 1e-2)])
def test_pure_routes_match_the_reference_certificate(eps0, k, delta):
    with working_precision(30):
        cert = certify_pure([mpmath.mpf(eps0)] * k, delta, kov_max_steps=0)
        routes = ground.pure_routes(eps0, k, delta)
        for name in ("basic", "lemma1", "zcdp"):
            assert float(routes[name]) == pytest.approx(float(cert.routes[name]), rel=1e-25)
        exact = kov_exact_epsilon(mpmath.mpf(eps0), k, delta)
    assert ground.pure_certifies(eps0, k, float(exact) * (1 + 1e-12), delta)
    assert not ground.pure_certifies(eps0, k, float(exact) * (1 - 1e-6), delta)


def test_alg1_sensitivities_and_scales_match_a_reference_run():
    R, b, eps, delta, L0, L1, D = 4, 16, 1.0, 1e-5, 2.0, 0.5, 3.0
    config = PolySFWConfig(n_rounds=R, batch_size=b, epsilon=eps, delta=delta, lipschitz=L0, smoothness=L1)
    data = ground.bounded_records(np.random.default_rng(0), sfw_data_budget(b, R), 3)
    res = poly_sfw(ground.linear_gradient(L0), data, ground.scaled_simplex(3, D), config, seed=1, noise_seed=2**80)
    for i, (r, t) in enumerate(zip(res.trace.rounds, res.trace.steps)):
        assert res.trace.estimator_sensitivity[i] == pytest.approx(
            ground.alg1_estimator_sensitivity(int(t), b, L0, L1, D), rel=1e-14)
        assert res.trace.lap_scales[i] == pytest.approx(ground.printed_lap_scale(int(r), b, eps, delta, L0, L1, D),
                                                        rel=1e-14)


def test_e10_closed_form_values():
    mu_printed, delta_printed = privacy._e10_closed_form(1.0, 1e-8, "printed")
    mu_prev, delta_prev = privacy._e10_closed_form(1.0, 1e-8, "prev")
    L = math.log(1e8)
    assert float(mu_printed) == pytest.approx(math.sqrt(3.0 / (4.0 * L)), rel=1e-14)  # μ² = ε²(1/4 + 1/2)/log(1/δ)
    assert float(mu_prev) == pytest.approx(math.sqrt(1.0 / (2.0 * L)), rel=1e-14)
    assert 2.2 < float(delta_printed / mpmath.mpf(1e-8)) < 2.3 and delta_prev < 1e-10


def test_e28_tail_pair_attains_nearly_twice():
    x, gap = 0.01, privacy.PRINTED_LAMBDA_GAP  # Δ/λ, and the gap in units of λ
    ratio = float(mpmath.log(ground.rnm_two_candidate_probability(gap - 2 * x, 1)
                             / ground.rnm_two_candidate_probability(gap, 1))) / x
    assert 1.9 < ratio < 2.0


def test_lemma1_grid_and_quick_subset():
    assert len(composition.GRID) == 75 and len(composition.QUICK_GRID) == 25
    assert {p[2] for p in composition.QUICK_GRID} == {1e-9}


@pytest.mark.parametrize("claim_id", ["bgm21.thm10.printed_sigma_hat", "bgm21.thm16.privacy",
                                      "bgm21.alg1.report_noisy_min_privacy"])
def test_cheap_claims_on_reference(claim_id):
    claim = next(c for c in AREA_CLAIMS if c.id == claim_id)
    evidence = claim.check(reference_subject(), CheckContext(budget=BUDGETS["quick"], seed=3))
    assert evidence.verdict in (PASS, ERRATUM), evidence.detail
