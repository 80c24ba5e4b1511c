"""nsnc_improved Theorems 3.1, 4.1 and C.4, Proposition 2.6 and Lemmas 3.5, 4.4, B.1: the hyper-parameters the theory
prescribes for Algorithm 2 with Algorithms 3, 4 and 5, the bounds they certify, and the paper's rates.

Kornowski, Liu, Talwar — *Improved Sample Complexity for Private Nonsmooth Nonconvex Optimization* (ICML 2025).
The theorems give their parameters up to Θ̃(·); here every hidden constant is 1 and every bound is explicit.

Single pass (``single_pass_settings``; Theorem 3.1 for Algorithm 3, Theorem C.4 for Algorithm 5), n records:

1. T0 = ⌊n/2⌋ (the budget below uses ≈ 2 records per step).
2. D = min(D(T0), α/4), with D(T) = min{(Φ²α/(L²T²√d))^{1/3}, (Φαε/(dLT))^{1/2}, (Φ³α²ε/(d^{3/2}L³T³))^{1/5}}
   (``variant="corrected"``) or the same without the √d of the first entry (``variant="paper"``: Theorem 3.1's
   statement is truncated; its parameters are rebuilt from Theorem C.4 and Lemma 3.4). Eq. (9) bounds the
   sampling term of Lemma 3.5 by L/B1 where it is L/√B1, and eq. (10) drops it; restoring it puts the √d back
   (erratum nsnc_improved.E2).
3. M = max(1, ⌊α/(4D)⌋), so M·D ≤ α/4 (Proposition 2.6 needs M·D ≤ α).
4. Σ = max(1, ⌈max{α/(D√d), (α/(εD))^{2/3}}⌉) (corrected: the first entry balances L/√Σ against LD√(dΣ)/α) or
   max(1, round((α/(εD))^{2/3})) (paper); at most T0.
5. B1 = Σ, B2 = 1; T = the largest t with U(t) = ⌈t/Σ⌉B1 + (t − ⌈t/Σ⌉)B2 ≤ n, then T ← M⌊T/M⌋, K = T/M ≥ 1.
6. γ = δ/8 and the number of directions per record: Algorithm 3: one m for both branches, the privacy floor
   m = ⌈2(d+1)²·log(2/γ)·max{1, (α/(κ_d D))²}⌉ (it makes the concentration radius r ≤ L·min(1, κ_d D/α)), or Lemma
   3.4's m = ⌈log(8d·max(B1, B2)/δ)·(d²B1² + dα²B2²/D²)⌉ (variant "paper"); Algorithm 5: m_reset = 1 (one
   perturbation per record), m_increment = ⌈8·log(2/γ)·(α/(κ_d D))²⌉ or Lemma C.2's
   ⌈log(8d·max(B1, B2)/δ)·B2²α²/(D²d)⌉; common random numbers (not in the paper): m_reset = ⌈2(d+1)²log(2/γ)⌉,
   m_increment = ⌈2((d + κ_d)/κ_d)²·log(2/γ)⌉. ``directions=m`` overrides both (the practical mode: m is then
   whatever the caller can afford, and the accounting falls back to the worst case where the high-probability
   bound is larger). m can be ~10⁸: it is a Python int and nothing of that size is ever allocated.
7. Sensitivities, δ_fail ≤ 4γ = δ/2: ``nsnc_sensitivities`` (Lemma 3.3 / C.1, explicit).
8. σ: ``accountant="exact"``: σ = S/μ*, μ* = gaussian_mu(ε, δ − δ_fail), S = √max(bitlen(Σ)·s_reset²,
   (bitlen(Σ) − 1)·s_inc²) (a reset record lies in bitlen(Σ) tree nodes, an increment record in at most one fewer); ``accountant="paper"``:
   Proposition 2.5 with δ/2 reserved for the tree, σ = 4s√(log(max(Σ, 2))·log(2/δ))/ε (nsnc_improved.E3);
   s = max(s_reset, s_inc). σ is rounded up to float64.
9. G0² = Lemma 3.5's variance bound at τ = Σ with popcount(τ) ≤ bitlen(Σ) (``single_pass_variance_bound``),
   G1 = L + G0, η = D/(G1√M).
10. Certified bound (Proposition 2.6 corrected, Lemma 2.4): E‖∂̄_{2α}F(x_out)‖ ≤ (Φ + 2Lα)/(DT) + (5/2)G1/√M + 2G0.
    Lemma B.1's regret constant 3/2 holds only when each block of M steps restarts OGD at Δ = 0; without restarts
    it is 5/2, and the bias term is 2G0, not G0 (erratum nsnc_improved.E5). Also F_α(x0) −
    inf F_α ≤ Φ + 2Lα (the proof of Theorem 3.1 writes Φ + Lα).

Multi-pass (``multi_pass_settings``; Theorem 4.1, Algorithm 4), target β:

1. D = αβ²/(225L²), M = max(1, ⌊α/(4D)⌋), T = ⌈3(Φ + 2Lα)/(Dβ)⌉ rounded up to a multiple of M. Theorem 4.1
   prints D = Θ̃(α²β²/L²) and T = Θ̃(ΦL²/(α²β³)), dimensionally inconsistent (L√(D/α) would be √α·β); the
   printed forms (constants 1, D ≤ α/4) are ``variant="paper"`` (erratum nsnc_improved.E9).
2. Σ = max(1, round(α/(D√d))); N1 = ⌈T/Σ⌉ resets, N2 = T − N1 increments.
3. γ = δ/(8T) (so δ_fail = 2γN1 + 4γN2 ≤ δ/2); the privacy floor m_priv = ⌈2(d+1)²·log(2/γ)·max{1, (α/(κ_d D))²}⌉:
   Theorem 4.1's m = L²dΣ/(nσ1²) + L²d/(nσ2²) controls the variance only and gives no concentration, which the
   high-probability sensitivity needs (erratum nsnc_improved.E10); m = max(m_priv, m_var).
4. σ1, σ2 by the exact accountant (an equal split of μ*² = gaussian_mu(ε, δ − δ_fail)²), calibrated at m_priv
   (a larger m only lowers the sensitivities), or by Theorem 4.1's printed rule with ``paper_constant`` c.
5. G0² = Lemma 4.4's bound at τ = Σ (``multi_pass_variance_bound``), G1 = L + G0, η = D/(G1√M); the certified
   bound on E‖∂̄_{2α}F̂^D(x_out)‖ as in the single pass.

Vacuous settings. Every element of ∂̄_{2α}F(x) is an average of gradients of an L-Lipschitz function, so
‖∂̄_{2α}F(x)‖ ≤ L at every x: a certified bound ≥ L says nothing a start point does not already have. Both settings
functions refuse such settings (ValueError naming a record count, or for the multi pass a target, that certifies
less than L) unless ``allow_vacuous=True``; the settings then carry ``vacuous=True``, and a run made with them reports
its bound as vacuous. At CPU sizes every single-pass setting is vacuous (the (5/2)G1/√M term alone needs M ≥ 7, i.e.
α ≥ 28D).

Also: the explicit variance bounds of Lemmas 3.5, C.3 and 4.4, OGD's pathwise regret (Lemma B.1, corrected) and the
printed one, and the rates of Theorems 3.1 (printed and corrected) and 4.1 as orders with constants 1.

Optimisation hyper-parameters are Python floats and ints; the privacy scalars (γ, sensitivities, δ_fail, σ, μ, ε)
are mpmath numbers at the caller's working precision. Settings the data cannot support raise one ValueError that
says how many records would be needed.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import mpmath
import numpy as np

from ..accounting.gaussian import gaussian_mu
from ..smoothing import smoothness_constant
from ..validation import check_array, check_int, check_probability, check_real
from .nsnc_improved_privacy import (
    NsncPrivacyPlan,
    nsnc_multi_pass_calibration,
    nsnc_multi_pass_delta_fail,
    nsnc_multi_pass_plan,
    nsnc_reset_counts,
    nsnc_sensitivities,
    nsnc_single_pass_delta_fail,
    nsnc_single_pass_effective_sensitivity,
    nsnc_single_pass_plan,
    nsnc_tree_sigma,
)

__all__ = [
    "VARIANTS",
    "ACCOUNTANTS",
    "SINGLE_PASS_THEORY_ORACLES",
    "SinglePassSettings",
    "MultiPassSettings",
    "records_used",
    "single_pass_variance_bound",
    "multi_pass_variance_bound",
    "o2nc_certified_bound",
    "single_pass_settings",
    "multi_pass_settings",
    "certified_bound_single_pass",
    "certified_bound_multi_pass",
    "min_records_single_pass",
    "min_records_multi_pass",
    "ogd_regret",
    "ogd_regret_bound",
    "lemma_b1_printed_bound",
    "rate_thm31_printed",
    "rate_thm31_corrected",
    "rate_thm41",
    "samples_thm31_printed",
    "samples_thm31_corrected",
    "samples_thm41",
]

#: "corrected" (explicit, dimensionally consistent) or "paper" (the printed parameter forms, constants 1).
VARIANTS = ("corrected", "paper")
#: How the single-pass σ is chosen: the exact Gaussian-DP calibration, or Proposition 2.5's printed rule.
ACCOUNTANTS = ("exact", "paper")
#: The single-pass oracles the settings support: Algorithm 3, its common-random-numbers variant, Algorithm 5.
SINGLE_PASS_THEORY_ORACLES = ("single_pass", "single_pass_crn", "first_order")

#: The largest record count the searches of ``min_records_*`` try before giving up.
_MAX_RECORDS = 1 << 62


@dataclasses.dataclass(frozen=True)
class SinglePassSettings:
    """The settings of a single-pass run of Algorithm 2 (Theorem 3.1 / C.4; module doc, steps 1–10).

    Inputs: n, d, lipschitz (L), initial_gap (Φ), smoothing_radius (α), epsilon, delta (the target), variant,
    accountant, oracle, directions (the explicit m, or None), clip_hardening. T0 = ⌊n/2⌋. step_bound: D;
    M: the block length; tree_size: Σ; B1, B2; T (= K·M), K; step_size: η = D/(G1√M); smoothness: H = Lκ_d/α.
    m_reset, m_increment: the directions per record used; m_privacy_reset, m_privacy_increment: the privacy floors
    of step 6 (what makes the high-probability sensitivities O(L/B1) and O(HD/B2)). gamma (γ = δ/8),
    radius_reset, radius_increment (the concentration radii; radius_reset None for Algorithm 5),
    sensitivity_reset, sensitivity_increment, delta_fail, noise_std (σ), mu (μ), epsilon_exact (the exact ε at δ
    of the run: ≤ epsilon): privacy scalars (mpf). guarantee: the plan's. G0, G1: the bounds on
    E‖g̃_t − ∇F_α(z_t)‖ and E‖g̃_t‖ (root mean squares). records_used = U(T) ≤ n, records_unused.
    certified_bound: module doc step 10. vacuous: certified_bound ≥ L (module doc, "Vacuous settings"). plan: the
    ``NsncPrivacyPlan`` of the run. note: what was corrected.
    """

    n: int
    d: int
    lipschitz: float
    initial_gap: float
    smoothing_radius: float
    epsilon: mpmath.mpf
    delta: mpmath.mpf
    variant: str
    accountant: str
    oracle: str
    directions: int | None
    clip_hardening: bool
    T0: int
    step_bound: float
    M: int
    tree_size: int
    B1: int
    B2: int
    T: int
    K: int
    step_size: float
    smoothness: float
    m_reset: int
    m_increment: int
    m_privacy_reset: int
    m_privacy_increment: int
    gamma: mpmath.mpf
    radius_reset: mpmath.mpf | None
    radius_increment: mpmath.mpf
    sensitivity_reset: mpmath.mpf
    sensitivity_increment: mpmath.mpf
    delta_fail: mpmath.mpf
    noise_std: mpmath.mpf
    mu: mpmath.mpf
    epsilon_exact: mpmath.mpf
    guarantee: str
    G0: float
    G1: float
    records_used: int
    records_unused: int
    certified_bound: float
    vacuous: bool
    plan: NsncPrivacyPlan
    note: str


@dataclasses.dataclass(frozen=True)
class MultiPassSettings:
    """The settings of a multi-pass run of Algorithm 2 with Algorithm 4 (Theorem 4.1; module doc, multi-pass 1–5).

    Inputs: n, d, lipschitz (L), initial_gap (Φ), smoothing_radius (α), target_stationarity (β), epsilon, delta,
    variant, noise_rule ("exact", or "paper" when ``paper_constant`` c is given), paper_constant. step_bound (D),
    M (the block length), T (a multiple of M), K = T/M, tree_size (Σ), resets (N1), increments (N2), step_size (η),
    smoothness (H). m = max(m_privacy, m_variance): m_privacy the floor of step 3, m_variance Theorem 4.1's
    ⌈L²dΣ/(nσ1²) + L²d/(nσ2²)⌉. gamma = δ/(8T); radius (r at m_privacy); sensitivity_reset, sensitivity_increment,
    delta_fail: what σ1, σ2 were calibrated for (at m_privacy; the plan accounts at m, never worse); noise_std_reset
    (σ1), noise_std_increment (σ2, None when N2 = 0), mu and epsilon_exact (the plan's exact μ and ε at δ),
    privacy_meets_target (epsilon_exact ≤ epsilon; always for the exact rule). guarantee. G0, G1.
    records_used = n (every record at every step). certified_bound; meets_target: certified_bound ≤ β; vacuous:
    certified_bound ≥ L. plan, note.
    """

    n: int
    d: int
    lipschitz: float
    initial_gap: float
    smoothing_radius: float
    target_stationarity: float
    epsilon: mpmath.mpf
    delta: mpmath.mpf
    variant: str
    noise_rule: str
    paper_constant: float | None
    step_bound: float
    M: int
    T: int
    K: int
    tree_size: int
    resets: int
    increments: int
    step_size: float
    smoothness: float
    m: int
    m_privacy: int
    m_variance: int
    gamma: mpmath.mpf
    radius: mpmath.mpf
    sensitivity_reset: mpmath.mpf
    sensitivity_increment: mpmath.mpf
    delta_fail: mpmath.mpf
    noise_std_reset: mpmath.mpf
    noise_std_increment: mpmath.mpf | None
    mu: mpmath.mpf
    epsilon_exact: mpmath.mpf
    privacy_meets_target: bool
    guarantee: str
    G0: float
    G1: float
    records_used: int
    certified_bound: float
    meets_target: bool
    vacuous: bool
    plan: NsncPrivacyPlan
    note: str


# ---------------------------------------------------------------------------------------------------
# Input checks


def _pos(name, value) -> float:
    return float(check_real(name, value, positive=True))


def _check_choice(name, value, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def _check_problem(d, lipschitz, initial_gap, smoothing_radius):
    d = check_int("d", d, minimum=1)
    L = _pos("lipschitz", lipschitz)
    gap = _pos("initial_gap", initial_gap)
    alpha = _pos("smoothing_radius", smoothing_radius)
    if alpha > gap / L:
        raise ValueError(f"smoothing_radius must be <= initial_gap/lipschitz = {gap / L:.6g} (the assumption "
                         f"alpha <= Phi/L of Theorems 3.1, 4.1 and C.4), got {alpha:.6g}")
    return d, L, gap, alpha


def _kappa(d) -> float:
    return float(smoothness_constant(d, arithmetic="float64"))


def _popcount(k: int) -> int:
    return bin(k).count("1")


# ---------------------------------------------------------------------------------------------------
# Pieces: the record budget, the variance bounds (Lemmas 3.5, C.3, 4.4), Proposition 2.6


def records_used(T, tree_size, B1, B2):
    """U(T) = ⌈T/Σ⌉·B1 + (T − ⌈T/Σ⌉)·B2: the records T steps of a single-pass oracle read (proof of Theorem 3.1:
    "B1T/Σ + B2T = O(n)"). T ≥ 0 (U(0) = 0)."""
    T = check_int("T", T, minimum=0)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    B1 = check_int("B1", B1, minimum=1)
    B2 = check_int("B2", B2, minimum=1)
    resets = -(-T // tree_size)
    return resets * B1 + (T - resets) * B2


def _largest_T(n, tree_size, B1, B2):
    """The largest T with U(T) ≤ n (U is nondecreasing and U(t) ≥ t)."""
    lo, hi = 0, n + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if records_used(mid, tree_size, B1, B2) <= n:
            lo = mid
        else:
            hi = mid
    return lo


def _single_variance(tau, tree_count, d, L, alpha, D, B1, B2, m_reset, m_increment, sigma, oracle):
    H = L * _kappa(d) / alpha
    if oracle == "first_order":
        reset = L**2 / B1
        increment = 2 * L**2 / m_increment + 4 * H**2 * D**2
    elif oracle == "single_pass_crn":
        reset = (L**2 + L**2 * d**2 / m_reset) / B1
        increment = 4 * d**2 * L**2 * D**2 / (alpha**2 * m_increment) + 4 * H**2 * D**2
    else:
        reset = (L**2 + L**2 * d**2 / m_reset) / B1
        increment = 2 * L**2 * d**2 / m_increment + 4 * H**2 * D**2
    return reset + (tau - 1) * increment / B2 + d * sigma**2 * tree_count


def single_pass_variance_bound(tau, *, d, lipschitz, smoothing_radius, step_bound, B1, B2, m_reset, m_increment,
                               noise_std, oracle="single_pass"):
    """Lemma 3.5 (Lemma C.3 for Algorithm 5) explicitly: E‖g̃_t − ∇F_α(z_t)‖² at position τ = τ(t) of its period.

    "single_pass" (Algorithm 3): (L² + L²d²/m_reset)/B1 + (τ−1)(2L²d²/m_increment + 4H²D²)/B2 + dσ²·popcount(τ).
    "first_order" (Algorithm 5, one perturbation per record at the reset): L²/B1 + (τ−1)(2L²/m_increment +
    4H²D²)/B2 + dσ²·popcount(τ). "single_pass_crn" (not in the paper; the shared directions make each summand of
    the difference ≤ dL‖Δz‖/α ≤ 2dLD/α): (L² + L²d²/m_reset)/B1 + (τ−1)(4d²L²D²/(α²m_increment) + 4H²D²)/B2 +
    dσ²·popcount(τ).

    H = Lκ_d/α. The errors of the steps of a period are martingale differences (fresh records and directions) and
    the tree noise is independent of them, so the squared norms add; E‖TREE(τ)‖² = dσ²·popcount(τ) exactly. For
    linear f the bound is an equality with L²d² → (d−1)E‖c‖², L² → E‖c − c̄‖² and H = 0. Returns a float.
    """
    tau = check_int("tau", tau, minimum=1)
    _check_choice("oracle", oracle, SINGLE_PASS_THEORY_ORACLES)
    d = check_int("d", d, minimum=1)
    return _single_variance(
        tau, _popcount(tau), d, _pos("lipschitz", lipschitz), _pos("smoothing_radius", smoothing_radius),
        _pos("step_bound", step_bound), check_int("B1", B1, minimum=1), check_int("B2", B2, minimum=1),
        check_int("m_reset", m_reset, minimum=1), check_int("m_increment", m_increment, minimum=1),
        float(check_real("noise_std", noise_std, nonnegative=True)), oracle)


def _multi_variance(tau, d, L, n, m, sigma1, sigma2, oracle):
    per_estimate = (L**2 if oracle == "multi_pass_first_order" else L**2 * d**2) / (n * m)
    noise = d * sigma1**2 + (0.0 if tau == 1 else (tau - 1) * d * sigma2**2)
    return (2 * tau - 1) * per_estimate + noise


def multi_pass_variance_bound(tau, *, d, lipschitz, n, m, noise_std_reset, noise_std_increment,
                              oracle="multi_pass"):
    """Lemma 4.4 explicitly: E‖g̃_t − ∇F̂^D_α(z_t)‖² ≤ (2τ−1)L²d²/(nm) + dσ1² + (τ−1)dσ2² at position τ of a period.

    Algorithm 4 reads all n records (no sampling error); each of the 2τ − 1 estimates made since the reset has error
    variance ≤ L²d²/m per record, and the noise accumulates through the released g̃_{t−1}. (The proof's third term
    misses the factor d on σ2².) "multi_pass_first_order": L²/(nm) per estimate. noise_std_increment may be None
    at τ = 1. Returns a float.
    """
    tau = check_int("tau", tau, minimum=1)
    _check_choice("oracle", oracle, ("multi_pass", "multi_pass_first_order"))
    d = check_int("d", d, minimum=1)
    sigma1 = float(check_real("noise_std_reset", noise_std_reset, nonnegative=True))
    if noise_std_increment is None:
        if tau > 1:
            raise ValueError("noise_std_increment is required at tau > 1")
        sigma2 = 0.0
    else:
        sigma2 = float(check_real("noise_std_increment", noise_std_increment, nonnegative=True))
    return _multi_variance(tau, d, _pos("lipschitz", lipschitz), check_int("n", n, minimum=1),
                           check_int("m", m, minimum=1), sigma1, sigma2, oracle)


def o2nc_certified_bound(initial_gap, lipschitz, smoothing_radius, step_bound, T, block_length, G0, G1, *,
                         restarted=False):
    """Proposition 2.6, corrected: E‖∂̄_{2α}F(x_out)‖ ≤ (Φ + 2Lα)/(DT) + c·G1/√M + 2G0 with η = D/(G1√M), M·D ≤ α.

    c = 5/2 (OGD runs on across blocks: Lemma B.1's 3/2 is wrong then) or 1 (``restarted``: Δ = 0 at every block
    start); the bias term is 2G0 (‖Δ_t − u‖ ≤ 2D), and Φ + 2Lα bounds F_α(x0) − inf F_α (erratum: see
    docs/papers/nsnc_improved.md). G0, G1: bounds on the root mean squares of g̃_t − ∇F_α(z_t) and g̃_t for every t.
    T must be a multiple of M. Returns a float.
    """
    gap = _pos("initial_gap", initial_gap)
    L = _pos("lipschitz", lipschitz)
    alpha = _pos("smoothing_radius", smoothing_radius)
    D = _pos("step_bound", step_bound)
    T = check_int("T", T, minimum=1)
    M = check_int("block_length", block_length, minimum=1)
    if T % M:
        raise ValueError(f"T must be a multiple of block_length (Proposition 2.6 averages K = T/M whole blocks), "
                         f"got T = {T}, block_length = {M}")
    if M * D > alpha * (1 + 1e-12):
        raise ValueError(f"block_length*step_bound must be <= smoothing_radius (Proposition 2.6), got "
                         f"{M}*{D:.6g} > {alpha:.6g}")
    G0 = float(check_real("G0", G0, nonnegative=True))
    G1 = _pos("G1", G1)
    regret = 1.0 if restarted else 2.5
    return (gap + 2 * L * alpha) / (D * T) + regret * G1 / math.sqrt(M) + 2 * G0


# ---------------------------------------------------------------------------------------------------
# Single pass: Theorem 3.1 (Algorithm 3), Theorem C.4 (Algorithm 5)


@functools.lru_cache(maxsize=64)
def _mu_star(eps, delta, prec):
    with mpmath.workprec(prec):
        return gaussian_mu(eps, delta)


def _float_up(value) -> float:
    out = float(value)
    if mpmath.mpf(out) < value:
        out = math.nextafter(out, math.inf)
    return out


def _single_step_bound(variant, T0, d, L, gap, alpha, eps):
    first = (gap**2 * alpha / (L**2 * T0**2 * (math.sqrt(d) if variant == "corrected" else 1.0))) ** (1 / 3)
    second = (gap * alpha * eps / (d * L * T0)) ** 0.5
    third = (gap**3 * alpha**2 * eps / (d**1.5 * L**3 * T0**3)) ** 0.2
    return min(first, second, third, alpha / 4)


def _single_tree_size(variant, T0, d, alpha, eps, D):
    privacy = (alpha / (eps * D)) ** (2 / 3)
    if variant == "corrected":
        size = max(1, math.ceil(max(alpha / (D * math.sqrt(d)), privacy)))
    else:
        size = max(1, int(round(privacy)))
    return min(size, T0)


def _single_directions(oracle, variant, d, alpha, D, kappa, gamma_log, delta, B1, B2):
    """(m_reset, m_increment, floor_reset, floor_increment): module doc step 6."""
    ratio2 = (alpha / (kappa * D)) ** 2
    if oracle == "single_pass":
        floor = max(1, math.ceil(2 * (d + 1) ** 2 * gamma_log * max(1.0, ratio2)))
        floors = (floor, floor)
        if variant == "paper":
            m = max(1, math.ceil(math.log(8 * d * max(B1, B2) / delta) * (d**2 * B1**2 + d * alpha**2 * B2**2 / D**2)))
            return m, m, *floors
        return floor, floor, *floors
    if oracle == "single_pass_crn":
        floors = (max(1, math.ceil(2 * (d + 1) ** 2 * gamma_log)),
                  max(1, math.ceil(2 * ((d + kappa) / kappa) ** 2 * gamma_log)))
        return (*floors, *floors)
    floors = (1, max(1, math.ceil(8 * gamma_log * ratio2)))
    if variant == "paper":
        m = max(1, math.ceil(math.log(8 * d * max(B1, B2) / delta) * B2**2 * alpha**2 / (D**2 * d)))
        return 1, m, *floors
    return (*floors, *floors)


def _single_pass_core(n, d, L, gap, alpha, eps, delta, variant, accountant, oracle, directions, clip_hardening):
    """Every value of the single-pass settings but the plan, or None when K < 1 (module doc steps 1–10)."""
    T0 = n // 2
    if T0 < 1:
        return None
    D = _single_step_bound(variant, T0, d, L, gap, alpha, eps)
    M = max(1, math.floor(alpha / (4 * D)))
    tree_size = _single_tree_size(variant, T0, d, alpha, eps, D)
    B1, B2 = tree_size, 1
    T = _largest_T(n, tree_size, B1, B2)
    T = M * (T // M)
    K = T // M
    if K < 1:
        return None
    kappa = _kappa(d)
    H = L * kappa / alpha
    gamma = mpmath.mpf(delta) / 8
    m_reset, m_increment, floor_reset, floor_increment = _single_directions(
        oracle, variant, d, alpha, D, kappa, float(mpmath.log(2 / gamma)), float(delta), B1, B2)
    if directions is not None:
        m_increment = directions
        m_reset = 1 if oracle == "first_order" else directions
    sens = nsnc_sensitivities(oracle, d=d, lipschitz=L, smoothing_radius=alpha, step_bound=D, B1=B1, B2=B2,
                              m_reset=m_reset, m_increment=m_increment, gamma=gamma, clip_hardening=clip_hardening)
    delta_fail = nsnc_single_pass_delta_fail(sens)
    s = max(sens.sensitivity_reset, sens.sensitivity_increment)
    eps_mp, delta_mp = mpmath.mpf(eps), mpmath.mpf(delta)
    if accountant == "exact":
        effective = nsnc_single_pass_effective_sensitivity(sens.sensitivity_reset, sens.sensitivity_increment,
                                                           tree_size)
        sigma = effective / _mu_star(eps_mp, delta_mp - delta_fail, mpmath.mp.prec)
    else:
        sigma = nsnc_tree_sigma(s, tree_size, eps_mp, delta_mp / 2)
    sigma = mpmath.mpf(_float_up(sigma))  # the float64 run adds at least the calibrated noise
    G0 = math.sqrt(_single_variance(tree_size, tree_size.bit_length(), d, L, alpha, D, B1, B2, m_reset, m_increment,
                                    float(sigma), oracle))
    G1 = L + G0
    return dict(
        T0=T0, step_bound=D, M=M, tree_size=tree_size, B1=B1, B2=B2, T=T, K=K,
        step_size=D / (G1 * math.sqrt(M)), smoothness=H, m_reset=m_reset, m_increment=m_increment,
        m_privacy_reset=floor_reset, m_privacy_increment=floor_increment, gamma=gamma, radius_reset=sens.radius_reset,
        radius_increment=sens.radius_increment, sensitivity_reset=sens.sensitivity_reset,
        sensitivity_increment=sens.sensitivity_increment, delta_fail=delta_fail, noise_std=sigma, G0=G0, G1=G1,
        records_used=records_used(T, tree_size, B1, B2),
        certified_bound=o2nc_certified_bound(gap, L, alpha, D, T, M, G0, G1),
    )


def _check_single_inputs(n, d, lipschitz, initial_gap, smoothing_radius, epsilon, delta, variant, accountant, oracle,
                         directions, clip_hardening):
    n = check_int("n", n, minimum=1)
    d, L, gap, alpha = _check_problem(d, lipschitz, initial_gap, smoothing_radius)
    eps = _pos("epsilon", epsilon)
    delta = float(check_probability("delta", delta))
    _check_choice("variant", variant, VARIANTS)
    _check_choice("accountant", accountant, ACCOUNTANTS)
    _check_choice("oracle", oracle, SINGLE_PASS_THEORY_ORACLES)
    if directions is not None:
        directions = check_int("directions", directions, minimum=1)
    if not isinstance(clip_hardening, bool):
        raise TypeError(f"clip_hardening must be a bool, got {type(clip_hardening).__name__}")
    return n, d, L, gap, alpha, eps, delta


def _check_bool(name, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
    return bool(value)


def _fits_below(core, lipschitz) -> bool:
    """The settings exist and certify less than L (they are not vacuous)."""
    return core is not None and core["certified_bound"] < lipschitz


def _records_needed(fits, n):
    """A record count n' > n with fits(n'), by doubling then bisection. The floors make ``fits`` not monotone near the
    threshold, so n' is a count that suffices (checked), not always the smallest. None if none up to 2^62."""
    lo, hi = n, max(2 * n, 4)
    while not fits(hi):
        if hi >= _MAX_RECORDS:
            return None
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi


