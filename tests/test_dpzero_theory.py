"""Theorem-prescribed hyperparameters and bounds of DPZero (reference/algorithms/dpzero_theory.py):
dpzero Theorems 1–3, Corollaries F.2–F.4, spec dpzero.md §2.6 and test T28.

Every number is checked twice: against the spec's [computed] T28 value (to the precision it is
printed with) and against an independent re-derivation from the paper's printed formula in plain
``math`` (float64, relative 1e-12). Bounds are re-assembled from the constituent terms of the last
display of each proof.
"""

import dataclasses
import inspect
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betaincc

from reference.algorithms import dpzero_theory as th
from reference.precision import working_precision

REL = 1e-12

# dpzero.md §8 T28: n = 1000, d = 100, r = 5, eps = 2, delta = 1e-5, L = ell = 1.
T28 = dict(n=1000, d=100, r=5, eps=2.0, delta=1e-5, L=1.0, ell=1.0)


def lg(eps, delta):
    return math.log(math.e + eps / delta)


def close(value, expected, rel=REL):
    return abs(float(value) - expected) <= rel * abs(expected)


def matches_printed(value, printed: str) -> bool:
    """|value − printed| <= half a unit in the printed number's last digit (plus float slack)."""
    mantissa = printed.lower().split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(printed.lower().split("e")[1]) if "e" in printed.lower() else 0
    half_unit = 0.5 * 10.0 ** (exponent - decimals)
    return abs(float(value) - float(printed)) <= half_unit * (1 + 1e-9)


def thm3_settings():
    p = T28
    return th.theorem3_settings(p["n"], p["d"], p["r"], p["eps"], p["delta"], p["L"], p["ell"])


def thm1_settings():
    p = T28
    return th.theorem1_settings(p["n"], p["d"], p["eps"], p["delta"], p["L"], p["ell"])


def thm2_settings():
    p = T28
    return th.theorem2_settings(p["n"], p["d"], p["r"], p["eps"], p["delta"], p["L"], p["ell"])


# Plain-math re-derivations of the printed formulas (Theorem 1, 2, 3 statements).


def math_thm3(n, d, r, eps, delta, L, ell):
    g = lg(eps, delta)
    lt2 = L**2 * math.log(2 * math.sqrt(2 * math.pi) * d * (r + 2) * n**3 * eps**2 / (r * g))
    lt = math.sqrt(lt2)
    T = n * (r + 2) * eps / (4 * math.sqrt(r * g))
    lam = (1 / (ell * d)) * min(4 * (2 - math.sqrt(2)) * lt, L / math.sqrt(d) * math.sqrt(math.sqrt(r * g) / (n * eps)))
    C = 4 * lt
    return dict(Lt2=lt2, T=T, alpha=1 / (4 * ell * (r + 2)), lam=lam, C=C, C0=2 * math.sqrt(2) * lt,
                sigma_real=4 * C * math.sqrt(2 * T * g) / (n * eps),
                sigma_int=4 * C * math.sqrt(2 * max(1, round(T)) * g) / (n * eps))


def math_thm1(n, d, eps, delta, L, ell):
    g = lg(eps, delta)
    T = n * eps / math.sqrt(d * g)
    C = L * d
    return dict(T=T, alpha=1 / (4 * ell * d), lam=4 * L / (ell * d) * math.sqrt(math.sqrt(d * g) / (n * eps)), C=C,
                sigma_real=4 * C * math.sqrt(2 * T * g) / (n * eps),
                sigma_int=4 * C * math.sqrt(2 * max(1, round(T)) * g) / (n * eps))


def math_thm2(n, d, r, eps, delta, L, ell):
    g = lg(eps, delta)
    T = n * (r + 2) * eps / (d * math.sqrt(r * g))
    return dict(T=T, alpha=1 / (4 * ell * (r + 2)), lam=4 * L / (ell * d) * math.sqrt(math.sqrt(r * g) / (n * eps)),
                C=L * d)


# ---------------------------------------------------------------------------------------------------
# T28: the spec's [computed] numbers


def test_t28_theorem3_matches_spec_and_paper_formula():
    with working_precision(50):
        s = thm3_settings()
    m = math_thm3(**{k: T28[k] for k in ("n", "d", "r", "eps", "delta", "L", "ell")})
    for value, printed, independent in [
        (s.extra["Ltilde2"], "26.1613536", m["Lt2"]),
        (s.clip_threshold, "20.4592683", m["C"]),
        (s.steps_formula, "448.0173421", m["T"]),
        (s.perturbation_max, "6.249879e-5", m["lam"]),
    ]:
        assert matches_printed(value, printed), (value, printed)
        assert close(value, independent), (value, independent)
    with working_precision(50):
        assert abs(s.step_size - mpmath.mpf(1) / 28) < mpmath.mpf(10) ** -49
    assert close(s.step_size, m["alpha"])
    assert s.steps == 448 and isinstance(s.steps, int)
    assert close(s.extra["C0"], m["C0"])


