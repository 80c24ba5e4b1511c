"""reference.accounting.calibration (generic and Gaussian calibration) and the papers' noise formulas
(reference/algorithms/<paper>_privacy.py).

Reference values are the ones the specs print (dpzero.md §4, §5.1–§5.3, §8 T17/T18/T20/T38; zo_o2nc.md §2.1, §5,
§8 tests 29/31/33; nsnc_improved.md §5.2, §9 tests 14/15; spider_sosp.md §2.4, §5 items 6–7, §8 T18/T22–T25;
bgm21.md §5.3, §5.5, §8 tests 11/12), each asserted to the digits the spec gives.
"""

import math
import warnings
from decimal import Decimal

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference.accounting import calibration as cal
from reference.accounting.accountant import RdpAccountant
from reference.accounting.conversions import epsilon_from_rdp
from reference.accounting.errors import AccountingError, OrderGridWarning
from reference.accounting.events import GaussianEvent, NeighbouringRelation, PoissonSampledEvent
from reference.accounting.gaussian import gaussian_delta, gaussian_epsilon, gaussian_mu
from reference.accounting.rdp import DEFAULT_ORDERS, rdp_poisson_gaussian, rdp_tree_exact
from reference.algorithms import (
    bgm21_privacy,
    dpzero_privacy,
    nsnc_improved_privacy,
    spider_sosp_privacy,
    zo_o2nc_privacy,
)
from reference.fast import conversions as fast_conversions
from reference.fast import rdp as fast_rdp
from reference.mechanisms import participation_count
from reference.precision import working_precision

mpf = mpmath.mpf


def close(value, expected, rel):
    """|value − expected| ≤ rel·|expected|, with expected given as a decimal string or number."""
    expected = mpf(expected)
    return abs(mpf(value) - expected) <= rel * abs(expected)


def matches_printed(value, printed: str) -> bool:
    """``value`` rounds to the decimal string ``printed``: |value − printed| ≤ half a unit in its last digit."""
    half_unit = mpf(5) * mpf(10) ** (Decimal(printed).as_tuple().exponent - 1)
    with working_precision(40):
        return abs(mpf(value) - mpf(printed)) <= half_unit * (1 + mpf("1e-12"))


# ---------------------------------------------------------------------------------------------------
# calibrate (generic)


def test_calibrate_inverse_function_never_overshoots_and_is_tight():
    calls = []

    def eps(z):
        calls.append(z)
        return 1 / z

    with working_precision(40):
        z = cal.calibrate(eps, 2, rel_tol=1e-12)
        assert isinstance(z, mpmath.mpf)
        assert 1 / z <= 2  # never overshoots
        assert z - mpf("0.5") <= mpf("1e-12") * z  # and is within rel_tol of the exact answer 1/2
        assert z >= mpf("0.5")


def test_calibrate_starts_at_one_and_doubles():
    seen = []
    cal.calibrate(lambda z: seen.append(z) or 10 / z, 1, rel_tol=1e-3)
    assert seen[:5] == [1, 2, 4, 8, 16]  # 10/16 ≤ 1 is the first bracket
    seen.clear()
    cal.calibrate(lambda z: seen.append(z) or 1 / (10 * z), 1, rel_tol=1e-3)
    assert seen[:5] == [1, mpf(1) / 2, mpf(1) / 4, mpf(1) / 8, mpf(1) / 16]


def test_calibrate_good_start_needs_few_evaluations():
    count = [0]

    def eps(z):
        count[0] += 1
        return 3 / z

    with working_precision(30):
        z = cal.calibrate(eps, 1, start=mpf(3) * (1 + mpf("1e-11")), initial_step=1 + mpf("1e-10"), rel_tol=1e-10)
    assert 3 / z <= 1 and z <= 3 * (1 + mpf("2e-10"))
    assert count[0] <= 6


def test_calibrate_unreachable_target_raises():
    with pytest.raises(AccountingError, match="unreachable"):
        cal.calibrate(lambda z: 1 + 1 / z, 0.5)


def test_calibrate_target_met_at_lower_bound_raises():
    with pytest.raises(AccountingError, match="no bracket"):
        cal.calibrate(lambda z: 1 / z, 5, lower=1, upper=100)


def test_calibrate_detects_non_monotone_function():
    # increasing in z: seen while walking up from z = 1
    with pytest.raises(AccountingError, match="not non-increasing"):
        cal.calibrate(lambda z: z, 0.5)
    # a bump inside the bracket [2, 4] (ε(2) = 1.25 > 1 ≥ ε(4)): the midpoint 3 gives 20
    with pytest.raises(AccountingError, match="not non-increasing"):
        cal.calibrate(lambda z: 20 if 2.5 < z < 3.5 else 10 / z**3, 1)


@pytest.mark.parametrize("value, match", [(float("nan"), "nan"), (-0.5, "negative")])
def test_calibrate_refuses_nan_and_negative_epsilon(value, match):
    with pytest.raises(AccountingError, match=match):
        cal.calibrate(lambda z: value, 1)


def test_calibrate_refuses_non_real_epsilon():
    with pytest.raises(TypeError, match="epsilon_of_noise"):
        cal.calibrate(lambda z: "1.0", 1)


def test_calibrate_iteration_cap():
    with pytest.raises(AccountingError, match="max_iterations"):
        cal.calibrate(lambda z: 1 / z, 1, rel_tol=1e-15, max_iterations=10)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"target_epsilon": 0}, "target_epsilon"),
        ({"target_epsilon": float("nan")}, "target_epsilon"),
        ({"target_epsilon": 1, "lower": -1}, "lower"),
        ({"target_epsilon": 1, "lower": 2, "upper": 1}, "lower"),
        ({"target_epsilon": 1, "rel_tol": 0}, "rel_tol"),
        ({"target_epsilon": 1, "initial_step": 1}, "initial_step"),
        ({"target_epsilon": 1, "max_iterations": 1}, "max_iterations"),
    ],
)
def test_calibrate_validates_inputs(kwargs, name):
    target = kwargs.pop("target_epsilon")
    with pytest.raises(ValueError, match=name):
        cal.calibrate(lambda z: 1 / z, target, **kwargs)


