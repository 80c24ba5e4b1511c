"""zo_o2nc Corollary 4.4 and §2: the tree noise of Algorithms 3 and 4, and the RDP → (ε, δ)-DP conversion.

Zhang, Tran, Cutkosky — *Private Zeroth-Order Nonsmooth Nonconvex Optimization* (ICLR 2024).

* ``zo_o2nc_cor44_sigma``: Corollary 4.4's σ for (α, αρ²/2)-RDP, with the paper's 2 ln T count of the tree
  nodes a record enters (``count_rule="paper_2lnT"``, not private for T ∈ {1, 2, 4}: erratum zo_o2nc.E3) or
  the exact count ⌊log2 T⌋ + 1 (default). ``zo_o2nc_cor44_sigma_as_printed`` is the printed rule.
* ``zo_o2nc_rdp_to_dp`` and its inverse ``zo_o2nc_dp_to_rho``: (α, αρ²/2)-RDP for all α ⇒
  (ρ²/2 + ρ√(2 ln 1/δ), δ)-DP.
* ``zo_o2nc_paper_dp_epsilon``: §2's simplified (2ρ√ln(1/δ), δ)-DP with its validity condition
  (erratum zo_o2nc.E11).

Exact accounting of a whole run of Algorithm 3 with Algorithm 4 (or Algorithm 6):

* ``zo_o2nc_leaf_sensitivities``: the per-round sensitivities of Alg 4 — s_1 = 2dL/B1 for the GRAD leaf
  (Lemma 3.1) and s_t = 2dL·(2D)/(B2·δ) for the DIFF leaves t ≥ 2 (Lemma 3.2 with ‖w_t − w_{t−1}‖ ≤ 2D,
  Remark 4.1), D being the step bound the learner actually enforces. Replace-one neighbours, shared directions
  (erratum zo_o2nc.E15).
* ``zo_o2nc_tree_rho_squared``: ρ² of one epoch's tree release, exactly (max_q s_q² Σ_{b ≤ T: q ∈ N_b} 1/σ_b²,
  Theorem 4.3 via Lemma C.1 with the exact node sets) or as printed in Theorem 4.3 (2 ln T · max_{b, i ≤ b}
  s_i²/σ_b², erratum zo_o2nc.E3).
* ``zo_o2nc_tree_noise_std``: σ for a target ρ under either rule, for any step bound D (Corollary 4.4 is the
  case D = δ/T, B1 ≥ T·B2/2). ``zo_o2nc_naive_noise_std``: Alg 6's σ = 2dL/(Bρ) (replace-one sensitivity) or
  the printed dL/(Bρ) (erratum zo_o2nc.E8).
* ``zo_o2nc_privacy_plan`` / ``zo_o2nc_naive_privacy_plan``: the ``ZoO2ncPrivacyPlan`` of a run — epochs use
  disjoint records (single pass), so by parallel composition the run's ρ is one epoch's ρ — converted to
  (ε, δ) with §2's ρ²/2 + ρ√(2 ln 1/δ) for the exact and the printed ρ, through the RDP accountant
  (``reference.accounting``) with ``TreeAggregationEvent`` (resp. ``GaussianEvent``), and with the exact ρ
  through the optimal RDP conversion (Canonne–Kamath–Steinke 2020).

Scalars are mpmath numbers computed at the caller's working precision
(``reference.precision.working_precision``); the plan stores float64 values rounded up (ρ, ε) or exactly as
used (σ).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import mpmath

from ..accounting.conversions import epsilon_from_zcdp
from ..accounting.errors import AccountingError
from ..accounting.events import Event, GaussianEvent, NeighbouringRelation, TreeAggregationEvent
from ..accounting.rdp import rdp_of_event
from ..mechanisms import participation_chain
from ..validation import check_array, check_int, check_probability, check_real
from ._privacy_common import mp_delta, mp_positive

__all__ = [
    "zo_o2nc_cor44_sigma",
    "zo_o2nc_cor44_sigma_as_printed",
    "zo_o2nc_rdp_to_dp",
    "zo_o2nc_dp_to_rho",
    "zo_o2nc_paper_dp_epsilon",
    "TREE_RULES",
    "NAIVE_SIGMA_RULES",
    "PLAN_PRECISION_BITS",
    "zo_o2nc_leaf_sensitivities",
    "zo_o2nc_tree_rho_squared",
    "zo_o2nc_tree_noise_std",
    "zo_o2nc_naive_sensitivity",
    "zo_o2nc_naive_noise_std",
    "ZoO2ncPrivacyPlan",
    "zo_o2nc_privacy_plan",
    "zo_o2nc_naive_privacy_plan",
]

#: How the tree noise is tied to ρ: the exact participation counts, or Theorem 4.3's printed 2 ln T.
TREE_RULES = ("exact", "paper_2lnT")
#: Alg 6's σ: 2dL/(Bρ) from the replace-one sensitivity 2dL/B, or the printed dL/(Bρ) (zo_o2nc.E8).
NAIVE_SIGMA_RULES = ("exact", "paper")
#: Plans are computed with at least this many bits (or the caller's precision if higher), then rounded up to float64.
PLAN_PRECISION_BITS = 128


def zo_o2nc_cor44_sigma(d, lipschitz, T, B1, B2, rho, count_rule="exact"):
    """zo_o2nc Corollary 4.4: tree noise σ for Alg 3 + Alg 4 to be (α, αρ²/2)-RDP.

    d: dimension. lipschitz: L (f(·, z) L-Lipschitz for every z). T: rounds per epoch (tree leaves).
    B1: GRAD batch size (t = 1). B2: DIFF batch size (t ≥ 2). rho: ρ (the target (α, αρ²/2)-RDP,
    i.e. ρ²/2-zCDP). With D = δ/T the leaf sensitivities are s_1 = 2dL/B1 and s_t = 4dL/(B2·T).

    count_rule:
      * "paper_2lnT" (as printed): σ = √(2 ln T)·s_2/ρ = 4√(2 ln T)·dL/(B2·T·ρ). Requires T ≥ 2
        (σ = 0 at T = 1). Not private for T ∈ {2, 4} when s_1 = s_2 (erratum zo_o2nc.E3).
      * "exact" (default, always private): σ² = max_q s_q²·c_q/ρ², with the exact participation
        counts c_1 = ⌊log2 T⌋ + 1 and max_{q≥2} c_q = ⌊log2 T⌋ (Theorem 4.3 proof, corrected), so
        σ² = max(s_1²(⌊log2 T⌋ + 1), s_2²⌊log2 T⌋)/ρ².
    Both rules require the corollary's hypothesis B1 ≥ T·B2/2 (it makes s_1 ≤ s_2).
    Reference values (M = 1e5, d = 10, L = 1, δ = 0.1, ρ = 1, F* = 1, B1 = T + 1, B2 = 1):
    paper rule, T = 536: σ = 0.264565; T = 938: σ = 0.157768.
    """
    d = check_int("d", d, minimum=1)
    lipschitz = mp_positive("lipschitz", lipschitz)
    T = check_int("T", T, minimum=1)
    B1 = check_int("B1", B1, minimum=1)
    B2 = check_int("B2", B2, minimum=1)
    rho = mp_positive("rho", rho)
    if 2 * B1 < T * B2:
        raise ValueError(f"B1 must be >= T*B2/2 (Corollary 4.4's hypothesis), got B1={B1}, T={T}, B2={B2}")
    s_first = 2 * d * lipschitz / B1
    s_later = 4 * d * lipschitz / (B2 * T)
    if count_rule == "paper_2lnT":
        if T < 2:
            raise ValueError("T must be >= 2 under count_rule='paper_2lnT' (2 ln T = 0 at T = 1 gives sigma = 0)")
        return mpmath.sqrt(2 * mpmath.log(T)) * s_later / rho
    if count_rule == "exact":
        depth = T.bit_length()  # ⌊log2 T⌋ + 1 = c_1, the count of leaf 1
        worst = s_first**2 * depth
        if T >= 2:
            worst = max(worst, s_later**2 * (depth - 1))
        return mpmath.sqrt(worst) / rho
    raise ValueError(f"count_rule must be 'exact' or 'paper_2lnT', got {count_rule!r}")


def zo_o2nc_cor44_sigma_as_printed(d, lipschitz, T, B1, B2, rho):
    """zo_o2nc Corollary 4.4 as printed: σ = 4√(2 ln T)·dL/(B2·T·ρ) (``count_rule="paper_2lnT"``, erratum zo_o2nc.E3)."""
    return zo_o2nc_cor44_sigma(d, lipschitz, T, B1, B2, rho, count_rule="paper_2lnT")


def zo_o2nc_rdp_to_dp(rho, delta):
    """zo_o2nc §2: (α, αρ²/2)-RDP for all α ⇒ (ε, δ)-DP with ε = ρ²/2 + ρ√(2 ln(1/δ)).

    Mironov 2017 Prop. 3 minimised over α: the optimum is α* = 1 + √(2 ln(1/δ))/ρ.
    """
    rho = mp_positive("rho", rho)
    delta = mp_delta("delta", delta)
    return rho**2 / 2 + rho * mpmath.sqrt(2 * mpmath.log(1 / delta))


def zo_o2nc_dp_to_rho(epsilon, delta):
    """Inverse of ``zo_o2nc_rdp_to_dp`` (zo_o2nc §2): ρ = −√(2ℓ) + √(2ℓ + 2ε), ℓ = ln(1/δ).

    Written as 2ε/(√(2ℓ) + √(2ℓ + 2ε)) to avoid cancellation when ε ≪ ℓ.
    """
    eps = mp_positive("epsilon", epsilon)
    delta = mp_delta("delta", delta)
    two_ell = 2 * mpmath.log(1 / delta)
    return 2 * eps / (mpmath.sqrt(two_ell) + mpmath.sqrt(two_ell + 2 * eps))


def zo_o2nc_paper_dp_epsilon(rho, delta, *, condition="paper"):
    """The paper's simplified conversion: (2ρ√ln(1/δ), δ)-DP (zo_o2nc §2, erratum zo_o2nc.E11).

    It is an upper bound on the exact ε = ρ²/2 + ρ√(2 ln(1/δ)) only when ρ is small enough:
      * condition="paper": the (sign-restored) printed condition δ ≤ exp(−ρ²), i.e. ρ ≤ √ln(1/δ);
      * condition="exact": the sharp condition ρ ≤ 2(2 − √2)√ln(1/δ) (≈ 1.17√ln(1/δ)).
    Outside the chosen condition this raises ValueError instead of returning an ε that is too small.
    """
    rho = mp_positive("rho", rho)
    delta = mp_delta("delta", delta)
    ell = mpmath.log(1 / delta)
    if condition == "paper":
        if not delta <= mpmath.exp(-(rho**2)):
            raise ValueError(
                f"delta must be <= exp(-rho^2) = {mpmath.nstr(mpmath.exp(-(rho**2)), 6)} for the paper's 2*rho*sqrt(ln(1/delta)) "
                f"(erratum zo_o2nc.E11), got delta={mpmath.nstr(delta, 6)}, rho={mpmath.nstr(rho, 6)}"
            )
    elif condition == "exact":
        if not rho <= 2 * (2 - mpmath.sqrt(2)) * mpmath.sqrt(ell):
            raise ValueError(
                f"rho must be <= 2(2 - sqrt 2) sqrt(ln(1/delta)) = {mpmath.nstr(2 * (2 - mpmath.sqrt(2)) * mpmath.sqrt(ell), 6)} "
                f"for 2*rho*sqrt(ln(1/delta)) to bound the exact epsilon, got rho={mpmath.nstr(rho, 6)}"
            )
    else:
        raise ValueError(f"condition must be 'paper' or 'exact', got {condition!r}")
    return 2 * rho * mpmath.sqrt(ell)


# ---------------------------------------------------------------------------------------------------
# Exact accounting of a whole run (Algorithm 3 with Algorithm 4 or Algorithm 6)


def _mp_step_bound(step_bound):
    return mp_positive("step_bound", step_bound)


def zo_o2nc_leaf_sensitivities(d, lipschitz, T, B1, B2, smoothing_radius, step_bound):
    """s_1..s_T: the replace-one ℓ2-sensitivity of each leaf of one epoch of zo_o2nc Algorithm 4.

    s_1 = 2dL/B1: the GRAD leaf (Lemma 3.1). s_t = 2dL·‖w_t − w_{t−1}‖/(B2·δ) ≤ 2dL·(2D)/(B2·δ) for t ≥ 2: the
    DIFF leaves (Lemma 3.2), with ‖w_t − w_{t−1}‖ ≤ 2D because every step has ‖Δ‖ ≤ D (Remark 4.1). With
    D = δ/T this is 4dL/(B2·T), Corollary 4.4's value. The bounds hold for every realisation of the directions
    shared by the two neighbouring runs (erratum zo_o2nc.E15) and need every f(·, z) to be L-Lipschitz.

    d: dimension. lipschitz: L. T: rounds per epoch (≥ 1). B1, B2: GRAD and DIFF batch sizes.
    smoothing_radius: δ. step_bound: D, the radius the learner projects onto. Returns a tuple of T mpf.
    """
    d = check_int("d", d, minimum=1)
    lipschitz = mp_positive("lipschitz", lipschitz)
    T = check_int("T", T, minimum=1)
    B1 = check_int("B1", B1, minimum=1)
    B2 = check_int("B2", B2, minimum=1)
    delta = mp_positive("smoothing_radius", smoothing_radius)
    D = _mp_step_bound(step_bound)
    first = 2 * d * lipschitz / B1
    later = 2 * d * lipschitz * (2 * D) / (B2 * delta)
    return (first,) + (later,) * (T - 1)


def _stds_for(noise_stds, n):
    arr = check_array("noise_stds", noise_stds, ndim=1)
    if arr.shape[0] != n:
        raise ValueError(f"noise_stds must have one σ_b per leaf (length {n}), got length {arr.shape[0]}")
    stds = [mpmath.mpf(check_real(f"noise_stds[{i}]", v, positive=True)) for i, v in enumerate(arr)]
    return stds


def zo_o2nc_tree_rho_squared(sensitivities, noise_stds, rule="exact"):
    """ρ² such that one epoch's tree release (zo_o2nc Alg 4 with Alg 5, Theorem 4.3) is (α, αρ²/2)-RDP.

    sensitivities: s_1..s_n ≥ 0 (s_q bounds the change of leaf q's contribution under replace-one).
    noise_stds: σ_1..σ_n > 0 (σ_b: std of node b's noise ξ_b). Same length n ≥ 1.
    rule:
      * "exact" (default): ρ² = max_q s_q² Σ_{b ≤ n: q ∈ N_b} 1/σ_b², N_b = [b − lowbit(b) + 1, b] — Lemma C.1
        with the exact set of nodes a record in block q reaches (its Fenwick update chain). Tight for
        non-adaptive Gaussian leaves.
      * "paper_2lnT": ρ² = 2 ln n · max_{b ∈ [n], i ≤ b} s_i²/σ_b², Theorem 4.3 as printed; it under-counts the
        nodes at n ∈ {1, 2, 4} (zero at n = 1; erratum zo_o2nc.E3).
    Returns an mpf.
    """
    s_arr = check_array("sensitivities", sensitivities, ndim=1)
    n = s_arr.shape[0]
    if n == 0:
        raise ValueError("sensitivities must have at least one entry (one leaf)")
    s = [mpmath.mpf(check_real(f"sensitivities[{i}]", v, nonnegative=True)) for i, v in enumerate(s_arr)]
    stds = _stds_for(noise_stds, n)
    if rule == "exact":
        worst = mpmath.mpf(0)
        for q in range(1, n + 1):
            inverse_variances = mpmath.fsum(1 / stds[b - 1] ** 2 for b in participation_chain(q, n))
            worst = max(worst, s[q - 1] ** 2 * inverse_variances)
        return worst
    if rule == "paper_2lnT":
        worst, prefix_max = mpmath.mpf(0), mpmath.mpf(0)
        for b in range(1, n + 1):
            prefix_max = max(prefix_max, s[b - 1] ** 2)
            worst = max(worst, prefix_max / stds[b - 1] ** 2)
        return 2 * mpmath.log(n) * worst
    raise ValueError(f"rule must be one of {TREE_RULES}, got {rule!r}")


def zo_o2nc_tree_noise_std(d, lipschitz, T, B1, B2, smoothing_radius, step_bound, rho, count_rule="exact"):
    """The constant tree noise σ (σ_b ≡ σ) that makes one epoch of zo_o2nc Alg 4 (α, αρ²/2)-RDP.

    Leaf sensitivities as ``zo_o2nc_leaf_sensitivities`` (any step bound D, any B1, B2).
    count_rule "exact" (default): σ² = max_q s_q² c_q/ρ² with c_q the exact node counts (always private);
    "paper_2lnT": σ = √(2 ln T)·max_q s_q/ρ (Theorem 4.3 as printed; T ≥ 2 required, σ would be 0 at T = 1;
    not private at T ∈ {2, 4} when s_1 = s_2, erratum zo_o2nc.E3). With D = δ/T and B1 ≥ T·B2/2 both equal
    ``zo_o2nc_cor44_sigma`` (Corollary 4.4). Returns an mpf.
    """
    T = check_int("T", T, minimum=1)
    first, later = _first_and_later(d, lipschitz, T, B1, B2, smoothing_radius, step_bound)
    rho = mp_positive("rho", rho)
    if count_rule not in TREE_RULES:
        raise ValueError(f"count_rule must be one of {TREE_RULES}, got {count_rule!r}")
    if count_rule == "paper_2lnT" and T < 2:
        raise ValueError("T must be >= 2 under count_rule='paper_2lnT' (2 ln T = 0 at T = 1 gives sigma = 0, "
                         "erratum zo_o2nc.E3)")
    return mpmath.sqrt(_alg4_rho_squared(first, later, T, mpmath.mpf(1), count_rule)) / rho


def _first_and_later(d, lipschitz, T, B1, B2, smoothing_radius, step_bound):
    """(s_1, s_t for t ≥ 2) of ``zo_o2nc_leaf_sensitivities`` without building the T-tuple."""
    s = zo_o2nc_leaf_sensitivities(d, lipschitz, min(T, 2), B1, B2, smoothing_radius, step_bound)
    return s[0], (s[1] if len(s) == 2 else None)


def _alg4_rho_squared(first, later, T, sigma, rule):
    """``zo_o2nc_tree_rho_squared`` for Alg 4's leaves (s_1, then s_2 = … = s_T) and constant σ, in closed form:
    exact: max(s_1²(⌊log2 T⌋ + 1), s_2²⌊log2 T⌋)/σ² (leaf 1 is in ⌊log2 T⌋ + 1 nodes, every other leaf in at most
    ⌊log2 T⌋, attained at q = 2 for T ≥ 2: Theorem 4.3 corrected, zo_o2nc.E3); printed: 2 ln T·max(s_1, s_2)²/σ²."""
    if rule == "exact":
        worst = first**2 * T.bit_length()
        if T >= 2:
            worst = max(worst, later**2 * (T.bit_length() - 1))
        return worst / sigma**2
    top = first if T < 2 else max(first, later)
    return 2 * mpmath.log(T) * top**2 / sigma**2


def zo_o2nc_naive_sensitivity(d, lipschitz, batch_size, rule="exact"):
    """Replace-one sensitivity of zo_o2nc Alg 6's estimate (1/B) Σ_i (d/(2δ))(f(w+δu_i; z_i) − f(w−δu_i; z_i))u_i.

    Each term has norm ≤ dL, so replacing one record moves the mean by ≤ 2dL/B ("exact", the Lemma 3.1 argument
    for one direction per record); "paper" is App. E's dL/B (erratum zo_o2nc.E8). Returns an mpf.
    """
    d = check_int("d", d, minimum=1)
    lipschitz = mp_positive("lipschitz", lipschitz)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    if rule == "exact":
        return 2 * d * lipschitz / batch_size
    if rule == "paper":
        return d * lipschitz / batch_size
    raise ValueError(f"rule must be one of {NAIVE_SIGMA_RULES}, got {rule!r}")


def zo_o2nc_naive_noise_std(d, lipschitz, batch_size, rho, rule="exact"):
    """zo_o2nc App. E (Alg 6): σ = 2dL/(Bρ) ("exact", default, erratum zo_o2nc.E8) or the printed dL/(Bρ)
    ("paper", which gives (α, α(2ρ)²/2)-RDP, not ρ). Returns an mpf."""
    rho = mp_positive("rho", rho)
    return zo_o2nc_naive_sensitivity(d, lipschitz, batch_size, rule) / rho


@dataclasses.dataclass(frozen=True)
class ZoO2ncPrivacyPlan:
    """How a run of zo_o2nc Algorithm 3 with Algorithm 4 (or 6) is private. Every field is public.

    oracle: "variance_reduced" (Alg 4, tree noise of Alg 5) or "naive" (Alg 6). relation: "replace_one"
    (zo_o2nc §2: datasets of fixed size M differing in one record). d, lipschitz (L), T, K.
    block_sizes: (B1, B2) for Alg 4, (B, B) for Alg 6. smoothing_radius (δ) and step_bound (D): what the DIFF
    sensitivity uses (None for Alg 6). sensitivities: (s_1, s_t for t ≥ 2) — for Alg 6 (s, s) with s = 2dL/B.
    noise_std: σ as used by the run (every node, resp. every query). noise_rule: how σ was chosen —
    "exact" / "paper_2lnT" (Alg 4) or "exact" / "paper" (Alg 6) from ``rho_target``, or "given".
    rho_exact: the run is (α, α·rho_exact²/2)-RDP for every α > 1 (exact counts; parallel composition over
    the disjoint epochs). rho_printed: what the paper's accounting states for the same σ (Theorem 4.3's 2 ln T;
    App. E's sensitivity dL/B). dp_delta: δ of the (ε, δ) statements.
    epsilon_exact / epsilon_printed: §2's conversion ρ²/2 + ρ√(2 ln(1/δ)) of rho_exact / rho_printed.
    epsilon_accountant: the RDP accountant (``reference.accounting``) on ``accountant_event`` —
    ``TreeAggregationEvent(σ/max s, T)`` (every leaf at the largest sensitivity and count: an upper bound on the
    exact ρ) resp. ``GaussianEvent(σ/s)`` — with the optimal RDP conversion. epsilon_tight: rho_exact through
    the optimal RDP conversion (Canonne–Kamath–Steinke 2020). epsilon_claimed: the ε the run states, the
    smallest of the valid ones (= epsilon_tight); epsilon_printed is reported, never claimed.
    condition: what the guarantee assumes. note: remarks in words.
    """

    oracle: str
    relation: str
    d: int
    lipschitz: float
    T: int
    K: int
    block_sizes: tuple
    smoothing_radius: float | None
    step_bound: float | None
    sensitivities: tuple
    noise_std: float
    noise_rule: str
    rho_target: float | None
    rho_exact: float
    rho_printed: float
    dp_delta: float
    epsilon_exact: float
    epsilon_printed: float
    epsilon_accountant: float
    epsilon_tight: float
    epsilon_claimed: float
    accountant_event: Event
    condition: str
    note: str


def _float_up(value) -> float:
    """The smallest float64 ≥ an mpf value (ρ and ε are rounded up, never down)."""
    out = float(value)
    if mpmath.mpf(out) < value:
        out = math.nextafter(out, math.inf)
    return out


def _accountant_epsilon(event, dp_delta):
    """ε of ``event`` by the RDP accountant: its RDP curve is linear in α (Gaussian mechanisms), r(α) = c·α,
    so c = r(2)/2 is a zCDP parameter and ``epsilon_from_zcdp`` minimises the conversion over every α > 1."""
    r2, r4 = rdp_of_event(event, [2, 4], NeighbouringRelation.REPLACE_ONE)
    if not mpmath.almosteq(r4, 2 * r2, rel_eps=mpmath.mpf(2) ** (8 - mpmath.mp.prec)):
        raise AccountingError(f"the RDP curve of {type(event).__name__} is not linear in the order")
    return epsilon_from_zcdp(r2 / 2, dp_delta)


def _conversions(rho_exact_sq, rho_printed_sq, event, dp_delta):
    rho_exact = mpmath.sqrt(rho_exact_sq)
    rho_printed = mpmath.sqrt(rho_printed_sq)
    eps_exact = zo_o2nc_rdp_to_dp(rho_exact, dp_delta) if rho_exact > 0 else mpmath.mpf(0)
    eps_printed = zo_o2nc_rdp_to_dp(rho_printed, dp_delta) if rho_printed > 0 else mpmath.mpf(0)
    eps_accountant = _accountant_epsilon(event, dp_delta)
    eps_tight = epsilon_from_zcdp(rho_exact_sq / 2, dp_delta)
    return rho_exact, rho_printed, eps_exact, eps_printed, eps_accountant, eps_tight


_CONDITION_LIPSCHITZ = ("every f(·, z) is L-Lipschitz in x for every possible record z (the sensitivities of "
                        "zo_o2nc Lemmas 3.1/3.2 assume it)")
_CONDITION_ENFORCED = ("none on f: each finite difference is clipped to its Lipschitz bound inside the mechanism "
                       "(enforce_lipschitz=True)")


@functools.lru_cache(maxsize=256)
def _tree_plan(d, lipschitz, T, K, B1, B2, delta, D, sigma, dp_delta, rho_target, noise_rule, enforced, prec):
    with mpmath.workprec(prec):
        s = _first_and_later(d, lipschitz, T, B1, B2, delta, D)
        exact_sq = _alg4_rho_squared(s[0], s[1], T, mpmath.mpf(sigma), "exact")
        printed_sq = _alg4_rho_squared(s[0], s[1], T, mpmath.mpf(sigma), "paper_2lnT")
        s_max = s[0] if T < 2 else max(s)
        event = TreeAggregationEvent(noise_multiplier=mpmath.mpf(sigma) / s_max, steps=T, restarts=1)
        rho_e, rho_p, eps_e, eps_p, eps_a, eps_t = _conversions(exact_sq, printed_sq, event, mpmath.mpf(dp_delta))
        notes = ["epochs use disjoint records (single pass), so the run's RDP is one epoch's (parallel "
                 "composition); x_1, η, D, the directions, s_t^k and k* are data-independent"]
        if rho_target is not None and rho_e > mpmath.mpf(rho_target) * (1 + mpmath.mpf(2) ** -40):
            notes.append(f"sigma from the {noise_rule} rule is over budget: exact rho {mpmath.nstr(rho_e, 6)} > "
                         f"target {rho_target} (erratum zo_o2nc.E3)")
        if T in (1, 2, 4) and rho_p < rho_e:
            notes.append("Theorem 4.3's 2 ln T count under-states rho at this T (erratum zo_o2nc.E3)")
        return ZoO2ncPrivacyPlan(
            oracle="variance_reduced", relation="replace_one", d=d, lipschitz=lipschitz, T=T, K=K,
            block_sizes=(B1, B2), smoothing_radius=delta, step_bound=D,
            sensitivities=(_float_up(s[0]), _float_up(s[1]) if T >= 2 else None), noise_std=sigma,
            noise_rule=noise_rule, rho_target=rho_target, rho_exact=_float_up(rho_e), rho_printed=_float_up(rho_p),
            dp_delta=dp_delta, epsilon_exact=_float_up(eps_e), epsilon_printed=_float_up(eps_p),
            epsilon_accountant=_float_up(eps_a), epsilon_tight=_float_up(eps_t), epsilon_claimed=_float_up(eps_t),
            accountant_event=event, condition=_CONDITION_ENFORCED if enforced else _CONDITION_LIPSCHITZ,
            note="; ".join(notes),
        )


def _check_plan_common(d, lipschitz, T, K, noise_std, dp_delta, rho_target):
    d = check_int("d", d, minimum=1)
    lipschitz = float(check_real("lipschitz", lipschitz, positive=True))
    T = check_int("T", T, minimum=1)
    K = check_int("K", K, minimum=1)
    sigma = float(check_real("noise_std", noise_std, positive=True))
    dp_delta = float(check_probability("dp_delta", dp_delta))
    if rho_target is not None:
        rho_target = float(check_real("rho_target", rho_target, positive=True))
    return d, lipschitz, T, K, sigma, dp_delta, rho_target


def zo_o2nc_privacy_plan(*, d, lipschitz, T, K, B1, B2, smoothing_radius, step_bound, noise_std, dp_delta,
                         rho_target=None, noise_rule="given", enforce_lipschitz=False) -> ZoO2ncPrivacyPlan:
    """The privacy plan of a run of zo_o2nc Algorithm 3 with Algorithm 4 (Corollary 4.4, exactly).

    Per epoch the release g̃_t = g_t + TREE(t), t = 1..T, is Theorem 4.3's adaptive tree mechanism with leaf
    sensitivities ``zo_o2nc_leaf_sensitivities`` (step bound D as enforced by the learner) and node noise σ;
    ρ_exact² = max_q s_q² Σ_{b ≤ T: q ∈ N_b} 1/σ² (``zo_o2nc_tree_rho_squared``). The K epochs read disjoint
    records and each record is in one block of one epoch, so the whole run is (α, αρ_exact²/2)-RDP (parallel
    composition; the later epochs see earlier releases only through public post-processing).

    All arguments are keyword-only: d, lipschitz (L), T, K, B1, B2, smoothing_radius (δ), step_bound (D),
    noise_std (σ > 0, the value the run adds), dp_delta (δ_DP ∈ (0, 1) of the (ε, δ) statements), rho_target
    (the ρ σ was calibrated for, or None), noise_rule (how σ was chosen, recorded as given: "exact",
    "paper_2lnT" or "given"), enforce_lipschitz (whether the run clips finite differences to their Lipschitz
    bounds; changes only the stated condition). Memoised; computed with at least ``PLAN_PRECISION_BITS`` bits.
    """
    d, lipschitz, T, K, sigma, dp_delta, rho_target = _check_plan_common(d, lipschitz, T, K, noise_std, dp_delta,
                                                                         rho_target)
    B1 = check_int("B1", B1, minimum=1)
    B2 = check_int("B2", B2, minimum=1)
    delta = float(check_real("smoothing_radius", smoothing_radius, positive=True))
    D = float(check_real("step_bound", step_bound, positive=True))
    if noise_rule not in (*TREE_RULES, "given"):
        raise ValueError(f"noise_rule must be one of {(*TREE_RULES, 'given')}, got {noise_rule!r}")
    return _tree_plan(d, lipschitz, T, K, B1, B2, delta, D, sigma, dp_delta, rho_target, noise_rule,
                      bool(enforce_lipschitz), max(mpmath.mp.prec, PLAN_PRECISION_BITS))


@functools.lru_cache(maxsize=256)
def _naive_plan(d, lipschitz, T, K, B, sigma, dp_delta, rho_target, noise_rule, enforced, prec):
    with mpmath.workprec(prec):
        s = zo_o2nc_naive_sensitivity(d, lipschitz, B, "exact")
        s_paper = zo_o2nc_naive_sensitivity(d, lipschitz, B, "paper")
        exact_sq = (s / mpmath.mpf(sigma)) ** 2
        printed_sq = (s_paper / mpmath.mpf(sigma)) ** 2
        event = GaussianEvent(noise_multiplier=mpmath.mpf(sigma) / s)
        rho_e, rho_p, eps_e, eps_p, eps_a, eps_t = _conversions(exact_sq, printed_sq, event, mpmath.mpf(dp_delta))
        notes = ["every record is used in exactly one query of one epoch (single pass): the run's RDP is one "
                 "Gaussian query's (parallel composition)"]
        if noise_rule == "paper":
            notes.append("sigma = dL/(B rho) as printed in App. E: the replace-one sensitivity is 2dL/B, so the run "
                         "is only (alpha, alpha (2 rho)^2/2)-RDP (erratum zo_o2nc.E8)")
        return ZoO2ncPrivacyPlan(
            oracle="naive", relation="replace_one", d=d, lipschitz=lipschitz, T=T, K=K, block_sizes=(B, B),
            smoothing_radius=None, step_bound=None, sensitivities=(_float_up(s), _float_up(s)), noise_std=sigma,
            noise_rule=noise_rule, rho_target=rho_target, rho_exact=_float_up(rho_e), rho_printed=_float_up(rho_p),
            dp_delta=dp_delta, epsilon_exact=_float_up(eps_e), epsilon_printed=_float_up(eps_p),
            epsilon_accountant=_float_up(eps_a), epsilon_tight=_float_up(eps_t), epsilon_claimed=_float_up(eps_t),
            accountant_event=event, condition=_CONDITION_ENFORCED if enforced else _CONDITION_LIPSCHITZ,
            note="; ".join(notes),
        )


def zo_o2nc_naive_privacy_plan(*, d, lipschitz, T, K, batch_size, noise_std, dp_delta, rho_target=None,
                               noise_rule="given", enforce_lipschitz=False) -> ZoO2ncPrivacyPlan:
    """The privacy plan of a run of zo_o2nc Algorithm 3 with Algorithm 6 (App. E).

    Every query reads its own B records and adds fresh N(0, σ² I_d): a Gaussian mechanism with replace-one
    sensitivity s = 2dL/B, so the run is (α, α(s/σ)²/2)-RDP (parallel composition over the disjoint batches;
    ρ_printed uses App. E's dL/B, erratum zo_o2nc.E8). Keywords as ``zo_o2nc_privacy_plan`` with batch_size (B)
    for B1, B2; noise_rule "exact", "paper" or "given". Memoised.
    """
    d, lipschitz, T, K, sigma, dp_delta, rho_target = _check_plan_common(d, lipschitz, T, K, noise_std, dp_delta,
                                                                         rho_target)
    B = check_int("batch_size", batch_size, minimum=1)
    if noise_rule not in (*NAIVE_SIGMA_RULES, "given"):
        raise ValueError(f"noise_rule must be one of {(*NAIVE_SIGMA_RULES, 'given')}, got {noise_rule!r}")
    return _naive_plan(d, lipschitz, T, K, B, sigma, dp_delta, rho_target, noise_rule, bool(enforce_lipschitz),
                       max(mpmath.mp.prec, PLAN_PRECISION_BITS))