def test_t28_sigma_in_spec_uses_the_real_T_not_T_int():
    """The spec's σ = 4.2792802 (Thm 3) and 7.4765992 (Thm 1) are 4C√(2·T·Lg)/(nε) at the REAL T; its own
    §2.6 rounding rule (σ from T_int) gives 4.2791973 and 7.4605464, which is what the settings hold."""
    with working_precision(50):
        s3, s1 = thm3_settings(), thm1_settings()
    m3 = math_thm3(**{k: T28[k] for k in ("n", "d", "r", "eps", "delta", "L", "ell")})
    m1 = math_thm1(**{k: T28[k] for k in ("n", "d", "eps", "delta", "L", "ell")})
    assert matches_printed(m3["sigma_real"], "4.2792802") and matches_printed(m1["sigma_real"], "7.4765992")
    assert not matches_printed(s3.noise_std, "4.2792802") and not matches_printed(s1.noise_std, "7.4765992")
    assert close(s3.noise_std, m3["sigma_int"]) and close(s1.noise_std, m1["sigma_int"])
    assert matches_printed(s3.noise_std, "4.2791973") and matches_printed(s1.noise_std, "7.4605464")
    # σ at the real T is what the *_bound_terms give with steps = steps_formula.
    g = lg(2.0, 1e-5)
    with working_precision(50):
        terms = th.theorem3_bound_terms(s3, 0, steps=s3.steps_formula)
    sigma2 = float(terms["privacy_noise"]) / (2 * float(s3.step_size) * 5)
    assert close(math.sqrt(sigma2), m3["sigma_real"])
    assert close(s3.noise_std, 4 * float(s3.clip_threshold) * math.sqrt(2 * 448 * g) / 2000)


def test_t28_theorem1_and_theorem2():
    with working_precision(50):
        s1, s2 = thm1_settings(), thm2_settings()
    m1 = math_thm1(**{k: T28[k] for k in ("n", "d", "eps", "delta", "L", "ell")})
    m2 = math_thm2(**{k: T28[k] for k in ("n", "d", "r", "eps", "delta", "L", "ell")})
    for value, printed, independent in [
        (s1.steps_formula, "57.2455561", m1["T"]),
        (s1.step_size, "0.0025", m1["alpha"]),
        (s1.perturbation_max, "5.2867540e-3", m1["lam"]),
        (s1.clip_threshold, "100", m1["C"]),
        (s2.steps_formula, "17.9206937", m2["T"]),
        (s2.perturbation_max, "2.4999516e-3", m2["lam"]),
    ]:
        assert matches_printed(value, printed), (value, printed)
        assert close(value, independent), (value, independent)
    assert close(s2.step_size, m2["alpha"]) and s2.clip_threshold == 100
    assert (s1.steps, s2.steps) == (57, 18)
    assert s1.effective_rank is None and s1.pl_constant is None and s2.effective_rank == 5


def test_t28_spec_sigma_reference_value():
    """dpzero.md §5.1: C = 1, n = 1000, T = 448, eps = 2, delta = 1e-5 gives σ = 0.2091569102."""
    sigma = 4 * 1 * math.sqrt(2 * 448 * lg(2.0, 1e-5)) / (1000 * 2)
    assert matches_printed(sigma, "0.2091569102")
    with working_precision(50):
        s = thm3_settings()
    assert close(s.noise_std / s.clip_threshold, sigma)


# ---------------------------------------------------------------------------------------------------
# identities of the proofs