def test_calibrate_reemits_only_the_final_warnings():
    def eps(z):
        if z < 1:
            warnings.warn("trial point warning", UserWarning)
        else:
            warnings.warn("final point warning", OrderGridWarning)
        return 1 / z

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        z = cal.calibrate(eps, 1)
    assert z == 1
    messages = [str(w.message) for w in caught]
    assert messages == ["final point warning"]
    assert caught[0].category is OrderGridWarning


# ---------------------------------------------------------------------------------------------------
# Round trip: calibration never overshoots (float64 fast path, Hypothesis)


def fast_epsilon(z, q, steps, delta, orders):
    alphas = np.asarray([float(a) for a in orders])
    rdp = fast_rdp.rdp_gaussian(alphas, z) if q == 1 else fast_rdp.rdp_poisson_gaussian(alphas, q, z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        eps, _ = fast_conversions.epsilon_from_rdp(alphas, steps * np.asarray(rdp), delta)
    return float(eps)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    target=st.floats(0.1, 20),
    delta=st.sampled_from([1e-3, 1e-5, 1e-8]),
    q=st.sampled_from([1.0, 0.5, 0.1, 0.01, 0.001]),
    steps=st.sampled_from([1, 10, 100, 1000, 10_000]),
)
def test_calibration_round_trip_never_overshoots_float64(target, delta, q, steps):
    rel_tol = 1e-8
    orders = DEFAULT_ORDERS

    def eps(z):
        return fast_epsilon(float(z), q, steps, delta, orders)

    z = cal.calibrate(eps, target, rel_tol=rel_tol)
    assert eps(z) <= target  # never overshoots
    assert eps(z * (1 - mpf(rel_tol))) > target  # and is within rel_tol of the smallest such z


def test_calibrate_gaussian_noise_rdp_full_batch_mpmath():
    # q = 1: RDP = T·α/(2z²); the calibrated z meets the budget by the independent conversion and is tight.
    with working_precision(40):
        for target, delta, steps in [(1, mpf("1e-5"), 1), (2, mpf("1e-5"), 100), (8, mpf("1e-8"), 10)]:
            z = cal.calibrate_gaussian_noise(target, delta, steps=steps)

            def eps(noise):
                rdp = [steps * a / (2 * noise**2) for a in DEFAULT_ORDERS]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", OrderGridWarning)
                    return epsilon_from_rdp(DEFAULT_ORDERS, rdp, delta)[0]

            assert eps(z) <= target
            assert eps(z * (1 - mpf("1e-10"))) > target


def test_calibrate_gaussian_noise_poisson_mpmath_agrees_with_float64():
    q, steps, delta, target = mpf("0.01"), 1000, mpf("1e-5"), 1
    with working_precision(30):
        z = cal.calibrate_gaussian_noise(target, delta, steps=steps, sampling_probability=q)
        ledger = RdpAccountant(relation=NeighbouringRelation.ADD_OR_REMOVE_ONE, orders=DEFAULT_ORDERS)
        ledger.compose(PoissonSampledEvent(q, GaussianEvent(z)), steps)
        assert ledger.get_epsilon(delta) <= target
    z_fast = cal.calibrate(lambda v: fast_epsilon(float(v), 0.01, steps, 1e-5, DEFAULT_ORDERS), 1, rel_tol=1e-10)
    assert close(z, z_fast, 1e-8)


def test_calibrate_gaussian_noise_gdp_exact():
    with working_precision(40):
        for target, delta, steps in [(2, mpf("1e-5"), 448), (1, mpf("1e-6"), 1), (0.5, mpf("1e-3"), 10_000)]:
            z = cal.calibrate_gaussian_noise(target, delta, steps=steps, accountant="gdp_exact")
            mu = mpmath.sqrt(steps) / z
            assert gaussian_delta(target, mu) <= delta  # never overshoots
            assert close(gaussian_delta(target, mu), delta, mpf("1e-30"))  # and is exact
        # tighter than the RDP route for the same composition
        z_rdp = cal.calibrate_gaussian_noise(2, mpf("1e-5"), steps=448)
        z_gdp = cal.calibrate_gaussian_noise(2, mpf("1e-5"), steps=448, accountant="gdp_exact")
        assert z_gdp < z_rdp


def test_calibrate_gaussian_noise_rejects_bad_input():
    with pytest.raises(ValueError, match="gdp_exact"):
        cal.calibrate_gaussian_noise(1, 1e-5, sampling_probability=0.1, accountant="gdp_exact")
    with pytest.raises(ValueError, match="accountant"):
        cal.calibrate_gaussian_noise(1, 1e-5, accountant="prv")
    with pytest.raises(ValueError, match="delta"):
        cal.calibrate_gaussian_noise(1, 1.5)
    with pytest.raises(ValueError, match="sampling_probability"):
        cal.calibrate_gaussian_noise(1, 1e-5, sampling_probability=0)
    with pytest.raises(ValueError, match="relation"):
        cal.calibrate_gaussian_noise(1, 1e-5, relation="swap")
    with pytest.raises(ValueError):  # Poisson subsampling is not valid under replace-one
        cal.calibrate_gaussian_noise(1, 1e-5, sampling_probability=0.1, relation="replace_one")


def test_anchor_single_gaussian_rdp_calibration():
    # anchors.md §10: σ = 4.530877117 is exactly (1, 1e-6) by the RDP route (optimised over real α). On the
    # default grid the calibrated z can only be larger (a coarser minimum), and by little.
    with working_precision(40):
        z = cal.calibrate_gaussian_noise(1, mpf("1e-6"))
    assert z >= mpf("4.530877117") * (1 - mpf("1e-9"))
    assert z <= mpf("4.530877117") * 1.001


# ---------------------------------------------------------------------------------------------------
# dpzero


def test_dpzero_sigma_reference_value():
    # dpzero.md §5.1 / T17: C = 1, n = 1000, T = 448, ε = 2, δ = 1e-5 ⇒ σ = 0.2091569102; Δ = 2C/n.
    with working_precision(40):
        sigma = dpzero_privacy.dpzero_sigma(1, 1000, 448, 2, mpf("1e-5"))
        assert matches_printed(sigma, "0.2091569102")
        lemma = dpzero_privacy.dpzero_lemma22_sigma(mpf(2) / 1000, 448, 2, mpf("1e-5"))
        assert abs(sigma - lemma) <= mpf("1e-35")
        direct = 4 * mpmath.sqrt(2 * 448 * mpmath.log(mpmath.e + 2 / mpf("1e-5"))) / (1000 * 2)
        assert abs(sigma - direct) <= mpf("1e-35")


