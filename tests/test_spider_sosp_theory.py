"""reference.algorithms.spider_sosp_theory: the hyper-parameters of Liu–Talwar Algorithm 2.

Fixture tolerances are half a unit in the last digit printed (the fixtures are rounded decimals). The float64
theory module is compared with the mpmath ``spider_sosp_privacy.spider_sosp_parameters``: each of α, κ, coef_bt is a
short chain (< 32 roundings, each ≤ u = 2^−53, plus libm pow/sqrt within 1 ulp) of operations on positive numbers, so
the relative difference is ≤ 64u; b and L are integers and must agree exactly.
"""

import math

import mpmath
import numpy as np
import pytest

from reference.algorithms import spider_sosp_theory as th
from reference.algorithms.spider_sosp import SpiderConfig, adaptive_batch_size, o1_batch_size
from reference.algorithms.spider_sosp_privacy import spider_sosp_parameters

U = 2.0**-53

# (G, M, ρ, B, d, n, ε, δ), the fixtures
FIXTURE_1 = (1.0, 1.0, 1.0, 1.0, 10, 10**6, 1.0, 1e-6)
FIXTURE_2 = (1.0, 1.0, 1.0, 1.0, 100, 10**5, 0.1, 1e-6)
FIXTURE_3 = (1.0, 1.0, 1.0, 1.0, 2, 10**5, 4.0, 1e-5)


def settings(fixture, **kw):
    G, M, rho, B, d, n, eps, delta = fixture
    kw.setdefault("noise_std", 0.01)
    return th.spider_settings(n, d, G, M, rho, B, eps, delta, **kw)


