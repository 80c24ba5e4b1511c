"""The bgm21 §3 and geometry claims (proofs_checks/claims/bgm21/gll.py, oracle.py, phased_sgd.py, geometry.py): the
ground truth their checks compute by themselves, their helpers and mutants, and the folder's declarations.

Every claim holding on reference and fast and every mutant failing is tests/test_claims.py's job; this file tests what
those verdicts rest on.
"""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import optimize

from proofs_checks import papers
from proofs_checks.authoring import ERRATUM, FAIL, PASS
from proofs_checks.claims.bgm21 import _gll_truth as truth
from proofs_checks.claims.bgm21 import _protocols_gll, geometry, oracle, phased_sgd
from proofs_checks.claims.bgm21._gll_mutants import _bisection_oracle
from proofs_checks.registry import load_claims
from proofs_checks.runner import run_claim
from proofs_checks.subjects import reference_subject
from reference.gll import AbsoluteLoss, HingeLoss, HuberLoss, LogisticLoss, moreau_glm_gradient

MODULES = ("gll", "oracle", "phased_sgd", "geometry")
CLAIMS = {c.id: c for c in load_claims()
          if c.paper == "bgm21" and c.check.__module__.rsplit(".", 1)[-1] in MODULES}


# --- the folder ----------------------------------------------------------------------------------------------------

def test_the_area_registers_its_claims_and_declares_what_they_call():
    assert set(CLAIMS) == {
        "bgm21.lemma3.smoothed_gll", "bgm21.lemma4.oracle_accuracy", "bgm21.alg3.bisection_prox",
        "bgm21.thm6.oracle_accuracy", "bgm21.thm5.smoothing_parameter", "bgm21.thm5.phase_sensitivity",
        "bgm21.thm5.phase_structure", "bgm21.sec2.lmo_closed_forms", "bgm21.sec2.fw_gap",
        "bgm21.sec2.projection_nearest_point",
    }
    from proofs_checks.claims.bgm21 import PROTOCOLS

    for claim in CLAIMS.values():
        assert set(claim.requires) <= set(PROTOCOLS), claim.id
        assert len(claim.mutants) >= 2, claim.id
    assert reference_subject().provides(_protocols_gll.PROTOCOLS)


def test_errata_records_point_at_the_claims_that_cite_them():
    for erratum_id, claim_id, erratum in (("bgm21.E2", "bgm21.thm5.smoothing_parameter", True),
                                          ("bgm21.E3", "bgm21.thm6.oracle_accuracy", True),
                                          ("bgm21.E4", "bgm21.lemma3.smoothed_gll", False)):
        record = papers.ERRATA_BY_ID[erratum_id]
        assert record.evidence == claim_id
        assert erratum_id in CLAIMS[claim_id].location
        assert CLAIMS[claim_id].erratum is erratum
        assert (record.status == "erratum") is erratum


@pytest.mark.parametrize("claim_id, verdict", [
    ("bgm21.thm6.oracle_accuracy", ERRATUM), ("bgm21.thm5.smoothing_parameter", ERRATUM),
    ("bgm21.lemma4.oracle_accuracy", PASS), ("bgm21.sec2.fw_gap", PASS),
])
def test_a_few_verdicts_on_the_reference(claim_id, verdict):
    row = run_claim(CLAIMS[claim_id], reference_subject(), "quick")
    assert row["verdict"] == verdict, row["detail"]
    assert run_claim(CLAIMS[claim_id], CLAIMS[claim_id].mutants[0].apply(reference_subject()),
                     "quick")["verdict"] == FAIL


# --- Moreau envelopes: the closed forms against brute-force minimisation -------------------------------------------

LOSSES = (AbsoluteLoss(1.7), HingeLoss(0.6), HuberLoss(delta=0.5, lipschitz=2.0), LogisticLoss(1.3))


@pytest.mark.parametrize("loss", LOSSES, ids=lambda l: l.name)
@pytest.mark.parametrize("beta", [0.05, 1.0, 40.0])
def test_envelope_truth_is_the_minimum_of_the_moreau_problem(loss, beta):
    gen = np.random.default_rng(3)
    ys = gen.choice([-1.0, 1.0], 40) if loss.binary_labels else gen.normal(size=40)
    us = ys + gen.normal(size=40) * loss.lipschitz / beta * 2.0
    env = truth.envelope_truth(loss, us, ys, beta)
    prox = truth.prox_truth(loss, us, ys, beta)
    for u, y, e, p in zip(us, ys, env, prox):
        phi = lambda v: float(truth.loss_value(loss, v, y)) + 0.5 * beta * (v - u) ** 2  # noqa: E731
        r = loss.lipschitz / beta
        ref = optimize.minimize_scalar(phi, bounds=(u - r, u + r), method="bounded", options={"xatol": 1e-14 * r})
        assert e <= ref.fun + 1e-12 * (1 + abs(ref.fun))  # the closed form is the minimum ...
        assert abs(p - ref.x) <= 1e-6 * r + 4e-8 * abs(ref.x)  # ... attained at the prox (fminbound's tolerance)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda l: l.name)
def test_envelope_gradient_truth_is_the_derivative_of_the_envelope(loss):
    beta, gen = 2.5, np.random.default_rng(4)
    ys = gen.choice([-1.0, 1.0], 30) if loss.binary_labels else gen.normal(size=30)
    us = ys + gen.normal(size=30)
    h = 1e-6
    numeric = (truth.envelope_truth(loss, us + h, ys, beta) - truth.envelope_truth(loss, us - h, ys, beta)) / (2 * h)
    np.testing.assert_allclose(truth.envelope_gradient_truth(loss, us, ys, beta), numeric, atol=1e-6 * beta)


