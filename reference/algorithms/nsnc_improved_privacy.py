"""nsnc_improved Proposition 2.5, Lemmas 3.3/3.4, 4.3 and C.1/C.2: the tree noise, the high-probability
sensitivities and the exact privacy accounting of Algorithms 3, 4 and 5 run inside Algorithm 2.

Kornowski, Liu, Talwar — *Improved Sample Complexity for Private Nonsmooth Nonconvex Optimization*
(ICML 2025). Proposition 2.5 calibrates the tree mechanism by σ = 4s√(log Σ·log(1/δ))/ε for a tree of Σ
leaves whose increments have sensitivity s. As printed it gives σ = 0 at Σ = 1 (erratum nsnc_improved.E3):

* ``nsnc_tree_sigma``: the corrected rule, log(max(Σ, 2)); ``nsnc_tree_sigma_as_printed`` refuses Σ = 1;
* ``nsnc_tree_mu``: the exact Gaussian-DP μ of one tree with noise σ (a record lies in bitlen(Σ) nodes);
* ``nsnc_tree_gdp_sigma``: the exact Gaussian-DP calibration, σ = s√bitlen(Σ)/μ*(ε, δ) (not the paper's).

The paper's key idea (Lemma 3.3, Lemma C.1): with m directions per record the estimate concentrates, and the
sensitivity of a step is, with high probability, a factor ≈ d below its worst case. Explicitly:

* ``pinelis_radius``, ``concentration_radius``: the radius of that concentration (Pinelis 1994, explicit and
  dimension-free, in place of Theorem E.2's unspecified constant);
* ``nsnc_sensitivities``: worst-case and high-probability sensitivities of the reset and increment steps of every
  oracle (Algorithm 3, its common-random-numbers variant, Algorithm 5, Algorithm 4 and its first-order variant),
  the failure probability of each, and the one used, min(worst case, high probability);
* exact accounting in Gaussian DP (Dong, Roth, Su 2022): ``nsnc_single_pass_mu`` (one tree per period, each record
  in one leaf of one period: Lemma 3.4), ``nsnc_multi_pass_mu`` (Lemma 4.3's composition, exactly),
  ``nsnc_epsilon`` / ``nsnc_delta``: (ε, gaussian_delta(ε, μ) + δ_fail)-DP;
* calibration for a target (ε, δ): ``nsnc_single_pass_calibration`` / ``nsnc_single_pass_noise_std`` and
  ``nsnc_multi_pass_calibration`` / ``nsnc_multi_pass_noise_stds``, by the exact accountant or the paper's
  printed rules (whose exact (ε, δ) is always reported alongside);
* ``nsnc_single_pass_plan`` / ``nsnc_multi_pass_plan``: the ``NsncPrivacyPlan`` of a run, for its ledger.

Neighbouring datasets replace one record (§2). Scalars are mpmath numbers computed at the caller's working
precision (``reference.precision.working_precision``); plans are computed with at least ``PLAN_PRECISION_BITS``
bits and store float64 values rounded up (sensitivities, μ, ε, δ_fail) or exactly as used (σ).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import mpmath

from ..accounting.gaussian import gaussian_delta, gaussian_epsilon, gaussian_mu
from ..smoothing import smoothness_constant
from ..validation import check_int, check_probability, check_real
from ._privacy_common import mp_delta, mp_positive

__all__ = [
    "nsnc_tree_sigma",
    "nsnc_tree_sigma_as_printed",
    "nsnc_tree_mu",
    "nsnc_tree_gdp_sigma",
    "SINGLE_PASS_ORACLES",
    "MULTI_PASS_ORACLES",
    "ORACLES",
    "CONCENTRATION_KINDS",
    "SENSITIVITY_MODES",
    "CALIBRATION_RULES",
    "GUARANTEES",
    "PLAN_PRECISION_BITS",
    "pinelis_radius",
    "concentration_radius",
    "NsncSensitivities",
    "nsnc_sensitivities",
    "nsnc_reset_counts",
    "nsnc_tree_leaf_counts",
    "nsnc_single_pass_effective_sensitivity",
    "nsnc_single_pass_mu",
    "nsnc_multi_pass_mu",
    "nsnc_delta",
    "nsnc_epsilon",
    "nsnc_single_pass_delta_fail",
    "nsnc_multi_pass_delta_fail",
    "NsncCalibration",
    "nsnc_single_pass_calibration",
    "nsnc_single_pass_noise_std",
    "nsnc_multi_pass_calibration",
    "nsnc_multi_pass_noise_stds",
    "NsncPrivacyPlan",
    "nsnc_single_pass_plan",
    "nsnc_multi_pass_plan",
]


def nsnc_tree_sigma(sensitivity, tree_size, epsilon, delta):
    """nsnc_improved Proposition 2.5, corrected: σ = 4s√(log(max(Σ, 2))·log(1/δ))/ε (erratum nsnc_improved.E3).

    sensitivity: s, the sensitivity of each tree increment (for every auxiliary input). tree_size:
    Σ, the number of leaves of one tree (period length). The printed σ = 4s√(log Σ·log(1/δ))/ε is 0
    at Σ = 1 (``nsnc_tree_sigma_as_printed`` refuses it); log(max(Σ, 2)) is our repair. The
    result is (ε, δ)-DP: exactly, it gives μ = s√bitlen(Σ)/σ and δ_GDP(ε; μ) ≤ 1.5e-3·δ/2 for
    Σ ≤ 10^6, ε ∈ [0.01, 10], δ ∈ [1e-10, 1e-2] (tests/test_accounting_calibration.py).
    """
    s = mp_positive("sensitivity", sensitivity)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    eps = mp_positive("epsilon", epsilon)
    delta = mp_delta("delta", delta)
    return 4 * s * mpmath.sqrt(mpmath.log(max(tree_size, 2)) * mpmath.log(1 / delta)) / eps


def nsnc_tree_sigma_as_printed(sensitivity, tree_size, epsilon, delta):
    """nsnc_improved Proposition 2.5 as printed: σ = 4s√(log Σ·log(1/δ))/ε; refuses Σ = 1 (σ = 0, nsnc_improved.E3)."""
    tree_size = check_int("tree_size", tree_size, minimum=1)
    if tree_size == 1:
        raise ValueError("tree_size must be >= 2 for the printed Proposition 2.5 (log 1 = 0 gives sigma = 0, erratum nsnc_improved.E3)")
    return nsnc_tree_sigma(sensitivity, tree_size, epsilon, delta)


def nsnc_tree_mu(sensitivity, tree_size, sigma):
    """Exact GDP of one tree (nsnc_improved Proposition 2.5's mechanism): μ = s·√bitlen(Σ)/σ.

    A record lives in one leaf; the leaf lies in at most bitlen(Σ) = ⌊log2 Σ⌋ + 1 released nodes,
    each a Gaussian mechanism with sensitivity ≤ s and noise σ (adaptive GDP composition is tight).
    """
    s = mp_positive("sensitivity", sensitivity)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    sigma = mp_positive("sigma", sigma)
    return s * mpmath.sqrt(tree_size.bit_length()) / sigma


def nsnc_tree_gdp_sigma(sensitivity, tree_size, epsilon, delta):
    """Exact-GDP tree calibration (not the paper's; accountant "gdp"): σ = s√bitlen(Σ)/μ*(ε, δ)."""
    s = mp_positive("sensitivity", sensitivity)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    eps = mp_positive("epsilon", epsilon)
    delta = mp_delta("delta", delta)
    return s * mpmath.sqrt(tree_size.bit_length()) / gaussian_mu(eps, delta)


# ---------------------------------------------------------------------------------------------------
# High-probability sensitivity (Lemmas 3.3, C.1; Pinelis 1994 for the concentration radius)

#: Single-pass oracles: Alg 3 (zeroth order, independent directions at z_t and z_{t−1}), Alg 3 with common random
#: numbers (the same directions at both points: not in the paper), Alg 5 (first order, App. C).
SINGLE_PASS_ORACLES = ("single_pass", "single_pass_crn", "first_order")
#: Multi-pass oracles: Alg 4 (batch = all n records), and Alg 4 with the first-order estimator of App. C.
MULTI_PASS_ORACLES = ("multi_pass", "multi_pass_first_order")
ORACLES = SINGLE_PASS_ORACLES + MULTI_PASS_ORACLES
#: What the concentration radius bounds: a zeroth-order estimate, a first-order estimate, a CRN difference.
CONCENTRATION_KINDS = ("zo", "fo", "crn")
#: "auto": min(worst case, high probability) per branch; "worst_case": always the deterministic bound.
SENSITIVITY_MODES = ("auto", "worst_case")
#: σ rules of the calibration helpers: the exact Gaussian-DP calibration, or the paper's printed rule.
CALIBRATION_RULES = ("exact", "paper")
#: What a plan's guarantee rests on.
GUARANTEES = ("worst-case", "high-probability", "clip-hardened")
#: Plans are computed with at least this many bits (or the caller's precision if higher), then rounded up to float64.
PLAN_PRECISION_BITS = 128

_ZEROTH_ORDER = ("single_pass", "single_pass_crn", "multi_pass")
_FIRST_ORDER = ("first_order", "multi_pass_first_order")


def _check_choice(name, value, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def pinelis_radius(bound, m, gamma):
    """b·√(2 log(2/γ)/m): Pinelis (1994, Hilbert-space Hoeffding) for m iid zero-mean vectors of norm ≤ b,
    P[‖their mean‖ ≥ b·√(2 log(2/γ)/m)] ≤ γ. Dimension-free; it replaces nsnc_improved Theorem E.2, whose
    constant c is unspecified.

    bound: b ≥ 0 (an almost-sure bound on each vector's norm). m: the number of vectors (≥ 1). gamma: γ ∈ (0, 1).
    Returns an mpf at the caller's working precision.
    """
    b = mpmath.mpf(check_real("bound", bound, nonnegative=True))
    m = check_int("m", m, minimum=1)
    gamma = mp_delta("gamma", gamma)
    return b * mpmath.sqrt(2 * mpmath.log(2 / gamma) / m)


def concentration_radius(kind, *, d, lipschitz, smoothing_radius, m, gamma, step_norm=None):
    """The radius r with P[‖estimate − its mean‖ ≥ r] ≤ γ for one record's estimate (``pinelis_radius``).

    kind:
      * "zo": the two-point estimate of eq. (4) with m sphere directions. Each summand
        (d/2α)(f(z + αy) − f(z − αy))y has norm ≤ Ld and its mean ∇f_α(z; ξ) norm ≤ L, so b = L(d + 1):
        r = L(d + 1)·√(2 log(2/γ)/m) (the tight form of eq. (11) in the proof of Lemma 3.3).
      * "fo": the first-order estimate (1/m)Σ∇f(z + y_j; ξ) of Algorithm 5, y_j ~ Unif(𝔹_α): b = 2L,
        r = 2L·√(2 log(2/γ)/m) (proof of Lemma C.1).
      * "crn": the difference of two-point estimates at z and z′ with the same m directions (not in the paper):
        each summand has norm ≤ dL‖z − z′‖/α and its mean norm ≤ H‖z − z′‖, H = Lκ_d/α, so
        b = (d + κ_d)·L·step_norm/α with step_norm = ‖z − z′‖ (≤ 2D under Algorithm 2's clip).
    d, lipschitz (L), smoothing_radius (α), m, gamma (γ): as in ``pinelis_radius``. step_norm: required for "crn",
    refused otherwise. κ_d = ``reference.smoothing.smoothness_constant(d)`` (mpmath). Returns an mpf.
    """
    _check_choice("kind", kind, CONCENTRATION_KINDS)
    d = check_int("d", d, minimum=1)
    L = mp_positive("lipschitz", lipschitz)
    alpha = mp_positive("smoothing_radius", smoothing_radius)
    if kind == "zo":
        if step_norm is not None:
            raise ValueError("step_norm applies only to kind='crn' (the zeroth-order radius does not depend on it)")
        b = L * (d + 1)
    elif kind == "fo":
        if step_norm is not None:
            raise ValueError("step_norm applies only to kind='crn' (the first-order radius does not depend on it)")
        b = 2 * L
    else:
        if step_norm is None:
            raise ValueError("step_norm is required for kind='crn' (‖z_t − z_{t−1}‖, at most 2·step_bound)")
        step = mpmath.mpf(check_real("step_norm", step_norm, nonnegative=True))
        b = (d + smoothness_constant(d, arithmetic="mpmath")) * L * step / alpha
    return pinelis_radius(b, m, gamma)


@dataclasses.dataclass(frozen=True)
class NsncSensitivities:
    """The replace-one ℓ2-sensitivity of one reset step and one increment step of an nsnc_improved oracle.

    Neighbouring datasets differ in one record; the directions (perturbations) are coupled by slot (the same
    draws for the same position in the batch), so only the differing slot changes the estimate.

    oracle: one of ``ORACLES``. smoothness: H = Lκ_d/α (the tight smoothness of f_α). worst_case_reset /
    worst_case_increment: the deterministic bounds (WC). high_probability_reset / high_probability_increment:
    the bounds on the good event (HP; None where no high-probability bound is used: the first-order reset is
    deterministic). radius_reset / radius_increment: the concentration radii behind HP (None where unused).
    fail_reset / fail_increment: the probability, per neighbouring pair, that the HP bound fails (2γ, 4γ, or 2γ
    for the CRN increment; 0 where HP is None). reset_branch / increment_branch: which bound is used —
    "worst-case", "high-probability" or "clip-hardened" (HP made deterministic by per-record clipping).
    sensitivity_reset / sensitivity_increment: the bound used, min(WC, HP) under sensitivity_mode "auto", WC under
    "worst_case". delta_fail_reset / delta_fail_increment: the failure probability of the branch in use (0 for WC
    and clip-hardened branches). All values are mpf at the caller's working precision.
    """

    oracle: str
    smoothness: mpmath.mpf
    worst_case_reset: mpmath.mpf
    worst_case_increment: mpmath.mpf
    high_probability_reset: mpmath.mpf | None
    high_probability_increment: mpmath.mpf | None
    radius_reset: mpmath.mpf | None
    radius_increment: mpmath.mpf | None
    fail_reset: mpmath.mpf
    fail_increment: mpmath.mpf
    reset_branch: str
    increment_branch: str
    sensitivity_reset: mpmath.mpf
    sensitivity_increment: mpmath.mpf
    delta_fail_reset: mpmath.mpf
    delta_fail_increment: mpmath.mpf


def _branch(worst, high, fail, clip_hardening, mode):
    """(sensitivity, branch, failure probability counted) of one step kind: the HP bound only where it is smaller."""
    if mode == "worst_case" or high is None or not high < worst:
        return worst, "worst-case", mpmath.mpf(0)
    if clip_hardening:
        return high, "clip-hardened", mpmath.mpf(0)
    return high, "high-probability", fail


def nsnc_sensitivities(oracle, *, d, lipschitz, smoothing_radius, step_bound, B1, B2, m_reset, m_increment, gamma,
                       clip_hardening=False, sensitivity_mode="auto") -> NsncSensitivities:
    """The sensitivity table of nsnc_improved Lemmas 3.3 and C.1, with explicit constants (replace-one neighbours,
    directions coupled by slot, ‖z_t − z_{t−1}‖ ≤ 2D, H = Lκ_d/α, r from ``concentration_radius``):

    ====================  ===================  ====================================  ============
    oracle / step          worst case (WC)      high probability (HP)                 P(HP fails)
    ====================  ===================  ====================================  ============
    ZO reset (Alg 3, 4)    2Ld/B1               (2L + 2r)/B1, r = "zo" at m_reset     2γ
    ZO increment           4Ld/B2               (4HD + 4r)/B2, r = "zo" at m_incr.    4γ
    CRN increment          min(4dLD/α, 4Ld)/B2  (4HD + 2r)/B2, r = "crn" at ‖Δz‖=2D   2γ
    FO reset (Alg 5)       2L/B1                — (deterministic)                     0
    FO increment           4L/B2                (4HD + 4r)/B2, r = "fo" at m_incr.    4γ
    ====================  ===================  ====================================  ============

    The ZO worst case 2Ld/B is eq. (5) corrected (erratum nsnc_improved.E1); the FO reset is 2L/B1, not Lemma
    C.1's L/B1 (replace-one, erratum nsnc_improved.E11). The reset rows of the CRN oracle are those of Algorithm 3. The CRN worst case is the
    smaller of two deterministic bounds (each CRN summand is ≤ dL‖Δz‖/α and ≤ 2Ld). Multi-pass oracles
    ("multi_pass", "multi_pass_first_order": Algorithm 4) use B1 = B2 = n. HP holds on the good event of the
    differing record's directions, given the history (the probabilities are per neighbouring pair: each of the two
    records' estimates concentrates w.p. ≥ 1 − γ; an increment has two estimates per record).

    clip_hardening (not in the paper): each record's estimate (difference) is clipped to its HP bound, so the HP
    values hold deterministically and no failure probability is counted. sensitivity_mode: "auto" uses
    min(WC, HP) per step kind, counting the failure probability only where HP is strictly smaller; "worst_case"
    uses WC everywhere (no failure probability). For "first_order" and "multi_pass_first_order" the reset uses one
    perturbation per record (Algorithm 5) resp. is bounded by Lipschitzness alone, so m_reset does not enter.
    """
    _check_choice("oracle", oracle, ORACLES)
    d = check_int("d", d, minimum=1)
    L = mp_positive("lipschitz", lipschitz)
    alpha = mp_positive("smoothing_radius", smoothing_radius)
    D = mp_positive("step_bound", step_bound)
    B1 = check_int("B1", B1, minimum=1)
    B2 = check_int("B2", B2, minimum=1)
    m_reset = check_int("m_reset", m_reset, minimum=1)
    m_increment = check_int("m_increment", m_increment, minimum=1)
    gamma = mp_delta("gamma", gamma)
    if not isinstance(clip_hardening, bool):
        raise TypeError(f"clip_hardening must be a bool, got {type(clip_hardening).__name__}")
    _check_choice("sensitivity_mode", sensitivity_mode, SENSITIVITY_MODES)
    H = L * smoothness_constant(d, arithmetic="mpmath") / alpha
    common = dict(d=d, lipschitz=L, smoothing_radius=alpha, gamma=gamma)
    if oracle in _ZEROTH_ORDER:
        r_reset = concentration_radius("zo", m=m_reset, **common)
        wc_reset, hp_reset, fail_reset = 2 * L * d / B1, (2 * L + 2 * r_reset) / B1, 2 * gamma
    else:
        r_reset = None
        wc_reset, hp_reset, fail_reset = 2 * L / B1, None, mpmath.mpf(0)
    if oracle == "single_pass_crn":
        r_inc = concentration_radius("crn", m=m_increment, step_norm=2 * D, **common)
        wc_inc = min(4 * d * L * D / alpha, 4 * L * d) / B2
        hp_inc, fail_inc = (4 * H * D + 2 * r_inc) / B2, 2 * gamma
    elif oracle in _ZEROTH_ORDER:
        r_inc = concentration_radius("zo", m=m_increment, **common)
        wc_inc, hp_inc, fail_inc = 4 * L * d / B2, (4 * H * D + 4 * r_inc) / B2, 4 * gamma
    else:
        r_inc = concentration_radius("fo", m=m_increment, **common)
        wc_inc, hp_inc, fail_inc = 4 * L / B2, (4 * H * D + 4 * r_inc) / B2, 4 * gamma
    s_reset, branch_reset, df_reset = _branch(wc_reset, hp_reset, fail_reset, clip_hardening, sensitivity_mode)
    s_inc, branch_inc, df_inc = _branch(wc_inc, hp_inc, fail_inc, clip_hardening, sensitivity_mode)
    return NsncSensitivities(
        oracle=oracle, smoothness=H, worst_case_reset=wc_reset, worst_case_increment=wc_inc,
        high_probability_reset=hp_reset, high_probability_increment=hp_inc, radius_reset=r_reset,
        radius_increment=r_inc, fail_reset=fail_reset, fail_increment=fail_inc, reset_branch=branch_reset,
        increment_branch=branch_inc, sensitivity_reset=s_reset, sensitivity_increment=s_inc,
        delta_fail_reset=df_reset, delta_fail_increment=df_inc,
    )


# ---------------------------------------------------------------------------------------------------
# Exact accounting (Gaussian DP: Dong, Roth, Su 2022)


def nsnc_reset_counts(T, tree_size):
    """(N1, N2) = (⌈T/Σ⌉, T − ⌈T/Σ⌉): the reset steps (τ(t) = 1) and increment steps among t = 1..T, period Σ."""
    T = check_int("T", T, minimum=1)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    resets = -(-T // tree_size)
    return resets, T - resets


def nsnc_tree_leaf_counts(tree_size) -> tuple[int, int]:
    """(c_1, c_rest): how many released nodes of a Σ-leaf tree contain leaf 1 (the reset step, τ = 1) and, at most,
    a leaf τ ≥ 2 (an increment step): bitlen(Σ) and bitlen(Σ) − 1 (0 when Σ = 1: no increment step).

    Leaf q lies in the nodes N_b, b = q, q + lowbit(q), … ≤ Σ (``reference.mechanisms.participation_chain``); the
    chain of q = 1 is 1, 2, 4, …, 2^⌊log2 Σ⌋, and every q ≥ 2 has a shorter one (``max_participation_count``'s
    closed form, erratum zo_o2nc.E3). The counts are those of a full period; a last, partial period has fewer.
    """
    tree_size = check_int("tree_size", tree_size, minimum=1)
    bits = tree_size.bit_length()
    return bits, bits - 1


def nsnc_single_pass_effective_sensitivity(sensitivity_reset, sensitivity_increment, tree_size):
    """S = √max(c_1·s_reset², c_rest·s_inc²) (``nsnc_tree_leaf_counts``): a single-pass run with tree noise σ is
    (S/σ)-GDP. Returns an mpf."""
    s1 = mpmath.mpf(check_real("sensitivity_reset", sensitivity_reset, nonnegative=True))
    s2 = mpmath.mpf(check_real("sensitivity_increment", sensitivity_increment, nonnegative=True))
    first, rest = nsnc_tree_leaf_counts(tree_size)
    return mpmath.sqrt(max(first * s1**2, rest * s2**2))


def nsnc_single_pass_mu(sensitivity_reset, sensitivity_increment, tree_size, noise_std):
    """Exact GDP μ of a single-pass run (Algorithm 3 or 5 inside Algorithm 2): μ = S/σ with
    S = √max(bitlen(Σ)·s_reset², (bitlen(Σ) − 1)·s_inc²) (``nsnc_single_pass_effective_sensitivity``).

    Each period has a fresh tree (Proposition 2.5's mechanism) and reads fresh records; the differing record lies
    in one leaf of one period — leaf 1 if it was read by the reset step, a leaf τ ≥ 2 if by an increment — and the
    released nodes containing that leaf are Gaussian mechanisms with its step's sensitivity given the history
    (adaptive GDP composition is tight; the other periods do not read the record: the "no composition" remark of
    the proof of Theorem 3.1). Counting every leaf in bitlen(Σ) nodes, √bitlen(Σ)·max(s_reset, s_inc)/σ, is an upper
    bound; this is the exact value for full periods. Returns an mpf.
    """
    sigma = mp_positive("noise_std", noise_std)
    return nsnc_single_pass_effective_sensitivity(sensitivity_reset, sensitivity_increment, tree_size) / sigma


def nsnc_multi_pass_mu(sensitivity_reset, sensitivity_increment, noise_std_reset, noise_std_increment, T, tree_size):
    """Exact GDP μ of T steps of Algorithm 4: μ² = N1·(s1/σ1)² + N2·(s2/σ2)², (N1, N2) = ``nsnc_reset_counts``.

    Every step reads all n records and releases g̃_t = g̃_{t−1} + (its increment) + N(0, σ²I): given the history it is
    a Gaussian mechanism with sensitivity s1 (reset) or s2 (increment); Lemma 4.3's composition, done exactly (GDP,
    Dong–Roth–Su 2022 Cor. 3.3). noise_std_increment may be None when N2 = 0 (no increment step). Returns an mpf.
    """
    s1 = mpmath.mpf(check_real("sensitivity_reset", sensitivity_reset, nonnegative=True))
    s2 = mpmath.mpf(check_real("sensitivity_increment", sensitivity_increment, nonnegative=True))
    resets, increments = nsnc_reset_counts(T, tree_size)
    sigma1 = mp_positive("noise_std_reset", noise_std_reset)
    total = resets * (s1 / sigma1) ** 2
    if increments > 0:
        if noise_std_increment is None:
            raise ValueError(f"noise_std_increment is required: T = {T} with tree_size = {tree_size} has "
                             f"{increments} increment steps")
        total += increments * (s2 / mp_positive("noise_std_increment", noise_std_increment)) ** 2
    elif noise_std_increment is not None:
        mp_positive("noise_std_increment", noise_std_increment)
    return mpmath.sqrt(total)


def nsnc_delta(epsilon, mu, delta_fail):
    """δ of an nsnc_improved run at ε: gaussian_delta(ε, μ) + δ_fail (the Gaussian part plus the probability that
    a high-probability sensitivity bound fails; proof of Lemma 3.4). Returns an mpf."""
    delta_fail = mpmath.mpf(check_real("delta_fail", delta_fail, nonnegative=True))
    return gaussian_delta(epsilon, mu) + delta_fail


def nsnc_epsilon(mu, delta_fail, dp_delta):
    """The smallest ε with gaussian_delta(ε, μ) + δ_fail ≤ δ (rounded up; ``gaussian_epsilon`` at δ − δ_fail).

    Refuses δ_fail ≥ δ: no ε then certifies δ. Returns an mpf.
    """
    delta_fail = mpmath.mpf(check_real("delta_fail", delta_fail, nonnegative=True))
    dp_delta = mp_delta("dp_delta", dp_delta)
    if not delta_fail < dp_delta:
        raise ValueError(f"delta_fail must be < dp_delta for any epsilon to certify it, got delta_fail = "
                         f"{mpmath.nstr(delta_fail, 6)} >= dp_delta = {mpmath.nstr(dp_delta, 6)}")
    return gaussian_epsilon(dp_delta - delta_fail, mu)


def nsnc_single_pass_delta_fail(sensitivities: NsncSensitivities):
    """δ_fail of a single-pass run: the largest failure probability among the branches in use (the differing record
    is read once, in one step, so only one of them can matter). Returns an mpf."""
    _check_sensitivities(sensitivities)
    return max(sensitivities.delta_fail_reset, sensitivities.delta_fail_increment)


def nsnc_multi_pass_delta_fail(sensitivities: NsncSensitivities, T, tree_size):
    """δ_fail of T steps of Algorithm 4 (the record is read at every step; union bound): N1·(2γ) + N2·(4γ) over the
    branches in use. Returns an mpf."""
    _check_sensitivities(sensitivities)
    resets, increments = nsnc_reset_counts(T, tree_size)
    return resets * sensitivities.delta_fail_reset + increments * sensitivities.delta_fail_increment


def _check_sensitivities(sensitivities):
    if not isinstance(sensitivities, NsncSensitivities):
        raise TypeError(f"sensitivities must be an NsncSensitivities (from nsnc_sensitivities), got "
                        f"{type(sensitivities).__name__}")


def _fail_coefficient(sens, passes, resets=0, increments=0):
    """δ_fail/γ of the branches in use (2 or 4 single pass; 2·N1 + 4·N2 multi-pass, over the active branches)."""
    if passes == "single":
        return max(2 if sens.delta_fail_reset > 0 else 0,
                   (4 if sens.oracle != "single_pass_crn" else 2) if sens.delta_fail_increment > 0 else 0)
    return (2 * resets if sens.delta_fail_reset > 0 else 0) + (4 * increments if sens.delta_fail_increment > 0 else 0)


def _refuse_delta_fail(delta_fail, dp_delta, gamma, coefficient, what):
    if delta_fail >= dp_delta:
        raise ValueError(
            f"gamma = {mpmath.nstr(mpmath.mpf(gamma), 6)} gives delta_fail = {coefficient}*gamma = "
            f"{mpmath.nstr(delta_fail, 6)} >= {what} = {mpmath.nstr(mpmath.mpf(dp_delta), 6)}: no epsilon certifies "
            f"it; take gamma < {what}/{coefficient} (e.g. gamma = "
            f"{mpmath.nstr(mpmath.mpf(dp_delta) / (2 * coefficient), 6)}"
            f", which spends half of {what} on the failure probability), or clip_hardening=True (single pass) or "
            f"sensitivity_mode='worst_case' (delta_fail = 0)")


# ---------------------------------------------------------------------------------------------------
# Calibration


@dataclasses.dataclass(frozen=True)
class NsncCalibration:
    """A σ (or σ1, σ2) for a target (ε, δ), and the exact privacy it achieves.

    rule: "exact" or "paper". oracle. epsilon, delta: the target. noise_std_reset, noise_std_increment: the σ of
    the reset and increment releases (single pass: one tree σ, both equal; multi-pass: σ1, σ2, σ2 None when there
    is no increment step). sensitivity_reset, sensitivity_increment, delta_fail: what the calibration used. mu: the
    exact GDP μ of the calibrated run. achieved_delta: gaussian_delta(ε, μ) + δ_fail at the target ε.
    achieved_epsilon: the exact ε at the target δ (None when δ_fail ≥ δ). meets_target: achieved_delta ≤ δ.
    All scalars are mpf.
    """

    rule: str
    oracle: str
    epsilon: mpmath.mpf
    delta: mpmath.mpf
    noise_std_reset: mpmath.mpf
    noise_std_increment: mpmath.mpf | None
    sensitivity_reset: mpmath.mpf
    sensitivity_increment: mpmath.mpf
    delta_fail: mpmath.mpf
    mu: mpmath.mpf
    achieved_delta: mpmath.mpf
    achieved_epsilon: mpmath.mpf | None
    meets_target: bool


def _achieved(eps, delta, mu, delta_fail):
    achieved_delta = gaussian_delta(eps, mu) + delta_fail
    achieved_eps = gaussian_epsilon(delta - delta_fail, mu) if delta_fail < delta else None
    return achieved_delta, achieved_eps, bool(achieved_delta <= delta)


def nsnc_single_pass_calibration(*, oracle, d, lipschitz, smoothing_radius, step_bound, tree_size, B1, B2, m_reset,
                                 m_increment, gamma, epsilon, delta, rule="exact", clip_hardening=False,
                                 sensitivity_mode="auto") -> NsncCalibration:
    """The tree σ of a single-pass run (Algorithm 3 or 5 in Algorithm 2) for a target (ε, δ), and what it achieves.

    The sensitivity s = max(s_reset, s_inc) and δ_fail come from ``nsnc_sensitivities`` (keywords as there).
    rule:
      * "exact" (default): σ = S/μ*, μ* = gaussian_mu(ε, δ − δ_fail), S = ``nsnc_single_pass_effective_sensitivity``
        — the smallest σ the exact
        accounting (``nsnc_single_pass_mu``) certifies. Refuses δ_fail ≥ δ, saying which γ would do.
      * "paper": Proposition 2.5 with δ/2 reserved for the tree (the other δ/2 for the failure of Lemma 3.3's
        event, proof of Lemma 3.4): σ = 4s√(log(max(Σ, 2))·log(2/δ))/ε (log(max(Σ, 2)): erratum
        nsnc_improved.E3). Never refused; ``meets_target`` says whether it certifies (ε, δ) exactly.
    """
    _check_choice("oracle", oracle, SINGLE_PASS_ORACLES)
    _check_choice("rule", rule, CALIBRATION_RULES)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    eps = mp_positive("epsilon", epsilon)
    delta = mp_delta("delta", delta)
    sens = nsnc_sensitivities(oracle, d=d, lipschitz=lipschitz, smoothing_radius=smoothing_radius,
                              step_bound=step_bound, B1=B1, B2=B2, m_reset=m_reset, m_increment=m_increment,
                              gamma=gamma, clip_hardening=clip_hardening, sensitivity_mode=sensitivity_mode)
    delta_fail = nsnc_single_pass_delta_fail(sens)
    s = max(sens.sensitivity_reset, sens.sensitivity_increment)
    if rule == "exact":
        _refuse_delta_fail(delta_fail, delta, gamma, _fail_coefficient(sens, "single"), "delta")
        effective = nsnc_single_pass_effective_sensitivity(sens.sensitivity_reset, sens.sensitivity_increment,
                                                           tree_size)
        sigma = effective / gaussian_mu(eps, delta - delta_fail)
    else:
        sigma = nsnc_tree_sigma(s, tree_size, eps, delta / 2)
    mu = nsnc_single_pass_mu(sens.sensitivity_reset, sens.sensitivity_increment, tree_size, sigma)
    achieved_delta, achieved_eps, ok = _achieved(eps, delta, mu, delta_fail)
    return NsncCalibration(
        rule=rule, oracle=oracle, epsilon=eps, delta=delta, noise_std_reset=sigma, noise_std_increment=sigma,
        sensitivity_reset=sens.sensitivity_reset, sensitivity_increment=sens.sensitivity_increment,
        delta_fail=delta_fail, mu=mu, achieved_delta=achieved_delta, achieved_epsilon=achieved_eps, meets_target=ok,
    )


def nsnc_single_pass_noise_std(*, oracle, d, lipschitz, smoothing_radius, step_bound, tree_size, B1, B2, m_reset,
                               m_increment, gamma, epsilon, delta, rule="exact", clip_hardening=False,
                               sensitivity_mode="auto"):
    """σ of ``nsnc_single_pass_calibration`` (the tree noise of every node). Returns an mpf; a float64 run should
    round it up (``math.nextafter``) so that the σ it adds is never below the calibrated one."""
    return nsnc_single_pass_calibration(
        oracle=oracle, d=d, lipschitz=lipschitz, smoothing_radius=smoothing_radius, step_bound=step_bound,
        tree_size=tree_size, B1=B1, B2=B2, m_reset=m_reset, m_increment=m_increment, gamma=gamma, epsilon=epsilon,
        delta=delta, rule=rule, clip_hardening=clip_hardening, sensitivity_mode=sensitivity_mode).noise_std_reset


def nsnc_multi_pass_calibration(*, oracle, d, lipschitz, smoothing_radius, step_bound, n, tree_size, T, m, gamma,
                                epsilon, delta, rule="exact", paper_constant=None,
                                sensitivity_mode="auto") -> NsncCalibration:
    """σ1 (reset steps) and σ2 (increment steps) of T calls of Algorithm 4 for a target (ε, δ), and what they achieve.

    Sensitivities s1, s2 and δ_fail = 2γN1 + 4γN2 (branches in use) from ``nsnc_sensitivities`` with B1 = B2 = n.
    rule:
      * "exact" (default): an equal split of μ*² = gaussian_mu(ε, δ − δ_fail)² between the N1 resets and the N2
        increments: σ1 = s1·√(2·N1)/μ*, σ2 = s2·√(2·N2)/μ* (σ1 = s1·√N1/μ*, σ2 = None when N2 = 0). Refuses
        δ_fail ≥ δ, saying which γ would do (γ = δ/(8T) always does).
      * "paper": Theorem 4.1's σ1 = c·L·√(T·log(1/δ)/Σ)/(n·ε) and σ2 = c·L·D·√(T·d·log(1/δ))/(α·n·ε); the
        constant c is unspecified in the paper, so ``paper_constant`` is required. ``meets_target`` says whether
        the printed rule with that c certifies (ε, δ) exactly.
    """
    _check_choice("oracle", oracle, MULTI_PASS_ORACLES)
    _check_choice("rule", rule, CALIBRATION_RULES)
    n = check_int("n", n, minimum=1)
    d = check_int("d", d, minimum=1)
    L = mp_positive("lipschitz", lipschitz)
    alpha = mp_positive("smoothing_radius", smoothing_radius)
    D = mp_positive("step_bound", step_bound)
    resets, increments = nsnc_reset_counts(T, tree_size)
    eps = mp_positive("epsilon", epsilon)
    delta = mp_delta("delta", delta)
    sens = nsnc_sensitivities(oracle, d=d, lipschitz=L, smoothing_radius=alpha, step_bound=D, B1=n, B2=n,
                              m_reset=m, m_increment=m, gamma=gamma, sensitivity_mode=sensitivity_mode)
    delta_fail = nsnc_multi_pass_delta_fail(sens, T, tree_size)
    if rule == "exact":
        if paper_constant is not None:
            raise ValueError("paper_constant applies only to rule='paper'")
        _refuse_delta_fail(delta_fail, delta, gamma, _fail_coefficient(sens, "multi", resets, increments), "delta")
        mu_star = gaussian_mu(eps, delta - delta_fail)
        if increments == 0:
            sigma1, sigma2 = sens.sensitivity_reset * mpmath.sqrt(resets) / mu_star, None
        else:
            sigma1 = sens.sensitivity_reset * mpmath.sqrt(2 * resets) / mu_star
            sigma2 = sens.sensitivity_increment * mpmath.sqrt(2 * increments) / mu_star
    else:
        if paper_constant is None:
            raise ValueError("paper_constant is required for rule='paper' (Theorem 4.1 states sigma_1, sigma_2 only "
                             "up to an unspecified constant c)")
        c = mp_positive("paper_constant", paper_constant)
        log_term = mpmath.log(1 / delta)
        sigma1 = c * L * mpmath.sqrt(T * log_term / tree_size) / (n * eps)
        sigma2 = c * L * D * mpmath.sqrt(T * d * log_term) / (alpha * n * eps)
    mu = nsnc_multi_pass_mu(sens.sensitivity_reset, sens.sensitivity_increment, sigma1, sigma2, T, tree_size)
    achieved_delta, achieved_eps, ok = _achieved(eps, delta, mu, delta_fail)
    return NsncCalibration(
        rule=rule, oracle=oracle, epsilon=eps, delta=delta, noise_std_reset=sigma1, noise_std_increment=sigma2,
        sensitivity_reset=sens.sensitivity_reset, sensitivity_increment=sens.sensitivity_increment,
        delta_fail=delta_fail, mu=mu, achieved_delta=achieved_delta, achieved_epsilon=achieved_eps, meets_target=ok,
    )


def nsnc_multi_pass_noise_stds(*, oracle, d, lipschitz, smoothing_radius, step_bound, n, tree_size, T, m, gamma,
                               epsilon, delta, rule="exact", paper_constant=None, sensitivity_mode="auto"):
    """(σ1, σ2) of ``nsnc_multi_pass_calibration`` (σ2 None when there is no increment step). mpf values."""
    cal = nsnc_multi_pass_calibration(
        oracle=oracle, d=d, lipschitz=lipschitz, smoothing_radius=smoothing_radius, step_bound=step_bound, n=n,
        tree_size=tree_size, T=T, m=m, gamma=gamma, epsilon=epsilon, delta=delta, rule=rule,
        paper_constant=paper_constant, sensitivity_mode=sensitivity_mode)
    return cal.noise_std_reset, cal.noise_std_increment


# ---------------------------------------------------------------------------------------------------
# The privacy plan of a run


@dataclasses.dataclass(frozen=True)
class NsncPrivacyPlan:
    """How a run of nsnc_improved Algorithm 2 with one of its oracles is private. Every field is public.

    oracle: one of ``ORACLES``. passes: "single" (Algorithms 3, 5: each record read once) or "multi" (Algorithm 4:
    every record at every step). relation: "replace_one" (§2: datasets of size n differing in one record).
    guarantee: "worst-case" (deterministic sensitivities, δ_fail = 0), "high-probability" (a high-probability
    sensitivity is used; δ_fail > 0) or "clip-hardened" (high-probability values made deterministic by per-record
    clipping; δ_fail = 0; not in the paper). d, lipschitz (L), smoothing_radius (α), step_bound (D: the learner's
    clip radius, ‖z_t − z_{t−1}‖ ≤ 2D), tree_size (Σ), B1, B2 (multi-pass: n, n), n (multi-pass; None single pass),
    T, resets (N1), increments (N2) (multi-pass; None single pass), m_reset, m_increment (directions or
    perturbations per record; the first-order reset does not use m_reset), gamma (γ), clip_hardening,
    sensitivity_mode. sensitivity_reset / sensitivity_increment: what the accounting uses; worst_case_reset /
    worst_case_increment and high_probability_reset / high_probability_increment (None where not defined): the two
    bounds; reset_branch / increment_branch: which is used. delta_fail: the failure probability counted. mu: the
    exact Gaussian-DP μ. epsilon: the smallest ε with gaussian_delta(ε, μ) + δ_fail ≤ dp_delta. dp_delta: δ.
    noise_std: the tree σ (single pass; None multi-pass). noise_std_reset / noise_std_increment: σ of the reset and
    increment releases (single pass: both the tree σ; multi-pass: σ1, σ2, σ2 None when N2 = 0). condition: what the
    guarantee assumes. note: remarks. Sensitivities, δ_fail, μ and ε are float64 rounded up; σ as used.
    """

    oracle: str
    passes: str
    relation: str
    guarantee: str
    d: int
    lipschitz: float
    smoothing_radius: float
    step_bound: float
    tree_size: int
    B1: int
    B2: int
    n: int | None
    T: int | None
    resets: int | None
    increments: int | None
    m_reset: int
    m_increment: int
    gamma: float
    clip_hardening: bool
    sensitivity_mode: str
    sensitivity_reset: float
    sensitivity_increment: float
    worst_case_reset: float
    worst_case_increment: float
    high_probability_reset: float | None
    high_probability_increment: float | None
    reset_branch: str
    increment_branch: str
    delta_fail: float
    mu: float
    epsilon: float
    dp_delta: float
    noise_std: float | None
    noise_std_reset: float
    noise_std_increment: float | None
    condition: str
    note: str

    def summary(self) -> str:
        """One line for a ledger: the guarantee, (ε, δ), μ, δ_fail, σ, the sensitivities and the tree."""
        if self.passes == "single":
            noise = f"sigma={self.noise_std:.6g}"
            shape = f"tree_size={self.tree_size}, B1={self.B1}, B2={self.B2}"
        else:
            sigma2 = "none" if self.noise_std_increment is None else f"{self.noise_std_increment:.6g}"
            noise = f"sigma_reset={self.noise_std_reset:.6g}, sigma_increment={sigma2}"
            shape = f"n={self.n}, T={self.T} ({self.resets} resets), tree_size={self.tree_size}"
        return (f"nsnc_improved {self.oracle}: ({self.epsilon:.6g}, {self.dp_delta:.3g})-DP ({self.guarantee}), "
                f"mu={self.mu:.6g}, delta_fail={self.delta_fail:.3g}, {noise}, "
                f"s_reset={self.sensitivity_reset:.6g} ({self.reset_branch}), "
                f"s_increment={self.sensitivity_increment:.6g} ({self.increment_branch}), {shape}, "
                f"m=({self.m_reset}, {self.m_increment}), gamma={self.gamma:.3g}")


def _float_up(value) -> float:
    """The smallest float64 ≥ an mpf value (sensitivities, μ, ε, δ_fail are rounded up, never down)."""
    out = float(value)
    if mpmath.mpf(out) < value:
        out = math.nextafter(out, math.inf)
    return out


def _float_or_none(value):
    return None if value is None else _float_up(value)


def _guarantee(sens, clip_hardening):
    uses_hp = sens.reset_branch != "worst-case" or sens.increment_branch != "worst-case"
    if not uses_hp:
        return "worst-case"
    return "clip-hardened" if clip_hardening else "high-probability"


_CONDITION = ("every f(·, ξ) is L-Lipschitz for every possible record ξ (Assumption 2.2; the sensitivities of "
              "Lemmas 3.3/C.1 assume it); ‖z_t − z_{t−1}‖ ≤ 2·step_bound (Algorithm 2's clip)")
_CONDITION_HP = ("; the directions are drawn independently of the data and coupled by (step, slot), so the good "
                 "event of the differing record fails with probability ≤ delta_fail given the history")
_CONDITION_CLIP = "; each record's estimate is clipped to its high-probability bound (clip_hardening)"


def _condition(guarantee):
    if guarantee == "high-probability":
        return _CONDITION + _CONDITION_HP
    if guarantee == "clip-hardened":
        return _CONDITION + _CONDITION_CLIP
    return _CONDITION


@functools.lru_cache(maxsize=256)
def _single_pass_plan(oracle, d, L, alpha, D, tree_size, B1, B2, m_reset, m_increment, gamma, sigma, dp_delta,
                      clip_hardening, mode, prec):
    with mpmath.workprec(prec):
        sens = nsnc_sensitivities(oracle, d=d, lipschitz=L, smoothing_radius=alpha, step_bound=D, B1=B1, B2=B2,
                                  m_reset=m_reset, m_increment=m_increment, gamma=gamma,
                                  clip_hardening=clip_hardening, sensitivity_mode=mode)
        delta_fail = nsnc_single_pass_delta_fail(sens)
        _refuse_delta_fail(delta_fail, dp_delta, gamma, _fail_coefficient(sens, "single"), "dp_delta")
        mu = nsnc_single_pass_mu(sens.sensitivity_reset, sens.sensitivity_increment, tree_size, sigma)
        eps = nsnc_epsilon(mu, delta_fail, dp_delta)
        guarantee = _guarantee(sens, clip_hardening)
        notes = ["single pass: each record is read once, in one leaf of one period's tree (fresh noise per period), "
                 "so the run's mu is one tree's (proof of Theorem 3.1)"]
        if oracle == "first_order":
            notes.append("first-order reset: one perturbation per record (Algorithm 5), m_reset unused")
        if oracle == "single_pass_crn":
            notes.append("common random numbers at z_t and z_{t-1}: not in the paper")
        return NsncPrivacyPlan(
            oracle=oracle, passes="single", relation="replace_one", guarantee=guarantee, d=d, lipschitz=L,
            smoothing_radius=alpha, step_bound=D, tree_size=tree_size, B1=B1, B2=B2, n=None, T=None, resets=None,
            increments=None, m_reset=m_reset, m_increment=m_increment, gamma=gamma, clip_hardening=clip_hardening,
            sensitivity_mode=mode, sensitivity_reset=_float_up(sens.sensitivity_reset),
            sensitivity_increment=_float_up(sens.sensitivity_increment),
            worst_case_reset=_float_up(sens.worst_case_reset),
            worst_case_increment=_float_up(sens.worst_case_increment),
            high_probability_reset=_float_or_none(sens.high_probability_reset),
            high_probability_increment=_float_or_none(sens.high_probability_increment),
            reset_branch=sens.reset_branch, increment_branch=sens.increment_branch, delta_fail=_float_up(delta_fail),
            mu=_float_up(mu), epsilon=_float_up(eps), dp_delta=dp_delta, noise_std=sigma, noise_std_reset=sigma,
            noise_std_increment=sigma, condition=_condition(guarantee), note="; ".join(notes),
        )


def _check_plan_common(d, lipschitz, smoothing_radius, step_bound, tree_size, gamma, dp_delta, sensitivity_mode):
    d = check_int("d", d, minimum=1)
    L = float(check_real("lipschitz", lipschitz, positive=True))
    alpha = float(check_real("smoothing_radius", smoothing_radius, positive=True))
    D = float(check_real("step_bound", step_bound, positive=True))
    tree_size = check_int("tree_size", tree_size, minimum=1)
    gamma = float(check_probability("gamma", gamma))
    dp_delta = float(check_probability("dp_delta", dp_delta))
    _check_choice("sensitivity_mode", sensitivity_mode, SENSITIVITY_MODES)
    return d, L, alpha, D, tree_size, gamma, dp_delta


def nsnc_single_pass_plan(*, oracle, d, lipschitz, smoothing_radius, step_bound, tree_size, B1, B2, m_reset,
                          m_increment, gamma, noise_std, dp_delta, clip_hardening=False,
                          sensitivity_mode="auto") -> NsncPrivacyPlan:
    """The privacy plan of a single-pass run: Algorithm 2 with Algorithm 3 ("single_pass"), its common-random-numbers
    variant ("single_pass_crn", not in the paper) or Algorithm 5 ("first_order"), exactly (Lemma 3.4 / C.2).

    Sensitivities and δ_fail from ``nsnc_sensitivities`` (the largest failure probability among the branches in
    use: the differing record is read once); μ = √max(bitlen(Σ)·s_reset², (bitlen(Σ) − 1)·s_inc²)/σ (``nsnc_single_pass_mu``);
    epsilon = the smallest ε with gaussian_delta(ε, μ) + δ_fail ≤ dp_delta. Refuses δ_fail ≥ dp_delta, saying
    which γ would do.

    Keyword-only: oracle, d, lipschitz (L), smoothing_radius (α), step_bound (D, the learner's clip radius),
    tree_size (Σ, the period), B1, B2 (batch sizes of the reset and increment steps), m_reset, m_increment
    (directions per record; unused m_reset for "first_order"), gamma (γ, the per-estimate failure probability of
    the concentration radius), noise_std (σ > 0 of every tree node, as the run adds it), dp_delta (δ ∈ (0, 1)),
    clip_hardening (per-record clipping to the high-probability bounds: δ_fail = 0), sensitivity_mode ("auto" or
    "worst_case"). Memoised; computed with at least ``PLAN_PRECISION_BITS`` bits.
    """
    _check_choice("oracle", oracle, SINGLE_PASS_ORACLES)
    d, L, alpha, D, tree_size, gamma, dp_delta = _check_plan_common(d, lipschitz, smoothing_radius, step_bound,
                                                                    tree_size, gamma, dp_delta, sensitivity_mode)
    B1 = check_int("B1", B1, minimum=1)
    B2 = check_int("B2", B2, minimum=1)
    m_reset = check_int("m_reset", m_reset, minimum=1)
    m_increment = check_int("m_increment", m_increment, minimum=1)
    sigma = float(check_real("noise_std", noise_std, positive=True))
    if not isinstance(clip_hardening, bool):
        raise TypeError(f"clip_hardening must be a bool, got {type(clip_hardening).__name__}")
    return _single_pass_plan(oracle, d, L, alpha, D, tree_size, B1, B2, m_reset, m_increment, gamma, sigma, dp_delta,
                             clip_hardening, sensitivity_mode, max(mpmath.mp.prec, PLAN_PRECISION_BITS))


@functools.lru_cache(maxsize=256)
def _multi_pass_plan(oracle, d, L, alpha, D, n, tree_size, T, m, gamma, sigma1, sigma2, dp_delta, mode, prec):
    with mpmath.workprec(prec):
        resets, increments = nsnc_reset_counts(T, tree_size)
        sens = nsnc_sensitivities(oracle, d=d, lipschitz=L, smoothing_radius=alpha, step_bound=D, B1=n, B2=n,
                                  m_reset=m, m_increment=m, gamma=gamma, sensitivity_mode=mode)
        delta_fail = nsnc_multi_pass_delta_fail(sens, T, tree_size)
        _refuse_delta_fail(delta_fail, dp_delta, gamma, _fail_coefficient(sens, "multi", resets, increments),
                           "dp_delta")
        mu = nsnc_multi_pass_mu(sens.sensitivity_reset, sens.sensitivity_increment, sigma1, sigma2, T, tree_size)
        eps = nsnc_epsilon(mu, delta_fail, dp_delta)
        guarantee = _guarantee(sens, False)
        notes = [f"multi-pass: every record is read at each of the T = {T} steps ({resets} resets, {increments} "
                 "increments); exact Gaussian-DP composition (Lemma 4.3 done exactly), union bound for delta_fail"]
        if oracle == "multi_pass_first_order":
            notes.append("Algorithm 4 with the first-order estimator of App. C, m perturbations per record")
        return NsncPrivacyPlan(
            oracle=oracle, passes="multi", relation="replace_one", guarantee=guarantee, d=d, lipschitz=L,
            smoothing_radius=alpha, step_bound=D, tree_size=tree_size, B1=n, B2=n, n=n, T=T, resets=resets,
            increments=increments, m_reset=m, m_increment=m, gamma=gamma, clip_hardening=False, sensitivity_mode=mode,
            sensitivity_reset=_float_up(sens.sensitivity_reset),
            sensitivity_increment=_float_up(sens.sensitivity_increment),
            worst_case_reset=_float_up(sens.worst_case_reset),
            worst_case_increment=_float_up(sens.worst_case_increment),
            high_probability_reset=_float_or_none(sens.high_probability_reset),
            high_probability_increment=_float_or_none(sens.high_probability_increment),
            reset_branch=sens.reset_branch, increment_branch=sens.increment_branch, delta_fail=_float_up(delta_fail),
            mu=_float_up(mu), epsilon=_float_up(eps), dp_delta=dp_delta, noise_std=None, noise_std_reset=sigma1,
            noise_std_increment=sigma2, condition=_condition(guarantee), note="; ".join(notes),
        )


def nsnc_multi_pass_plan(*, oracle, d, lipschitz, smoothing_radius, step_bound, n, tree_size, T, m, gamma,
                         noise_std_reset, noise_std_increment, dp_delta, sensitivity_mode="auto") -> NsncPrivacyPlan:
    """The privacy plan of T calls of Algorithm 4 inside Algorithm 2 ("multi_pass"; "multi_pass_first_order" with
    the first-order estimator of App. C), exactly (Lemma 4.3 with exact Gaussian-DP composition).

    Sensitivities from ``nsnc_sensitivities`` with B1 = B2 = n; (N1, N2) = (⌈T/Σ⌉, T − N1);
    μ² = N1·(s1/σ1)² + N2·(s2/σ2)² (``nsnc_multi_pass_mu``); δ_fail = 2γ·N1 + 4γ·N2 over the branches in use
    (the record is read at every step: union bound); epsilon = the smallest ε with gaussian_delta(ε, μ) + δ_fail ≤
    dp_delta. Refuses δ_fail ≥ dp_delta, saying which γ would do. Without a privacy floor on m the
    high-probability branches are inactive and the worst case applies (Theorem 4.1's m has none: erratum
    nsnc_improved.E10).

    Keyword-only: oracle, d, lipschitz (L), smoothing_radius (α), step_bound (D), n (records), tree_size (Σ), T
    (steps), m (directions per record and estimate), gamma (γ), noise_std_reset (σ1 > 0), noise_std_increment (σ2
    > 0, or None when N2 = 0), dp_delta (δ), sensitivity_mode ("auto" or "worst_case"). Memoised.
    """
    _check_choice("oracle", oracle, MULTI_PASS_ORACLES)
    d, L, alpha, D, tree_size, gamma, dp_delta = _check_plan_common(d, lipschitz, smoothing_radius, step_bound,
                                                                    tree_size, gamma, dp_delta, sensitivity_mode)
    n = check_int("n", n, minimum=1)
    T = check_int("T", T, minimum=1)
    m = check_int("m", m, minimum=1)
    sigma1 = float(check_real("noise_std_reset", noise_std_reset, positive=True))
    _, increments = nsnc_reset_counts(T, tree_size)
    if noise_std_increment is None:
        if increments > 0:
            raise ValueError(f"noise_std_increment is required: T = {T} with tree_size = {tree_size} has "
                             f"{increments} increment steps")
        sigma2 = None
    else:
        sigma2 = float(check_real("noise_std_increment", noise_std_increment, positive=True))
    return _multi_pass_plan(oracle, d, L, alpha, D, n, tree_size, T, m, gamma, sigma1, sigma2, dp_delta,
                            sensitivity_mode, max(mpmath.mp.prec, PLAN_PRECISION_BITS))