def test_theorem3_identities():
    with working_precision(50):
        s = thm3_settings()
        n, d, r, eps = s.n, s.d, s.effective_rank, s.epsilon
        L, ell, g = s.lipschitz, s.smoothness, s.log_term
        C, C0, lam, T = s.clip_threshold, s.extra["C0"], s.perturbation_max, s.steps_formula
        tight = mpmath.mpf(10) ** -45
        assert abs(C - mpmath.sqrt(2) * C0) <= tight * C
        assert C >= C0 + ell * lam * d / 2
        assert abs(s.step_size * T - n * eps / (16 * ell * mpmath.sqrt(r * g))) <= tight
        # The Theorem 3 choice of C0 makes the clipping term equal the bias allowance.
        clipping = 8 * mpmath.sqrt(2 * mpmath.pi) * L**2 * n * d * T * mpmath.exp(-(C0**2) / (8 * L**2))
        assert abs(clipping - L**2 * mpmath.sqrt(r * g) / (n * eps)) <= tight
        assert abs(4 * C**2 - 64 * s.extra["Ltilde2"]) <= tight * 64 * s.extra["Ltilde2"]
        # λ_max's second branch binds here: ℓ²d³λ² = L²√(rLg)/(nε) exactly.
        assert abs(ell**2 * d**3 * lam**2 - L**2 * mpmath.sqrt(r * g) / (n * eps)) <= tight
        assert abs(s.extra["Ltilde2"] - L**2 * mpmath.log(s.extra["log_argument"])) <= tight
        assert s.extra["Ltilde2"] == th.ltilde_theorem3_squared(n, d, r, eps, s.delta, L)


def test_theorem3_first_branch_of_lambda_gives_equality_in_clip_margin():
    """When L̃ is small (log argument near 1) the 4(2−√2)L̃ branch binds and C = C₀ + ℓλd/2 exactly."""
    args = (1, 1, 1, 0.3, 0.5, 1.0, 1.0)  # n, d, r, eps, delta, L, ell: log argument ≈ 1.13
    m = math_thm3(*args)
    assert 4 * (2 - math.sqrt(2)) * math.sqrt(m["Lt2"]) < math.sqrt(math.sqrt(lg(0.3, 0.5)) / 0.3)
    with working_precision(50):
        s = th.theorem3_settings(*args)
        first = 4 * (2 - mpmath.sqrt(2)) * mpmath.sqrt(s.extra["Ltilde2"]) / (s.smoothness * s.d)
        assert s.perturbation_max == first
        margin = s.extra["C0"] + s.smoothness * s.perturbation_max * s.d / 2
        assert abs(s.clip_threshold - margin) <= mpmath.mpf(10) ** -45
        th.theorem3_bound_terms(s, 0.0)  # equality is accepted
    assert close(s.perturbation_max, m["lam"])


def test_alpha_T_identities_of_theorems_1_and_2():
    with working_precision(50):
        s1, s2 = thm1_settings(), thm2_settings()
        n, d, eps, g = s1.n, s1.d, s1.epsilon, s1.log_term
        assert abs(s1.step_size * s1.steps_formula - n * eps / (4 * d * mpmath.sqrt(d * g))) < 1e-45
        assert abs(s2.step_size * s2.steps_formula - n * eps / (4 * d * mpmath.sqrt(5 * g))) < 1e-45


def test_bounds_are_the_sums_of_their_terms_at_the_formula_T():
    gap = 0.7
    p = T28
    g = lg(p["eps"], p["delta"])
    n, d, r, eps, L, ell = p["n"], p["d"], p["r"], p["eps"], p["L"], p["ell"]
    with working_precision(50):
        s1, s2, s3 = thm1_settings(), thm2_settings(), thm3_settings()
        b1, b2, b3 = th.theorem1_bound(s1, gap), th.theorem2_bound(s2, gap), th.theorem3_bound(s3, gap)
        t1 = th.theorem1_bound_terms(s1, gap, steps=s1.steps_formula)
        t2 = th.theorem2_bound_terms(s2, gap, steps=s2.steps_formula)
        t3 = th.theorem3_bound_terms(s3, gap, steps=s3.steps_formula)
    # printed RHS, plain math
    assert close(b1, 16 * (ell * gap + 2 * L**2) * d * math.sqrt(d * g) / (n * eps))
    assert close(b2, 16 * (ell * gap + 2 * L**2) * d * math.sqrt(r * g) / (n * eps))
    m3 = math_thm3(n, d, r, eps, p["delta"], L, ell)
    assert close(b3, (64 * (ell * gap + m3["Lt2"]) + 2 * L**2) * math.sqrt(r * g) / (n * eps))
    assert float(th.theorem3_bound(s3, 0)) >= 6.5  # erratum E15: vacuous (> L² = 1) at n = 1000
    # constituent terms of the proofs' last displays, plain math
    m1 = math_thm1(n, d, eps, p["delta"], L, ell)
    terms1 = [4 * gap / (m1["alpha"] * m1["T"]), ell**2 * m1["lam"] ** 2 * d**3,
              64 * ell * L**2 * m1["alpha"] * m1["T"] * d**3 * g / (n**2 * eps**2)]
    assert close(math.fsum(terms1), float(b1)) and close(t1["total"], float(b1))
    m2 = math_thm2(n, d, r, eps, p["delta"], L, ell)
    terms2 = [4 * gap / (m2["alpha"] * m2["T"]), ell**2 * m2["lam"] ** 2 * d**3,
              64 * ell * L**2 * m2["alpha"] * m2["T"] * d**2 * r * g / (n**2 * eps**2)]
    assert close(math.fsum(terms2), float(b2)) and close(t2["total"], float(b2))
    terms3 = [4 * gap / (m3["alpha"] * m3["T"]), 64 * ell * m3["C"] ** 2 * m3["alpha"] * m3["T"] * r * g / (n**2 * eps**2),
              ell**2 * d**3 * m3["lam"] ** 2,
              8 * math.sqrt(2 * math.pi) * L**2 * n * d * m3["T"] * math.exp(-m3["C0"] ** 2 / (8 * L**2))]
    assert close(math.fsum(terms3), float(b3)) and close(t3["total"], float(b3))
    for mine, theirs in zip((t3["optimization"], t3["privacy_noise"], t3["smoothing_bias"], t3["clipping"]), terms3):
        assert close(mine, theirs)


