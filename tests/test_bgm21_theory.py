"""Tests for reference.algorithms.bgm21_theory (bgm21 Theorems 8, 11, 16 parameters, geometry constants, rates)."""

import math

import pytest

from reference.algorithms.bgm21_sfw import sfw_data_budget
from reference.algorithms.bgm21_theory import (
    kappa, kappa_tilde, nu_eff, p_bar, practical_proxy_theorem8, rate_theorem11, rate_theorem16, rate_theorem8,
    theorem11_params, theorem16_params, theorem8_params,
)


# ---- geometry -------------------------------------------------------------------------------------

def test_geometry_hand_values():
    assert kappa(1.5, 100, 2) == pytest.approx(2.0)
    assert kappa(1.01, 100, 2) == pytest.approx(2 * math.log(100))
    assert kappa(1.0, 100, 1) == pytest.approx(math.log(100))
    assert kappa(2.0, 10, 2) == 1.0 and kappa(2.0, 10, 1) == 1.0
    assert kappa_tilde(2.0, 50) == 1.0
    assert kappa_tilde(1.5, 50) == pytest.approx(1 + math.log(50))
    assert p_bar(1.0, 100) == pytest.approx(1 + 1 / math.log(100))
    assert p_bar(1.8, 100) == 1.8
    assert p_bar(1.0, 2) == 2.0 and p_bar(1.0, 2, clip_to_2=False) == pytest.approx(1 + 1 / math.log(2))
    # p̄ = p ⇒ ν_eff = p − 1 = 1/κ (Theorem 16's κ)
    assert nu_eff(1.5, 100) == pytest.approx(0.5)
    assert nu_eff(1.5, 100) * kappa(1.5, 100, 1) == pytest.approx(1.0)
    pb = 1 + 1 / math.log(10)
    assert nu_eff(1.0, 10) == pytest.approx((pb - 1) * 10 ** (-2 * (1 - 1 / pb)))


@pytest.mark.parametrize("d", [10, 100, 10**4, 10**6])
def test_nu_eff_below_inverse_kappa_near_p1(d):
    # 2κν_eff ∈ [0.31, 0.50] at p = 1 for d = 10..10^6
    assert 0.3 <= 2 * kappa(1.0, d, 1) * nu_eff(1.0, d) <= 0.5


@pytest.mark.parametrize("bad", [0.5, 2.5, float("nan"), float("inf")])
def test_geometry_refuses_p(bad):
    with pytest.raises(ValueError):
        kappa(bad, 10, 1)
    with pytest.raises(ValueError):
        p_bar(bad, 10)


def test_geometry_refuses_dimension_and_types():
    with pytest.raises(ValueError):
        kappa(1.5, 1, 1)
    with pytest.raises(TypeError):
        kappa_tilde(1.5, 10.0)
    with pytest.raises(TypeError):
        nu_eff("1.5", 10)
    with pytest.raises(TypeError):
        kappa(1.5, True, 1)


# ---- Theorem 8 ------------------------------------------------------------------------------------

def test_theorem8_theory_hand_point():
    n, eps, delta, J = 10**5, 1.0, 1e-5, 20
    s = theorem8_params(n, eps, delta, J)
    R_real = (2 / 3) * math.log2(n * eps / (math.log(J) ** 2 * math.log(n) ** 2 * math.sqrt(math.log(1 / delta))))
    assert s.n_rounds_real == pytest.approx(R_real)
    assert s.n_rounds == max(1, math.floor(R_real)) == 3
    assert s.b == math.floor(n / math.log(n) ** 2) == 754
    assert s.records_used == sfw_data_budget(754, 3) <= n
    assert s.data_fraction == pytest.approx(s.records_used / n)
    assert s.data_fraction < 0.1  # the theory schedule is degenerate at practical n
    assert s.step(0, 0) == 1.0 and s.step(2, 3) == pytest.approx(0.5)
    assert s.n_steps == 7 and s.J == J and s.schedule == "theory"
    assert any("log2" in note for note in s.notes)


def test_theorem8_degenerate_R_raised_to_one():
    s = theorem8_params(1000, 0.1, 1e-5, 50)
    assert s.n_rounds_real < 1 and s.n_rounds == 1
    assert any("degenerate" in note for note in s.notes)


@pytest.mark.parametrize("n, eps, R, b", [(4096, 0.25, 2, 1638), (4096, 4.0, 4, 560),
                                          (32768, 0.25, 3, 7149), (32768, 4.0, 5, 3066)])
