"""zo_o2nc Theorem 4.9, Lemma 4.8, Corollary 4.4 and Appendix E: the hyper-parameters the theory prescribes for
Algorithm 3 with Algorithm 4 (and with the naive Algorithm 6), the OSD step size, and Theorem 4.9's explicit
bound.

Zhang, Tran, Cutkosky — *Private Zeroth-Order Nonsmooth Nonconvex Optimization* (ICLR 2024).

Theorem 4.9 settings (``thm49_settings``), with a = (F* + Lδ)/(δM):

    B1 = T + 1, B2 = 1, D = δ/T, σ as Corollary 4.4 (``zo_o2nc_tree_noise_std``),
    T1 = (√d L δ M/(F* + Lδ))^{2/3}   (balances a·T against the variance term L√d/√T),
    T2 = (d^{3/2} L δ M/((F* + Lδ) ρ))^{1/2}   (balances a·T against the privacy term L d^{3/2}/(ρ T)),
    T_real = max(T1, T2) (``T_rule="max"``, default: only then is the error a·T + b/√T + c/T bounded by the
             claimed rate — erratum zo_o2nc.E5) or min(T1, T2) as printed (``T_rule="paper_min"``),
    T = max(2, ⌊T_real⌋), K = ⌊M/(2T)⌋ (then K·(B1 + B2(T − 1)) = 2KT ≤ M records are used; the rest is unused).

A non-private run (``rho=None``: σ = 0) has T2 = ∞ and uses T = T1 under either rule.

OSD step size (the paper only says "tuned by OSD": erratum zo_o2nc.E10): η = D/(G√T), G² = 3V + 3L² + 3N, an
upper bound on max_t E‖g̃_t‖² (the proof of Theorem 4.9), with

    V = 16dL²/B1 + 64dL²/(B2·T)           (Lemma 4.8: E‖∇F̂_δ(w_t) − g_t‖²)
    N = 2 ln(T)·dσ² ("paper_2lnT", Corollary 4.5, valid for T ≥ 2) or ⌊log2(T + 1)⌋·dσ² ("exact":
        max_{t ≤ T} E‖TREE(t)‖² = max_t popcount(t)·dσ²; erratum zo_o2nc.E4).

Theorem 4.9's explicit bound (``thm49_bound``), reassembled from the proof with the constants above (η = D/(G√T)):

    E‖∇F(w̄)‖_{2δ} ≤ (1/K) Σ_k E‖(1/T) Σ_t ∇F̂_δ(w_t^k)‖ ≤ (F* + 2Lδ)/(δK) + G/√T + 2(√V + √N).

It bounds the 2δ-Goldstein norm (the theorem says δ; its proof shows 2δ: erratum zo_o2nc.E7), in expectation.

Appendix E (``naive_settings``): Alg 6 with batch B, D = δ/T, σ = 2dL/(Bρ) (erratum zo_o2nc.E8; the printed
dL/(Bρ) with ``sigma_rule="paper"``), K = ⌊M/(BT)⌋. For B = 1 (the appendix) T1 = (√d L δ M/(F* + Lδ))^{2/3} and
T2 = (d^{3/2} L δ M/((F* + Lδ) ρ))^{2/3}; for B > 1 (``batch_size="dimension"``: B = max(1, round(d^{3/2}/ρ)),
the batch that achieves the printed rate, erratum zo_o2nc.E9) the same balance of the naive error
a·B·T + (L/√T)(√(d/B) + 1 + d^{3/2}/(Bρ)) gives T1 = (L√(d/B)/(aB))^{2/3} and T2 = (L d^{3/2}/(Bρ·aB))^{2/3},
which reduce to the appendix's at B = 1. Its step size uses G² = L² + d²L²/B + dσ², an explicit bound on
E‖g̃_t‖² (every term of Alg 6 has norm ≤ dL; the paper states only the order L²(d/B + 1)).

Every function returns a frozen dataclass of mpmath values (computed at the caller's working precision) and
ints, and refuses with one ValueError a data size that cannot support one epoch, saying how many records are
needed.
"""

from __future__ import annotations

import dataclasses

import mpmath

from ..validation import check_int, check_real
from .zo_o2nc_privacy import TREE_RULES, zo_o2nc_naive_noise_std, zo_o2nc_tree_noise_std