def test_bound_terms_default_to_the_integer_T_and_the_rounding_factor():
    with working_precision(50):
        s = thm1_settings()
        at_int = th.theorem1_bound_terms(s, 1.0)
        at_real = th.theorem1_bound_terms(s, 1.0, steps=s.steps_formula)
        f = s.steps_rounding_factor
        assert s.steps == 57 and abs(f - mpmath.mpf(57) / s.steps_formula) < 1e-45
        # optimisation ∝ 1/T, noise ∝ T (σ² ∝ T), bias independent of T.
        assert abs(at_int["optimization"] * f - at_real["optimization"]) < 1e-40
        assert abs(at_int["privacy_noise"] - at_real["privacy_noise"] * f) < 1e-40
        assert at_int["smoothing_bias"] == at_real["smoothing_bias"]
        sigma = 4 * s.clip_threshold * mpmath.sqrt(2 * 57 * s.log_term) / (s.n * s.epsilon)
        assert abs(s.noise_std - sigma) < 1e-45
        # a smaller λ only shrinks the bias term
        small = th.theorem1_bound_terms(s, 1.0, perturbation=s.perturbation_max / 2)
        assert abs(small["smoothing_bias"] * 4 - at_int["smoothing_bias"]) < 1e-45


def test_theorem3_terms_refuse_a_perturbation_that_breaks_the_clip_margin():
    s = thm3_settings()
    too_big = 2 * (s.clip_threshold - s.extra["C0"]) / (s.smoothness * s.d) * 1.01
    with pytest.raises(ValueError, match="perturbation"):
        th.theorem3_bound_terms(s, 0.0, perturbation=too_big)
    th.theorem3_bound_terms(s, 0.0, perturbation=too_big / 1.02)  # just inside: fine


def test_rounding_rule_when_T_is_below_one():
    """Remark F.6 / §2.6: T_int = max(1, round(T)); the factor T_int/T is reported (here > 1)."""
    with working_precision(30):
        s = th.theorem1_settings(1, 100, 0.1, 1e-5, 1.0, 1.0)
    assert s.steps_formula < 1 and s.steps == 1
    assert s.steps_rounding_factor > 1 and abs(s.steps_rounding_factor * s.steps_formula - 1) < 1e-25
    assert close(s.noise_std, 4 * 100 * math.sqrt(2 * 1 * lg(0.1, 1e-5)) / (1 * 0.1))


# ---------------------------------------------------------------------------------------------------
# Corollaries F.2–F.4


PL = dict(n=100_000, d=10, r=3, eps=2.0, delta=1e-5, L=1.0, ell=1.0, mu=0.5)


def pl_settings():
    p = PL
    with working_precision(50):
        f2 = th.corollary_f2_settings(p["n"], p["d"], p["eps"], p["delta"], p["L"], p["ell"], p["mu"])
        f3 = th.corollary_f3_settings(p["n"], p["d"], p["r"], p["eps"], p["delta"], p["L"], p["ell"], p["mu"])
        f4 = th.corollary_f4_settings(p["n"], p["d"], p["r"], p["eps"], p["delta"], p["L"], p["ell"], p["mu"])
    return f2, f3, f4


