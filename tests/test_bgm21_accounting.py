"""bgm21 accounting (reference/algorithms/bgm21_accounting.py): Lemma 1, exact KOV composition, calibration, ledger."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from reference.accounting.gaussian import gaussian_epsilon
from reference.algorithms.bgm21_accounting import (
    Bgm21Ledger,
    advanced_composition,
    basic_composition,
    calibrate_pure_steps,
    certify_pure,
    kov_corner_delta,
    kov_exact_delta,
    kov_exact_epsilon,
    zcdp_of_pure,
    zcdp_to_dp,
)
from reference.precision import working_precision
from reference.selection import report_noisy_min_epsilon


@pytest.fixture(autouse=True)
def _precision():
    with working_precision(30):
        yield


def _hockey_stick(p, q, eps):
    e = mpmath.exp(eps)
    return mpmath.fsum(max(mpmath.mpf(0), a - e * b) for a, b in zip(p, q))


def _product_laws(p1, q1, k):
    """Laws of k independent copies of a mechanism with output laws p1 (on S) and q1 (on S′)."""
    p, q = [], []
    for outcome in itertools.product(range(len(p1)), repeat=k):
        p.append(mpmath.fprod(p1[o] for o in outcome))
        q.append(mpmath.fprod(q1[o] for o in outcome))
    return p, q


def _rr(eps0):
    e = mpmath.exp(eps0)
    return [e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)]


# ---- Lemma 1 ---------------------------------------------------------------------------------------


def test_lemma1_formula_as_printed():
    eps, k, dp = mpmath.mpf("0.1"), 50, mpmath.mpf("1e-6")
    got, total_delta = advanced_composition(eps, k, dp, delta=mpmath.mpf("1e-8"))
    want = eps * mpmath.sqrt(2 * k * mpmath.log(1 / dp)) + k * eps * (mpmath.exp(eps) - 1)
    assert abs(got - want) <= 1e-25 * want
    assert abs(total_delta - (k * mpmath.mpf("1e-8") + dp)) <= 1e-35
    assert advanced_composition(eps, k, dp, form="drv") == advanced_composition(eps, k, dp, form="lemma1")


def test_lemma1_as_printed_requires_positive_eps_drv_does_not():
    with pytest.raises(ValueError):
        advanced_composition(0, 3, 1e-5)
    assert advanced_composition(0, 3, 1e-5, form="drv")[0] == 0
    with pytest.raises(ValueError):
        advanced_composition(0.1, 3, 1e-5, form="typo")


@pytest.mark.parametrize("eps0", ["0.001", "0.01", "0.1", "0.5", "1"])
@pytest.mark.parametrize("k", [1, 2, 10, 100, 1000])
@pytest.mark.parametrize("delta_prime", ["1e-2", "1e-5", "1e-9"])
def test_lemma1_is_valid_against_the_exact_optimum(eps0, k, delta_prime):
    eps_prime, _ = advanced_composition(mpmath.mpf(eps0), k, mpmath.mpf(delta_prime))
    assert kov_exact_delta(mpmath.mpf(eps0), k, eps_prime) <= mpmath.mpf(delta_prime)
    # and never tighter than the exact ε at δ′
    assert kov_exact_epsilon(mpmath.mpf(eps0), k, mpmath.mpf(delta_prime)) <= eps_prime


# ---- KOV exact composition ---------------------------------------------------------------------------


def test_kov_single_step_is_tight():
    for eps0 in ["0.01", "0.5", "3"]:
        eps0 = mpmath.mpf(eps0)
        assert kov_exact_delta(eps0, 1, eps0) == 0
        # just below ε0 a single ε0-DP mechanism (randomized response) is not (ε, 0)-DP
        assert kov_exact_delta(eps0, 1, eps0 * (1 - mpmath.mpf("1e-6"))) > 0
    assert kov_exact_delta(mpmath.mpf("0.25"), 7, mpmath.mpf("1.75")) == 0  # basic composition is exact at kε0


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("eps0", ["0.1", "0.7", "2"])
def test_kov_matches_brute_force_randomized_response(k, eps0):
    eps0 = mpmath.mpf(eps0)
    p, q = _product_laws(*_rr(eps0), k)
    for eps in [0, eps0 / 3, eps0, 1, k * eps0 / 2, k * eps0 - eps0 / 10, k * eps0]:
        eps = mpmath.mpf(eps)
        brute = _hockey_stick(p, q, eps)
        assert abs(kov_exact_delta(eps0, k, eps) - brute) <= mpmath.mpf("1e-25") * max(brute, 1e-300) + mpmath.mpf(
            "1e-28"
        )


@pytest.mark.parametrize("k", [2, 3, 6, 11])
def test_kov_corners_match_theorem_3_3_as_printed(k):
    eps0 = mpmath.mpf("0.375")  # a binary fraction: the corners (k − 2i)ε0 are exact
    for i in range(k // 2 + 1):
        exact = kov_exact_delta(eps0, k, (k - 2 * i) * eps0)
        corner = kov_corner_delta(eps0, k, i)
        assert abs(exact - corner) <= mpmath.mpf("1e-25") * max(corner, mpmath.mpf("1e-300"))


def test_kov_with_approximate_steps_matches_brute_force():
    # (ε0, δ0) randomized response with an extra "I am S" output of mass δ0 (KOV's worst case)
    eps0, d0, k = mpmath.mpf("0.5"), mpmath.mpf("0.01"), 3
    e = mpmath.exp(eps0)
    p1 = [d0, (1 - d0) * e / (1 + e), (1 - d0) / (1 + e), 0]
    q1 = [0, (1 - d0) / (1 + e), (1 - d0) * e / (1 + e), d0]
    p, q = _product_laws(p1, q1, k)
    for eps in [0, "0.5", "1", "1.5"]:
        eps = mpmath.mpf(eps)
        assert abs(kov_exact_delta(eps0, k, eps, delta0=d0) - _hockey_stick(p, q, eps)) <= mpmath.mpf("1e-25")


def test_kov_dominates_random_pure_mechanisms():
    rng = np.random.default_rng(20210601)
    eps0 = mpmath.mpf("0.8")
    for _ in range(20):
        m = int(rng.integers(2, 4))
        p1 = [mpmath.mpf(float(x)) for x in rng.dirichlet(np.ones(m))]
        ratio = [mpmath.exp(eps0 * mpmath.mpf(float(u))) for u in rng.uniform(-1, 1, m)]
        q1 = [a * r for a, r in zip(p1, ratio)]
        total = mpmath.fsum(q1)
        q1 = [x / total for x in q1]
        if any(abs(mpmath.log(a / b)) > eps0 for a, b in zip(p1, q1)):
            continue  # renormalising pushed a ratio beyond ε0: not an ε0-DP pair
        for k in (2, 3):
            p, q = _product_laws(p1, q1, k)
            for eps in [mpmath.mpf(0), eps0, mpmath.mpf("1.3")]:
                assert _hockey_stick(p, q, eps) <= kov_exact_delta(eps0, k, eps) + mpmath.mpf("1e-25")


def test_kov_large_k_and_large_eps_are_finite_and_monotone():
    d_small = kov_exact_delta(mpmath.mpf("0.01"), 10_000, mpmath.mpf(2))
    d_big = kov_exact_delta(mpmath.mpf("0.011"), 10_000, mpmath.mpf(2))
    assert 0 < d_small < d_big < 1
    assert 0 < kov_exact_delta(mpmath.mpf(50), 20, mpmath.mpf(900)) < 1  # e^{1000}: no overflow in mpmath
    values = [kov_exact_delta(mpmath.mpf("0.2"), 40, mpmath.mpf(e) / 4) for e in range(0, 33)]
    assert all(a >= b for a, b in zip(values, values[1:]))


def test_kov_exact_epsilon_is_rounded_up_and_tight():
    eps0, k, delta = mpmath.mpf("0.1"), 200, mpmath.mpf("1e-6")
    eps = kov_exact_epsilon(eps0, k, delta)
    assert kov_exact_delta(eps0, k, eps) <= delta
    assert kov_exact_delta(eps0, k, eps * (1 - mpmath.mpf("1e-20"))) > delta
    assert kov_exact_epsilon(eps0, 1, mpmath.mpf("0.01")) <= eps0
    with pytest.raises(ValueError):
        kov_exact_epsilon(eps0, 3, mpmath.mpf("0.01"), delta0=mpmath.mpf("0.01"))  # below the 1-(1-δ0)^k floor


# ---- zCDP ----------------------------------------------------------------------------------------------


def test_zcdp_routes():
    assert zcdp_of_pure(mpmath.mpf("0.3")) == mpmath.mpf("0.3") ** 2 / 2
    rho, delta = mpmath.mpf("0.05"), mpmath.mpf("1e-5")
    simple = zcdp_to_dp(rho, delta)
    assert abs(simple - (rho + 2 * mpmath.sqrt(rho * mpmath.log(1 / delta)))) <= 1e-25
    assert zcdp_to_dp(rho, delta, method="optimal") <= simple
    with pytest.raises(ValueError):
        zcdp_to_dp(rho, delta, method="bogus")


# ---- certify / calibrate -----------------------------------------------------------------------------


def test_certify_pure_labels_and_minimum():
    cert = certify_pure([mpmath.mpf("0.1")] * 100, mpmath.mpf("1e-5"))
    assert set(cert.routes) == {"basic", "lemma1", "zcdp", "kov_exact"}
    assert cert.epsilon == min(v for v in cert.routes.values())
    assert cert.route == "kov_exact"
    assert cert.routes["kov_exact"] <= cert.routes["lemma1"]
    one = certify_pure([mpmath.mpf("0.5")], mpmath.mpf("1e-5"))
    assert one.epsilon <= mpmath.mpf("0.5")
    mixed = certify_pure([0.1, 0.2, 0.3], 1e-5)
    assert mixed.routes["lemma1"] is None and mixed.routes["kov_exact"] is None
    assert "lemma1" in mixed.skipped and "kov_exact" in mixed.skipped
    assert mixed.epsilon <= basic_composition([0.1, 0.2, 0.3], [0, 0, 0])[0]
    big = certify_pure([0.01] * 30, 1e-5, kov_max_steps=10)
    assert big.routes["kov_exact"] is None and "kov_max_steps" in big.skipped["kov_exact"]


@pytest.mark.parametrize(
    "k,eps,delta",
    [(1, "1", "1e-5"), (2, "0.5", "1e-5"), (10, "1", "1e-5"), (100, "1", "1e-5"), (64, "2", "1e-8"), (300, "0.5", "1e-3"),
     (5, "1", "0.9")],
)
def test_calibration_round_trip_never_overshoots(k, eps, delta):
    eps, delta = mpmath.mpf(eps), mpmath.mpf(delta)
    step = calibrate_pure_steps(k, eps, delta)
    cert = certify_pure([step] * k, delta)
    assert cert.epsilon <= eps
    assert cert.epsilon >= eps * (1 - mpmath.mpf("1e-20"))  # tight: nothing left on the table
    assert certify_pure([step * (1 + mpmath.mpf("1e-15"))] * k, delta).epsilon > eps  # largest such step
    assert step >= eps / k  # never worse than basic composition


def test_calibration_is_monotone():
    delta = mpmath.mpf("1e-5")
    by_k = [calibrate_pure_steps(k, mpmath.mpf(1), delta) for k in (1, 4, 16, 64)]
    assert all(a > b for a, b in zip(by_k, by_k[1:]))
    by_eps = [calibrate_pure_steps(20, mpmath.mpf(e), delta) for e in ("0.25", "0.5", "1", "2")]
    assert all(a < b for a, b in zip(by_eps, by_eps[1:]))
    by_delta = [calibrate_pure_steps(20, mpmath.mpf(1), mpmath.mpf(d)) for d in ("1e-9", "1e-5", "1e-2")]
    assert all(a < b for a, b in zip(by_delta, by_delta[1:]))


def test_calibration_without_kov_matches_closed_forms_at_least():
    k, eps, delta = 50, mpmath.mpf(1), mpmath.mpf("1e-5")
    no_kov = calibrate_pure_steps(k, eps, delta, kov_max_steps=0)
    with_kov = calibrate_pure_steps(k, eps, delta)
    assert with_kov > no_kov
    L = mpmath.log(1 / delta)
    rho_star = (mpmath.sqrt(L + eps) - mpmath.sqrt(L)) ** 2
    assert no_kov >= mpmath.sqrt(2 * rho_star / k) * (1 - mpmath.mpf("1e-20"))  # zCDP closed form


# ---- hostile inputs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: kov_exact_delta(-0.1, 3, 1),
        lambda: kov_exact_delta(0.1, 0, 1),
        lambda: kov_exact_delta(0.1, 2.0, 1),
        lambda: kov_exact_delta(float("nan"), 2, 1),
        lambda: kov_exact_delta(0.1, 2, float("inf")),
        lambda: kov_exact_delta(0.1, True, 1),
        lambda: kov_exact_delta(0.1, 2, 1, delta0=1),
        lambda: kov_exact_delta("0.1", 2, 1),
        lambda: certify_pure([], 1e-5),
        lambda: certify_pure("0.1", 1e-5),
        lambda: certify_pure([0.1, -0.1], 1e-5),
        lambda: certify_pure([0.1], 0),
        lambda: certify_pure([0.1], 1),
        lambda: calibrate_pure_steps(0, 1, 1e-5),
        lambda: calibrate_pure_steps(3, 0, 1e-5),
        lambda: calibrate_pure_steps(3, float("nan"), 1e-5),
        lambda: calibrate_pure_steps(3, 1, float("nan")),
        lambda: advanced_composition(0.1, 3, 0),
        lambda: advanced_composition(0.1, 3, 1e-5, delta=1),
        lambda: Bgm21Ledger().record_gaussian(1, 0, ["b"]),
        lambda: Bgm21Ledger().record_report_noisy_min(-1, 1, ["b"]),
        lambda: Bgm21Ledger().record_report_noisy_min(1, 1, []),
        lambda: Bgm21Ledger().record_report_noisy_min(1, 1, [["unhashable"]]),
        lambda: Bgm21Ledger().certified(1, 1e-5),
    ],
)
def test_hostile_inputs_raise(call):
    with pytest.raises((ValueError, TypeError)):
        call()


def test_eps0_zero_and_edge_values():
    assert kov_exact_delta(0, 5, 0) == 0
    assert certify_pure([0, 0], 1e-5).epsilon == 0
    assert kov_exact_epsilon(mpmath.mpf("0.1"), 5, mpmath.mpf("0.999999")) == 0  # δ ≥ TV: ε = 0


# ---- ledger --------------------------------------------------------------------------------------------


def test_ledger_report_noisy_min_matches_selection_and_algorithm1_dependence():
    ledger = Bgm21Ledger()
    eps_target, delta = mpmath.mpf(1), mpmath.mpf("1e-5")
    # Algorithm 1, one round r = 3: release (r, t') reads batches B_r^0..B_r^t'; a record of B_r^0 pays for all 8
    r = 3
    steps = 2**r
    scale = mpmath.mpf(4)
    for t_release in range(steps):
        ledger.record_report_noisy_min(mpmath.mpf("0.05"), scale, [(r, t) for t in range(t_release + 1)])
    assert ledger.releases[0].cost == 2 * mpmath.mpf("0.05") / scale
    assert abs(float(ledger.releases[0].cost) - report_noisy_min_epsilon(0.05, 4.0)) < 1e-15
    report = ledger.certified(eps_target, delta)
    assert report.worst_batch == (r, 0)
    assert report.per_batch[(r, 0)].pure_epsilons == tuple([mpmath.mpf("0.025")] * steps)
    assert report.per_batch[(r, steps - 1)].pure_epsilons == (mpmath.mpf("0.025"),)
    assert report.epsilon == certify_pure([mpmath.mpf("0.025")] * steps, delta).epsilon
    assert report.meets_target and report.route.startswith("pure:")


def test_ledger_gaussian_parallel_composition_and_target():
    ledger = Bgm21Ledger()
    delta = mpmath.mpf("1e-5")
    sigma = 2 * mpmath.sqrt(mpmath.log(1 / delta)) / mpmath.mpf(1)  # bgm21 σ = 2Δ√log(1/δ)/ε, Δ = 1, ε = 1
    ledger.record_gaussian(1, sigma, "B0")
    ledger.record_gaussian(1, sigma, "B1")
    ledger.record_gaussian(1, sigma, "B1")  # Algorithm 6, t ≥ 1: two releases on the same batch
    report = ledger.certified(1, delta)
    mu1 = 1 / sigma
    assert report.worst_batch == "B1" and report.route == "gdp_exact"
    assert abs(report.epsilon - gaussian_epsilon(delta, mu1 * mpmath.sqrt(2))) <= mpmath.mpf("1e-25")
    assert report.per_batch["B0"].epsilon == gaussian_epsilon(delta, mu1)
    assert report.meets_target
    assert not ledger.certified(mpmath.mpf("0.1"), delta).meets_target


def test_ledger_mixed_batch_uses_the_best_valid_route():
    ledger = Bgm21Ledger()
    delta = mpmath.mpf("1e-6")
    ledger.record_report_noisy_min(mpmath.mpf("0.1"), 1, ["B"])
    ledger.record_gaussian(1, 5, ["B"])
    cert = ledger.certified(10, delta).per_batch["B"]
    assert set(cert.routes) == {"zcdp", "basic_pure+gdp_exact", "pure(delta/2)+gdp_exact(delta/2)"}
    assert cert.epsilon == min(cert.routes.values())
    assert cert.routes["basic_pure+gdp_exact"] == mpmath.mpf("0.2") + gaussian_epsilon(delta, mpmath.mpf("0.2"))
    assert math.isfinite(float(cert.epsilon))


def test_ledger_single_batch_release_composes_not_parallel():
    # the same batch read by many releases must pay for all of them: certified ε grows with their count
    delta = mpmath.mpf("1e-5")
    eps_by_count = []
    for count in (1, 4, 16):
        ledger = Bgm21Ledger()
        for _ in range(count):
            ledger.record_report_noisy_min(mpmath.mpf("0.1"), 1, ["B"])
        ledger.record_report_noisy_min(mpmath.mpf("0.1"), 1, ["other"])
        eps_by_count.append(ledger.certified(5, delta).epsilon)
    # two steps of 0.1: basic gives 0.2, the exact composition at δ = 1e-5 slightly less
    assert mpmath.mpf("0.1999") < eps_by_count[0] <= mpmath.mpf("0.2")
    assert eps_by_count[0] < eps_by_count[1] < eps_by_count[2]