__all__ = [
    "T_RULES",
    "TREE_NORM_RULES",
    "BATCH_RULES",
    "Theorem49Settings",
    "NaiveSettings",
    "lemma48_variance_bound",
    "tree_norm_bound",
    "osd_step_size",
    "thm49_settings",
    "naive_settings",
    "thm49_bound",
    "thm49_bound_terms",
]

#: How T is chosen from the two balancing values: max (default, erratum zo_o2nc.E5) or the printed min.
T_RULES = ("max", "paper_min")
#: The bound N on E‖TREE(t)‖²: exact max popcount, or Corollary 4.5's 2 ln T.
TREE_NORM_RULES = ("exact", "paper_2lnT")
#: Alg 6's batch size: 1 (App. E), or max(1, round(d^{3/2}/ρ)) (the batch behind the printed rate).
BATCH_RULES = ("one", "dimension")


@dataclasses.dataclass(frozen=True)
class Theorem49Settings:
    """The settings of zo_o2nc Theorem 4.9 for Algorithm 3 + projected OSD + Algorithm 4 (module doc).

    Inputs: M (records), d, lipschitz (L), smoothing_radius (δ), rho (ρ; None for a non-private run),
    initial_gap (F* ≥ F(x_1) − inf F), T_rule, count_rule (σ's tree count), tree_norm_rule (N's count).
    T_gradient, T_privacy: the real T1 and T2 (T_privacy None when rho is None); T_real: the one the rule
    picked. T (int ≥ 2), K (int ≥ 1), B1 = T + 1, B2 = 1. step_bound: D = δ/T. noise_std: σ (0 without
    privacy). variance_bound: V; tree_norm_bound: N; gradient_bound: G; step_size: η = D/(G√T).
    records_used = K·(B1 + B2(T − 1)) = 2KT; records_unused = M − records_used.
    """

    M: int
    d: int
    lipschitz: mpmath.mpf
    smoothing_radius: mpmath.mpf
    rho: mpmath.mpf | None
    initial_gap: mpmath.mpf
    T_rule: str
    count_rule: str
    tree_norm_rule: str
    T_gradient: mpmath.mpf
    T_privacy: mpmath.mpf | None
    T_real: mpmath.mpf
    T: int
    K: int
    B1: int
    B2: int
    step_bound: mpmath.mpf
    noise_std: mpmath.mpf
    variance_bound: mpmath.mpf
    tree_norm_bound: mpmath.mpf
    gradient_bound: mpmath.mpf
    step_size: mpmath.mpf
    records_used: int
    records_unused: int


@dataclasses.dataclass(frozen=True)
class NaiveSettings:
    """The settings of zo_o2nc App. E for Algorithm 3 + projected OSD + Algorithm 6 (module doc).

    Inputs as ``Theorem49Settings`` plus batch_rule ("one", "dimension" or "given") and sigma_rule ("exact":
    σ = 2dL/(Bρ), or "paper": dL/(Bρ), erratum zo_o2nc.E8). batch_size: B. T_gradient, T_privacy, T_real, T,
    K = ⌊M/(BT)⌋, step_bound D = δ/T, noise_std σ, gradient_bound G = √(L² + d²L²/B + dσ²), step_size
    η = D/(G√T), records_used = K·T·B, records_unused.
    """

    M: int
    d: int
    lipschitz: mpmath.mpf
    smoothing_radius: mpmath.mpf
    rho: mpmath.mpf | None
    initial_gap: mpmath.mpf
    T_rule: str
    batch_rule: str
    sigma_rule: str
    batch_size: int
    T_gradient: mpmath.mpf
    T_privacy: mpmath.mpf | None
    T_real: mpmath.mpf
    T: int
    K: int
    step_bound: mpmath.mpf
    noise_std: mpmath.mpf
    gradient_bound: mpmath.mpf
    step_size: mpmath.mpf
    records_used: int
    records_unused: int


# ---------------------------------------------------------------------------------------------------
# Pieces: Lemma 4.8, Corollary 4.5, the OSD step size


def _mp(name, value, **rules):
    return mpmath.mpf(check_real(name, value, **rules))