def test_corollary_settings_match_the_printed_formulas():
    p = PL
    n, d, r, eps, L, ell, mu = p["n"], p["d"], p["r"], p["eps"], p["L"], p["ell"], p["mu"]
    g, kappa = lg(eps, p["delta"]), ell / mu
    f2, f3, f4 = pl_settings()
    arg2 = n**2 * eps**2 / (kappa * d**3 * g)
    assert close(f2.steps_formula, 8 * kappa * d * math.log(arg2)) and close(f2.step_size, 1 / (4 * ell * d))
    assert close(f2.perturbation_max, 2 * L / ell * math.sqrt(g) / (n * eps)) and f2.clip_threshold == L * d
    arg3 = n**2 * eps**2 / (kappa * r * d**2 * g)
    assert close(f3.steps_formula, 8 * kappa * (r + 2) * math.log(arg3)) and close(f3.step_size, 1 / (4 * ell * (r + 2)))
    assert close(f3.perturbation_max, 2 * L / (ell * math.sqrt(d)) * math.sqrt(r * g) / (n * eps))
    arg4 = n**2 * eps**2 / (kappa * r * g)
    lt2 = 64 * L**2 * math.log(32 * math.sqrt(2 * math.pi) * kappa * n**3 * d * (r + 2) * eps**2 / (r * g))
    assert close(f4.extra["LtildeF4_2"], lt2) and close(f4.clip_threshold, math.sqrt(lt2) / 2)
    assert close(f4.steps_formula, 8 * kappa * (r + 2) * math.log(arg4))
    lam4 = 1 / (2 * ell * d) * min((2 - math.sqrt(2)) * math.sqrt(lt2), 4 * L / math.sqrt(d) * math.sqrt(r * g) / (n * eps))
    assert close(f4.perturbation_max, lam4)
    # the proof's form of λ: min{2(√2−1)C0/(ℓd), 2L√(rLg)/(ℓ d^{3/2} nε)} is the same number
    c0 = math.sqrt(8 * L**2 * math.log(32 * math.sqrt(2 * math.pi) * kappa * n**3 * d * (r + 2) * eps**2 / (r * g)))
    assert close(f4.extra["C0"], c0) and close(f4.clip_threshold, math.sqrt(2) * c0)
    assert close(lam4, min(2 * (math.sqrt(2) - 1) * c0 / (ell * d), 2 * L / (ell * d**1.5) * math.sqrt(r * g) / (n * eps)))
    # αT = (2/μ) log(arg) in all three
    for s, arg in ((f2, arg2), (f3, arg3), (f4, arg4)):
        assert close(s.step_size * s.steps_formula, 2 / mu * math.log(arg))
        assert s.extra["kappa"] == 2 and s.pl_constant == mu


def test_erratum_e4_two_different_ltildes():
    """Theorem 3's L̃ and Corollary F.4's L̃ differ (E4), yet both give C = 4L√log(·) with their own log."""
    p = PL
    with working_precision(50):
        l3 = th.ltilde_theorem3_squared(p["n"], p["d"], p["r"], p["eps"], p["delta"], p["L"])
        l4 = th.ltilde_corollary_f4_squared(p["n"], p["d"], p["r"], p["eps"], p["delta"], p["L"], p["ell"], p["mu"])
        s3 = th.theorem3_settings(p["n"], p["d"], p["r"], p["eps"], p["delta"], p["L"], p["ell"])
        _, _, f4 = pl_settings()
        assert l4 > 60 * l3  # the factor 64 and the larger log argument
        assert abs(s3.clip_threshold - 4 * mpmath.sqrt(l3)) < 1e-45
        assert abs(f4.clip_threshold - 4 * p["L"] * mpmath.sqrt(l4 / 64)) < 1e-45
        assert abs(f4.clip_threshold - mpmath.sqrt(l4) / 2) < 1e-45