@pytest.mark.parametrize(
    "eps, delta, mu_exact, mu_lemma22",
    [
        (2, "1e-5", "0.5015516892", "0.2023936046"),
        (6, "1e-5", "1.3095258394", "0.5815725311"),
        (2, "1e-6", "0.4483347404", "0.1856399163"),
        (1, "1e-5", "0.2680511232", "0.1041985432"),
    ],
)
def test_dpzero_gdp_exact_and_lemma22_mu(eps, delta, mu_exact, mu_lemma22):
    # dpzero.md §5.2: the composition is μ = √T·Δ/σ GDP; T and Δ cancel.
    steps, sens = 448, mpf(2) / 1000
    with working_precision(40):
        delta = mpf(delta)
        mu_gdp = mpmath.sqrt(steps) * sens / dpzero_privacy.dpzero_gdp_exact_sigma(sens, steps, eps, delta)
        mu_l22 = mpmath.sqrt(steps) * sens / dpzero_privacy.dpzero_lemma22_sigma(sens, steps, eps, delta)
        assert matches_printed(mu_gdp, mu_exact)
        assert matches_printed(mu_l22, mu_lemma22)
        assert gaussian_delta(eps, mu_gdp) <= delta
        assert gaussian_delta(eps, mu_l22) <= delta  # Lemma 2.2 is valid here, just loose


def test_dpzero_lemma22_slack_at_eps2():
    # dpzero.md §4: at ε = 2, δ = 1e-5 Lemma 2.2's noise is 2.48× the tight GDP noise; its exact ε is 0.735.
    with working_precision(40):
        delta = mpf("1e-5")
        ratio = dpzero_privacy.dpzero_lemma22_sigma(1, 100, 2, delta) / dpzero_privacy.dpzero_gdp_exact_sigma(1, 100, 2, delta)
        assert round(float(ratio), 2) == 2.48
        mu = 10 / dpzero_privacy.dpzero_lemma22_sigma(1, 100, 2, delta)
        assert round(float(gaussian_epsilon(delta, mu)), 3) == 0.735


def test_dpzero_lemma22_counterexample_and_warning():
    # dpzero.md §4 / T18 / E5: ε = 300, δ = 1e-6 gives μ = 24.007 and δ_exact = 0.2968 > δ.
    with working_precision(40):
        with pytest.warns(UserWarning, match="E5"):
            sigma = dpzero_privacy.dpzero_lemma22_sigma(1, 1, 300, mpf("1e-6"))
        mu = 1 / sigma
        assert round(float(mu), 3) == 24.007
        assert round(float(gaussian_delta(300, mu)), 4) == 0.2968
        with pytest.raises(ValueError, match="epsilon"):
            dpzero_privacy.dpzero_lemma22_sigma(1, 1, 300, mpf("1e-6"), strict=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            dpzero_privacy.dpzero_lemma22_sigma(1, 1, 80, mpf("1e-6"))  # no warning inside the verified range


@pytest.mark.parametrize(
    "delta, first_failure", [("0.5", 83), ("0.1", 91), ("1e-3", 130), ("1e-5", 169), ("1e-6", 189), ("1e-10", 267)]
)
def test_dpzero_lemma22_first_failure(delta, first_failure):
    # dpzero.md §4 Lemma 2.2: "first failures at ε ≈ 83 (δ = 0.5), 91, 130, 169, 189, 267 (δ = 1e-10)".
    with working_precision(30):
        delta = mpf(delta)
        eps = dpzero_privacy.dpzero_lemma22_failure_epsilon(delta)
        assert round(float(eps)) == first_failure
        mu = lambda e: e / (2 * mpmath.sqrt(2 * mpmath.log(mpmath.e + e / delta)))  # noqa: E731
        assert gaussian_delta(eps, mu(eps)) <= delta < gaussian_delta(eps * 1.001, mu(eps * 1.001))


OPACUS_TABLE = [
    # dpzero.md §5.3: (q, z at ε = 2, achieved, z at ε = 6, achieved), δ = 1e-5, T = 10 000
    (0.0625, 13.515625, 1.9922, 5.156250, 5.9928),  # SST-2, RTE (n = 1024)
    (0.025, 5.449219, 1.9951, 2.167969, 5.9931),  # SST-5 (n = 2560)
    (64 / 1536, 9.023438, 1.9944, 3.481445, 5.9948),  # SNLI, MNLI (n = 1536)
    (64 / 3072, 4.570312, 1.9904, 1.848145, 5.9938),  # TREC (n = 3072)
]


@pytest.mark.parametrize("q, z2, eps2, z6, eps6", OPACUS_TABLE)
def test_dpzero_opacus_table_float64(q, z2, eps2, z6, eps6):
    for target, z_expected, eps_expected in [(2, z2, eps2), (6, z6, eps6)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OrderGridWarning)
            z = dpzero_privacy.dpzero_opacus_noise_multiplier(target, 1e-5, q, 10_000)
            achieved = dpzero_privacy.dpzero_opacus_epsilon(z, q, 10_000, 1e-5)
        assert abs(z - z_expected) <= 1e-6  # the table prints 6 decimals of a dyadic rational
        assert round(achieved, 4) == eps_expected
        assert target - 0.01 < achieved <= target  # Opacus's stopping rule


def test_dpzero_opacus_sst2_mpmath_and_experiment_noise():
    # The mpmath RDP gives the same bisection path; T38: noise sd 2·z·C/B = 84.4727 at C = 200, B = 64.
    with working_precision(30), warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        z = dpzero_privacy.dpzero_opacus_noise_multiplier(2, mpf("1e-5"), mpf("0.0625"), 10_000, arithmetic="mpmath")
        achieved = dpzero_privacy.dpzero_opacus_epsilon(z, mpf("0.0625"), 10_000, mpf("1e-5"), arithmetic="mpmath")
    assert z == mpf("13.515625")
    assert close(achieved, dpzero_privacy.dpzero_opacus_epsilon(13.515625, 0.0625, 10_000, 1e-5), 1e-10)
    assert round(float(2 * z * 200 / 64), 4) == 84.4727


def test_dpzero_dp_accounting_cross_check():
    # dpzero.md T20: "dp_accounting's RDP accountant gives the same eps to 1e-3": 1.99225, 5.99284, 1.99043.
    # Ours (float64 and mpmath) gives 5.992823 for the second: dp_accounting's fractional-order series is 4.2e-6
    # too large (relative) at α = 4.6, the optimal order there, and the spec copied its value. Our RDP at α = 4.6
    # agrees with an independent quadrature of the defining integral to 30 digits.
    cases = [(0.0625, 13.515625, "1.99225", "1.992246"), (0.0625, 5.15625, "5.99284", "5.992823"), (1 / 48, 4.570312, "1.99043", "1.990427")]
    for q, z, spec, ours in cases:
        value = fast_epsilon(z, q, 10_000, 1e-5, DEFAULT_ORDERS)
        assert abs(value - float(spec)) <= 1e-3
        assert round(value, 6) == float(ours)
    with working_precision(30):
        q, z, alpha = mpf("0.0625"), mpf("5.15625"), mpf("4.6")
        series = rdp_poisson_gaussian(alpha, q, z)
        density = lambda x: (1 - q) * mpmath.npdf(x, 0, z) + q * mpmath.npdf(x, 1, z)  # noqa: E731
        integral = mpmath.quad(lambda x: density(x) ** alpha * mpmath.npdf(x, 0, z) ** (1 - alpha), [-mpmath.inf, 0, 1, mpmath.inf])
        assert close(series, mpmath.log(integral) / (alpha - 1), 1e-25)


def test_dpzero_opacus_bisection_matches_its_description(monkeypatch):
    # Opacus: first evaluation at 20 (σ_high = 10 doubled), then bisection keeping σ_high; every trial is dyadic.
    seen = []
    original = dpzero_privacy.dpzero_opacus_epsilon

    def spy(sigma, *args, **kwargs):
        seen.append(sigma)
        return original(sigma, *args, **kwargs)

    monkeypatch.setattr(dpzero_privacy, "dpzero_opacus_epsilon", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        z = dpzero_privacy.dpzero_opacus_noise_multiplier(2, 1e-5, 0.0625, 10_000)
    assert seen[0] == 20
    assert seen[1] == 10  # (0 + 20)/2
    assert z in seen
    assert all(float(s * 2**20).is_integer() for s in seen)


def test_dpzero_opacus_too_low_budget():
    with pytest.raises(AccountingError, match="too low"), warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        dpzero_privacy.dpzero_opacus_noise_multiplier(1e-9, 1e-12, 1.0, 10**6)


# ---------------------------------------------------------------------------------------------------
# zo_o2nc


@pytest.mark.parametrize("T, sigma", [(536, "0.264565"), (938, "0.157768")])
def test_zo_o2nc_cor44_golden_values(T, sigma):
    # zo_o2nc.md §2.1 golden values (M = 1e5, d = 10, L = 1, δ = 0.1, ρ = 1, F* = 1): B1 = T + 1, B2 = 1.
    value = zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, T, T + 1, 1, 1, count_rule="paper_2lnT")
    assert matches_printed(value, sigma)
    assert zo_o2nc_privacy.zo_o2nc_cor44_sigma_as_printed(10, 1, T, T + 1, 1, 1) == value
    # the exact count rule needs less noise here (Thm 4.9 settings, T ∉ {1, 2, 4})
    assert zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, T, T + 1, 1, 1) < value