def single_pass_settings(n, d, lipschitz, initial_gap, smoothing_radius, epsilon, delta, *, variant="corrected",
                         accountant="exact", oracle="single_pass", directions=None,
                         clip_hardening=False, allow_vacuous=False) -> SinglePassSettings:
    """The single-pass settings for n records (Theorem 3.1 with Algorithm 3, Theorem C.4 with Algorithm 5; module doc).

    n: records. d: dimension. lipschitz: L (every f(·, ξ) L-Lipschitz). initial_gap: Φ ≥ F(x0) − inf F.
    smoothing_radius: α (≤ Φ/L; the output is certified for the 2α-Goldstein norm, Lemma 2.4). epsilon, delta: the
    (ε, δ)-DP target. variant: "corrected" (default) or "paper" (D, Σ, m as printed, constants 1). accountant:
    "exact" (default) or "paper" (Proposition 2.5 with δ/2 for the tree). oracle: "single_pass" (Algorithm 3),
    "single_pass_crn" (common random numbers, not in the paper) or "first_order" (Algorithm 5). directions: an
    explicit m per record (None: the privacy floor of step 6). clip_hardening: per-record clipping to the
    high-probability bounds (δ_fail = 0; not in the paper). allow_vacuous: return settings whose certified bound is
    ≥ L (flagged ``vacuous``) instead of refusing them.

    Raises ValueError when α > Φ/L, when n records cannot hold one block (K < 1), and (unless ``allow_vacuous``)
    when the certified bound is ≥ L, naming a record count that suffices.
    """
    n, d, L, gap, alpha, eps, delta = _check_single_inputs(
        n, d, lipschitz, initial_gap, smoothing_radius, epsilon, delta, variant, accountant, oracle, directions,
        clip_hardening)
    allow_vacuous = _check_bool("allow_vacuous", allow_vacuous)
    args = (d, L, gap, alpha, eps, delta, variant, accountant, oracle, directions, clip_hardening)
    core = _single_pass_core(n, *args)
    if core is None:
        needed = _records_needed(lambda k: _single_pass_core(k, *args) is not None, n)
        more = ("no number of records up to 2^62 suffices" if needed is None
                else f"more records are needed: n = {needed} suffices")
        raise ValueError(
            f"n = {n} records cannot hold one block of the single-pass settings (K = T/M < 1: the budget "
            f"U(T) <= n allows fewer than M steps, or n < 2); {more}")
    if core["records_used"] > n:  # pragma: no cover - T is chosen with U(T) <= n
        raise AssertionError("records_used exceeds n")
    vacuous = core["certified_bound"] >= L
    if vacuous and not allow_vacuous:
        needed = _records_needed(lambda k: _fits_below(_single_pass_core(k, *args), L), n)
        more = ("no number of records up to 2^62 makes it smaller" if needed is None
                else f"n = {needed} records certify less than L")
        raise ValueError(
            f"the single-pass settings for n = {n} records are vacuous: the certified bound "
            f"{core['certified_bound']:.6g} is >= L = {L:.6g}, which every point meets; {more} "
            f"(allow_vacuous=True returns them, flagged vacuous)")
    plan = nsnc_single_pass_plan(
        oracle=oracle, d=d, lipschitz=L, smoothing_radius=alpha, step_bound=core["step_bound"],
        tree_size=core["tree_size"], B1=core["B1"], B2=core["B2"], m_reset=core["m_reset"],
        m_increment=core["m_increment"], gamma=core["gamma"], noise_std=core["noise_std"], dp_delta=delta,
        clip_hardening=clip_hardening)
    notes = []
    if variant == "paper":
        notes.append("variant 'paper': D and the tree size as printed (Theorems 3.1/C.4, rebuilt; the L/sqrt(B1) "
                     "term of Lemma 3.5 is dropped in eq. (9)-(10): erratum nsnc_improved.E2)")
    if directions is not None:
        notes.append(f"directions = {directions} given: the accounting uses min(worst case, high probability)")
    if accountant == "paper":
        notes.append("sigma by Proposition 2.5 with delta/2 for the tree (log(max(Sigma, 2)): nsnc_improved.E3)")
    mu, eps_exact = mpmath.mpf(plan.mu), mpmath.mpf(plan.epsilon)
    return SinglePassSettings(
        n=n, d=d, lipschitz=L, initial_gap=gap, smoothing_radius=alpha, epsilon=mpmath.mpf(eps),
        delta=mpmath.mpf(delta), variant=variant, accountant=accountant, oracle=oracle, directions=directions,
        clip_hardening=clip_hardening, mu=mu, epsilon_exact=eps_exact, guarantee=plan.guarantee,
        records_unused=n - core["records_used"], vacuous=vacuous, plan=plan, note="; ".join(notes), **core)