def test_corollary_bounds_are_the_sums_of_their_terms():
    gap = 1.3
    p = PL
    n, d, r, eps, L, ell, mu = p["n"], p["d"], p["r"], p["eps"], p["L"], p["ell"], p["mu"]
    g, kappa = lg(eps, p["delta"]), ell / mu
    f2, f3, f4 = pl_settings()
    with working_precision(50):
        b2, b3, b4 = th.corollary_f2_bound(f2, gap), th.corollary_f3_bound(f3, gap), th.corollary_f4_bound(f4, gap)
        t2 = th.corollary_f2_bound_terms(f2, gap, steps=f2.steps_formula)
        t3 = th.corollary_f3_bound_terms(f3, gap, steps=f3.steps_formula)
        t4 = th.corollary_f4_bound_terms(f4, gap, steps=f4.steps_formula)
    arg2 = n**2 * eps**2 / (kappa * d**3 * g)
    assert close(b2, (ell * gap + 64 * L**2 * kappa * math.log(arg2) + 2 * L**2) * d**3 * g / (mu * n**2 * eps**2))
    arg3 = n**2 * eps**2 / (kappa * r * d**2 * g)
    assert close(b3, (ell * gap + 64 * L**2 * kappa * math.log(arg3) + 2 * L**2) * r * d**2 * g / (mu * n**2 * eps**2))
    arg4 = n**2 * eps**2 / (kappa * r * g)
    lt2 = float(f4.extra["LtildeF4_2"])
    assert close(b4, (ell * gap + math.log(arg4) * (L**2 + 16 * lt2 * kappa) + 2 * L**2) * r * g / (mu * n**2 * eps**2))
    # terms of the resolved recursions (plain math, real T)
    for s, t, b, dim in ((f2, t2, b2, d), (f3, t3, b3, r)):
        alpha, T, lam = float(s.step_size), float(s.steps_formula), float(s.perturbation_max)
        sigma2 = (4 * L * d) ** 2 * 2 * T * g / (n * eps) ** 2
        terms = [math.exp(-mu * alpha * T / 2) * gap, ell**2 * lam**2 * d**3 / (2 * mu), ell * alpha * dim * sigma2 / mu]
        assert close(math.fsum(terms), float(b)) and close(t["total"], float(b))
    alpha, T, lam, C, C0 = (float(f4.step_size), float(f4.steps_formula), float(f4.perturbation_max),
                            float(f4.clip_threshold), float(f4.extra["C0"]))
    sigma2 = C**2 * 32 * T * g / (n * eps) ** 2
    terms = [math.exp(-mu * alpha * T / 2) * gap, ell**2 * lam**2 * d**3 / (2 * mu), ell * alpha * r * sigma2 / mu,
             4 * math.sqrt(2 * math.pi) * L**2 * n * d * T * math.exp(-C0**2 / (8 * L**2)) / mu]
    assert close(math.fsum(terms), float(b4)) and close(t4["total"], float(b4))


def test_remark_f5_unconditional_term():
    gap, B = 0.4, 3.0
    p = PL
    _, _, f4 = pl_settings()
    with working_precision(50):
        conditional = th.corollary_f4_bound(f4, gap)
        unconditional = th.corollary_f4_bound(f4, gap, loss_bound=B)
        terms = th.corollary_f4_bound_terms(f4, gap, steps=f4.steps_formula, loss_bound=B)
    g, kappa = lg(p["eps"], p["delta"]), p["ell"] / p["mu"]
    log4 = math.log(p["n"] ** 2 * p["eps"] ** 2 / (kappa * p["r"] * g))
    extra = (p["mu"] * B / p["d"]) * log4 * p["r"] * g / (p["mu"] * p["n"] ** 2 * p["eps"] ** 2)
    assert close(unconditional - conditional, extra, rel=1e-10)
    assert close(terms["unconditional_remainder"], extra, rel=1e-10)
    assert close(terms["total"], float(unconditional), rel=1e-12)


# ---------------------------------------------------------------------------------------------------
# properties over the parameter space


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(10, 10**7),
    d=st.integers(1, 10**5),
    rank_fraction=st.floats(0, 1),
    eps=st.floats(0.05, 20),
    log10_delta=st.floats(-12, -1),
    L=st.floats(0.1, 10),
    ell=st.floats(0.1, 10),
)
def test_settings_invariants(n, d, rank_fraction, eps, log10_delta, L, ell):
    delta = 10.0**log10_delta
    r = 1 + rank_fraction * (d - 1)
    for s in (th.theorem1_settings(n, d, eps, delta, L, ell), th.theorem2_settings(n, d, r, eps, delta, L, ell)):
        assert s.clip_threshold == mpmath.mpf(L) * d
    try:
        s3 = th.theorem3_settings(n, d, r, eps, delta, L, ell)
    except ValueError as err:
        assert "vacuous" in str(err)
        return
    for s in (th.theorem1_settings(n, d, eps, delta, L, ell), th.theorem2_settings(n, d, r, eps, delta, L, ell), s3):
        assert isinstance(s.steps, int) and s.steps >= 1
        assert s.steps == max(1, math.floor(float(s.steps_formula) + 0.5))
        assert abs(s.steps_rounding_factor * s.steps_formula - s.steps) <= 1e-12 * s.steps
        sigma = 4 * s.clip_threshold * mpmath.sqrt(2 * s.steps * s.log_term) / (n * s.epsilon)
        assert abs(s.noise_std - sigma) <= 1e-12 * sigma
        assert s.perturbation_max > 0 and s.step_size > 0
    assert s3.clip_threshold * (1 + 1e-12) >= s3.extra["C0"] + s3.smoothness * s3.perturbation_max * d / 2
    th.theorem3_bound_terms(s3, 1.0)  # the default λ_max keeps the clip margin
    tight = abs(s3.clip_threshold - mpmath.sqrt(2) * s3.extra["C0"])
    assert tight <= 1e-12 * s3.clip_threshold


