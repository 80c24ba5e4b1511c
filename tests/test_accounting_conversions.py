"""RDP/zCDP → (ε, δ) conversions, composition theorems and their float64 twins
(reference/accounting/conversions.py, composition.py, reference/fast/conversions.py; anchors.md §10, bgm21.md §4–§5)."""

from __future__ import annotations

import math
import warnings

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.accounting.composition import (
    advanced_composition,
    basic_composition,
    calibrate_pure_steps,
    certify_pure,
    zcdp_of_pure,
)
from reference.accounting.conversions import (
    delta_from_rdp,
    delta_from_zcdp,
    epsilon_from_rdp,
    epsilon_from_zcdp,
    epsilon_from_zcdp_simple,
)
from reference.accounting.errors import AccountingError, OrderGridWarning
from reference.accounting.gaussian import gaussian_delta, gaussian_epsilon
from reference.fast import conversions as fast
from reference.precision import logsumexp, working_precision

DPS = 40
FUZZ = settings(max_examples=30, deadline=None)
# dp_accounting's DEFAULT_RDP_ORDERS (anchors.md §1), as exact decimals
ORDERS = [mpmath.mpf(1) + mpmath.mpf(x) / 10 for x in range(1, 100)] + [mpmath.mpf(a) for a in range(11, 64)]
ORDERS += [mpmath.mpf(a) for a in (128, 256, 512, 1024)]
FLOAT_ORDERS = [1 + x / 10 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]