def test_zo_o2nc_cor44_formula_and_refusals():
    # zo_o2nc.md §8 test 29: σ = 4√(2 ln T)dL/(B2·T·ρ) to 1e-12; raises if B1 < T·B2/2 or T = 1 (paper rule).
    with working_precision(30):
        for d, L, T, B2, rho in [(10, 1, 536, 1, 1), (3, 2.5, 17, 4, 0.3), (100, 0.1, 2, 7, 5)]:
            B1 = (T * B2 + 1) // 2
            value = zo_o2nc_privacy.zo_o2nc_cor44_sigma(d, L, T, B1, B2, rho, count_rule="paper_2lnT")
            expected = 4 * mpmath.sqrt(2 * mpmath.log(T)) * d * mpf(L) / (B2 * T * mpf(rho))
            assert close(value, expected, 1e-12)
    with pytest.raises(ValueError, match="B1"):
        zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, 100, 49, 1, 1)
    with pytest.raises(ValueError, match="B1"):
        zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, 100, 49, 1, 1, count_rule="paper_2lnT")
    with pytest.raises(ValueError, match="T"):
        zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, 1, 2, 1, 1, count_rule="paper_2lnT")
    with pytest.raises(ValueError, match="count_rule"):
        zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, 8, 8, 1, 1, count_rule="2lnT")
    with pytest.raises(ValueError, match="rho"):
        zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, 8, 8, 1, 0)
    assert zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, 1, 2, 1, 1) > 0  # T = 1 is private under the exact rule