def certified_bound_single_pass(settings: SinglePassSettings) -> float:
    """(Φ + 2Lα)/(DT) + (5/2)G1/√M + 2G0 at the single-pass settings (``o2nc_certified_bound``): a bound on
    E‖∂̄_{2α}F(x_out)‖ (expectation over the data and the algorithm)."""
    if not isinstance(settings, SinglePassSettings):
        raise TypeError(f"settings must be a SinglePassSettings (from single_pass_settings), got "
                        f"{type(settings).__name__}")
    s = settings
    return o2nc_certified_bound(s.initial_gap, s.lipschitz, s.smoothing_radius, s.step_bound, s.T, s.M,
                                s.G0, s.G1)


def min_records_single_pass(target_stationarity, d, lipschitz, initial_gap, smoothing_radius, epsilon, delta, *,
                            variant="corrected", accountant="exact", oracle="single_pass", directions=None,
                            clip_hardening=False) -> int:
    """A record count n at which the single-pass settings certify E‖∂̄_{2α}F(x_out)‖ ≤ β (target_stationarity).

    Doubling, then bisection on n. The floors in D, M, Σ and T make the certified bound not exactly monotone in n,
    so the result is a count that suffices (checked), close to but not always the smallest. Raises ValueError when
    no n up to 2^62 suffices (e.g. a fixed ``directions`` whose m-terms grow with Σ). Other arguments as
    ``single_pass_settings``.
    """
    beta = _pos("target_stationarity", target_stationarity)
    _, d, L, gap, alpha, eps, delta = _check_single_inputs(
        1, d, lipschitz, initial_gap, smoothing_radius, epsilon, delta, variant, accountant, oracle, directions,
        clip_hardening)
    args = (d, L, gap, alpha, eps, delta, variant, accountant, oracle, directions, clip_hardening)

    def fits(k):
        core = _single_pass_core(k, *args)
        return core is not None and core["certified_bound"] <= beta

    needed = _records_needed(fits, 1)
    if needed is None:
        raise ValueError(f"no n up to 2^62 records makes the single-pass certified bound <= target_stationarity = "
                         f"{beta:.6g} with these settings")
    return needed