# ---------------------------------------------------------------------------------------------------
# vacuity and validation


def test_vacuous_statements_raise_naming_the_log_argument():
    with pytest.raises(ValueError, match=r"log argument n\^2 eps\^2/\(kappa d\^3 Lg\) = 0\.163853 <= 1: the corollary is vacuous"):
        th.corollary_f2_settings(1000, 100, 2, 1e-5, 1, 1, 0.5)
    with pytest.raises(ValueError, match=r"n\^2 eps\^2/\(kappa r d\^2 Lg\) = .* <= 1"):
        th.corollary_f3_settings(100, 100, 5, 1, 1e-5, 1, 1, 0.5)
    with pytest.raises(ValueError, match=r"corollary_f4: log argument n\^2 eps\^2/\(kappa r Lg\)"):
        th.corollary_f4_settings(1, 10, 5, 1, 1e-5, 1, 1, 0.5)
    with pytest.raises(ValueError, match=r"theorem3: log argument 2 sqrt\(2 pi\) d \(r\+2\) n\^3 eps\^2/\(r Lg\) = .* the theorem is vacuous"):
        th.theorem3_settings(1, 1, 1, 0.01, 0.5, 1, 1)
    with pytest.raises(ValueError, match=r"theorem3: log argument"):
        th.ltilde_theorem3_squared(1, 1, 1, 0.01, 0.5, 1)
    with pytest.raises(ValueError, match=r"32 sqrt\(2 pi\) kappa n\^3 d \(r\+2\) eps\^2/\(r Lg\) = .* <= 1"):
        th.ltilde_corollary_f4_squared(1, 1, 1, 0.001, 0.5, 1, 1, 1)


@pytest.mark.parametrize(
    "kwargs, error, pattern",
    [
        (dict(n=0), ValueError, "n must be >= 1"),
        (dict(n=2.5), TypeError, "n must be an integer"),
        (dict(d=0), ValueError, "d must be >= 1"),
        (dict(effective_rank=0.5), ValueError, r"effective_rank must lie in \[1, d\]"),
        (dict(effective_rank=101), ValueError, r"effective_rank must lie in \[1, d\]"),
        (dict(effective_rank=float("nan")), ValueError, "effective_rank must be a finite"),
        (dict(epsilon=0), ValueError, "epsilon must be > 0"),
        (dict(epsilon=float("inf")), ValueError, "epsilon must be a finite"),
        (dict(delta=0), ValueError, r"delta must lie in \(0, 1\)"),
        (dict(delta=1), ValueError, r"delta must lie in \(0, 1\)"),
        (dict(lipschitz=0), ValueError, "lipschitz must be > 0"),
        (dict(smoothness=-1), ValueError, "smoothness must be > 0"),
        (dict(smoothness="1"), TypeError, "smoothness must be a real number"),
        (dict(pl_constant=0), ValueError, "pl_constant must be > 0"),
        (dict(pl_constant=2), ValueError, "pl_constant must be <= smoothness"),
    ],
)
def test_input_validation_names_the_parameter(kwargs, error, pattern):
    base = dict(n=10**6, d=100, effective_rank=5, epsilon=2, delta=1e-5, lipschitz=1, smoothness=1, pl_constant=0.5)
    base.update(kwargs)
    functions = [th.theorem1_settings, th.theorem2_settings, th.theorem3_settings, th.corollary_f2_settings,
                 th.corollary_f3_settings, th.corollary_f4_settings]
    called = 0
    for fn in functions:
        accepted = inspect.signature(fn).parameters
        if not set(kwargs) <= set(accepted):
            continue
        with pytest.raises(error, match=pattern):
            fn(**{k: v for k, v in base.items() if k in accepted})
        called += 1
    assert called >= 2