def test_theorem8_practical_prototype_points(n, eps, R, b):
    # the practical schedule at its prototype sizes: ℓ1 ball in d = 20 (J = 40 vertices), δ = 1e-5
    s = theorem8_params(n, eps, 1e-5, 40, schedule="practical")
    assert (s.n_rounds, s.b) == (R, b)
    assert s.records_used <= n and sfw_data_budget(b + 1, R) > n
    assert s.data_fraction >= 0.998
    assert s.proxy == pytest.approx(practical_proxy_theorem8(R, b, 40, eps, 1e-5))
    for other in range(1, int(math.log2(n)) + 1):  # R minimises the proxy over the fitting schedules
        bs = [x for x in range(2 ** (other - 1), n + 1) if sfw_data_budget(x, other) <= n][-1:] if other <= 6 else []
        if bs:
            assert s.proxy <= practical_proxy_theorem8(other, bs[0], 40, eps, 1e-5) + 1e-15


@pytest.mark.parametrize("schedule", ["theory", "practical"])
@pytest.mark.parametrize("n", [2, 3, 7, 100, 5000, 10**5])
@pytest.mark.parametrize("eps", [0.01, 1.0, 10.0])
def test_budget_at_most_n(schedule, n, eps):
    for params in (lambda: theorem8_params(n, eps, 1e-6, 10, schedule),
                   lambda: theorem11_params(n, 30, 1.5, eps, 1e-6, schedule)):
        try:
            s = params()
        except ValueError as err:  # a refusal must name what is needed
            assert "needs" in str(err)
            continue
        assert 1 <= s.records_used <= n
        assert s.records_used == sfw_data_budget(s.b, s.n_rounds)
        assert 0 < s.data_fraction <= 1
        assert 2 ** (s.n_rounds - 1) <= s.b


def test_theorem8_monotone_in_n_and_eps():
    ns = [10, 100, 1000, 10**4, 10**5, 10**6]
    Rs = [theorem8_params(n, 1.0, 1e-5, 20).n_rounds_real for n in ns]
    bs = [theorem8_params(n, 1.0, 1e-5, 20).b for n in ns]
    assert Rs == sorted(Rs) and bs == sorted(bs)
    epss = [0.1, 0.5, 1.0, 2.0, 8.0]
    Rs = [theorem8_params(10**5, e, 1e-5, 20).n_rounds for e in epss]
    assert Rs == sorted(Rs)
    Rp = [theorem8_params(10**4, e, 1e-5, 20, "practical").n_rounds for e in epss]
    assert Rp == sorted(Rp)


def test_theorem8_refuses_unsupported_and_hostile():
    with pytest.raises(ValueError, match="needs"):
        theorem8_params(1000, 1e9, 1e-5, 2)  # R far beyond what b = n/ln^2 n supports
    for bad in [dict(n=1), dict(J=1), dict(eps=0.0), dict(eps=-1.0), dict(eps=float("inf")), dict(delta=0.0),
                dict(delta=1.0), dict(schedule="fast")]:
        kw = dict(n=1000, eps=1.0, delta=1e-5, J=10) | bad
        with pytest.raises(ValueError):
            theorem8_params(**kw)
    with pytest.raises(TypeError):
        theorem8_params(1000.0, 1.0, 1e-5, 10)
    with pytest.raises(TypeError):
        theorem8_params(1000, "1", 1e-5, 10)


def test_settings_frozen():
    s = theorem8_params(10**4, 1.0, 1e-5, 10)
    with pytest.raises(Exception):
        s.b = 3


# ---- Theorem 11 -----------------------------------------------------------------------------------

def test_theorem11_theory_hand_point():
    n, d, p, eps, delta = 10**5, 50, 1.5, 1.0, 1e-5
    s = theorem11_params(n, d, p, eps, delta)
    k, kt = min(2.0, 2 * math.log(d)), 1 + math.log(d)
    R_real = 0.8 * math.log2(n * eps / (math.sqrt(d * kt * math.log(1 / delta)) * k ** (5 / 3) * math.log(n) ** 2))
    assert (s.kappa, s.kappa_tilde) == (pytest.approx(k), pytest.approx(kt))
    assert s.n_rounds_real == pytest.approx(R_real)
    assert s.n_rounds == max(1, math.floor(R_real))
    assert s.b == 754 and s.records_used <= n


def test_theorem11_euclidean_kappas_are_one():
    s = theorem11_params(10**5, 20, 2.0, 1.0, 1e-5)
    assert s.kappa == 1.0 and s.kappa_tilde == 1.0
    R_real = 0.8 * math.log2(10**5 / (math.sqrt(20 * math.log(1e5)) * math.log(1e5) ** 2))
    assert s.n_rounds_real == pytest.approx(R_real)