def test_zo_o2nc_exact_rule_matches_participation_counts():
    # σ² ρ² = max_q s_q² c_q(T), counted leaf by leaf from the Fenwick chains (reference.mechanisms).
    with working_precision(30):
        for T in range(1, 70):
            for B1, B2 in [((T + 1) // 2, 1), (T + 1, 1), (3 * T, 2)]:
                d, L, rho = 5, mpf("1.5"), mpf("0.7")
                s = [2 * d * L / B1] + [4 * d * L / (B2 * T)] * (T - 1)
                worst = max(s[q - 1] ** 2 * participation_count(q, T) for q in range(1, T + 1))
                sigma = zo_o2nc_privacy.zo_o2nc_cor44_sigma(d, L, T, B1, B2, rho)
                assert close(sigma**2 * rho**2, worst, 1e-25)


def test_zo_o2nc_exact_rule_against_tree_rdp():
    # Helper A's exact tree RDP: α/2·max_q s_q² Σ_{b: q ∈ N_b} 1/σ_b² equals αρ²/2 at the exact σ.
    with working_precision(30):
        for T in (2, 4, 7, 16, 33):
            d, L, rho, B1, B2 = 3, mpf(1), mpf("0.5"), T + 1, 1
            sigma = zo_o2nc_privacy.zo_o2nc_cor44_sigma(d, L, T, B1, B2, rho)
            s = [2 * d * L / B1] + [4 * d * L / (B2 * T)] * (T - 1)
            s = np.array(s, dtype=object)  # object arrays keep mpmath precision (a list would become float64)
            stds = np.array([sigma] * T, dtype=object)
            for order in (mpf("1.5"), mpf(4)):
                assert close(rdp_tree_exact(order, s, stds), order * rho**2 / 2, 1e-25)


def test_zo_o2nc_erratum_e3_ratios():
    # zo_o2nc.md §4 Cor 4.4 / E3: with s_1 = s_2 (B1 = T·B2/2) the paper's σ is over budget at T = 2 (×1.443) and
    # T = 4 (×1.082); under the Thm 4.9 settings (B1 = T + 1, B2 = 1) the paper's σ is private for every T ≥ 2.
    with working_precision(30):
        for T, ratio in [(2, "1.443"), (4, "1.082")]:
            exact = zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, T, T // 2, 1, 1)
            paper = zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, T, T // 2, 1, 1, count_rule="paper_2lnT")
            assert round(float((exact / paper) ** 2), 3) == float(ratio)
        for T in range(2, 4097):
            assert zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, T, T + 1, 1, 1) <= zo_o2nc_privacy.zo_o2nc_cor44_sigma(
                10, 1, T, T + 1, 1, 1, count_rule="paper_2lnT"
            )
        for T in [3, 5, 6, 7, 8, 100, 1000]:  # s_1 = s_2: the paper is fine outside {1, 2, 4}
            B1 = T // 2 if T % 2 == 0 else (T + 1) // 2
            assert zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, T, B1, 1, 1) <= zo_o2nc_privacy.zo_o2nc_cor44_sigma(
                10, 1, T, B1, 1, 1, count_rule="paper_2lnT"
            )


def test_zo_o2nc_conversion_is_the_optimum_over_orders():
    # zo_o2nc.md §5 item 6 / test 33: ρ²/2 + ρ√(2 ln 1/δ) = min_α [αρ²/2 + ln(1/δ)/(α−1)], attained at α*.
    with working_precision(40):
        for rho, delta in [(mpf(1), mpf("1e-5")), (mpf("0.1"), mpf("1e-10")), (mpf(5), mpf("0.01"))]:
            eps = zo_o2nc_privacy.zo_o2nc_rdp_to_dp(rho, delta)
            ell = mpmath.log(1 / delta)
            alpha_star = 1 + mpmath.sqrt(2 * ell) / rho
            f = lambda a: a * rho**2 / 2 + ell / (a - 1)  # noqa: E731
            assert close(eps, f(alpha_star), 1e-35)
            assert f(alpha_star * (1 + mpf("1e-6"))) > eps and f(alpha_star * (1 - mpf("1e-6"))) > eps
            # Helper B's Mironov conversion on a grid containing α* gives the same ε.
            orders = [alpha_star / 2 + mpf("0.5"), alpha_star, 2 * alpha_star]
            mironov, best = epsilon_from_rdp(orders, [a * rho**2 / 2 for a in orders], delta, method="mironov")
            assert best == alpha_star and close(mironov, eps, 1e-35)
            # the inverse round-trips (zo_o2nc_dp_to_rho)
            assert close(zo_o2nc_privacy.zo_o2nc_dp_to_rho(eps, delta), rho, 1e-30)


def test_zo_o2nc_paper_conversion_condition_e11():
    # 2ρ√ln(1/δ) ≥ the exact ε whenever δ ≤ e^{−ρ²} (grid), and is refused otherwise.
    with working_precision(30):
        for rho in [mpf("0.01"), mpf("0.3"), mpf(1), mpf(2), mpf(3)]:
            for delta in [mpf("0.5"), mpf("1e-2"), mpf("1e-5"), mpf("1e-10"), mpf("1e-20")]:
                if delta <= mpmath.exp(-(rho**2)):
                    assert zo_o2nc_privacy.zo_o2nc_paper_dp_epsilon(rho, delta) >= zo_o2nc_privacy.zo_o2nc_rdp_to_dp(rho, delta)
                else:
                    with pytest.raises(ValueError, match="delta"):
                        zo_o2nc_privacy.zo_o2nc_paper_dp_epsilon(rho, delta)
        # the sharp condition ρ ≤ 2(2 − √2)√ln(1/δ): equality at the boundary, refused just beyond it
        delta = mpf("1e-5")
        boundary = 2 * (2 - mpmath.sqrt(2)) * mpmath.sqrt(mpmath.log(1 / delta))
        at = zo_o2nc_privacy.zo_o2nc_paper_dp_epsilon(boundary, delta, condition="exact")
        assert close(at, zo_o2nc_privacy.zo_o2nc_rdp_to_dp(boundary, delta), 1e-25)
        with pytest.raises(ValueError, match="rho"):
            zo_o2nc_privacy.zo_o2nc_paper_dp_epsilon(boundary * (1 + mpf("1e-20")), delta, condition="exact")


# ---------------------------------------------------------------------------------------------------
# nsnc_improved


def test_nsnc_tree_sigma_formula_and_sigma_one():
    with working_precision(30):
        s, eps, delta = mpf("0.3"), mpf(2), mpf("1e-5")
        for size in (2, 3, 100, 10**6):
            expected = 4 * s * mpmath.sqrt(mpmath.log(size) * mpmath.log(1 / delta)) / eps
            assert close(nsnc_improved_privacy.nsnc_tree_sigma(s, size, eps, delta), expected, 1e-28)
            assert nsnc_improved_privacy.nsnc_tree_sigma_as_printed(s, size, eps, delta) == nsnc_improved_privacy.nsnc_tree_sigma(s, size, eps, delta)
        # E3: Σ = 1 would give σ = 0; the corrected rule uses log 2, the printed one refuses
        assert nsnc_improved_privacy.nsnc_tree_sigma(s, 1, eps, delta) == nsnc_improved_privacy.nsnc_tree_sigma(s, 2, eps, delta) > 0
        with pytest.raises(ValueError, match="tree_size"):
            nsnc_improved_privacy.nsnc_tree_sigma_as_printed(s, 1, eps, delta)