def lemma48_variance_bound(d, lipschitz, T, B1, B2):
    """V = 16dL²/B1 + 64dL²/(B2·T): zo_o2nc Lemma 4.8's bound on E‖∇F̂_δ(w_t^k) − g_t^k‖² (noiseless g_t, D = δ/T)."""
    d = check_int("d", d, minimum=1)
    L = _mp("lipschitz", lipschitz, positive=True)
    T = check_int("T", T, minimum=1)
    B1 = check_int("B1", B1, minimum=1)
    B2 = check_int("B2", B2, minimum=1)
    return 16 * d * L**2 / B1 + 64 * d * L**2 / (B2 * T)


def tree_norm_bound(d, noise_std, T, rule="exact"):
    """N ≥ max_{t ≤ T} E‖TREE(t)‖² for constant node noise σ (zo_o2nc Corollary 4.5).

    rule "exact": ⌊log2(T + 1)⌋·dσ² (= max_{t ≤ T} popcount(t)·dσ², attained). "paper_2lnT": 2 ln(T)·dσ²
    (Corollary 4.5; an upper bound for T ≥ 2 only — at T = 1 it is 0 < dσ², erratum zo_o2nc.E4, so T = 1 raises).
    """
    d = check_int("d", d, minimum=1)
    sigma = _mp("noise_std", noise_std, nonnegative=True)
    T = check_int("T", T, minimum=1)
    if rule == "exact":
        return mpmath.mpf((T + 1).bit_length() - 1) * d * sigma**2  # ⌊log2(T + 1)⌋·dσ²
    if rule == "paper_2lnT":
        if T < 2:
            raise ValueError("T must be >= 2 under rule='paper_2lnT' (2 ln 1 = 0 < E‖TREE(1)‖², erratum zo_o2nc.E4)")
        return 2 * mpmath.log(T) * d * sigma**2
    raise ValueError(f"rule must be one of {TREE_NORM_RULES}, got {rule!r}")


def osd_step_size(step_bound, gradient_bound, T):
    """η = D/(G√T): projected OSD's step size for regret ≤ D·G·√T when E‖g̃_t‖² ≤ G² (zo_o2nc §4, OSD bound;
    the paper's "η tuned by OSD", erratum zo_o2nc.E10). step_bound: D > 0; gradient_bound: G > 0; T ≥ 1."""
    D = _mp("step_bound", step_bound, positive=True)
    G = _mp("gradient_bound", gradient_bound, positive=True)
    T = check_int("T", T, minimum=1)
    return D / (G * mpmath.sqrt(T))


# ---------------------------------------------------------------------------------------------------
# Theorem 4.9


def _check_inputs(M, d, lipschitz, smoothing_radius, rho, initial_gap, T_rule):
    M = check_int("M", M, minimum=1)
    d = check_int("d", d, minimum=1)
    L = _mp("lipschitz", lipschitz, positive=True)
    delta = _mp("smoothing_radius", smoothing_radius, positive=True)
    rho = None if rho is None else _mp("rho", rho, positive=True)
    gap = _mp("initial_gap", initial_gap, nonnegative=True)
    if T_rule not in T_RULES:
        raise ValueError(f"T_rule must be one of {T_RULES}, got {T_rule!r}")
    return M, d, L, delta, rho, gap


def _pick(T_rule, T1, T2):
    if T2 is None:
        return T1  # non-private: T2 = ∞, both rules use T1
    return max(T1, T2) if T_rule == "max" else min(T1, T2)


def _thm49_T(M, d, L, delta, rho, gap, T_rule):
    """(T1, T2, T_real, T) of Theorem 4.9 at M records."""
    scale = L * delta * M / (gap + L * delta)
    T1 = (mpmath.sqrt(d) * scale) ** (mpmath.mpf(2) / 3)
    T2 = None if rho is None else mpmath.sqrt(mpmath.mpf(d) ** 1.5 * scale / rho)
    T_real = _pick(T_rule, T1, T2)
    return T1, T2, T_real, max(2, int(mpmath.floor(T_real)))