def test_theorem11_monotone_and_practical():
    Rs = [theorem11_params(n, 20, 1.5, 1.0, 1e-5).n_rounds_real for n in [100, 10**3, 10**4, 10**6]]
    assert Rs == sorted(Rs)
    Rs = [theorem11_params(10**5, 20, 1.5, e, 1e-5).n_rounds_real for e in [0.1, 1, 10]]
    assert Rs == sorted(Rs)
    s = theorem11_params(32768, 20, 2.0, 1.0, 1e-5, schedule="practical")
    assert s.records_used <= 32768 and s.data_fraction > 0.99


def test_theorem11_refuses_p_one_and_hostile():
    with pytest.raises(ValueError):
        theorem11_params(1000, 10, 1.0, 1.0, 1e-5)  # Theorem 11 needs 1 < p ≤ 2
    with pytest.raises(ValueError):
        theorem11_params(1000, 1, 1.5, 1.0, 1e-5)
    with pytest.raises(ValueError):
        theorem11_params(1000, 10, 1.5, 1.0, 1e-5, schedule=None)


# ---- Theorem 16 -----------------------------------------------------------------------------------

def test_theorem16_hand_point_p2():
    n, d, rho, L0, D, eps, delta = 10**4, 10, 1.0, 1.0, 1.0, 1.0, 1e-5
    s = theorem16_params(n, d, 2.0, rho, L0, D, eps, delta)
    first = math.sqrt(n * D * rho / L0)
    second = (D * (n * eps) ** 2 * rho / (L0 * d * math.log(1 / delta))) ** (1 / 3)
    assert s.n_rounds_real == pytest.approx(min(first, second))
    assert s.n_rounds == math.floor(min(first, second))
    assert s.batch_size == n // s.n_rounds and s.records_used == s.n_rounds * s.batch_size <= n
    assert s.kappa == 1.0 and s.p_bar == 2.0 and s.nu_eff == 1.0
    assert s.beta == s.beta_printed == s.beta_corrected == pytest.approx(2.0)
    assert s.mu == pytest.approx(rho) and s.strongly_convex


@pytest.mark.parametrize("p", [1.5, 1.9, 2.0])
def test_theorem16_variants_agree_away_from_p1(p):
    a = theorem16_params(10**4, 100, p, 0.5, 2.0, 3.0, 1.0, 1e-6, beta_variant="printed")
    b = theorem16_params(10**4, 100, p, 0.5, 2.0, 3.0, 1.0, 1e-6, beta_variant="corrected")
    assert a.beta == pytest.approx(b.beta) == pytest.approx(2 * 0.5 * a.kappa)
    assert a.mu == pytest.approx(0.5) and a.strongly_convex


@pytest.mark.parametrize("p", [1.0, 1.05])
@pytest.mark.parametrize("d", [10, 1000, 10**6])
def test_theorem16_printed_beta_differs_near_p1(p, d):
    a = theorem16_params(10**4, d, p, 1.0, 1.0, 1.0, 1.0, 1e-5, beta_variant="printed")
    c = theorem16_params(10**4, d, p, 1.0, 1.0, 1.0, 1.0, 1e-5, beta_variant="corrected")
    assert p < 1 + 1 / math.log(d)
    assert a.beta == pytest.approx(2 * a.kappa) and c.beta == pytest.approx(2 / c.nu_eff)
    assert not math.isclose(a.beta, c.beta, rel_tol=1e-6)
    assert c.mu == pytest.approx(1.0) and c.strongly_convex
    if p == 1.0:  # 2κν_eff ≤ 0.5 ⇒ μ < 0 with the printed β
        assert a.mu < 0 and not a.strongly_convex
        assert any("Proposition 13" in note for note in a.notes)
    assert any("differs" in note for note in a.notes)
    assert a.n_rounds == c.n_rounds  # R does not depend on β


def test_theorem16_invariant_under_rescaling_w():
    # w = s·w′: L0 → sL0, ρ → s²ρ, D → D/s; R and the data split are unchanged, β scales like ρ
    base = theorem16_params(10**4, 30, 1.5, 0.7, 2.0, 3.0, 1.0, 1e-5)
    s = 4.0
    scaled = theorem16_params(10**4, 30, 1.5, 0.7 * s**2, 2.0 * s, 3.0 / s, 1.0, 1e-5)
    assert scaled.n_rounds_real == pytest.approx(base.n_rounds_real)
    assert scaled.n_rounds == base.n_rounds
    assert scaled.beta == pytest.approx(base.beta * s**2)