def test_bound_validation():
    s3, s1 = thm3_settings(), thm1_settings()
    with pytest.raises(ValueError, match="loss_gap must be >= 0"):
        th.theorem3_bound(s3, -0.1)
    with pytest.raises(ValueError, match=r"settings must come from theorem1_settings, got settings.theorem = 'theorem3'"):
        th.theorem1_bound(s3, 0.0)
    with pytest.raises(TypeError, match="settings must be a TheoremSettings"):
        th.theorem2_bound({"theorem": "theorem2"}, 0.0)
    with pytest.raises(ValueError, match="steps must be > 0"):
        th.theorem1_bound_terms(s1, 0.0, steps=0)
    with pytest.raises(ValueError, match="perturbation must be > 0"):
        th.theorem1_bound_terms(s1, 0.0, perturbation=-1e-3)
    _, _, f4 = pl_settings()
    with pytest.raises(ValueError, match="loss_bound must be >= 0"):
        th.corollary_f4_bound(f4, 0.0, loss_bound=-1)


def test_settings_are_frozen_and_typed():
    s = thm3_settings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.steps = 3
    with pytest.raises(TypeError):
        s.extra["C0"] = 0
    for field in ("step_size", "steps_formula", "perturbation_max", "clip_threshold", "noise_std", "log_term",
                  "epsilon", "delta", "lipschitz", "smoothness", "steps_rounding_factor"):
        assert isinstance(getattr(s, field), mpmath.mpf), field
    assert isinstance(s.n, int) and isinstance(s.d, int) and s.theorem == "theorem3"


def test_settings_follow_the_working_precision():
    with working_precision(60):
        hi = thm3_settings()
    with working_precision(30):
        lo = thm3_settings()
    assert abs(hi.clip_threshold - lo.clip_threshold) < mpmath.mpf(10) ** -28
    assert hi.clip_threshold != lo.clip_threshold  # carried more digits


# ---------------------------------------------------------------------------------------------------
# clip_failure_bound and effective_rank


def test_clip_failure_bound_formula_and_lemma_c1_tail():
    assert close(th.clip_failure_bound(14.0, 1.0), 2 * math.sqrt(2 * math.pi) * math.exp(-(14.0**2) / 8))
    assert close(th.clip_failure_bound(0, 3.0), 2 * math.sqrt(2 * math.pi))  # trivial (> 1) at C0 = 0
    # the exact tail P(|u^T a| >= C) = I_{1-C²/(d‖a‖²)} ... (Beta(1/2, (d−1)/2) law) is below the bound
    for d in (2, 10, 100):
        for ratio in np.linspace(0.1, 0.99 * math.sqrt(d), 15):
            exact = betaincc(0.5, (d - 1) / 2, ratio**2 / d)
            assert exact <= float(th.clip_failure_bound(ratio, 1.0)) * (1 + 1e-12)
    with working_precision(50):
        s = thm3_settings()
        per_step = th.clip_failure_bound(s.extra["C0"], s.lipschitz)
        # App. E union bound at the Theorem 3 choice: P(Q̄) <= n·T·2√(2π)exp(−C0²/(8L²)) = √(rLg)/(4dnε)
        union = s.n * s.steps_formula * per_step
        assert abs(union - mpmath.sqrt(5 * s.log_term) / (4 * s.d * s.n * s.epsilon)) < 1e-45
    with pytest.raises(ValueError, match="c0 must be >= 0"):
        th.clip_failure_bound(-1.0, 1.0)
    with pytest.raises(ValueError, match="lipschitz must be > 0"):
        th.clip_failure_bound(1.0, 0.0)


def test_effective_rank():
    d = 50
    i = np.arange(1, d + 1)
    assert close(th.effective_rank(np.diag(1.0 / i)), math.fsum(1 / k for k in i))  # H_d (§6.1 mode c)
    assert th.effective_rank(np.eye(7)) == 7.0
    rng = np.random.default_rng(5)
    v = rng.standard_normal((d, 3))
    low = v @ np.diag([3.0, 2.0, 1.0]) @ v.T
    assert 1 <= th.effective_rank(low) <= 3 + 1e-9
    assert close(th.effective_rank(7.5 * low), th.effective_rank(low), rel=1e-10)
    with pytest.raises(ValueError, match="hessian must be symmetric"):
        th.effective_rank(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="hessian must be positive semidefinite"):
        th.effective_rank(np.diag([1.0, -0.5]))
    with pytest.raises(ValueError, match="hessian must be nonzero"):
        th.effective_rank(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="hessian must be a square"):
        th.effective_rank(np.ones((2, 3)))
    with pytest.raises(ValueError, match="hessian must contain only finite"):
        th.effective_rank(np.diag([1.0, np.nan]))