def quiet(fn, *args, **kwargs):
    """Call fn with OrderGridWarning silenced (tests that are not about the warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        return fn(*args, **kwargs)


def gaussian_curve(orders, noise_multiplier, steps):
    """Exact RDP of `steps` Gaussian mechanisms with noise multiplier z: steps·α/(2z²) (Mironov 2017, Table II)."""
    z = mpmath.mpf(noise_multiplier)
    return [steps * mpmath.mpf(a) / (2 * z * z) for a in orders]


def subsampled_gaussian_rdp(order: int, q, sigma, steps):
    """Test-local: steps·log A_α/(α − 1), A_α = Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2σ²)} (Mironov–Talwar–Zhang 2019,
    integer α; the exact binomial sum in log space)."""
    q, s2 = mpmath.mpf(q), mpmath.mpf(sigma) ** 2
    log_q, log_1mq = mpmath.log(q), mpmath.log1p(-q)
    terms = [
        mpmath.log(math.comb(order, k)) + (order - k) * log_1mq + k * log_q + (k * k - k) / (2 * s2)
        for k in range(order + 1)
    ]
    return steps * logsumexp(terms) / (order - 1)


# ---------------------------------------------------------------------------------------------------
# The conversion formulas at one order


def test_single_order_formulas():
    with working_precision(DPS):
        a, r, d = mpmath.mpf(8), mpmath.mpf("0.7"), mpmath.mpf("1e-6")
        mironov = r + mpmath.log(1 / d) / (a - 1)
        bbghs = r + mpmath.log((a - 1) / a) - (mpmath.log(d) + mpmath.log(a)) / (a - 1)
        assert quiet(epsilon_from_rdp, [a], [r], d, method="mironov") == (mironov, a)
        assert quiet(epsilon_from_rdp, [a], [r], d) == (bbghs, a)
        # δ forms: Mironov exp((α−1)(r−ε)); CKS exp((α−1)(r−ε))(1 − 1/α)^α/(α − 1)
        eps = mpmath.mpf(3)
        delta_m, _ = quiet(delta_from_rdp, [a], [r], eps, method="mironov")
        delta_b, _ = quiet(delta_from_rdp, [a], [r], eps)
        assert abs(delta_m / mpmath.exp((a - 1) * (r - eps)) - 1) < mpmath.mpf("1e-38")
        cks = mpmath.exp((a - 1) * (r - eps)) * (1 - 1 / a) ** a / (a - 1)
        assert abs(delta_b / cks - 1) < mpmath.mpf("1e-38")
        # and ε ↔ δ are inverse at a single order
        assert abs(quiet(delta_from_rdp, [a], [r], bbghs)[0] / d - 1) < mpmath.mpf("1e-37")


def test_abadi_setting_mironov_vs_improved():
    # anchors.md §10: q = 0.01, σ = 4, T = 10 000, δ = 1e-5, integer α 2..256.
    with working_precision(30):
        orders = list(range(2, 257))
        rdp = [subsampled_gaussian_rdp(a, "0.01", 4, 10_000) for a in orders]
        eps_m, order_m = epsilon_from_rdp(orders, rdp, mpmath.mpf("1e-5"), method="mironov")
        eps_b, order_b = epsilon_from_rdp(orders, rdp, mpmath.mpf("1e-5"), method="bbghs")
        assert round(float(eps_m), 4) == 1.2586 and order_m == 20
        assert round(float(eps_b), 4) == 1.0355 and order_b == 17
        # the float64 twin on the same curve
        eps_f, order_f = fast.epsilon_from_rdp(orders, [float(r) for r in rdp], 1e-5)
        assert abs(eps_f / float(eps_b) - 1) < 1e-12 and order_f == 17


def test_bbghs_never_above_mironov_on_grid():
    with working_precision(DPS):
        for z in ["0.5", "1", "3"]:
            for steps in [1, 100]:
                rdp = gaussian_curve(ORDERS, z, steps)
                for d in ["0.1", "1e-5", "1e-12"]:
                    eb, _ = quiet(epsilon_from_rdp, ORDERS, rdp, mpmath.mpf(d))
                    em, _ = quiet(epsilon_from_rdp, ORDERS, rdp, mpmath.mpf(d), method="mironov")
                    assert eb < em
                for e in [0, 1, 5]:
                    db, _ = quiet(delta_from_rdp, ORDERS, rdp, e)
                    dm, _ = quiet(delta_from_rdp, ORDERS, rdp, e, method="mironov")
                    assert db <= dm


# ---------------------------------------------------------------------------------------------------
# RDP-derived bounds are never below the exact Gaussian profile (dp_accounting test_delta_bounds_gaussian idiom)


@pytest.mark.parametrize("noise_multiplier", ["0.7", "1", "2", "5"])
@pytest.mark.parametrize("steps", [1, 10, 1000])
def test_rdp_delta_never_below_exact_gaussian(noise_multiplier, steps):
    with working_precision(DPS):
        rdp = gaussian_curve(ORDERS, noise_multiplier, steps)
        mu = mpmath.sqrt(steps) / mpmath.mpf(noise_multiplier)
        for epsilon in [0, "0.1", "0.5", "1", "3", "10", "30"]:
            exact = gaussian_delta(mpmath.mpf(epsilon), mu)
            for method in ("bbghs", "mironov"):
                rdp_delta, _ = quiet(delta_from_rdp, ORDERS, rdp, mpmath.mpf(epsilon), method=method)
                assert rdp_delta >= exact
        for delta in ["0.1", "1e-5", "1e-10"]:
            exact_eps = gaussian_epsilon(mpmath.mpf(delta), mu)
            assert quiet(epsilon_from_rdp, ORDERS, rdp, mpmath.mpf(delta))[0] >= exact_eps
            assert quiet(epsilon_from_zcdp, steps / (2 * mpmath.mpf(noise_multiplier) ** 2), mpmath.mpf(delta)) >= (
                exact_eps
            )


def test_rdp_is_loose_for_gaussian_example():
    # anchors.md §10: σ = 4.530877117 is exactly (1, 1e-6) via RDP (default orders), the exact ε at δ = 1e-6 is 0.9274.
    with working_precision(DPS):
        z = mpmath.mpf("4.530877117")
        eps, _ = quiet(epsilon_from_rdp, ORDERS, gaussian_curve(ORDERS, z, 1), mpmath.mpf("1e-6"))
        assert abs(eps - 1) < mpmath.mpf("1e-6")
        assert abs(gaussian_epsilon(mpmath.mpf("1e-6"), 1 / z) - mpmath.mpf("0.9274")) < mpmath.mpf("5e-5")


# ---------------------------------------------------------------------------------------------------
# Monotonicity, round trips, TV route and clamping


def test_monotone_in_delta_epsilon_and_steps():
    with working_precision(DPS):
        rdp = gaussian_curve(ORDERS, 1, 10)
        eps = [quiet(epsilon_from_rdp, ORDERS, rdp, mpmath.mpf(d))[0] for d in ["0.5", "1e-2", "1e-5", "1e-9", "1e-30"]]
        assert all(a < b for a, b in zip(eps, eps[1:]))
        dels = [quiet(delta_from_rdp, ORDERS, gaussian_curve(ORDERS, 2, 10), e)[0] for e in [0, 1, 2, 5, 10, 40]]
        assert dels[0] < 1 and all(a > b for a, b in zip(dels, dels[1:]))
        eps_steps = [quiet(epsilon_from_rdp, ORDERS, gaussian_curve(ORDERS, 1, t), mpmath.mpf("1e-5"))[0]
                     for t in [1, 2, 10, 100]]
        assert all(a < b for a, b in zip(eps_steps, eps_steps[1:]))


@pytest.mark.parametrize("method", ["bbghs", "mironov"])
def test_epsilon_delta_round_trip(method):
    with working_precision(DPS):
        rdp = gaussian_curve(ORDERS, 2, 50)
        for d in ["1e-3", "1e-5", "1e-12"]:
            d = mpmath.mpf(d)
            eps, order = quiet(epsilon_from_rdp, ORDERS, rdp, d, method=method)
            back, order_back = quiet(delta_from_rdp, ORDERS, rdp, eps, method=method)
            assert back <= d * (1 + mpmath.mpf("1e-35")) and back >= d * (1 - mpmath.mpf("1e-30"))
            assert order_back == order


def test_tv_route_gives_zero_epsilon_and_small_delta():
    with working_precision(DPS):
        r = mpmath.mpf("1e-4")
        tv = mpmath.sqrt(-mpmath.expm1(-r))  # ≈ 0.01
        assert quiet(epsilon_from_rdp, [2, 3], [r, r * 3 / 2], tv * (1 + mpmath.mpf("1e-20")))[0] == 0
        assert quiet(epsilon_from_rdp, [2, 3], [r, r * 3 / 2], tv * (1 + mpmath.mpf("1e-20")), method="mironov")[0] > 0
        delta, order = quiet(delta_from_rdp, [2, 3], [r, r * 3 / 2], 0)
        assert order == 2 and abs(delta / tv - 1) < mpmath.mpf("1e-38")  # at ε = 0 the TV bound is the better one
        assert quiet(delta_from_rdp, [2], [0], 0) == (0, 2)  # r = 0: identical distributions


def test_negative_formula_value_is_clamped_only_when_justified():
    # α = 2, r = 0.1, δ = 0.29: the BBGHS formula is 0.1 − log(4·0.29) < 0, and the TV route does not apply
    # (δ² = 0.0841 < 1 − e^{−0.1} = 0.0952); (ε < 0, δ)-DP implies (0, δ)-DP, so 0 is returned.
    with working_precision(DPS):
        r, d = mpmath.mpf("0.1"), mpmath.mpf("0.29")
        assert r - mpmath.log(4 * d) < 0 and d * d < -mpmath.expm1(-r)
        assert quiet(epsilon_from_rdp, [2], [r], d) == (0, 2)
        assert fast.epsilon_from_rdp([2.0], [0.1], 0.29) == (0.0, 2.0)


def test_infinite_rdp_orders_are_skipped():
    with working_precision(DPS):
        rdp = gaussian_curve(ORDERS, 1, 10)
        holes = [mpmath.inf if i % 3 == 0 else v for i, v in enumerate(rdp)]
        kept_orders = [a for i, a in enumerate(ORDERS) if i % 3 != 0]
        kept = [v for i, v in enumerate(rdp) if i % 3 != 0]
        d = mpmath.mpf("1e-5")
        assert quiet(epsilon_from_rdp, ORDERS, holes, d) == quiet(epsilon_from_rdp, kept_orders, kept, d)
        assert quiet(delta_from_rdp, ORDERS, holes, 2) == quiet(delta_from_rdp, kept_orders, kept, 2)
        assert epsilon_from_rdp([2, 3], [mpmath.inf, mpmath.inf], d) == (mpmath.inf, None)
        assert delta_from_rdp([2, 3], [mpmath.inf, mpmath.inf], 1) == (1, None)
        assert fast.epsilon_from_rdp([2, 3], [math.inf, math.inf], 1e-5) == (math.inf, None)


def test_order_grid_warning_only_at_the_edges():
    with working_precision(DPS):
        rdp = gaussian_curve(ORDERS, 1, 10)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            eps, order = epsilon_from_rdp(ORDERS, rdp, mpmath.mpf("1e-5"))  # interior optimum: silent
            assert min(ORDERS) < order < max(ORDERS)
            fast.epsilon_from_rdp(FLOAT_ORDERS, [float(v) for v in rdp], 1e-5)
        weak = gaussian_curve(ORDERS, 10, 1)  # optimum near α ≈ 50: α ≤ 3 puts it on the largest order
        with pytest.warns(OrderGridWarning, match="largest"):
            epsilon_from_rdp(ORDERS[:20], weak[:20], mpmath.mpf("1e-5"))
        with pytest.warns(OrderGridWarning, match="largest"):
            fast.epsilon_from_rdp(FLOAT_ORDERS[:20], [float(v) for v in weak[:20]], 1e-5)
        with pytest.warns(OrderGridWarning, match="largest"):
            delta_from_rdp(ORDERS[:20], weak[:20], 1)
        with pytest.warns(OrderGridWarning, match="smallest"):
            epsilon_from_rdp(ORDERS[-10:], rdp[-10:], mpmath.mpf("1e-5"))


# ---------------------------------------------------------------------------------------------------
# Fail loudly


def test_negative_rdp_raises_accounting_error():
    with working_precision(DPS):
        with pytest.raises(AccountingError, match=r"rdp\[1\].*negative"):
            epsilon_from_rdp([2, 3], [1, mpmath.mpf("-1e-30")], 1e-5)
        with pytest.raises(AccountingError, match="negative"):
            delta_from_rdp([2], [-1], 1)
        with pytest.raises(AccountingError, match="negative"):
            fast.epsilon_from_rdp([2.0], [-1e-18], 1e-5)
        with pytest.raises(AccountingError, match="negative"):
            fast.delta_from_rdp([2.0], [-math.inf], 1.0)


@pytest.mark.parametrize("module", ["reference", "fast"])
@pytest.mark.parametrize(
    ("args", "kwargs", "name"),
    [
        (([1, 2], [0.1, 0.2], 1e-5), {}, r"orders\[0\]"),
        (([2, 0.5], [0.1, 0.2], 1e-5), {}, r"orders\[1\]"),
        (([2, 3], [0.1], 1e-5), {}, "same length"),
        (([], [], 1e-5), {}, "orders"),
        (([2], [math.nan], 1e-5), {}, r"rdp\[0\]"),
        (([2], [0.1], 0), {}, "delta"),
        (([2], [0.1], 1), {}, "delta"),
        (([2], [0.1], math.nan), {}, "delta"),
        (([2], [0.1], 1e-5), {"method": "rdp"}, "method"),
        (([math.inf], [0.1], 1e-5), {}, r"orders\[0\]"),
    ],
)
def test_epsilon_from_rdp_validation(module, args, kwargs, name):
    fn = epsilon_from_rdp if module == "reference" else fast.epsilon_from_rdp
    with pytest.raises(ValueError, match=name):
        fn(*args, **kwargs)


def test_delta_from_rdp_validation():
    for fn in (delta_from_rdp, fast.delta_from_rdp):
        with pytest.raises(ValueError, match="epsilon"):
            fn([2], [0.1], -1)
        with pytest.raises(ValueError, match="epsilon"):
            fn([2], [0.1], math.inf)
        with pytest.raises(ValueError, match=r"orders\[0\]"):
            fn([1], [0.1], 1)


def test_delta_beyond_working_precision_raises():
    # log δ ≈ −2.3e29: at 40 digits it carries an absolute error ~1e-11 > 1e-12, i.e. δ is unknown to 1e-11.
    tiny = "1e-100000000000000000000000000000"
    with working_precision(40):
        with pytest.raises(AccountingError, match="below what 40-digit working precision"):
            epsilon_from_rdp([2, 3], [1, 2], mpmath.mpf(tiny))
        with pytest.raises(AccountingError, match="working precision"):
            epsilon_from_zcdp(1, mpmath.mpf(tiny))
        with pytest.raises(AccountingError, match="working precision"):
            quiet(delta_from_rdp, [2], [1], mpmath.mpf("1e30"))  # δ = e^{−1e30}
    with working_precision(60):  # enough digits: the same δ is fine
        eps, _ = quiet(epsilon_from_rdp, [2, 3], [1, 2], mpmath.mpf(tiny))
        assert eps > mpmath.mpf("1e28")
    with pytest.raises(AccountingError, match="float64"):
        quiet(fast.delta_from_rdp, [2.0], [1.0], 1000.0)  # δ ≈ e^{−1000}: below the float64 range


# ---------------------------------------------------------------------------------------------------
# zCDP


def test_zcdp_optimal_is_the_infimum_over_orders():
    with working_precision(DPS):
        for rho, d in [("0.1", "1e-5"), ("0.001", "1e-10"), ("3", "1e-3"), ("1e-6", "0.5")]:
            rho, d = mpmath.mpf(rho), mpmath.mpf(d)
            optimal = epsilon_from_zcdp(rho, d)
            fine = [1 + mpmath.mpf(10) ** (mpmath.mpf(k) / 400 - 2) for k in range(2000)]  # α − 1 ∈ [0.01, 1e3)
            eps_grid = quiet(epsilon_from_rdp, fine, [rho * a for a in fine], d)[0]
            assert optimal <= eps_grid <= optimal * (1 + mpmath.mpf("1e-4")) + mpmath.mpf("1e-12")
            assert optimal <= epsilon_from_zcdp_simple(rho, d)
            if optimal > 0:  # (1e-6, 0.5) is certified by the TV bound: ε = 0
                back = delta_from_zcdp(rho, optimal)
                assert abs(back / d - 1) < mpmath.mpf("1e-30")
            else:
                assert d * d >= -mpmath.expm1(-rho)


def test_zcdp_stationarity_and_simple_formula():
    with working_precision(DPS):
        rho, d = mpmath.mpf("0.1"), mpmath.mpf("1e-5")
        L = -mpmath.log(d)
        # the minimiser solves ρ(α − 1)² + log α = log(1/δ): ε(α) there equals the returned value
        alpha = mpmath.findroot(lambda a: rho * (a - 1) ** 2 + mpmath.log(a) - L, 8)
        eps_at = rho * alpha + mpmath.log(1 - 1 / alpha) - (mpmath.log(d) + mpmath.log(alpha)) / (alpha - 1)
        assert abs(epsilon_from_zcdp(rho, d) - eps_at) < mpmath.mpf("1e-36")
        assert epsilon_from_zcdp_simple(rho, d) == rho + 2 * mpmath.sqrt(rho * L)
        # a ρ-zCDP Gaussian (ρ = 1/(2z²)) is 1/z-GDP: optimal zCDP conversion is still ≥ the exact ε
        assert epsilon_from_zcdp(rho, d) >= gaussian_epsilon(d, mpmath.sqrt(2 * rho))


def test_zcdp_edge_cases_and_monotonicity():
    with working_precision(DPS):
        assert epsilon_from_zcdp(0, 1e-5) == 0 and delta_from_zcdp(0, 1) == 0
        assert epsilon_from_zcdp(1e-8, 0.5) == 0  # TV: 0.5 ≥ √(1 − e^{−1e-8})
        assert delta_from_zcdp(1e4, 0) == 1
        values = [epsilon_from_zcdp(mpmath.mpf(r), mpmath.mpf("1e-6")) for r in ["0.001", "0.01", "0.1", "1", "1000"]]
        assert all(a < b for a, b in zip(values, values[1:]))
        values = [delta_from_zcdp(mpmath.mpf("0.5"), e) for e in [0, 1, 2, 5, 10]]
        assert all(a > b for a, b in zip(values, values[1:]))
        with pytest.raises(ValueError, match="rho"):
            epsilon_from_zcdp(-1, 0.1)
        with pytest.raises(ValueError, match="delta"):
            epsilon_from_zcdp_simple(1, 0)


# ---------------------------------------------------------------------------------------------------
# float64 twins (claim: ≤ 1e-10 relative agreement)


def test_fast_rdp_conversions_agree_on_wide_grid():
    # Worst case seen when written: 7e-14. δ results below ≈ 2.2e-308 raise AccountingError in float64.
    worst = 0
    with working_precision(DPS):
        for z in [0.3, 1, 5, 100]:
            for steps in [1, 1000, 100_000]:
                rdp_f = [steps * a / (2 * z * z) for a in FLOAT_ORDERS]  # the same float inputs for both
                for method in ("bbghs", "mironov"):
                    for d in [0.5, 1e-5, 1e-50, 1e-300]:
                        exact, _ = quiet(epsilon_from_rdp, FLOAT_ORDERS, rdp_f, d, method=method)
                        value, _ = quiet(fast.epsilon_from_rdp, FLOAT_ORDERS, rdp_f, d, method=method)
                        worst = max(worst, abs(value / exact - 1) if exact > 0 else abs(value))
                    for e in [0, 1, 20]:
                        exact, _ = quiet(delta_from_rdp, FLOAT_ORDERS, rdp_f, e, method=method)
                        if exact > 0 and mpmath.log(exact) < math.log(2.3e-308):
                            with pytest.raises(AccountingError):
                                quiet(fast.delta_from_rdp, FLOAT_ORDERS, rdp_f, e, method=method)
                            continue
                        value, _ = quiet(fast.delta_from_rdp, FLOAT_ORDERS, rdp_f, e, method=method)
                        worst = max(worst, abs(value / exact - 1) if exact > 0 else abs(value))
    assert worst <= 1e-10


def test_fast_zcdp_agrees():
    # Worst case seen when written: 1.4e-14 (δ at ρ = 0.1, ε = 10).
    worst = 0
    with working_precision(DPS):
        for rho in [1e-8, 1e-4, 0.01, 1, 100, 1e4]:
            for d in [0.5, 1e-5, 1e-50, 1e-300]:
                exact = epsilon_from_zcdp(rho, d)
                value = fast.epsilon_from_zcdp(rho, d)
                worst = max(worst, abs(value / exact - 1) if exact > 0 else abs(value))
                assert fast.epsilon_from_zcdp_simple(rho, d) == pytest.approx(float(epsilon_from_zcdp_simple(rho, d)))
            for e in [0, 0.1, 1, 10]:
                exact = delta_from_zcdp(rho, e)
                if exact < mpmath.mpf("2.3e-308"):
                    continue
                value = fast.delta_from_zcdp(rho, e)
                worst = max(worst, abs(value / exact - 1))
    assert worst <= 1e-10


# ---------------------------------------------------------------------------------------------------
# Composition (bgm21 Lemma 1 = DRV Thm III.3; bgm21.md §5.2)


def test_basic_composition():
    with working_precision(DPS):
        assert basic_composition([0.5, 1, 2], [1e-6, 0, 1e-5]) == (
            mpmath.mpf(3.5),
            mpmath.fsum([mpmath.mpf(1e-6), mpmath.mpf(1e-5)]),
        )
        assert basic_composition([1, 1], [0.7, 0.6])[1] == 1  # capped: every mechanism is (ε, 1)-DP
        with pytest.raises(ValueError, match=r"deltas\[1\]"):
            basic_composition([1, 1], [0, 1.5])
        with pytest.raises(ValueError, match=r"epsilons\[0\]"):
            basic_composition([-1], [0])
        with pytest.raises(ValueError, match="same length"):
            basic_composition([1], [0, 0])


@pytest.mark.parametrize(
    ("epsilon", "delta", "count", "slack"),
    [("0.1", "0", 100, "1e-5"), ("1", "1e-7", 10, "1e-3"), ("0.01", "1e-9", 10_000, "1e-6"), ("2", "0", 1, "0.5"),
     ("0.5", "1e-4", 50, "1e-2")],
)
def test_advanced_composition_formula(epsilon, delta, count, slack):
    with working_precision(DPS):
        e, d, s = mpmath.mpf(epsilon), mpmath.mpf(delta), mpmath.mpf(slack)
        eps, dlt = advanced_composition(e, d, count, s)
        assert abs(eps - (e * mpmath.sqrt(2 * count * mpmath.log(1 / s)) + count * e * (mpmath.exp(e) - 1))) <= (
            mpmath.mpf("1e-38") * eps
        )
        assert dlt == count * d + s


def test_advanced_composition_monotone_and_validated():
    with working_precision(DPS):
        by_count = [advanced_composition(0.1, 0, k, 1e-6)[0] for k in [1, 10, 100, 1000]]
        assert all(a < b for a, b in zip(by_count, by_count[1:]))
        by_eps = [advanced_composition(e, 0, 100, 1e-6)[0] for e in [0.01, 0.1, 0.5, 1]]
        assert all(a < b for a, b in zip(by_eps, by_eps[1:]))
        with pytest.raises(ValueError, match="delta_slack"):
            advanced_composition(1, 0, 2, 0)
        with pytest.raises(ValueError, match="count"):
            advanced_composition(1, 0, 0, 0.1)
        with pytest.raises(ValueError, match="delta"):
            advanced_composition(1, 1, 2, 0.1)


def kov_exact_delta(step_epsilon, count, epsilon):
    """Exact δ(ε) of the k-fold composition of ε0-DP (randomized response is the worst case; Kairouz–Oh–Viswanath
    2015): (1 + e^{ε0})^{−k} Σ_i C(k,i) [e^{ε0(k−i)} − e^{ε} e^{ε0 i}]_+ (bgm21.md §4, Lemma 1)."""
    total = mpmath.fsum(
        math.comb(count, i) * (mpmath.exp(step_epsilon * (count - i)) - mpmath.exp(epsilon + step_epsilon * i))
        for i in range(count + 1)
        if step_epsilon * (count - i) > epsilon + step_epsilon * i
    )
    return total / (1 + mpmath.exp(step_epsilon)) ** count


def test_bgm21_lemma1_holds_against_exact_composition():
    # bgm21.md §4 / §8 test 5 (a sub-grid): δ_exact(ε') ≤ δ' always; the spec reports max ratio 0.0054.
    worst = 0
    with working_precision(DPS):
        for step_epsilon in ["1e-3", "0.05", "0.3", "1"]:
            for count in [1, 10, 100, 1000]:
                for slack in ["1e-2", "1e-5", "1e-9"]:
                    e0, s = mpmath.mpf(step_epsilon), mpmath.mpf(slack)
                    eps, _ = advanced_composition(e0, 0, count, s)
                    worst = max(worst, kov_exact_delta(e0, count, eps) / s)
    assert worst <= mpmath.mpf("0.0055")


def test_zcdp_of_pure():
    with working_precision(DPS):
        assert zcdp_of_pure(mpmath.mpf("0.3")) == mpmath.mpf("0.3") ** 2 / 2
        with pytest.raises(ValueError, match="epsilon"):
            zcdp_of_pure(-0.1)


def test_certify_pure_is_min_of_three_routes():
    with working_precision(DPS):
        for eps_step, k, d in [("0.01", 1000, "1e-6"), ("0.5", 4, "1e-5"), ("1", 100, "1e-8"), ("0.2", 30, "0.9")]:
            e, d = mpmath.mpf(eps_step), mpmath.mpf(d)
            L = mpmath.log(1 / d)
            rho = k * e * e / 2
            routes = [k * e, e * mpmath.sqrt(2 * k * L) + k * e * (mpmath.exp(e) - 1), rho + 2 * mpmath.sqrt(rho * L)]
            assert abs(certify_pure([e] * k, d) - min(routes)) <= mpmath.mpf("1e-38") * min(routes)
        # heterogeneous steps: never more than basic composition, and equal to the zCDP route when that wins
        steps = [mpmath.mpf("0.01")] * 500 + [mpmath.mpf("0.02")] * 500
        rho = mpmath.fsum(s * s for s in steps) / 2
        L = mpmath.log(mpmath.mpf("1e6"))
        assert certify_pure(steps, mpmath.mpf("1e-6")) == min(mpmath.fsum(steps), rho + 2 * mpmath.sqrt(rho * L),
                                                              advanced_composition(mpmath.mpf("0.02"), 0, 1000,
                                                                                   mpmath.mpf("1e-6"))[0])


@pytest.mark.parametrize("count", [10, 100, 10_000])
@pytest.mark.parametrize("epsilon", ["0.1", "1", "2"])
@pytest.mark.parametrize("delta", ["1e-3", "1e-8"])
def test_calibrate_pure_steps_never_overshoots(count, epsilon, delta):
    # bgm21.md §8 test 16: certify_pure = ε within 1e-9 relative (here: to working precision), and never above.
    with working_precision(DPS):
        e, d = mpmath.mpf(epsilon), mpmath.mpf(delta)
        step = calibrate_pure_steps(count, e, d)
        certified = certify_pure([step] * count, d)
        assert certified <= e
        assert certified >= e * (1 - mpmath.mpf("1e-35"))


def test_calibrate_pure_steps_zcdp_closed_form_and_large_delta():
    with working_precision(DPS):
        # ρ* = (√(L + ε) − √L)² solves ρ + 2√(ρL) = ε (bgm21.md §5.2, §8 test 34)
        e, d = mpmath.mpf(1), mpmath.mpf("1e-8")
        L = mpmath.log(1 / d)
        rho = (mpmath.sqrt(L + e) - mpmath.sqrt(L)) ** 2
        assert abs(rho + 2 * mpmath.sqrt(rho * L) - e) < mpmath.mpf("1e-38")
        step = calibrate_pure_steps(10_000, e, d)
        assert abs(step / mpmath.sqrt(2 * rho / 10_000) - 1) < mpmath.mpf("1e-35")  # the zCDP route wins here
        # k = 1 at small δ: basic composition wins, the step is ε itself (to working precision, from below)
        step = calibrate_pure_steps(1, mpmath.mpf("0.5"), mpmath.mpf("1e-5"))
        assert step <= mpmath.mpf("0.5") and mpmath.mpf("0.5") - step < mpmath.mpf("1e-38")
        # δ near 1: the zCDP route certifies less than the step's own ε, so the step can exceed ε
        step = calibrate_pure_steps(1, mpmath.mpf("0.5"), mpmath.mpf("0.9"))
        assert step > mpmath.mpf("0.5") and certify_pure([step], mpmath.mpf("0.9")) <= mpmath.mpf("0.5")


# ---------------------------------------------------------------------------------------------------
# Hypothesis fuzz: every public function; no NaN, no negative ε/δ, only ValueError / AccountingError

any_real = st.one_of(
    st.floats(min_value=-5, max_value=1e6),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0, 1.0, 1e-300, 1e300]),
)
orders_st = st.lists(st.one_of(st.floats(min_value=1.0, max_value=3000), any_real), min_size=1, max_size=6)
rdp_st = st.lists(st.one_of(st.floats(min_value=0, max_value=1e5), any_real), min_size=1, max_size=6)
delta_st = st.one_of(st.floats(min_value=1e-300, max_value=1), any_real)


def _call(fn, *args, **kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OrderGridWarning)
            return fn(*args, **kwargs)
    except (ValueError, AccountingError):
        return None


def _nonnegative(value):
    return value is None or (not mpmath.isnan(value) and value >= 0)


@FUZZ
@given(orders_st, rdp_st, delta_st, st.sampled_from(["bbghs", "mironov"]))
def test_fuzz_rdp_conversions(orders, rdp, delta_or_eps, method):
    with working_precision(DPS):
        for fn in (epsilon_from_rdp, delta_from_rdp, fast.epsilon_from_rdp, fast.delta_from_rdp):
            result = _call(fn, orders, rdp, delta_or_eps, method=method)
            if result is not None:
                value, order = result
                assert _nonnegative(value)
                assert order is None or order > 1
                if fn in (delta_from_rdp, fast.delta_from_rdp):
                    assert value <= 1


@FUZZ
@given(st.lists(st.floats(min_value=1.01, max_value=300), min_size=1, max_size=6, unique=True),
       st.floats(min_value=1e-6, max_value=100), st.floats(min_value=1e-30, max_value=0.99))
def test_fuzz_bbghs_below_mironov_and_fast_agrees(orders, scale, delta):
    # any RDP curve of the form c·α (Gaussian/zCDP shaped)
    with working_precision(DPS):
        rdp = [scale * a for a in orders]
        eb, _ = _call(epsilon_from_rdp, orders, rdp, delta)
        em, _ = _call(epsilon_from_rdp, orders, rdp, delta, method="mironov")
        assert eb <= em
        ef, _ = _call(fast.epsilon_from_rdp, orders, rdp, delta)
        assert abs(ef - eb) <= 1e-10 * max(eb, 1e-3)
        assert epsilon_from_zcdp(scale, delta) <= eb


@FUZZ
@given(any_real, delta_st)
def test_fuzz_zcdp(rho, delta):
    with working_precision(DPS):
        for fn in (epsilon_from_zcdp, epsilon_from_zcdp_simple, delta_from_zcdp, fast.epsilon_from_zcdp,
                   fast.epsilon_from_zcdp_simple, fast.delta_from_zcdp):
            value = _call(fn, rho, delta)
            assert _nonnegative(value)
        d = _call(delta_from_zcdp, rho, delta)
        assert d is None or d <= 1


@FUZZ
@given(st.lists(any_real, min_size=0, max_size=5), st.lists(any_real, min_size=0, max_size=5), any_real,
       st.integers(min_value=-3, max_value=10**6), any_real)
def test_fuzz_composition(epsilons, deltas, epsilon, count, delta):
    with working_precision(DPS):
        result = _call(basic_composition, epsilons, deltas)
        assert result is None or (_nonnegative(result[0]) and 0 <= result[1] <= 1)
        result = _call(advanced_composition, epsilon, delta, count, delta)
        assert result is None or (_nonnegative(result[0]) and 0 <= result[1] <= 1)
        assert _nonnegative(_call(zcdp_of_pure, epsilon))
        assert _nonnegative(_call(certify_pure, epsilons, delta))


@FUZZ
@given(st.integers(min_value=-2, max_value=10**6), any_real, delta_st)
def test_fuzz_calibrate_pure_steps(count, epsilon, delta):
    with working_precision(DPS):
        step = _call(calibrate_pure_steps, count, epsilon, delta)
        assert _nonnegative(step)
        if step is not None and count <= 1000:
            assert certify_pure([step] * count, delta) <= epsilon