def test_nsnc_tree_mu_is_bitlen_count():
    with working_precision(30):
        for size, bits in [(1, 1), (2, 2), (3, 2), (4, 3), (1023, 10), (1024, 11), (10**6, 20)]:
            assert close(nsnc_improved_privacy.nsnc_tree_mu(2, size, 4), mpmath.sqrt(bits) / 2, 1e-28)


def test_nsnc_paper_tree_calibration_is_conservative():
    # nsnc_improved.md §5.2 / test 15: μ_paper gives δ_GDP(ε) ≤ 1.5e-3·(δ/2) on the spec's grid.
    with working_precision(30):
        for size in (2, 3, 4, 8, 16, 100, 1024, 10**6):
            for delta in (mpf("1e-2"), mpf("1e-5"), mpf("1e-10")):
                for eps in (mpf("0.01"), mpf("0.3"), mpf(1), mpf(4), mpf(10)):
                    sigma = nsnc_improved_privacy.nsnc_tree_sigma(1, size, eps, delta)
                    mu = nsnc_improved_privacy.nsnc_tree_mu(1, size, sigma)
                    assert gaussian_delta(eps, mu) <= mpf("1.5e-3") * delta / 2


def test_nsnc_gdp_calibration_and_reference_profile():
    with working_precision(30):
        assert matches_printed(gaussian_delta(1, 1), "0.12693673750664")  # nsnc_improved.md §9 test 14
        s, size, eps, delta = mpf("0.02"), 147, mpf(2), mpf("1e-5")
        sigma = nsnc_improved_privacy.nsnc_tree_gdp_sigma(s, size, eps, delta)
        mu = nsnc_improved_privacy.nsnc_tree_mu(s, size, sigma)
        assert gaussian_delta(eps, mu) <= delta
        assert close(gaussian_delta(eps, mu), delta, 1e-20)
        assert sigma < nsnc_improved_privacy.nsnc_tree_sigma(s, size, eps, delta)  # exact beats the Prop 2.5 constant 4


# ---------------------------------------------------------------------------------------------------
# spider_sosp

# spider_sosp.md §2.4 fixtures (G, M, ρ, B, d, n, ε, δ); ρ (Hessian-Lipschitz) does not enter the sensitivity.
# ε is kept as a decimal string and turned into an mpf at the test's working precision (``spider``).
FIXTURE_1 = dict(lipschitz=1, smoothness=1, loss_gap=1, d=10, n=10**6, epsilon="1")  # δ = 1e-6
FIXTURE_2 = dict(lipschitz=1, smoothness=1, loss_gap=1, d=100, n=10**5, epsilon="0.1")  # δ = 1e-6
FIXTURE_3 = dict(lipschitz=1, smoothness=1, loss_gap=1, d=2, n=10**5, epsilon="4")  # δ = 1e-5


def spider(fixture, **extra):
    """The fixture's keyword arguments with ε as an mpf at the current working precision."""
    return {**fixture, "epsilon": mpf(fixture["epsilon"]), **extra}


def test_spider_sosp_parameter_fixtures():
    # spider_sosp.md §2.4 numeric fixtures / T18 (each to the digits printed).
    with working_precision(30):
        p = spider_sosp_privacy.spider_sosp_parameters(**spider(FIXTURE_1))
        assert matches_printed(p["alpha"], "0.0245565588") and p["kappa"] == 1 and p["b"] == 1788
        assert matches_printed(p["coef_bt"], "1658.307192") and p["L"] == 21
        assert matches_printed(p["sbar"], "1.20604916e-3")
        p = spider_sosp_privacy.spider_sosp_parameters(**spider(FIXTURE_2))
        assert matches_printed(p["alpha"], "0.1094965247") and matches_printed(p["kappa"], "10.9496524664")
        assert p["b"] == 997 and matches_printed(p["coef_bt"], "913.270995") and p["L"] == 18
        assert matches_printed(p["sbar"], "2.18993049e-3")
        assert p["kappa"] == p["alpha"] * 10 / mpf("0.1")  # the privacy-dominated regime: κ = α√d/ε
        p = spider_sosp_privacy.spider_sosp_parameters(**spider(FIXTURE_3))
        assert matches_printed(p["alpha"], "0.0500115746") and p["kappa"] == 1 and p["b"] == 407
        assert matches_printed(p["coef_bt"], "399.814871")


@pytest.mark.parametrize(
    "fixture, delta, segment, global_",
    [
        (FIXTURE_1, "1e-6", "2.33490042e-2", "3.30204784e-2"),
        (FIXTURE_2, "1e-6", "0.337310081", "0.477028492"),
        (FIXTURE_3, "1e-5", "2.29455259e-2", "3.24498740e-2"),
    ],
)
def test_spider_sosp_gdp_exact_sigma(fixture, delta, segment, global_):
    # spider_sosp.md §2.4 fixtures, exact-GDP sigma, and the round trip T22: δ(ε; Δ_tree/σ) = δ.
    with working_precision(30):
        delta = mpf(delta)
        for scope, expected in [("segment", segment), ("global", global_)]:
            kw = spider(fixture, tree_scope=scope)
            # the notes' exact-GDP σ uses the a-priori count k_adj·L: dpref's "upper_bound" rule
            sigma = spider_sosp_privacy.spider_sosp_sigma("upper_bound", delta=delta, **kw)
            assert matches_printed(sigma, expected)
            mu = spider_sosp_privacy.spider_sosp_mu(sigma, **kw)
            assert gaussian_delta(kw["epsilon"], mu) <= delta
            assert close(gaussian_delta(kw["epsilon"], mu), delta, 1e-20)


def test_spider_sosp_reference_mu_star():
    # spider_sosp.md §5 item 6 reference values of μ*(ε, δ) (used by the gdp_exact rule).
    values = [
        ("0.1", "1e-6", "0.0275446502"),
        ("0.5", "1e-6", "0.1241061490"),
        ("1", "1e-6", "0.2367043807"),
        ("1", "1e-5", "0.2680511232"),
        ("4", "1e-6", "0.8378587571"),
        ("4", "1e-5", "0.9249308977"),
        ("10", "1e-6", "1.8481322058"),
    ]
    with working_precision(30):
        for eps, delta, mu in values:
            assert matches_printed(gaussian_mu(mpf(eps), mpf(delta)), mu)