# ---------------------------------------------------------------------------------------------------
# Multi pass: Theorem 4.1 (Algorithm 4)


def _multi_pass_shape(variant, d, L, gap, alpha, beta):
    """(D, M, T, Σ) of multi-pass step 1–2, independent of n."""
    if variant == "corrected":
        D = alpha * beta**2 / (225 * L**2)
        M = max(1, math.floor(alpha / (4 * D)))
        # a relative 1e-12 below the ceiling: a quotient that is an integer up to one rounding (changing units by 3
        # gives 21600.000000000004) must not add a whole block of M steps
        T = math.ceil(3 * (gap + 2 * L * alpha) / (D * beta) * (1 - 1e-12))
    else:
        D = min(alpha**2 * beta**2 / L**2, alpha / 4)
        M = max(1, math.floor(alpha / (4 * D)))
        T = max(1, math.ceil(gap * L**2 / (alpha**2 * beta**3)))
    T = M * -(-T // M)
    tree_size = max(1, int(round(alpha / (D * math.sqrt(d)))))
    return D, M, T, tree_size


def _multi_pass_core(n, d, L, gap, alpha, beta, eps, delta, variant, paper_constant):
    D, M, T, tree_size = _multi_pass_shape(variant, d, L, gap, alpha, beta)
    resets, increments = nsnc_reset_counts(T, tree_size)
    kappa = _kappa(d)
    gamma = mpmath.mpf(delta) / (8 * T)
    gamma_log = float(mpmath.log(2 / gamma))
    m_privacy = max(1, math.ceil(2 * (d + 1) ** 2 * gamma_log * max(1.0, (alpha / (kappa * D)) ** 2)))
    cal = nsnc_multi_pass_calibration(
        oracle="multi_pass", d=d, lipschitz=L, smoothing_radius=alpha, step_bound=D, n=n, tree_size=tree_size, T=T,
        m=m_privacy, gamma=gamma, epsilon=eps, delta=delta, rule="exact" if paper_constant is None else "paper",
        paper_constant=paper_constant)
    sigma1 = mpmath.mpf(_float_up(cal.noise_std_reset))
    sigma2 = None if cal.noise_std_increment is None else mpmath.mpf(_float_up(cal.noise_std_increment))
    m_var = L**2 * d * tree_size / (n * sigma1**2)
    if sigma2 is not None:
        m_var += L**2 * d / (n * sigma2**2)
    m_variance = max(1, int(mpmath.ceil(m_var)))
    m = max(m_privacy, m_variance)
    s1, s2 = float(sigma1), (0.0 if sigma2 is None else float(sigma2))
    G0 = math.sqrt(_multi_variance(tree_size, d, L, n, m, s1, s2, "multi_pass"))
    G1 = L + G0
    sens = nsnc_sensitivities("multi_pass", d=d, lipschitz=L, smoothing_radius=alpha, step_bound=D, B1=n, B2=n,
                              m_reset=m_privacy, m_increment=m_privacy, gamma=gamma)
    return dict(
        step_bound=D, M=M, T=T, K=T // M, tree_size=tree_size, resets=resets, increments=increments,
        step_size=D / (G1 * math.sqrt(M)), smoothness=L * kappa / alpha, m=m, m_privacy=m_privacy,
        m_variance=m_variance, gamma=gamma, radius=sens.radius_reset, sensitivity_reset=cal.sensitivity_reset,
        sensitivity_increment=cal.sensitivity_increment,
        delta_fail=nsnc_multi_pass_delta_fail(sens, T, tree_size), noise_std_reset=sigma1,
        noise_std_increment=sigma2, G0=G0, G1=G1,
        certified_bound=o2nc_certified_bound(gap, L, alpha, D, T, M, G0, G1),
    )


def _check_multi_inputs(n, d, lipschitz, initial_gap, smoothing_radius, target_stationarity, epsilon, delta, variant,
                        paper_constant):
    n = check_int("n", n, minimum=1)
    d, L, gap, alpha = _check_problem(d, lipschitz, initial_gap, smoothing_radius)
    beta = _pos("target_stationarity", target_stationarity)
    eps = _pos("epsilon", epsilon)
    delta = float(check_probability("delta", delta))
    _check_choice("variant", variant, VARIANTS)
    if paper_constant is not None:
        paper_constant = _pos("paper_constant", paper_constant)
    return n, d, L, gap, alpha, beta, eps, delta, paper_constant


def _n_independent_part(variant, d, L, gap, alpha, beta):
    """The certified bound's limit as n → ∞ (G0 → 0): (Φ + 2Lα)/(DT) + (5/2)L/√M."""
    D, M, T, _ = _multi_pass_shape(variant, d, L, gap, alpha, beta)
    return (gap + 2 * L * alpha) / (D * T) + 2.5 * L / math.sqrt(M)


def _min_records_multi(d, L, gap, alpha, beta, eps, delta, variant, paper_constant):
    """The smallest n with certified bound ≤ β (the bound decreases in n), or None if none exists."""
    if _n_independent_part(variant, d, L, gap, alpha, beta) >= beta:
        return None

    def fits(k):
        core = _multi_pass_core(k, d, L, gap, alpha, beta, eps, delta, variant, paper_constant)
        return core["certified_bound"] <= beta

    if fits(1):
        return 1
    return _records_needed(fits, 1)


def multi_pass_settings(n, d, lipschitz, initial_gap, smoothing_radius, target_stationarity, epsilon, delta, *,
                        variant="corrected", paper_constant=None, allow_vacuous=False) -> MultiPassSettings:
    """The multi-pass settings for n records and target β (Theorem 4.1, Algorithm 4; module doc).

    n: records (every step reads all of them). d, lipschitz (L), initial_gap (Φ ≥ F̂^D(x0) − inf F̂^D),
    smoothing_radius (α ≤ Φ/L), target_stationarity (β), epsilon, delta: as ``single_pass_settings``. variant:
    "corrected" (D = αβ²/(225L²), T = ⌈3(Φ + 2Lα)/(Dβ)⌉) or "paper" (Theorem 4.1's printed D = α²β²/L² ≤ α/4 and
    T = ⌈ΦL²/(α²β³)⌉: dimensionally inconsistent, erratum nsnc_improved.E9). paper_constant: None
    (σ1, σ2 by the exact accountant) or the constant c of Theorem 4.1's printed σ rule.

    allow_vacuous: return settings whose certified bound is ≥ L (flagged ``vacuous``) instead of refusing them.

    Raises ValueError when α > Φ/L; for variant "corrected", when the certified bound at n exceeds β, naming the
    number of records needed (the printed variant's parameters need not certify β at any n: ``meets_target`` says);
    and, unless ``allow_vacuous``, when the certified bound is ≥ L (for the corrected variant: β ≥ L).
    """
    n, d, L, gap, alpha, beta, eps, delta, paper_constant = _check_multi_inputs(
        n, d, lipschitz, initial_gap, smoothing_radius, target_stationarity, epsilon, delta, variant, paper_constant)
    allow_vacuous = _check_bool("allow_vacuous", allow_vacuous)
    core = _multi_pass_core(n, d, L, gap, alpha, beta, eps, delta, variant, paper_constant)
    meets = core["certified_bound"] <= beta
    if variant == "corrected" and not meets:
        needed = _min_records_multi(d, L, gap, alpha, beta, eps, delta, variant, paper_constant)
        more = ("no number of records suffices" if needed is None
                else f"more records are needed: n = {needed} is the smallest that suffices")
        raise ValueError(f"n = {n} records cannot certify target_stationarity = {beta:.6g}: the certified bound is "
                         f"{core['certified_bound']:.6g}; {more}")
    vacuous = core["certified_bound"] >= L
    if vacuous and not allow_vacuous:
        fix = (f"a target_stationarity below L = {L:.6g}" if variant == "corrected"
               else "variant 'corrected' with a target_stationarity below L")
        raise ValueError(f"the multi-pass settings are vacuous: the certified bound {core['certified_bound']:.6g} "
                         f"is >= L = {L:.6g}, which every point meets; ask for {fix} (allow_vacuous=True returns "
                         f"them, flagged vacuous)")
    plan = nsnc_multi_pass_plan(
        oracle="multi_pass", d=d, lipschitz=L, smoothing_radius=alpha, step_bound=core["step_bound"], n=n,
        tree_size=core["tree_size"], T=core["T"], m=core["m"], gamma=core["gamma"],
        noise_std_reset=core["noise_std_reset"], noise_std_increment=core["noise_std_increment"], dp_delta=delta)
    notes = ["m = max(privacy floor, Theorem 4.1's variance m): the printed m has no privacy floor "
             "(erratum nsnc_improved.E10)"]
    if variant == "paper":
        notes.append("variant 'paper': D = alpha^2 beta^2/L^2 and T = Phi L^2/(alpha^2 beta^3) as printed in "
                     "Theorem 4.1 (dimensionally inconsistent; erratum nsnc_improved.E9)")
    if paper_constant is not None:
        notes.append(f"sigma_1, sigma_2 by Theorem 4.1's printed rule with c = {paper_constant:g}")
    mu, eps_exact = mpmath.mpf(plan.mu), mpmath.mpf(plan.epsilon)
    return MultiPassSettings(
        n=n, d=d, lipschitz=L, initial_gap=gap, smoothing_radius=alpha, target_stationarity=beta,
        epsilon=mpmath.mpf(eps), delta=mpmath.mpf(delta), variant=variant,
        noise_rule="exact" if paper_constant is None else "paper", paper_constant=paper_constant, mu=mu,
        epsilon_exact=eps_exact, privacy_meets_target=bool(plan.epsilon <= eps * (1 + 1e-12)),
        guarantee=plan.guarantee, records_used=n, meets_target=meets, vacuous=vacuous, plan=plan,
        note="; ".join(notes), **core)


def certified_bound_multi_pass(settings: MultiPassSettings) -> float:
    """(Φ + 2Lα)/(DT) + (5/2)G1/√M + 2G0 at the multi-pass settings: a bound on E‖∂̄_{2α}F̂^D(x_out)‖."""
    if not isinstance(settings, MultiPassSettings):
        raise TypeError(f"settings must be a MultiPassSettings (from multi_pass_settings), got "
                        f"{type(settings).__name__}")
    s = settings
    return o2nc_certified_bound(s.initial_gap, s.lipschitz, s.smoothing_radius, s.step_bound, s.T, s.M,
                                s.G0, s.G1)


def min_records_multi_pass(target_stationarity, d, lipschitz, initial_gap, smoothing_radius, epsilon, delta, *,
                           variant="corrected", paper_constant=None) -> int:
    """The smallest n at which the multi-pass settings certify E‖∂̄_{2α}F̂^D(x_out)‖ ≤ β (bisection; the bound
    decreases in n: D, M, T, Σ do not depend on n and every term of G0 does, as 1/n or faster). Raises ValueError
    when no n suffices (the n-independent part (Φ + 2Lα)/(DT) + (5/2)L/√M is already ≥ β, as for the printed D).
    """
    _, d, L, gap, alpha, beta, eps, delta, paper_constant = _check_multi_inputs(
        1, d, lipschitz, initial_gap, smoothing_radius, target_stationarity, epsilon, delta, variant, paper_constant)
    needed = _min_records_multi(d, L, gap, alpha, beta, eps, delta, variant, paper_constant)
    if needed is None:
        floor = _n_independent_part(variant, d, L, gap, alpha, beta)
        raise ValueError(f"no number of records certifies target_stationarity = {beta:.6g}: the terms that do not "
                         f"depend on n already sum to {floor:.6g} (variant {variant!r})")
    return needed


# ---------------------------------------------------------------------------------------------------
# Lemma B.1: OGD regret


def _losses(losses):
    arr = check_array("losses", losses)
    if arr.dtype == object:
        arr = arr.astype(np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise ValueError(f"losses must be a non-empty sequence of vectors (shape (M, d) or (M,)), "
                         f"got shape {arr.shape}")
    return arr


def _clip(v, radius):
    norm = float(np.linalg.norm(v))
    return v if norm <= radius else v * (radius / norm)


def ogd_regret(losses, comparator, *, step_bound, step_size, start=None) -> float:
    """Σ_t ⟨g_t, Δ_t − u⟩ of projected OGD Δ_{t+1} = clip_D(Δ_t − η g_t) (Algorithm 2 line 8) on linear losses g_t.

    losses: g_1..g_M (shape (M, d), or (M,) for d = 1). comparator: u (‖u‖ ≤ D). step_bound: D. step_size: η.
    start: Δ_1 (‖Δ_1‖ ≤ D; default 0, a restarted block). Returns a float (float64 arithmetic).
    """
    g = _losses(losses)
    D = _pos("step_bound", step_bound)
    eta = _pos("step_size", step_size)
    u = check_array("comparator", comparator).astype(np.float64).reshape(-1)
    if u.shape[0] != g.shape[1]:
        raise ValueError(f"comparator must have dimension {g.shape[1]}, got {u.shape[0]}")
    if np.linalg.norm(u) > D * (1 + 1e-12):
        raise ValueError(f"comparator must have norm <= step_bound = {D:.6g}, got {np.linalg.norm(u):.6g}")
    delta = np.zeros(g.shape[1]) if start is None else check_array("start", start).astype(np.float64).reshape(-1)
    if delta.shape[0] != g.shape[1]:
        raise ValueError(f"start must have dimension {g.shape[1]}, got {delta.shape[0]}")
    if np.linalg.norm(delta) > D * (1 + 1e-12):
        raise ValueError(f"start must have norm <= step_bound = {D:.6g}, got {np.linalg.norm(delta):.6g}")
    total = 0.0
    for g_t in g:
        total += float(g_t @ (delta - u))
        delta = _clip(delta - eta * g_t, D)
    return total


def ogd_regret_bound(step_bound, step_size, losses, *, restarted) -> float:
    """Lemma B.1, corrected: the pathwise regret bound of projected OGD on the ball of radius D over one block,
    Σ⟨g_t, Δ_t − u⟩ ≤ ‖Δ_start − u‖²/(2η) + (η/2)Σ‖g_t‖², for every ‖u‖ ≤ D (u may depend on the whole block).

    restarted=True (Δ_start = 0): D²/(2η) + (η/2)Σ‖g_t‖². restarted=False (a block of Algorithm 2, which does not
    restart OGD): ‖Δ_start − u‖ ≤ 2D gives 2D²/η + (η/2)Σ‖g_t‖². With η = D/(G√M) and ‖g_t‖ ≤ G these are D·G·√M
    and (5/2)·D·G·√M; Lemma B.1 states (3/2)·D·G·√M (``lemma_b1_printed_bound``), which an adversarial block
    exceeds (erratum nsnc_improved.E5). Returns a float.
    """
    D = _pos("step_bound", step_bound)
    eta = _pos("step_size", step_size)
    g = _losses(losses)
    if not isinstance(restarted, bool):
        raise TypeError(f"restarted must be a bool, got {type(restarted).__name__}")
    squares = float(np.sum(g * g))
    return (D**2 / (2 * eta) if restarted else 2 * D**2 / eta) + eta / 2 * squares


def lemma_b1_printed_bound(step_bound, gradient_bound, block_length) -> float:
    """Lemma B.1 as printed: E Σ_{m ≤ M}⟨g̃_m, Δ_m − u⟩ ≤ (3/2)·D·G1·√M for η = D/(G1√M) (valid for a restarted
    block; without restarts the constant is 5/2: ``ogd_regret_bound``)."""
    D = _pos("step_bound", step_bound)
    G = _pos("gradient_bound", gradient_bound)
    M = check_int("block_length", block_length, minimum=1)
    return 1.5 * D * G * math.sqrt(M)


# ---------------------------------------------------------------------------------------------------
# Rates (orders, constants 1)


def _rate_inputs(n, d, lipschitz, initial_gap, smoothing_radius, epsilon):
    return (_pos("n", n), check_int("d", d, minimum=1), _pos("lipschitz", lipschitz), _pos("initial_gap", initial_gap),
            _pos("smoothing_radius", smoothing_radius), _pos("epsilon", epsilon))


def _thm31_rate(n, d, L, gap, alpha, eps, first_dimension):
    return ((gap * L**2 * first_dimension / (n * alpha)) ** (1 / 3) + (gap * d * L / (n * alpha * eps)) ** 0.5
            + (gap**2 * L**3 * d**1.5 / (n**2 * alpha**2 * eps)) ** 0.2)


def rate_thm31_printed(n, d, lipschitz, initial_gap, smoothing_radius, epsilon) -> float:
    """Theorem 3.1, eq. (10) as printed: E‖∂̄_{2α}F(x_out)‖ ≲ (ΦL²/(nα))^{1/3} + (ΦdL/(nαε))^{1/2} +
    (Φ²L³d^{3/2}/(n²α²ε))^{1/5} (constants 1). The first term lacks a √d (erratum nsnc_improved.E2).
    n may be a real number."""
    n, d, L, gap, alpha, eps = _rate_inputs(n, d, lipschitz, initial_gap, smoothing_radius, epsilon)
    return _thm31_rate(n, d, L, gap, alpha, eps, 1.0)


def rate_thm31_corrected(n, d, lipschitz, initial_gap, smoothing_radius, epsilon) -> float:
    """Theorem 3.1 with Lemma 3.5's sampling term L/√B1 kept: (ΦL²√d/(nα))^{1/3} + (ΦdL/(nαε))^{1/2} +
    (Φ²L³d^{3/2}/(n²α²ε))^{1/5} (constants 1; erratum nsnc_improved.E2)."""
    n, d, L, gap, alpha, eps = _rate_inputs(n, d, lipschitz, initial_gap, smoothing_radius, epsilon)
    return _thm31_rate(n, d, L, gap, alpha, eps, math.sqrt(d))


def rate_thm41(n, d, lipschitz, initial_gap, smoothing_radius, epsilon) -> float:
    """Theorem 4.1 (ERM, multi-pass): n = Ω̃(√Φ·L·d^{3/4}/(ε·α^{1/2}·β^{3/2})) solved for β:
    (√Φ·L·d^{3/4}/(ε·√α·n))^{2/3} (constants 1), a bound on E‖∂̄_{2α}F̂^D(x_out)‖."""
    n, d, L, gap, alpha, eps = _rate_inputs(n, d, lipschitz, initial_gap, smoothing_radius, epsilon)
    return (math.sqrt(gap) * L * d**0.75 / (eps * math.sqrt(alpha) * n)) ** (2 / 3)


def _sample_inputs(target_stationarity, d, lipschitz, initial_gap, smoothing_radius, epsilon):
    return (_pos("target_stationarity", target_stationarity), check_int("d", d, minimum=1),
            _pos("lipschitz", lipschitz), _pos("initial_gap", initial_gap), _pos("smoothing_radius", smoothing_radius),
            _pos("epsilon", epsilon))


def samples_thm31_printed(target_stationarity, d, lipschitz, initial_gap, smoothing_radius, epsilon) -> float:
    """Theorem 3.1's sample complexity as printed: ΦL²/(αβ³) + ΦLd/(εαβ²) + ΦL^{3/2}d^{3/4}/(ε^{1/2}αβ^{5/2})
    (constants 1)."""
    beta, d, L, gap, alpha, eps = _sample_inputs(target_stationarity, d, lipschitz, initial_gap, smoothing_radius,
                                                 epsilon)
    return (gap * L**2 / (alpha * beta**3) + gap * L * d / (eps * alpha * beta**2)
            + gap * L**1.5 * d**0.75 / (eps**0.5 * alpha * beta**2.5))


def samples_thm31_corrected(target_stationarity, d, lipschitz, initial_gap, smoothing_radius, epsilon) -> float:
    """Theorem 3.1's sample complexity, corrected: ΦL²√d/(αβ³) + ΦLd/(εαβ²) (constants 1). The printed third term
    is the geometric mean of these two, hence at most their average (erratum nsnc_improved.E2)."""
    beta, d, L, gap, alpha, eps = _sample_inputs(target_stationarity, d, lipschitz, initial_gap, smoothing_radius,
                                                 epsilon)
    return gap * L**2 * math.sqrt(d) / (alpha * beta**3) + gap * L * d / (eps * alpha * beta**2)


def samples_thm41(target_stationarity, d, lipschitz, initial_gap, smoothing_radius, epsilon) -> float:
    """Theorem 4.1's sample complexity: √Φ·L·d^{3/4}/(ε·α^{1/2}·β^{3/2}) (constants 1; the inverse of
    ``rate_thm41``)."""
    beta, d, L, gap, alpha, eps = _sample_inputs(target_stationarity, d, lipschitz, initial_gap, smoothing_radius,
                                                 epsilon)
    return math.sqrt(gap) * L * d**0.75 / (eps * math.sqrt(alpha) * beta**1.5)