def half_unit(printed: str) -> float:
    """Half a unit in the last printed decimal place of a fixture."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return 0.5 * 10.0**-decimals


@pytest.mark.parametrize(
    "fixture, alpha, kappa, b, coef, levels",
    [
        (FIXTURE_1, "0.0245565588", "1", 1788, "1658.307192", 21),
        (FIXTURE_2, "0.1094965247", "10.9496524664", 997, "913.270995", 18),
        (FIXTURE_3, "0.0500115746", "1", 407, "399.814871", 18),
    ],
)
def test_numeric_fixtures(fixture, alpha, kappa, b, coef, levels):
    s = settings(fixture)
    assert abs(s.alpha - float(alpha)) <= half_unit(alpha)
    if "." in kappa:
        assert abs(s.kappa - float(kappa)) <= half_unit(kappa)
    else:
        assert s.kappa == float(kappa)  # κ = (BGM)^{1/3} = 1 exactly when the statistical term dominates
    assert s.batch_size == b
    assert abs(s.batch_coefficient - float(coef)) <= half_unit(coef)
    assert s.tree_levels == levels


def test_fixture_2_is_privacy_dominated():
    # κ = α√d/ε there, so coef_bt = κ/α² = √d/(αε) (both terms of the max coincide)
    s = settings(FIXTURE_2)
    assert s.kappa == pytest.approx(s.alpha * math.sqrt(100) / 0.1, rel=4 * U)
    assert s.batch_coefficient == pytest.approx(math.sqrt(100) / (s.alpha * 0.1), rel=8 * U)


@pytest.mark.parametrize("v, expected", [(0.0, 1), (1e-4, 1), (0.01, 17), (0.5, 830)])
def test_adaptive_batch_fixture_1(v, expected):
    s = settings(FIXTURE_1)
    assert adaptive_batch_size(v, s.alpha, s.epsilon, s.d, s.kappa) == expected


@pytest.mark.parametrize("fixture", [FIXTURE_1, FIXTURE_2, FIXTURE_3])
def test_agrees_with_the_mpmath_privacy_module(fixture):
    G, M, rho, B, d, n, eps, delta = fixture
    s = settings(fixture)
    with mpmath.workdps(40):
        p = spider_sosp_parameters(lipschitz=G, smoothness=M, loss_gap=B, d=d, n=n, epsilon=eps)
        for mine, theirs in ((s.alpha, p["alpha"]), (s.kappa, p["kappa"]), (s.batch_coefficient, p["coef_bt"])):
            assert abs(mpmath.mpf(mine) - theirs) <= 64 * U * theirs
    assert s.batch_size == p["b"] and s.tree_levels == p["L"] and s.steps == p["T"]


def test_agrees_with_the_mpmath_privacy_module_on_random_problems():
    rng = np.random.default_rng(2024)
    for _ in range(60):
        G, M, B = 10.0 ** rng.uniform(-2, 2, 3)
        d, n = int(10 ** rng.uniform(0, 3)), int(10 ** rng.uniform(2, 8))
        eps = float(10 ** rng.uniform(-1.5, 1))
        c_alpha = float(rng.uniform(0.5, 3))
        with mpmath.workdps(40):
            p = spider_sosp_parameters(lipschitz=G, smoothness=M, loss_gap=B, d=d, n=n, epsilon=eps, c_alpha=c_alpha)
            alpha = th.alpha_rule(lipschitz=G, smoothness=M, loss_gap=B, d=d, n=n, epsilon=eps, c_alpha=c_alpha)
            kappa = th.kappa_rule(alpha, lipschitz=G, smoothness=M, loss_gap=B, d=d, epsilon=eps)
            coef = th.batch_coefficient(alpha, kappa=kappa, d=d, epsilon=eps)
            for mine, theirs in ((alpha, p["alpha"]), (kappa, p["kappa"]), (coef, p["coef_bt"])):
                assert abs(mpmath.mpf(mine) - theirs) <= 64 * U * theirs
        assert o1_batch_size(G, d, eps, alpha) == p["b"]
        assert th.tree_levels(n) == p["L"]


# ---------------------------------------------------------------------------------------------------
# Modes


def test_unit_mode():
    s = settings(FIXTURE_1, noise_std=0.02)
    V = 1.0 / s.batch_size + s.kappa / s.batch_coefficient  # G = 1
    assert s.variance_bound == pytest.approx(V, rel=4 * U)
    assert s.gamma == pytest.approx(math.sqrt(0.02**2 * 10 * math.ceil(21 / 2) + V), rel=8 * U)
    assert s.threshold == s.gamma and s.perturbation_scale == s.gamma
    assert s.freeze_steps == math.ceil(1.0 / math.sqrt(s.gamma))  # M = ρ = 1
    assert s.steps == 10**6 and s.step_size == 1.0
    # the a.s. bound V̄ ≤ 2α²: G²/b ≤ α² and κ/coef_bt ≤ α²
    assert s.variance_bound <= 2 * s.alpha**2 * (1 + 4 * U)


def test_theory_mode():
    s = settings(FIXTURE_1, mode="theory", noise_std=0.02)
    T, L, iota, V = 10**6, 21, 0.01, s.variance_bound
    gamma = math.sqrt(8 * V * math.log(4 * T / iota)) + 0.02 * math.sqrt(L) * (
        math.sqrt(10) + math.sqrt(2 * math.log(2 * T / iota)))
    assert s.gamma == pytest.approx(gamma, rel=16 * U)
    assert s.threshold == pytest.approx(gamma * math.log(10 / iota) ** 3, rel=32 * U)  # B = M = ρ = 1
    assert s.freeze_steps == math.ceil(math.log(10 / (gamma * iota)) / math.sqrt(gamma))
    assert s.perturbation_scale == pytest.approx(gamma / math.sqrt(math.log(10 / iota)), rel=8 * U)
    # laptop scale: the explicit high-probability γ is vacuous (larger than G = 1)
    assert s.gamma > 1.0


def test_theory_mode_logs_are_clamped_at_one():
    # d = 1, B = M = ρ = 1, ι = 1/2: ln(BMd/(ρι)) = ln 2 < 1 and ln(d/ι) = ln 2 < 1 are read as 1
    kw = dict(mode="theory", d=1, smoothness=1.0, hessian_lipschitz=1.0, loss_gap=1.0, iota=0.5)
    assert th.threshold_rule(0.3, **kw) == 0.3
    assert th.perturbation_scale_rule(0.3, mode="theory", d=1, iota=0.5) == 0.3
    # ln(dMB/(ργι)) = ln(1/(0.9·0.5)) = 0.80 < 1
    assert th.freeze_rule(0.9, **kw) == math.ceil(1 / math.sqrt(0.9))


def test_lemma_3_3_setups_of_the_tests():
    # d = 10, B = 2, M = ρ = 1, ι = 0.01, γ = 1e-3
    kw = dict(d=10, smoothness=1.0, hessian_lipschitz=1.0, loss_gap=2.0, iota=0.01)
    assert th.threshold_rule(1e-3, mode="theory", **kw) == pytest.approx(0.439, abs=half_unit("0.439"))
    assert th.freeze_rule(1e-3, mode="theory", **kw) == 459
    assert th.escape_decrease(1e-3, **kw) == pytest.approx(1.04e-8, abs=0.005e-8)  # printed "1.04e-8"
    # spider_sosp.E18: d = 100, γ = 1e-5
    kw["d"] = 100
    assert th.threshold_rule(1e-5, mode="theory", **kw) == pytest.approx(0.00971, abs=half_unit("0.00971"))
    assert th.freeze_rule(1e-5, mode="theory", **kw) == 6773


# ---------------------------------------------------------------------------------------------------
# Non-private limit, sample requirement, tree levels


def test_non_private_limit():
    s = th.spider_settings(10**5, 2, 1.5, 2.0, 1.0, 3.0, math.inf, 1e-5)
    B_G_M = 3.0 * 1.5 * 2.0
    statistical = ((3.0 * 2.0) ** (2 / 9) * 1.5 ** (5 / 9) + (3.0 * 2.0) ** (4 / 9) * 1.5 ** (1 / 9)) / 1e5 ** (1 / 3)
    assert s.noise_std == 0.0
    assert s.alpha == pytest.approx(statistical + math.sqrt(2.0 * 3.0 / 1e5), rel=16 * U)
    assert s.kappa == pytest.approx(B_G_M ** (1 / 3), rel=4 * U)
    assert s.batch_size == math.ceil(1.5**2 / s.alpha**2)
    assert s.batch_coefficient == s.kappa / s.alpha**2
    for v in (0.0, 0.003, 0.4, 7.0):
        assert adaptive_batch_size(v, s.alpha, math.inf, 2, s.kappa) == max(math.ceil(s.kappa * v / s.alpha**2), 1)
    # ε → ∞ is the limit of finite ε (the privacy terms decrease to 0)
    finite = th.alpha_rule(lipschitz=1.5, smoothness=2.0, loss_gap=3.0, d=2, n=10**5, epsilon=1e12)
    assert s.alpha < finite <= s.alpha * (1 + 1e-5)


def test_sample_requirement_bound_lemma_3_10():
    # req(α) ≤ 5n + BM/(κα) exactly for c_α ≥ 1 (proof in sample_requirement's docstring); 64u covers the rounding
    rng = np.random.default_rng(310)
    worst = 0.0
    for _ in range(2000):
        G, M, B = 10.0 ** rng.uniform(-3, 3, 3)
        d, n = int(10 ** rng.uniform(0, 4)), int(10 ** rng.uniform(1, 9))
        eps = math.inf if rng.random() < 0.1 else float(10 ** rng.uniform(-2, 1))
        s = th.spider_settings(n, d, G, M, 1.0, B, eps, 1e-6, noise_std=0.0, c_alpha=float(rng.uniform(1, 4)))
        bound = 5 * n + B * M / (s.kappa * s.alpha)
        assert s.sample_requirement <= bound * (1 + 64 * U)
        worst = max(worst, (s.sample_requirement - B * M / (s.kappa * s.alpha)) / n)
    assert 0 < worst <= 5


@pytest.mark.parametrize("steps, levels", [(1, 1), (2, 2), (3, 3), (4, 3), (5, 4), (1024, 11), (1025, 12)])
def test_tree_levels(steps, levels):
    assert th.tree_levels(steps) == levels


def test_config_carries_the_settings():
    s = settings(FIXTURE_3, tree_scope="segment", adjacency="zero_out", steps=500)
    c = s.config(reset_drift_on_perturb=True, perturb=False)
    assert isinstance(c, SpiderConfig)
    assert (c.alpha, c.kappa, c.batch_size, c.threshold, c.freeze_steps, c.perturbation_scale, c.noise_std) == (
        s.alpha, s.kappa, s.batch_size, s.threshold, s.freeze_steps, s.perturbation_scale, s.noise_std)
    assert (c.steps, c.tree_scope, c.adjacency, c.reset_drift_on_perturb, c.perturb) == (
        500, "segment", "zero_out", True, False)
    assert s.tree_levels == th.tree_levels(500)


# ---------------------------------------------------------------------------------------------------
# Hostile inputs


BASE = dict(n=1000, d=2, lipschitz=1.0, smoothness=1.0, hessian_lipschitz=1.0, loss_gap=1.0, epsilon=1.0,
            delta=1e-5, noise_std=0.1)


@pytest.mark.parametrize(
    "name, value, error",
    [
        ("n", 0, ValueError), ("n", 10.0, TypeError), ("d", 0, ValueError), ("d", "2", TypeError),
        ("lipschitz", -1.0, ValueError), ("lipschitz", np.nan, ValueError), ("lipschitz", np.inf, ValueError),
        ("smoothness", 0.0, ValueError), ("hessian_lipschitz", -2.0, ValueError), ("loss_gap", "1", TypeError),
        ("epsilon", 0.0, ValueError), ("epsilon", np.nan, ValueError), ("epsilon", -np.inf, ValueError),
        ("delta", 0.0, ValueError), ("delta", 1.0, ValueError), ("noise_std", -0.1, ValueError),
        ("noise_std", np.nan, ValueError), ("noise_std", None, ValueError), ("mode", "practical", ValueError),
        ("iota", 1.5, ValueError), ("c_alpha", 0.0, ValueError), ("steps", 0, ValueError),
        ("adjacency", "add_remove", ValueError), ("tree_scope", "local", ValueError),
    ],
)
def test_hostile_settings(name, value, error):
    kw = dict(BASE, **{name: value})
    with pytest.raises(error, match=name):
        th.spider_settings(**kw)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: th.gamma_rms(variance_bound=-1.0, noise_std=0.0, d=1, levels=1), "variance_bound"),
        (lambda: th.gamma_hp(variance_bound=1.0, noise_std=0.0, d=1, levels=1, steps=1, iota=0.0), "iota"),
        (lambda: th.freeze_rule(0.0, mode="unit", d=1, smoothness=1.0, hessian_lipschitz=1.0, loss_gap=1.0,
                                iota=0.1), "gamma"),
        (lambda: th.threshold_rule(1.0, mode="x", d=1, smoothness=1.0, hessian_lipschitz=1.0, loss_gap=1.0,
                                   iota=0.1), "mode"),
        (lambda: th.sample_requirement(1.0, batch_size=0, loss_gap=1.0, smoothness=1.0, kappa=1.0, d=1,
                                       epsilon=1.0), "batch_size"),
        (lambda: th.tree_levels(0), "steps"),
    ],
)
def test_hostile_rules(call, name):
    with pytest.raises(ValueError, match=name):
        call()



def test_flag_values_agree_with_the_privacy_module():
    # σ is calibrated by spider_sosp_privacy for an adjacency and a tree scope: both modules must name them alike
    from reference.algorithms import spider_sosp as sp
    from reference.algorithms import spider_sosp_privacy as privacy

    assert set(sp.ADJACENCIES) == set(privacy.ADJACENCIES)
    assert set(sp.TREE_SCOPES) == set(privacy.TREE_SCOPES)
    for adjacency in sp.ADJACENCIES:
        for scope in sp.TREE_SCOPES:
            sigma = privacy.spider_sosp_sigma("gdp_exact", lipschitz=1.0, smoothness=1.0, loss_gap=1.0, d=2, n=1000,
                                              epsilon=1.0, delta=1e-5, adjacency=adjacency, tree_scope=scope)
            s = th.spider_settings(1000, 2, 1.0, 1.0, 1.0, 1.0, 1.0, 1e-5, noise_std=float(sigma),
                                   adjacency=adjacency, tree_scope=scope)
            assert s.config().noise_std == float(sigma) > 0