def test_spider_sosp_lemma38_sigma_fixture_1():
    with working_precision(30):
        kw = spider(FIXTURE_1)
        sigma = spider_sosp_privacy.spider_sosp_sigma("lemma3.8", delta=mpf("1e-6"), **kw)
        assert matches_printed(sigma, "0.21456775")
        assert spider_sosp_privacy.spider_sosp_sigma("lemma3.7", delta=mpf("1e-6"), **kw) == sigma
        # safe there: sbar ≪ 2εα/√d (spider_sosp.md §5 item 7)
        assert gaussian_delta(1, spider_sosp_privacy.spider_sosp_mu(sigma, **kw)) <= mpf("1e-6")


@pytest.mark.parametrize(
    "adjacency, scope, mu, delta_eps",
    [
        ("replace_one", "global", "0.043429448", "1.6588046e-4"),
        ("replace_one", "segment", "0.030709257", "4.8451228e-6"),
        ("zero_out", "global", "0.021714724", "9.4222952e-9"),
        ("zero_out", "segment", "0.015354629", "8.7595552e-14"),
    ],
)
def test_spider_sosp_lemma38_failure_table(adjacency, scope, mu, delta_eps):
    # spider_sosp.md §5 item 7 / T24: the Lemma 3.8 rule on fixture (1,1,1,1,100,1e5,0.1,1e-6), L = 18.
    with working_precision(30):
        kw = spider(FIXTURE_2, adjacency=adjacency, tree_scope=scope)
        sigma = spider_sosp_privacy.spider_sosp_sigma("lemma3.8", delta=mpf("1e-6"), **kw)
        true_mu = spider_sosp_privacy.spider_sosp_mu(sigma, **kw)
        assert matches_printed(true_mu, mu)
        assert matches_printed(gaussian_delta(kw["epsilon"], true_mu), delta_eps)
        if adjacency == "replace_one":
            assert gaussian_delta(kw["epsilon"], true_mu) > mpf("1e-6")  # not private under replace-one
        # closed form in the privacy-dominated regime (sbar = c_adj·εα/√d, σ = 2 ln(1/δ)α/√d):
        # μ = c_adj ε √(k_adj L)/(2 ln(1/δ)). The spec's text drops the 2 (its table, reproduced above, has it).
        c_adj = 2 if adjacency == "replace_one" else 1
        k_adj = 2 if scope == "global" else 1
        assert close(true_mu, c_adj * mpf("0.1") * mpmath.sqrt(k_adj * 18) / (2 * mpmath.log(mpf("1e6"))), 1e-25)


@pytest.mark.parametrize(
    "fixture, adjacency, scope, mu, delta_eps",
    [
        (FIXTURE_1, "replace_one", "global", "1.0065194", "0.12923756"),
        (FIXTURE_1, "replace_one", "segment", "0.71171669", "0.040686859"),
        (FIXTURE_2, "replace_one", "global", "1.2", "0.42410939"),
        (FIXTURE_2, "replace_one", "segment", "0.84852814", "0.29557876"),
        (FIXTURE_2, "zero_out", "global", "0.6", "0.1989724"),
    ],
)
def test_spider_sosp_thm311_is_not_private(fixture, adjacency, scope, mu, delta_eps):
    # spider_sosp.md §5 item 7 / T25: σ = α/√d is refused unless allow_nonprivate=True; then its true privacy.
    with working_precision(30):
        kw = spider(fixture, adjacency=adjacency, tree_scope=scope)
        with pytest.raises(ValueError, match="allow_nonprivate"):
            spider_sosp_privacy.spider_sosp_sigma("thm3.11", delta=mpf("1e-6"), **kw)
        sigma = spider_sosp_privacy.spider_sosp_sigma("thm3.11", delta=mpf("1e-6"), allow_nonprivate=True, **kw)
        true_mu = spider_sosp_privacy.spider_sosp_mu(sigma, **kw)
        assert matches_printed(true_mu, mu)
        assert matches_printed(gaussian_delta(kw["epsilon"], true_mu), delta_eps)


def test_spider_sosp_thm22_rule_is_private():
    # spider_sosp.md §5 item 7 / T23: Theorem 2.2's σ with the true sbar certifies (ε, δ), k_adj ∈ {1, 2}.
    with working_precision(30):
        for fixture in (FIXTURE_1, FIXTURE_2, FIXTURE_3):
            for delta in (mpf("1e-3"), mpf("1e-6"), mpf("1e-10")):
                for scope in ("global", "segment"):
                    for adjacency in ("replace_one", "zero_out"):
                        kw = spider(fixture, adjacency=adjacency, tree_scope=scope)
                        sigma = spider_sosp_privacy.spider_sosp_sigma("thm2.2", delta=delta, **kw)
                        assert gaussian_delta(kw["epsilon"], spider_sosp_privacy.spider_sosp_mu(sigma, **kw)) <= delta
                        assert sigma >= spider_sosp_privacy.spider_sosp_sigma("gdp_exact", delta=delta, **kw)


def test_spider_sosp_rejects_bad_choices():
    with pytest.raises(ValueError, match="rule"):
        spider_sosp_privacy.spider_sosp_sigma("lemma9", delta=1e-6, **spider(FIXTURE_1))
    with pytest.raises(ValueError, match="adjacency"):
        spider_sosp_privacy.spider_sosp_sigma("gdp_exact", delta=1e-6, **spider(FIXTURE_1, adjacency="add_remove"))
    with pytest.raises(ValueError, match="tree_scope"):
        spider_sosp_privacy.spider_sosp_sigma("gdp_exact", delta=1e-6, **spider(FIXTURE_1, tree_scope="local"))
    with pytest.raises(ValueError, match="lipschitz"):
        spider_sosp_privacy.spider_sosp_parameters(**spider(FIXTURE_1, lipschitz=0))


# ---------------------------------------------------------------------------------------------------
# bgm21


