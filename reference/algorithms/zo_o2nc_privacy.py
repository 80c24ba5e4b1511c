"""zo_o2nc Corollary 4.4 and §2: the tree noise of Algorithms 3 and 4, and the RDP → (ε, δ)-DP conversion.

Zhang, Tran, Cutkosky — *Private Zeroth-Order Nonsmooth Nonconvex Optimization* (ICLR 2024).

* ``zo_o2nc_cor44_sigma``: Corollary 4.4's σ for (α, αρ²/2)-RDP, with the paper's 2 ln T count of the tree
  nodes a record enters (``count_rule="paper_2lnT"``, not private for T ∈ {1, 2, 4}: erratum zo_o2nc.E3) or
  the exact count ⌊log2 T⌋ + 1 (default). ``zo_o2nc_cor44_sigma_as_printed`` is the printed rule.
* ``zo_o2nc_rdp_to_dp`` and its inverse ``zo_o2nc_dp_to_rho``: (α, αρ²/2)-RDP for all α ⇒
  (ρ²/2 + ρ√(2 ln 1/δ), δ)-DP.
* ``zo_o2nc_paper_dp_epsilon``: §2's simplified (2ρ√ln(1/δ), δ)-DP with its validity condition
  (erratum zo_o2nc.E11).

Scalars are mpmath numbers computed at the caller's working precision
(``reference.precision.working_precision``).
"""

from __future__ import annotations

import mpmath

from ..validation import check_int
from ._privacy_common import mp_delta, mp_positive

__all__ = [
    "zo_o2nc_cor44_sigma",
    "zo_o2nc_cor44_sigma_as_printed",
    "zo_o2nc_rdp_to_dp",
    "zo_o2nc_dp_to_rho",
    "zo_o2nc_paper_dp_epsilon",
]


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