def test_theorem16_clip_and_monotone():
    s = theorem16_params(5, 10, 2.0, 1e6, 1e-6, 1e3, 1e3, 1e-5)
    assert s.n_rounds == 5 and s.clipped and s.batch_size == 1
    s = theorem16_params(100, 10, 2.0, 1e-9, 1.0, 1e-3, 0.01, 1e-5)
    assert s.n_rounds == 1 and s.clipped and s.records_used == 100
    Rs = [theorem16_params(n, 10, 1.5, 1, 1, 1, 1, 1e-5).n_rounds_real for n in [10, 100, 10**4, 10**6]]
    assert Rs == sorted(Rs)
    Rs = [theorem16_params(10**4, 10, 1.5, 1, 1, 1, e, 1e-5).n_rounds_real for e in [0.01, 0.1, 1, 10]]
    assert Rs == sorted(Rs)


def test_theorem16_hostile():
    good = dict(n=1000, d=10, p=1.5, rho_wc=1.0, L0=1.0, D=1.0, eps=1.0, delta=1e-5)
    for bad in [dict(p=0.9), dict(p=2.1), dict(rho_wc=0.0), dict(L0=-1.0), dict(D=float("nan")), dict(n=0),
                dict(d=1), dict(delta=2.0), dict(beta_variant="paper")]:
        with pytest.raises(ValueError):
            theorem16_params(**(good | bad))
    with pytest.raises(TypeError):
        theorem16_params(**(good | dict(L0=None)))


# ---- rates --------------------------------------------------------------------------------------

def test_rate_hand_values():
    n, eps, delta, J = 10**4, 1.0, 1e-5, 20
    expect = 2.0 * (1 + 3 * 2) * math.log(J) ** (2 / 3) * math.log(n) ** (2 / 3) * math.log(1e5) ** (1 / 6) / 10**(4 / 3)
    assert rate_theorem8(n, eps, delta, J, 2.0, 1.0, 3.0) == pytest.approx(expect)
    r = rate_theorem11(n, 20, 2.0, eps, delta, 1.0, 1.0, 0.0)
    assert r == pytest.approx(math.log(n) ** (2 / 3) / n ** (1 / 3)
                              + (20 * math.log(1e5)) ** 0.2 * math.log(n) ** 0.8 / n ** 0.4)
    th = rate_theorem16(n, 10, 2.0, 1.0, 1.0, 1.0, 1.0, 1e-5)
    assert th == pytest.approx(2.0 * (n ** -0.25 + (10 * math.log(1e5) / n**2) ** (1 / 6)))


def test_rates_decrease_in_n_and_eps_and_scale():
    for rate in (lambda n, e: rate_theorem8(n, e, 1e-5, 20, 1, 1, 1),
                 lambda n, e: rate_theorem11(n, 20, 1.5, e, 1e-5, 1, 1, 1),
                 lambda n, e: rate_theorem16(n, 20, 1.5, 1, 1, 1, e, 1e-5)):
        vals = [rate(n, 1.0) for n in [100, 10**3, 10**4, 10**6]]
        assert vals == sorted(vals, reverse=True)
        vals = [rate(10**4, e) for e in [0.1, 1, 10]]
        assert vals == sorted(vals, reverse=True)
    # loss scale c: L0, L1 → c·L0, c·L1 multiplies the gap bound by c; w = s·w′ leaves it unchanged
    base = rate_theorem8(10**4, 1.0, 1e-5, 20, 2.0, 1.0, 3.0)
    assert rate_theorem8(10**4, 1.0, 1e-5, 20, 2.0, 5.0, 15.0) == pytest.approx(5 * base)
    assert rate_theorem8(10**4, 1.0, 1e-5, 20, 2.0 / 4, 4.0, 3.0 * 16) == pytest.approx(base)
    base = rate_theorem11(10**4, 20, 1.5, 1.0, 1e-5, 2.0, 1.0, 3.0)
    assert rate_theorem11(10**4, 20, 1.5, 1.0, 1e-5, 0.5, 4.0, 48.0) == pytest.approx(base)


def test_rates_hostile():
    with pytest.raises(ValueError):
        rate_theorem8(10**4, 1.0, 1e-5, 20, 0.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        rate_theorem11(10**4, 20, 1.0, 1.0, 1e-5, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        rate_theorem16(10**4, 20, 1.5, -1.0, 1.0, 1.0, 1.0, 1e-5)