def test_bgm21_gaussian_sigma_formula_and_certified_grid():
    # bgm21.md §5.1 and §8 test 11: σ = 2Δ√ln(1/δ)/ε is certified for ε ≤ 10, δ ∈ [1e-12, 0.1].
    with working_precision(30):
        assert close(bgm21_privacy.bgm21_gaussian_sigma(3, 2, mpf("1e-5")), 3 * mpmath.sqrt(mpmath.log(mpf("1e5"))), 1e-28)
        for delta in (mpf("0.1"), mpf("1e-3"), mpf("1e-6"), mpf("1e-9"), mpf("1e-12")):
            for eps in (mpf("0.01"), mpf("0.5"), mpf(2), mpf(5), mpf(10)):
                mu = 1 / bgm21_privacy.bgm21_gaussian_sigma(1, eps, delta)
                assert gaussian_delta(eps, mu) <= delta


@pytest.mark.parametrize(
    "releases, delta, printed, computed",
    [
        (1, "0.1", "11.9", "11.961"), (1, "1e-2", "18.4", "18.457"), (1, "1e-3", "24.5", "24.497"),
        (1, "1e-5", "36.1", "36.087"), (1, "1e-8", "53.0", "52.994"),
        (2, "0.1", "5.13", "5.1218"), (2, "1e-2", "6.25", "6.2482"), (2, "1e-3", "6.98", "6.9780"),
        (2, "1e-5", "7.97", "7.9681"), (2, "1e-8", "8.95", "8.9432"), (2, "1e-12", "9.8", "9.8288"),
    ],
)
def test_bgm21_certified_ranges(releases, delta, printed, computed):
    # bgm21.md §5.3 (one release) and §5.5 (two releases, σ̂ with η_{r,t−1}). The spec prints the limits to 2–3
    # digits, some rounded up past the true limit (e.g. 5.13 where the first failure is 5.1218: δ_exact = 1.004δ
    # at 5.13), so we assert 0.6% agreement with the printed value and 5 digits of our computed limit.
    with working_precision(30):
        delta = mpf(delta)
        value = bgm21_privacy.bgm21_gaussian_certified_epsilon(delta, releases=releases)
        assert abs(value - mpf(printed)) <= mpf("0.006") * mpf(printed)
        assert abs(value - mpf(computed)) <= mpf("5e-4") * mpf(computed)
        scale = mpmath.sqrt(releases) / (2 * mpmath.sqrt(mpmath.log(1 / delta)))
        assert gaussian_delta(value, scale * value) <= delta < gaussian_delta(value * 1.001, scale * value * 1.001)


def test_bgm21_printed_sigma_hat_fails():
    # bgm21.md §5.5 / E10 / test 12: with the printed σ̂ (η_{r,t}) at t = 1, μ = ε√3/(2√ln(1/δ)) and
    # δ_exact/δ = 2.24 at (1, 1e-8), 1.38 at (2, 1e-5), 6.87 at (4, 1e-5).
    with working_precision(30):
        for eps, delta, ratio in [(1, mpf("1e-8"), 2.24), (2, mpf("1e-5"), 1.38), (4, mpf("1e-5"), 6.87)]:
            sigma = bgm21_privacy.bgm21_gaussian_sigma(1, eps, delta)
            mu = mpmath.sqrt(3) / sigma
            assert round(float(gaussian_delta(eps, mu) / delta), 2) == ratio


# ---------------------------------------------------------------------------------------------------
# Validation of the closed forms


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: dpzero_privacy.dpzero_lemma22_sigma(0, 10, 1, 1e-5), "sensitivity"),
        (lambda: dpzero_privacy.dpzero_lemma22_sigma(1, 0, 1, 1e-5), "steps"),
        (lambda: dpzero_privacy.dpzero_lemma22_sigma(1, 10, -1, 1e-5), "epsilon"),
        (lambda: dpzero_privacy.dpzero_lemma22_sigma(1, 10, 1, 1), "delta"),
        (lambda: dpzero_privacy.dpzero_sigma(-1, 10, 10, 1, 1e-5), "clip_threshold"),
        (lambda: dpzero_privacy.dpzero_sigma(1, 0, 10, 1, 1e-5), "n"),
        (lambda: dpzero_privacy.dpzero_gdp_exact_sigma(1, 10, float("inf"), 1e-5), "epsilon"),
        (lambda: dpzero_privacy.dpzero_opacus_noise_multiplier(2, 1e-5, 1.5, 100), "sampling_probability"),
        (lambda: dpzero_privacy.dpzero_opacus_noise_multiplier(2, 1e-5, 0.1, 100, arithmetic="float32"), "arithmetic"),
        (lambda: zo_o2nc_privacy.zo_o2nc_rdp_to_dp(0, 1e-5), "rho"),
        (lambda: zo_o2nc_privacy.zo_o2nc_dp_to_rho(1, 0), "delta"),
        (lambda: zo_o2nc_privacy.zo_o2nc_paper_dp_epsilon(1, 1e-5, condition="loose"), "condition"),
        (lambda: nsnc_improved_privacy.nsnc_tree_sigma(1, 0, 1, 1e-5), "tree_size"),
        (lambda: nsnc_improved_privacy.nsnc_tree_mu(1, 4, 0), "sigma"),
        (lambda: bgm21_privacy.bgm21_gaussian_sigma(1, 1, 0), "delta"),
        (lambda: bgm21_privacy.bgm21_gaussian_certified_epsilon(1e-5, releases=0), "releases"),
    ],
)
def test_closed_forms_validate_inputs(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


def test_closed_forms_return_mpmath():
    with working_precision(40):
        values = [
            dpzero_privacy.dpzero_sigma(1, 1000, 448, 2, 1e-5),
            zo_o2nc_privacy.zo_o2nc_cor44_sigma(10, 1, 536, 537, 1, 1),
            zo_o2nc_privacy.zo_o2nc_rdp_to_dp(1, 1e-5),
            nsnc_improved_privacy.nsnc_tree_sigma(1, 8, 1, 1e-5),
            spider_sosp_privacy.spider_sosp_sigma("gdp_exact", delta=1e-6, **spider(FIXTURE_1)),
            bgm21_privacy.bgm21_gaussian_sigma(1, 1, 1e-5),
        ]
    assert all(isinstance(v, mpmath.mpf) and mpmath.isfinite(v) and v > 0 for v in values)
    assert math.isfinite(dpzero_privacy.dpzero_opacus_epsilon(1.0, 0.01, 100, 1e-5))