def _records_needed(fits, M):
    """A record count M' > M with fits(M'), found by doubling then bisection. ``fits`` holds for every large M'
    but the floor in T makes it non-monotone near the threshold, so M' is a count that suffices (checked), not
    always the smallest."""
    lo, hi = M, max(2 * M, 4)
    while not fits(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi


def thm49_settings(M, d, lipschitz, smoothing_radius, rho, initial_gap, *, T_rule="max", count_rule="exact",
                   tree_norm_rule="exact") -> Theorem49Settings:
    """zo_o2nc Theorem 4.9's settings for M records (module doc).

    M: records. d: dimension. lipschitz: L. smoothing_radius: δ (the Goldstein radius is 2δ, erratum
    zo_o2nc.E7). rho: ρ of (α, αρ²/2)-RDP, or None for the non-private run (σ = 0, T = T1). initial_gap: F*.
    T_rule: "max" (default, erratum zo_o2nc.E5) or "paper_min". count_rule: σ's tree count, "exact" (default)
    or "paper_2lnT" (Corollary 4.4 as printed; private under these settings for every T ≥ 2 since B1 = T + 1).
    tree_norm_rule: N's count, "exact" (default) or "paper_2lnT".

    Raises ValueError when M cannot hold one epoch (M < 2T), naming the number of records needed.
    Reference values (M = 1e5, d = 10, L = 1, δ = 0.1, ρ = 1, F* = 1, count and norm rules "paper_2lnT"):
    "paper_min": T = 536, K = 93, B1 = 537, D = 1.8657e−4, σ = 0.264565, G = 5.81957, η = 1.38472e−6,
    2KT = 99696 records; "max": T = 938, K = 53, σ = 0.157768.
    """
    M, d, L, delta, rho, gap = _check_inputs(M, d, lipschitz, smoothing_radius, rho, initial_gap, T_rule)
    if count_rule not in TREE_RULES:
        raise ValueError(f"count_rule must be one of {TREE_RULES}, got {count_rule!r}")
    if tree_norm_rule not in TREE_NORM_RULES:
        raise ValueError(f"tree_norm_rule must be one of {TREE_NORM_RULES}, got {tree_norm_rule!r}")
    T1, T2, T_real, T = _thm49_T(M, d, L, delta, rho, gap, T_rule)
    K = M // (2 * T)
    if K < 1:
        needed = _records_needed(lambda m: m >= 2 * _thm49_T(m, d, L, delta, rho, gap, T_rule)[3], M)
        raise ValueError(
            f"M = {M} records cannot hold one epoch of Theorem 4.9's settings: T = {T} needs "
            f"B1 + B2(T − 1) = 2T = {2 * T} records per epoch; more records are needed: M = {needed} suffices "
            f"(T grows with M)")
    B1, B2 = T + 1, 1
    D = delta / T
    if rho is None:
        sigma = mpmath.mpf(0)
    else:
        sigma = zo_o2nc_tree_noise_std(d, L, T, B1, B2, delta, D, rho, count_rule)
    V = lemma48_variance_bound(d, L, T, B1, B2)
    N = tree_norm_bound(d, sigma, T, tree_norm_rule)
    G = mpmath.sqrt(3 * V + 3 * L**2 + 3 * N)
    eta = osd_step_size(D, G, T)
    used = K * (B1 + B2 * (T - 1))
    return Theorem49Settings(
        M=M, d=d, lipschitz=L, smoothing_radius=delta, rho=rho, initial_gap=gap, T_rule=T_rule,
        count_rule=count_rule, tree_norm_rule=tree_norm_rule, T_gradient=T1, T_privacy=T2, T_real=T_real, T=T, K=K,
        B1=B1, B2=B2, step_bound=D, noise_std=sigma, variance_bound=V, tree_norm_bound=N, gradient_bound=G,
        step_size=eta, records_used=used, records_unused=M - used,
    )


def thm49_bound_terms(settings: Theorem49Settings) -> dict:
    """The terms of Theorem 4.9's explicit bound at the given settings (module doc), as mpf:

    "initial_gap": (F* + 2Lδ)/(δK) (Corollary 4.7's F* + 2Lδ over DKT); "regret": G/√T (E Reg_T ≤ DG√T per
    epoch); "variance": 2√V and "tree_noise": 2√N (<∇F̂_δ(w) − g̃, Δ − û> ≤ 2D(E‖∇F̂_δ(w) − g‖ + E‖TREE‖));
    "total": their sum, a bound on E‖∇F(w̄)‖_{2δ} (erratum zo_o2nc.E7) when η = D/(G√T).
    """
    if not isinstance(settings, Theorem49Settings):
        raise TypeError(f"settings must be a Theorem49Settings (from thm49_settings), got {type(settings).__name__}")
    s = settings
    terms = {
        "initial_gap": (s.initial_gap + 2 * s.lipschitz * s.smoothing_radius) / (s.smoothing_radius * s.K),
        "regret": s.gradient_bound / mpmath.sqrt(s.T),
        "variance": 2 * mpmath.sqrt(s.variance_bound),
        "tree_noise": 2 * mpmath.sqrt(s.tree_norm_bound),
    }
    terms["total"] = mpmath.fsum(terms.values())
    return terms


def thm49_bound(settings: Theorem49Settings):
    """Theorem 4.9's explicit bound (F* + 2Lδ)/(δK) + G/√T + 2(√V + √N) on E‖∇F(w̄)‖_{2δ} (module doc)."""
    return thm49_bound_terms(settings)["total"]


# ---------------------------------------------------------------------------------------------------
# Appendix E: the naive oracle


def _naive_T(M, d, L, delta, rho, gap, T_rule, B):
    a_times_B = (gap + L * delta) * B / (delta * M)
    T1 = (L * mpmath.sqrt(mpmath.mpf(d) / B) / a_times_B) ** (mpmath.mpf(2) / 3)
    T2 = None if rho is None else (L * mpmath.mpf(d) ** 1.5 / (B * rho) / a_times_B) ** (mpmath.mpf(2) / 3)
    T_real = _pick(T_rule, T1, T2)
    return T1, T2, T_real, max(2, int(mpmath.floor(T_real)))


def naive_settings(M, d, lipschitz, smoothing_radius, rho, initial_gap, *, batch_size="one", T_rule="max",
                   sigma_rule="exact") -> NaiveSettings:
    """zo_o2nc App. E's settings for Algorithm 3 + Algorithm 6 (module doc).

    batch_size: "one" (B = 1, the appendix), "dimension" (B = max(1, round(d^{3/2}/ρ)), erratum zo_o2nc.E9;
    B = 1 when rho is None) or an int B ≥ 1. sigma_rule: "exact" (σ = 2dL/(Bρ), default, erratum zo_o2nc.E8) or
    "paper" (dL/(Bρ)). Other arguments as ``thm49_settings``. Raises ValueError when M < B·T (one epoch), naming
    the number of records needed.
    """
    M, d, L, delta, rho, gap = _check_inputs(M, d, lipschitz, smoothing_radius, rho, initial_gap, T_rule)
    if sigma_rule not in ("exact", "paper"):
        raise ValueError(f"sigma_rule must be 'exact' or 'paper', got {sigma_rule!r}")
    if batch_size == "one":
        B, batch_rule = 1, "one"
    elif batch_size == "dimension":
        B = 1 if rho is None else max(1, int(mpmath.nint(mpmath.mpf(d) ** 1.5 / rho)))
        batch_rule = "dimension"
    elif isinstance(batch_size, str):
        raise ValueError(f"batch_size must be one of {BATCH_RULES} or an int >= 1, got {batch_size!r}")
    else:
        B, batch_rule = check_int("batch_size", batch_size, minimum=1), "given"
    T1, T2, T_real, T = _naive_T(M, d, L, delta, rho, gap, T_rule, B)
    K = M // (B * T)
    if K < 1:
        needed = _records_needed(lambda m: m >= B * _naive_T(m, d, L, delta, rho, gap, T_rule, B)[3], M)
        raise ValueError(
            f"M = {M} records cannot hold one epoch of App. E's settings: T = {T} rounds of B = {B} records need "
            f"B·T = {B * T} records; more records are needed: M = {needed} suffices (T grows with M)")
    D = delta / T
    sigma = mpmath.mpf(0) if rho is None else zo_o2nc_naive_noise_std(d, L, B, rho, sigma_rule)
    G = mpmath.sqrt(L**2 + mpmath.mpf(d) ** 2 * L**2 / B + d * sigma**2)
    eta = osd_step_size(D, G, T)
    used = K * T * B
    return NaiveSettings(
        M=M, d=d, lipschitz=L, smoothing_radius=delta, rho=rho, initial_gap=gap, T_rule=T_rule, batch_rule=batch_rule,
        sigma_rule=sigma_rule, batch_size=B, T_gradient=T1, T_privacy=T2, T_real=T_real, T=T, K=K, step_bound=D,
        noise_std=sigma, gradient_bound=G, step_size=eta, records_used=used, records_unused=M - used,
    )