def test_absolute_envelope_matches_mpmath_huber_at_40_digits():
    loss, beta = AbsoluteLoss(1.5), 3.0
    for u in (-2.0, -0.3, 0.0, 0.2, 0.5, 4.0):
        with mpmath.workdps(40):
            r, t = mpmath.mpf(u) - mpmath.mpf("0.25"), mpmath.mpf("1.5") / 3
            exact = 1.5 * (r * r / (2 * t) if abs(r) <= t else abs(r) - t / 2)
        assert float(truth.envelope_truth(loss, u, 0.25, beta)) == pytest.approx(float(exact), rel=1e-15, abs=1e-300)


# --- Algorithm 3: the helpers of the oracle claims -----------------------------------------------------------------

def test_steps_exact_is_the_ceiling_of_log2_in_exact_arithmetic():
    assert truth.steps_exact(1.0, 1.0, 1.0) == 0 and truth.steps_exact(1.0, 1.0, 2.0) == 0
    assert truth.steps_exact(1.0, 1.0, 0.5) == 1 and truth.steps_exact(1.0, 1.0, 0.49) == 2
    assert truth.steps_exact(3.0, 1.0, 1e-3) == math.ceil(math.log2(3000))
    gen = np.random.default_rng(5)
    for _ in range(200):
        L0, R, a = (float(10 ** gen.uniform(-2, 2)) for _ in range(3))
        k = truth.steps_exact(L0, R, a)
        ratio = Fraction(L0) * Fraction(R) / Fraction(a)
        assert Fraction(2) ** k >= ratio and (k == 0 or Fraction(2) ** (k - 1) < ratio)


def test_dyadic_cases_put_the_kink_exactly_at_u():
    gen = np.random.default_rng(6)
    for kind in ("absolute", "hinge"):
        for q in (2.0, math.inf):
            w, X, y, R, kink = oracle._dyadic_case(gen, 64, 4, kind, q)
            u = X @ w
            assert kink.any()
            if kind == "absolute":
                assert np.all(u[kink] == y[kink])
            else:
                assert np.all(y[kink] * u[kink] == 1.0)
            assert np.all(truth.dual_norm_rows(X, q) <= R)


def test_counting_losses_count_what_the_reference_oracle_evaluates():
    loss = oracle.CountingHinge(1.0)
    X, y = np.eye(3), np.array([1.0, -1.0, 1.0])
    moreau_glm_gradient(np.zeros(3), X, y, loss, 2.0, 1e-3, 1.0)
    assert loss.evaluations == 3 * truth.steps_exact(1.0, 1.0, 1e-3)


def test_bracket_mutant_with_the_right_bracket_is_the_reference_oracle():
    gen = np.random.default_rng(7)
    for loss in (AbsoluteLoss(1.3), HingeLoss(0.7)):
        X = gen.normal(size=(20, 4))
        R = float(np.max(np.linalg.norm(X, axis=1)))
        y = gen.choice([-1.0, 1.0], 20)
        w = gen.normal(size=4)
        ours = _bisection_oracle(w, X, y, loss, 3.0, 1e-5, R, 1.0)
        np.testing.assert_allclose(ours, moreau_glm_gradient(w, X, y, loss, 3.0, 1e-5, R), rtol=0, atol=1e-14)


def test_max_affine_subgradient_lies_in_the_subdifferential():
    gen = np.random.default_rng(8)
    loss = truth.random_max_affine(gen, 2.0)
    for v in gen.normal(size=50) * 3:
        g = float(loss.subgradient(v, 0.0))
        for t in (v - 1e-3, v + 1e-3, v + 1.0, v - 1.0):  # convexity: ℓ(t) ≥ ℓ(v) + g(t − v)
            assert float(loss.value(t, 0.0)) >= float(loss.value(v, 0.0)) + g * (t - v) - 1e-12
        assert abs(g) <= 2.0


def test_theorem6_rate_by_hand():
    p = oracle.THM6
    expected = 2.0 * 3.0 * 2.0 * (math.log(1e6) ** 0.25 * math.sqrt(math.log(16) * math.log(1000)) / math.sqrt(1000)
                                  + math.sqrt(math.log(8)) / math.sqrt(1000))
    assert oracle._thm6_rate(2.0, 3.0, p) == pytest.approx(expected, rel=1e-15)


# --- Phased-SGD and geometry helpers --------------------------------------------------------------------------------

def test_the_sensitivity_config_meets_the_runs_preconditions():
    config = phased_sgd._config(1e-4)
    assert config.step_size / 4 <= 2.0 / config.smoothness  # η_1 ≤ 2/(βR²)
    assert 1.1 * config.step_size / 4 <= 2.0 / config.smoothness  # the near-miss mutant still runs


def test_hoelder_minimum_matches_linprog_on_the_l1_ball():
    gen = np.random.default_rng(9)
    for _ in range(20):
        c, g, lam = gen.normal(size=5), gen.normal(size=5), float(gen.uniform(0.1, 3))
        assert geometry._ball_minimum(c, lam, g, 1.0) == pytest.approx(
            geometry._scipy_ball_minimum(c, lam, g, 1.0), rel=1e-9, abs=1e-12)
        assert geometry._ball_minimum(c, lam, g, 2.0) == pytest.approx(float(c @ g) - lam * np.linalg.norm(g))


def test_scipy_projection_distance_matches_closed_forms():
    gen = np.random.default_rng(10)
    for _ in range(10):
        c, w, lam = gen.normal(size=4), gen.normal(size=4) * 3, float(gen.uniform(0.2, 2))
        exact = max(0.0, float(np.linalg.norm(w - c)) - lam)
        assert geometry._scipy_projection_distance(w, c, lam, 2.0) == pytest.approx(exact, rel=1e-6, abs=1e-9)
