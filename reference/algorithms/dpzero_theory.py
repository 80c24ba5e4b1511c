"""dpzero §3–§4 (Theorems 1–3) and Appendix F (Corollaries F.2–F.4): the
theorem-prescribed hyperparameters of DPGD-0th (Alg 1) and DPZero (Alg 2), and the right-hand sides
of their utility bounds (Zhang, Li, Thekumparampil, Oh, He 2024).

Every ``*_settings`` function returns a ``TheoremSettings`` holding the paper's choices

    α = ``step_size``, T = ``steps_formula`` (real) / ``steps`` (the integer run), λ ≤ ``perturbation_max``,
    C = ``clip_threshold``, σ = ``noise_std``, Lg = log(e + ε/δ) = ``log_term``,

computed in mpmath at the caller's working precision. Rounding rule (ours; the paper is
silent, Remark F.6 only adds max{T, 1}): ``steps`` = T_int = max(1, round(T)) and σ = 4C√(2·T_int·Lg)/(nε)
uses T_int, so the (ε, δ) guarantee of Lemma 2.2 holds exactly for the run; the utility constants
move by ``steps_rounding_factor`` = T_int/T.

``*_bound`` returns the printed right-hand side ((3), (5), (7), and the displays of Cor F.2–F.4);
it does not depend on T_int. ``*_bound_terms`` returns the constituent terms of the last display of
each proof (before αT and λ are substituted), evaluated at the T and λ actually used (defaults:
T_int and λ_max); their sum equals the printed bound at T = T_formula, λ = λ_max when λ's smoothing
branch is the binding one.

Vacuity: when a log(·) argument of the theorem is <= 1 (tiny n·ε), its T, C or bound is <= 0 and the
statement says nothing; the functions raise ValueError naming the argument. Erratum E4: Theorem 3 and
Corollary F.4 define L̃ differently; the two helpers below keep separate names.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping

import mpmath
import numpy as np

from ..validation import check_array, check_int, check_probability, check_real

__all__ = [
    "TheoremSettings",
    "theorem1_settings",
    "theorem2_settings",
    "theorem3_settings",
    "corollary_f2_settings",
    "corollary_f3_settings",
    "corollary_f4_settings",
    "theorem1_bound",
    "theorem2_bound",
    "theorem3_bound",
    "corollary_f2_bound",
    "corollary_f3_bound",
    "corollary_f4_bound",
    "theorem1_bound_terms",
    "theorem2_bound_terms",
    "theorem3_bound_terms",
    "corollary_f2_bound_terms",
    "corollary_f3_bound_terms",
    "corollary_f4_bound_terms",
    "ltilde_theorem3_squared",
    "ltilde_corollary_f4_squared",
    "clip_failure_bound",
    "effective_rank",
]

#: Relative tolerances of ``effective_rank``'s symmetry and PSD checks (float64 rounding of H).
SYMMETRY_TOLERANCE = 1e-10
PSD_TOLERANCE = 1e-10


@dataclasses.dataclass(frozen=True)
class TheoremSettings:
    """Hyperparameters prescribed by one theorem or corollary of dpzero (mpf values, int counts).

    Fields (paper symbol in brackets):
        theorem: "theorem1", "theorem2", "theorem3", "corollary_f2", "corollary_f3" or "corollary_f4".
        n, d: sample size and dimension (ints).
        effective_rank: r of Assumption 3.5 (None for Theorem 1 and Corollary F.2, Assumption 3.1).
        epsilon, delta: (ε, δ).
        lipschitz, smoothness: L and ℓ.
        pl_constant: μ of Assumption F.1 (None for Theorems 1–3).
        log_term: Lg = log(e + ε/δ).
        step_size: α.
        steps_formula: T as the formula gives it (a real number).
        steps: T_int = max(1, round(T)), the number of iterations to run (int).
        steps_rounding_factor: T_int / T.
        perturbation_max: the upper bound on λ (any 0 < λ <= perturbation_max is allowed).
        clip_threshold: C.
        noise_std: σ = 4C√(2·T_int·Lg)/(nε), the standard deviation (erratum E1), with the INTEGER T.
        extra: read-only mapping of theorem-specific quantities (e.g. "Ltilde2", "C0", "kappa",
            "log_argument").
    """

    theorem: str
    n: int
    d: int
    effective_rank: mpmath.mpf | None
    epsilon: mpmath.mpf
    delta: mpmath.mpf
    lipschitz: mpmath.mpf
    smoothness: mpmath.mpf
    pl_constant: mpmath.mpf | None
    log_term: mpmath.mpf
    step_size: mpmath.mpf
    steps_formula: mpmath.mpf
    steps: int
    steps_rounding_factor: mpmath.mpf
    perturbation_max: mpmath.mpf
    clip_threshold: mpmath.mpf
    noise_std: mpmath.mpf
    extra: Mapping[str, mpmath.mpf]


# ---------------------------------------------------------------------------------------------------
# validation and shared pieces


def _check_common(n, d, epsilon, delta, lipschitz, smoothness):
    """n, d >= 1 ints; ε > 0; δ ∈ (0, 1); L, ℓ > 0 — returned as (int, int, mpf, mpf, mpf, mpf)."""
    n = check_int("n", n, minimum=1)
    d = check_int("d", d, minimum=1)
    epsilon = mpmath.mpf(check_real("epsilon", epsilon, positive=True))
    delta = mpmath.mpf(check_probability("delta", delta))
    lipschitz = mpmath.mpf(check_real("lipschitz", lipschitz, positive=True))
    smoothness = mpmath.mpf(check_real("smoothness", smoothness, positive=True))
    return n, d, epsilon, delta, lipschitz, smoothness


def _check_rank(effective_rank, d: int):
    """1 <= r <= d: Tr(H) >= ‖H‖₂ for H ⪰ 0, and r = d already covers every H (Assumption 3.5)."""
    r = check_real("effective_rank", effective_rank)
    if not 1 <= r <= d:
        raise ValueError(f"effective_rank must lie in [1, d] = [1, {d}] (Tr(H) <= r·‖H‖₂), got {r}")
    return mpmath.mpf(r)


def _check_pl(pl_constant, smoothness):
    """0 < μ <= ℓ: a PL function with ℓ-Lipschitz gradient has μ <= ℓ (so κ = ℓ/μ >= 1)."""
    mu = mpmath.mpf(check_real("pl_constant", pl_constant, positive=True))
    if mu > smoothness:
        raise ValueError(
            f"pl_constant must be <= smoothness (mu <= ell, kappa >= 1), got mu = {mu} > ell = {smoothness}"
        )
    return mu


def _log_term(epsilon, delta):
    """Lg = log(e + ε/δ), the factor of every calibration in dpzero (Lemma 2.2)."""
    return mpmath.log(mpmath.e + epsilon / delta)


def _require_log_argument(statement: str, expression: str, value) -> None:
    """Refuse a vacuous statement: log(argument) <= 0 makes its T, C or bound non-positive."""
    if not value > 1:
        raise ValueError(
            f"{statement}: log argument {expression} = {mpmath.nstr(value, 6)} <= 1: "
            f"the {'theorem' if statement.startswith('theorem') else 'corollary'} is vacuous at these n, eps"
        )


def _integer_steps(steps_formula) -> int:
    """T_int = max(1, round(T)) with halves rounded up (ours; Remark F.6's max{T, 1})."""
    return max(1, int(mpmath.floor(steps_formula + mpmath.mpf(1) / 2)))


def _noise_std(clip_threshold, steps, n, epsilon, log_term):
    """σ = 4C√(2T·Lg)/(nε): Lemma 2.2 with sensitivity Δ = 2C/n (Alg 1 line 5, Alg 2 line 5)."""
    return 4 * clip_threshold * mpmath.sqrt(2 * steps * log_term) / (n * epsilon)


def _settings(theorem, *, n, d, r, epsilon, delta, lipschitz, smoothness, mu, log_term, step_size, steps_formula,
              perturbation_max, clip_threshold, extra) -> TheoremSettings:
    steps = _integer_steps(steps_formula)
    return TheoremSettings(
        theorem=theorem,
        n=n,
        d=d,
        effective_rank=r,
        epsilon=epsilon,
        delta=delta,
        lipschitz=lipschitz,
        smoothness=smoothness,
        pl_constant=mu,
        log_term=log_term,
        step_size=step_size,
        steps_formula=steps_formula,
        steps=steps,
        steps_rounding_factor=mpmath.mpf(steps) / steps_formula,
        perturbation_max=perturbation_max,
        clip_threshold=clip_threshold,
        noise_std=_noise_std(clip_threshold, steps, n, epsilon, log_term),
        extra=types.MappingProxyType(dict(extra)),
    )


# ---------------------------------------------------------------------------------------------------
# the two L̃ (erratum E4)


def ltilde_theorem3_squared(n, d, effective_rank, epsilon, delta, lipschitz):
    """Theorem 3: L̃² = L² log(2√(2π) d (r+2) n³ ε² / (r Lg)), so C = 4L̃ and C₀² = 8L̃².

    Raises ValueError when the log argument is <= 1 (L̃² <= 0: no clipping threshold exists).
    """
    n, d, epsilon, delta, lipschitz, _ = _check_common(n, d, epsilon, delta, lipschitz, 1)
    r = _check_rank(effective_rank, d)
    return lipschitz**2 * mpmath.log(_ltilde_theorem3_argument(n, d, r, epsilon, delta))


def _ltilde_theorem3_argument(n, d, r, epsilon, delta):
    """2√(2π) d (r+2) n³ ε² / (r Lg), refused when <= 1."""
    argument = (
        2 * mpmath.sqrt(2 * mpmath.pi) * d * (r + 2) * mpmath.mpf(n) ** 3 * epsilon**2
        / (r * _log_term(epsilon, delta))
    )
    _require_log_argument("theorem3", "2 sqrt(2 pi) d (r+2) n^3 eps^2/(r Lg)", argument)
    return argument


def ltilde_corollary_f4_squared(n, d, effective_rank, epsilon, delta, lipschitz, smoothness, pl_constant):
    """Corollary F.4: L̃² = 64 L² log(32√(2π) κ n³ d (r+2) ε² / (r Lg)), κ = ℓ/μ, so C = L̃/2 and
    C₀² = 8L² log(·) = L̃²/8 (a DIFFERENT L̃ from Theorem 3's; erratum E4).

    Raises ValueError when the log argument is <= 1.
    """
    n, d, epsilon, delta, lipschitz, smoothness = _check_common(n, d, epsilon, delta, lipschitz, smoothness)
    r = _check_rank(effective_rank, d)
    kappa = smoothness / _check_pl(pl_constant, smoothness)
    return 64 * lipschitz**2 * mpmath.log(_ltilde_corollary_f4_argument(n, d, r, epsilon, delta, kappa))


def _ltilde_corollary_f4_argument(n, d, r, epsilon, delta, kappa):
    """32√(2π) κ n³ d (r+2) ε² / (r Lg), refused when <= 1."""
    argument = (
        32 * mpmath.sqrt(2 * mpmath.pi) * kappa * mpmath.mpf(n) ** 3 * d * (r + 2) * epsilon**2
        / (r * _log_term(epsilon, delta))
    )
    _require_log_argument("corollary_f4", "32 sqrt(2 pi) kappa n^3 d (r+2) eps^2/(r Lg)", argument)
    return argument


# ---------------------------------------------------------------------------------------------------
# Theorems 1–3 (§3, §4; proofs in Appendices D, E)


def theorem1_settings(n, d, epsilon, delta, lipschitz, smoothness) -> TheoremSettings:
    """dpzero Theorem 1 (Alg 1 DPGD-0th, Assumption 3.1):

    step_size α = 1/(4ℓd); steps T = nε/√(d·Lg); perturbation_max λ = (4L/(ℓd))·(√(d·Lg)/(nε))^{1/2};
    clip_threshold C = Ld (Remark 3.4: no clipping ever happens); noise_std σ = 4C√(2·T_int·Lg)/(nε).
    """
    n, d, epsilon, delta, lipschitz, smoothness = _check_common(n, d, epsilon, delta, lipschitz, smoothness)
    log_term = _log_term(epsilon, delta)
    root = mpmath.sqrt(d * log_term)
    return _settings(
        "theorem1", n=n, d=d, r=None, epsilon=epsilon, delta=delta, lipschitz=lipschitz, smoothness=smoothness,
        mu=None, log_term=log_term,
        step_size=1 / (4 * smoothness * d),
        steps_formula=n * epsilon / root,
        perturbation_max=4 * lipschitz / (smoothness * d) * mpmath.sqrt(root / (n * epsilon)),
        clip_threshold=lipschitz * d,
        extra={},
    )


def theorem2_settings(n, d, effective_rank, epsilon, delta, lipschitz, smoothness) -> TheoremSettings:
    """dpzero Theorem 2 (Alg 1 DPGD-0th, Assumption 3.5 with effective rank r; the proof needs less, dpzero.E19):

    step_size α = 1/(4ℓ(r+2)); steps T = n(r+2)ε/(d√(r·Lg));
    perturbation_max λ = (4L/(ℓd))·(√(r·Lg)/(nε))^{1/2}; clip_threshold C = Ld;
    noise_std σ = 4C√(2·T_int·Lg)/(nε).
    """
    n, d, epsilon, delta, lipschitz, smoothness = _check_common(n, d, epsilon, delta, lipschitz, smoothness)
    r = _check_rank(effective_rank, d)
    log_term = _log_term(epsilon, delta)
    root = mpmath.sqrt(r * log_term)
    return _settings(
        "theorem2", n=n, d=d, r=r, epsilon=epsilon, delta=delta, lipschitz=lipschitz, smoothness=smoothness,
        mu=None, log_term=log_term,
        step_size=1 / (4 * smoothness * (r + 2)),
        steps_formula=n * (r + 2) * epsilon / (d * root),
        perturbation_max=4 * lipschitz / (smoothness * d) * mpmath.sqrt(root / (n * epsilon)),
        clip_threshold=lipschitz * d,
        extra={},
    )


def theorem3_settings(n, d, effective_rank, epsilon, delta, lipschitz, smoothness) -> TheoremSettings:
    """dpzero Theorem 3 (Alg 2 DPZero, Assumption 3.5 with effective rank r):

    L̃² = L² log(2√(2π) d (r+2) n³ ε²/(r·Lg)) (``ltilde_theorem3_squared``);
    step_size α = 1/(4ℓ(r+2)); steps T = n(r+2)ε/(4√(r·Lg)) (so αT = nε/(16ℓ√(r·Lg)));
    clip_threshold C = 4L̃ = √2·C₀ with C₀ = 2√2·L̃ (App. E);
    perturbation_max λ = (1/(ℓd))·min{4(2−√2)L̃, (L/√d)(√(r·Lg)/(nε))^{1/2}} — the first branch gives
    C >= C₀ + ℓλd/2, the second makes ℓ²d³λ² <= L²√(r·Lg)/(nε);
    noise_std σ = 4C√(2·T_int·Lg)/(nε).

    extra: "Ltilde2" (L̃²), "C0" (C₀), "log_argument" (the argument of L̃²'s log).
    """
    n, d, epsilon, delta, lipschitz, smoothness = _check_common(n, d, epsilon, delta, lipschitz, smoothness)
    r = _check_rank(effective_rank, d)
    log_term = _log_term(epsilon, delta)
    root = mpmath.sqrt(r * log_term)
    ltilde2 = ltilde_theorem3_squared(n, d, r, epsilon, delta, lipschitz)
    ltilde = mpmath.sqrt(ltilde2)
    perturbation_max = min(
        4 * (2 - mpmath.sqrt(2)) * ltilde,
        lipschitz / mpmath.sqrt(d) * mpmath.sqrt(root / (n * epsilon)),
    ) / (smoothness * d)
    return _settings(
        "theorem3", n=n, d=d, r=r, epsilon=epsilon, delta=delta, lipschitz=lipschitz, smoothness=smoothness,
        mu=None, log_term=log_term,
        step_size=1 / (4 * smoothness * (r + 2)),
        steps_formula=n * (r + 2) * epsilon / (4 * root),
        perturbation_max=perturbation_max,
        clip_threshold=4 * ltilde,
        extra={
            "Ltilde2": ltilde2,
            "C0": 2 * mpmath.sqrt(2) * ltilde,
            "log_argument": _ltilde_theorem3_argument(n, d, r, epsilon, delta),
        },
    )


# ---------------------------------------------------------------------------------------------------
# Corollaries F.2–F.4 (Appendix F, PL setting, last iterate)


def corollary_f2_settings(n, d, epsilon, delta, lipschitz, smoothness, pl_constant) -> TheoremSettings:
    """dpzero Corollary F.2 (Alg 1, Assumption 3.1 + PL with constant μ, κ = ℓ/μ; the proofs of F.2 and F.3
    drop a ∇ in their first display, dpzero.E3; the PL assumptions are restrictive, dpzero.E9):

    step_size α = 1/(4ℓd); steps T = 8κd·log(n²ε²/(κd³·Lg)); perturbation_max λ = (2L/ℓ)·√Lg/(nε);
    clip_threshold C = Ld; noise_std σ = 4C√(2·T_int·Lg)/(nε).
    extra: "kappa" (κ), "log_argument" (n²ε²/(κd³·Lg)). Raises ValueError when that argument is <= 1.
    """
    n, d, epsilon, delta, lipschitz, smoothness = _check_common(n, d, epsilon, delta, lipschitz, smoothness)
    mu = _check_pl(pl_constant, smoothness)
    kappa = smoothness / mu
    log_term = _log_term(epsilon, delta)
    argument = mpmath.mpf(n) ** 2 * epsilon**2 / (kappa * mpmath.mpf(d) ** 3 * log_term)
    _require_log_argument("corollary_f2", "n^2 eps^2/(kappa d^3 Lg)", argument)
    return _settings(
        "corollary_f2", n=n, d=d, r=None, epsilon=epsilon, delta=delta, lipschitz=lipschitz, smoothness=smoothness,
        mu=mu, log_term=log_term,
        step_size=1 / (4 * smoothness * d),
        steps_formula=8 * kappa * d * mpmath.log(argument),
        perturbation_max=2 * lipschitz / smoothness * mpmath.sqrt(log_term) / (n * epsilon),
        clip_threshold=lipschitz * d,
        extra={"kappa": kappa, "log_argument": argument},
    )


def corollary_f3_settings(n, d, effective_rank, epsilon, delta, lipschitz, smoothness, pl_constant) -> TheoremSettings:
    """dpzero Corollary F.3 (Alg 1, Assumption 3.5 + PL, κ = ℓ/μ):

    step_size α = 1/(4ℓ(r+2)); steps T = 8κ(r+2)·log(n²ε²/(κ r d²·Lg));
    perturbation_max λ = (2L/(ℓ√d))·√(r·Lg)/(nε); clip_threshold C = Ld; noise_std σ = 4C√(2·T_int·Lg)/(nε).
    extra: "kappa", "log_argument" (n²ε²/(κ r d²·Lg)). Raises ValueError when that argument is <= 1.
    """
    n, d, epsilon, delta, lipschitz, smoothness = _check_common(n, d, epsilon, delta, lipschitz, smoothness)
    r = _check_rank(effective_rank, d)
    mu = _check_pl(pl_constant, smoothness)
    kappa = smoothness / mu
    log_term = _log_term(epsilon, delta)
    argument = mpmath.mpf(n) ** 2 * epsilon**2 / (kappa * r * mpmath.mpf(d) ** 2 * log_term)
    _require_log_argument("corollary_f3", "n^2 eps^2/(kappa r d^2 Lg)", argument)
    return _settings(
        "corollary_f3", n=n, d=d, r=r, epsilon=epsilon, delta=delta, lipschitz=lipschitz, smoothness=smoothness,
        mu=mu, log_term=log_term,
        step_size=1 / (4 * smoothness * (r + 2)),
        steps_formula=8 * kappa * (r + 2) * mpmath.log(argument),
        perturbation_max=2 * lipschitz / (smoothness * mpmath.sqrt(d)) * mpmath.sqrt(r * log_term) / (n * epsilon),
        clip_threshold=lipschitz * d,
        extra={"kappa": kappa, "log_argument": argument},
    )


def corollary_f4_settings(n, d, effective_rank, epsilon, delta, lipschitz, smoothness, pl_constant) -> TheoremSettings:
    """dpzero Corollary F.4 (Alg 2 DPZero, Assumption 3.5 + PL, κ = ℓ/μ):

    L̃² = 64L² log(32√(2π) κ n³ d (r+2) ε²/(r·Lg)) (``ltilde_corollary_f4_squared``; not Theorem 3's L̃);
    step_size α = 1/(4ℓ(r+2)); steps T = 8κ(r+2)·log(n²ε²/(κ r·Lg));
    clip_threshold C = L̃/2 = √2·C₀ with C₀² = 8L² log(·) = L̃²/8;
    perturbation_max λ = (1/(2ℓd))·min{(2−√2)L̃, (4L/√d)·√(r·Lg)/(nε)} (proof: min{2(√2−1)C₀/(ℓd),
    2L√(r·Lg)/(ℓd^{3/2}nε)}, the same number); noise_std σ = 4C√(2·T_int·Lg)/(nε).

    extra: "LtildeF4_2" (L̃²), "C0", "kappa", "log_argument" (n²ε²/(κ r·Lg)), "ltilde_log_argument".
    Raises ValueError when either log argument is <= 1.
    """
    n, d, epsilon, delta, lipschitz, smoothness = _check_common(n, d, epsilon, delta, lipschitz, smoothness)
    r = _check_rank(effective_rank, d)
    mu = _check_pl(pl_constant, smoothness)
    kappa = smoothness / mu
    log_term = _log_term(epsilon, delta)
    argument = mpmath.mpf(n) ** 2 * epsilon**2 / (kappa * r * log_term)
    _require_log_argument("corollary_f4", "n^2 eps^2/(kappa r Lg)", argument)
    ltilde2 = ltilde_corollary_f4_squared(n, d, r, epsilon, delta, lipschitz, smoothness, mu)
    ltilde = mpmath.sqrt(ltilde2)
    perturbation_max = min(
        (2 - mpmath.sqrt(2)) * ltilde,
        4 * lipschitz / mpmath.sqrt(d) * mpmath.sqrt(r * log_term) / (n * epsilon),
    ) / (2 * smoothness * d)
    return _settings(
        "corollary_f4", n=n, d=d, r=r, epsilon=epsilon, delta=delta, lipschitz=lipschitz, smoothness=smoothness,
        mu=mu, log_term=log_term,
        step_size=1 / (4 * smoothness * (r + 2)),
        steps_formula=8 * kappa * (r + 2) * mpmath.log(argument),
        perturbation_max=perturbation_max,
        clip_threshold=ltilde / 2,
        extra={
            "LtildeF4_2": ltilde2,
            "C0": ltilde / (2 * mpmath.sqrt(2)),
            "kappa": kappa,
            "log_argument": argument,
            "ltilde_log_argument": _ltilde_corollary_f4_argument(n, d, r, epsilon, delta, kappa),
        },
    )


# ---------------------------------------------------------------------------------------------------
# bounds: printed right-hand sides


def _check_settings(settings, theorem: str) -> TheoremSettings:
    if not isinstance(settings, TheoremSettings):
        raise TypeError(f"settings must be a TheoremSettings, got {type(settings).__name__}")
    if settings.theorem != theorem:
        raise ValueError(f"settings must come from {theorem}_settings, got settings.theorem = {settings.theorem!r}")
    return settings


def _check_gap(loss_gap):
    return mpmath.mpf(check_real("loss_gap", loss_gap, nonnegative=True))


def theorem1_bound(settings: TheoremSettings, loss_gap):
    """dpzero Theorem 1, eq. (3): E‖∇F_S(x_τ)‖² <= 16(ℓ·gap + 2L²)·d√(d·Lg)/(nε).

    loss_gap: F_S(x₀) − F_S^* (any upper bound on it gives a valid bound). Remark F.6: min with L² also holds.
    """
    s = _check_settings(settings, "theorem1")
    gap = _check_gap(loss_gap)
    return 16 * (s.smoothness * gap + 2 * s.lipschitz**2) * s.d * mpmath.sqrt(s.d * s.log_term) / (s.n * s.epsilon)


def theorem2_bound(settings: TheoremSettings, loss_gap):
    """dpzero Theorem 2, eq. (5): E‖∇F_S(x_τ)‖² <= 16(ℓ·gap + 2L²)·d√(r·Lg)/(nε). loss_gap: F_S(x₀) − F_S^*."""
    s = _check_settings(settings, "theorem2")
    gap = _check_gap(loss_gap)
    root = mpmath.sqrt(s.effective_rank * s.log_term)
    return 16 * (s.smoothness * gap + 2 * s.lipschitz**2) * s.d * root / (s.n * s.epsilon)


def theorem3_bound(settings: TheoremSettings, loss_gap):
    """dpzero Theorem 3, eq. (7): E‖∇F_S(x_τ)‖² <= (64(ℓ·gap + L̃²) + 2L²)·√(r·Lg)/(nε).

    loss_gap: F_S(x₀) − F_S^*. Erratum E6: the proof's conditioning on Q is not fully justified, so treat
    (7) as a claim to check empirically (claim dpzero.thm3.utility_bound); erratum E15: at small nε it exceeds the trivial L².
    """
    s = _check_settings(settings, "theorem3")
    gap = _check_gap(loss_gap)
    root = mpmath.sqrt(s.effective_rank * s.log_term)
    return (64 * (s.smoothness * gap + s.extra["Ltilde2"]) + 2 * s.lipschitz**2) * root / (s.n * s.epsilon)


def corollary_f2_bound(settings: TheoremSettings, loss_gap):
    """dpzero Corollary F.2: E[F_S(x_T) − F_S^*] <= (ℓ·gap + 64L²κ·log(n²ε²/(κd³Lg)) + 2L²)·d³Lg/(μn²ε²)."""
    s = _check_settings(settings, "corollary_f2")
    gap = _check_gap(loss_gap)
    L2, kappa = s.lipschitz**2, s.extra["kappa"]
    head = s.smoothness * gap + 64 * L2 * kappa * mpmath.log(s.extra["log_argument"]) + 2 * L2
    return head * mpmath.mpf(s.d) ** 3 * s.log_term / (s.pl_constant * mpmath.mpf(s.n) ** 2 * s.epsilon**2)


def corollary_f3_bound(settings: TheoremSettings, loss_gap):
    """dpzero Corollary F.3: E[F_S(x_T) − F_S^*] <= (ℓ·gap + 64L²κ·log(n²ε²/(κrd²Lg)) + 2L²)·r d² Lg/(μn²ε²)."""
    s = _check_settings(settings, "corollary_f3")
    gap = _check_gap(loss_gap)
    L2, kappa = s.lipschitz**2, s.extra["kappa"]
    head = s.smoothness * gap + 64 * L2 * kappa * mpmath.log(s.extra["log_argument"]) + 2 * L2
    return head * s.effective_rank * mpmath.mpf(s.d) ** 2 * s.log_term / (
        s.pl_constant * mpmath.mpf(s.n) ** 2 * s.epsilon**2
    )


def corollary_f4_bound(settings: TheoremSettings, loss_gap, *, loss_bound=None):
    """dpzero Corollary F.4 as printed (conditional on Q = "no clipping at any (t, i)"):

        E[F_S(x_T) − F_S^* | Q]·P(Q) <= (ℓ·gap + log(n²ε²/(κrLg))·(L² + 16L̃²κ) + 2L²)·r·Lg/(μn²ε²),

    with Corollary F.4's own L̃ (extra["LtildeF4_2"]). loss_bound: B with |F_S| <= B everywhere; when
    given, Remark F.5's term (μB/d)·log(n²ε²/(κrLg))·r·Lg/(μn²ε²) is added and the result bounds the
    unconditional E[F_S(x_T) − F_S^*].
    """
    s = _check_settings(settings, "corollary_f4")
    gap = _check_gap(loss_gap)
    L2, kappa, log_value = s.lipschitz**2, s.extra["kappa"], mpmath.log(s.extra["log_argument"])
    head = s.smoothness * gap + log_value * (L2 + 16 * s.extra["LtildeF4_2"] * kappa) + 2 * L2
    if loss_bound is not None:
        bound = mpmath.mpf(check_real("loss_bound", loss_bound, nonnegative=True))
        head += s.pl_constant * bound / s.d * log_value
    return head * s.effective_rank * s.log_term / (s.pl_constant * mpmath.mpf(s.n) ** 2 * s.epsilon**2)


# ---------------------------------------------------------------------------------------------------
# bounds: the constituent terms of each proof's last display, at the T and λ actually used


def _used(settings: TheoremSettings, steps, perturbation):
    """(T, λ, σ) used by a run: T defaults to T_int, λ to λ_max; σ follows T (Lemma 2.2)."""
    T = mpmath.mpf(settings.steps if steps is None else check_real("steps", steps, positive=True))
    lam = settings.perturbation_max if perturbation is None else mpmath.mpf(
        check_real("perturbation", perturbation, positive=True)
    )
    sigma = _noise_std(settings.clip_threshold, T, settings.n, settings.epsilon, settings.log_term)
    return T, lam, sigma


def _check_clip_margin(settings: TheoremSettings, lam) -> None:
    """App. E: the clipping-probability bound needs C >= C₀ + ℓλd/2 (equality at λ_max's first branch, so
    a few units of rounding at the working precision are forgiven)."""
    needed = settings.extra["C0"] + settings.smoothness * lam * settings.d / 2
    if settings.clip_threshold < needed * (1 - 64 * mpmath.eps):
        largest = 2 * (settings.clip_threshold - settings.extra["C0"]) / (settings.smoothness * settings.d)
        raise ValueError(
            f"perturbation = {mpmath.nstr(lam, 8)} breaks C >= C0 + ell*lambda*d/2 "
            f"(needs perturbation <= {mpmath.nstr(largest, 8)})"
        )


def _with_total(terms: dict) -> dict:
    terms["total"] = mpmath.fsum(terms.values())
    return terms


def theorem1_bound_terms(settings: TheoremSettings, loss_gap, *, steps=None, perturbation=None) -> dict:
    """dpzero Theorem 1 proof (App. D), last display before substitution:

        E‖∇F_S(x_τ)‖² <= 4·gap/(αT) + ℓ²λ²d³ + 2ℓαdσ²      (2ℓαdσ² = 64ℓL²αT d³Lg/(n²ε²) at C = Ld)

    keys "optimization", "smoothing_bias", "privacy_noise", "total". steps: T (default T_int, with σ
    from T); perturbation: λ (default λ_max).
    """
    s = _check_settings(settings, "theorem1")
    return _dpgd0_terms(s, loss_gap, steps, perturbation, noise_dimension=s.d)


def theorem2_bound_terms(settings: TheoremSettings, loss_gap, *, steps=None, perturbation=None) -> dict:
    """dpzero Theorem 2 proof (App. D), last display before substitution:

        E‖∇F_S(x_τ)‖² <= 4·gap/(αT) + ℓ²λ²d³ + 2ℓαrσ²      (2ℓαrσ² = 64ℓL²αT d² r Lg/(n²ε²) at C = Ld)

    keys "optimization", "smoothing_bias", "privacy_noise", "total" (steps, perturbation as Theorem 1).
    """
    s = _check_settings(settings, "theorem2")
    return _dpgd0_terms(s, loss_gap, steps, perturbation, noise_dimension=s.effective_rank)


def _dpgd0_terms(s: TheoremSettings, loss_gap, steps, perturbation, *, noise_dimension) -> dict:
    """4·gap/(αT) + ℓ²λ²d³ + 2ℓα·(d or r)·σ²: Theorems 1 and 2 differ only in the noise term's d vs r."""
    gap = _check_gap(loss_gap)
    T, lam, sigma = _used(s, steps, perturbation)
    alpha, ell = s.step_size, s.smoothness
    return _with_total({
        "optimization": 4 * gap / (alpha * T),
        "smoothing_bias": ell**2 * lam**2 * mpmath.mpf(s.d) ** 3,
        "privacy_noise": 2 * ell * alpha * noise_dimension * sigma**2,
    })


def theorem3_bound_terms(settings: TheoremSettings, loss_gap, *, steps=None, perturbation=None) -> dict:
    """dpzero Theorem 3 proof (App. E), the display after (22) summed over t:

        E‖∇F_S(x_τ)‖² <= 4·gap/(αT) + 2ℓαrσ² + ℓ²d³λ² + 8√(2π)L²ndT·exp(−C₀²/(8L²))

    (2ℓαrσ² = 64ℓC²αT rLg/(n²ε²); the last term is 4L²d·P(Q̄) with the union bound on P(Q̄)).
    keys "optimization", "privacy_noise", "smoothing_bias", "clipping", "total". Raises ValueError if
    ``perturbation`` breaks C >= C₀ + ℓλd/2.
    """
    s = _check_settings(settings, "theorem3")
    gap = _check_gap(loss_gap)
    T, lam, sigma = _used(s, steps, perturbation)
    _check_clip_margin(s, lam)
    alpha, ell, L = s.step_size, s.smoothness, s.lipschitz
    return _with_total({
        "optimization": 4 * gap / (alpha * T),
        "privacy_noise": 2 * ell * alpha * s.effective_rank * sigma**2,
        "smoothing_bias": ell**2 * mpmath.mpf(s.d) ** 3 * lam**2,
        "clipping": 4 * L**2 * s.d * s.n * T * clip_failure_bound(s.extra["C0"], L),
    })


def _pl_terms(s: TheoremSettings, gap, T, lam, sigma, noise_dimension) -> dict:
    """App. F: exp(−μαT/2)·gap + ℓ²λ²d³/(2μ) + ℓα·(d or r)·σ²/μ (the resolved PL recursion)."""
    mu, alpha, ell = s.pl_constant, s.step_size, s.smoothness
    return {
        "contraction": mpmath.exp(-mu * alpha * T / 2) * gap,
        "smoothing_bias": ell**2 * lam**2 * mpmath.mpf(s.d) ** 3 / (2 * mu),
        "privacy_noise": ell * alpha * noise_dimension * sigma**2 / mu,
    }


def corollary_f2_bound_terms(settings: TheoremSettings, loss_gap, *, steps=None, perturbation=None) -> dict:
    """dpzero Corollary F.2 proof: E[F_S(x_T) − F_S^*] <= exp(−μαT/2)·gap + ℓ²λ²d³/(2μ) + ℓαdσ²/μ.

    keys "contraction", "smoothing_bias", "privacy_noise", "total" (steps: T, default T_int;
    perturbation: λ, default λ_max).
    """
    s = _check_settings(settings, "corollary_f2")
    gap = _check_gap(loss_gap)
    T, lam, sigma = _used(s, steps, perturbation)
    return _with_total(_pl_terms(s, gap, T, lam, sigma, s.d))


def corollary_f3_bound_terms(settings: TheoremSettings, loss_gap, *, steps=None, perturbation=None) -> dict:
    """dpzero Corollary F.3 proof: E[F_S(x_T) − F_S^*] <= exp(−μαT/2)·gap + ℓ²λ²d³/(2μ) + ℓαrσ²/μ.

    keys as Corollary F.2.
    """
    s = _check_settings(settings, "corollary_f3")
    gap = _check_gap(loss_gap)
    T, lam, sigma = _used(s, steps, perturbation)
    return _with_total(_pl_terms(s, gap, T, lam, sigma, s.effective_rank))


def corollary_f4_bound_terms(settings: TheoremSettings, loss_gap, *, steps=None, perturbation=None,
                             loss_bound=None) -> dict:
    """dpzero Corollary F.4 proof:

        E[F_S(x_T) − F_S^* | Q]·P(Q) <= exp(−μαT/2)·gap + ℓ²λ²d³/(2μ) + ℓαrσ²/μ
                                         + 4√(2π)L²ndT·exp(−C₀²/(8L²))/μ

    keys "contraction", "smoothing_bias", "privacy_noise", "clipping", "total"; with loss_bound B
    (|F_S| <= B), also "unconditional_remainder" = 4√(2π)nTB·exp(−C₀²/(8L²)) (Remark F.5), and the total
    bounds E[F_S(x_T) − F_S^*]. Raises ValueError if ``perturbation`` breaks C >= C₀ + ℓλd/2.
    """
    s = _check_settings(settings, "corollary_f4")
    gap = _check_gap(loss_gap)
    T, lam, sigma = _used(s, steps, perturbation)
    _check_clip_margin(s, lam)
    failure = clip_failure_bound(s.extra["C0"], s.lipschitz)
    terms = _pl_terms(s, gap, T, lam, sigma, s.effective_rank)
    terms["clipping"] = 2 * s.lipschitz**2 * s.d * s.n * T * failure / s.pl_constant
    if loss_bound is not None:
        bound = mpmath.mpf(check_real("loss_bound", loss_bound, nonnegative=True))
        terms["unconditional_remainder"] = 2 * bound * s.n * T * failure
    return _with_total(terms)


# ---------------------------------------------------------------------------------------------------
# facts used by the theorems


def clip_failure_bound(c0, lipschitz):
    """dpzero text after Alg 2 and App. E (Lemma C.1(ii) with ‖∇f‖ <= L): per (t, i),

        P(clipping at threshold C >= C₀ + ℓλd/2) <= P(|u^T ∇f(x_t; ξ_i)| >= C₀) <= 2√(2π)·exp(−C₀²/(8L²)).

    c0: C₀ >= 0; lipschitz: L > 0. Returns the raw formula (an mpf; > 1, i.e. trivial, when
    C₀/L < √(8 log(2√(2π))) ≈ 3.591).
    """
    c0 = mpmath.mpf(check_real("c0", c0, nonnegative=True))
    lipschitz = mpmath.mpf(check_real("lipschitz", lipschitz, positive=True))
    return 2 * mpmath.sqrt(2 * mpmath.pi) * mpmath.exp(-(c0**2) / (8 * lipschitz**2))


def effective_rank(hessian) -> float:
    """dpzero Assumption 3.5: r = Tr(H)/‖H‖₂ for a symmetric PSD d×d matrix H (float64).

    Refuses non-square, non-symmetric (|H − H^T| > 1e−10·max|H|), indefinite
    (λ_min < −1e−10·λ_max) and zero matrices.
    """
    h = check_array("hessian", hessian, ndim=2)
    if h.dtype == object:
        h = np.array([float(v) for v in h.flat], dtype=np.float64).reshape(h.shape)
    if h.shape[0] != h.shape[1] or h.shape[0] < 1:
        raise ValueError(f"hessian must be a square d×d matrix with d >= 1, got shape {h.shape}")
    scale = float(np.max(np.abs(h)))
    if scale == 0.0:
        raise ValueError("hessian must be nonzero (‖H‖₂ > 0) for Tr(H)/‖H‖₂ to be defined")
    if float(np.max(np.abs(h - h.T))) > SYMMETRY_TOLERANCE * scale:
        raise ValueError(f"hessian must be symmetric (max |H - H^T| <= {SYMMETRY_TOLERANCE}·max|H|)")
    eigenvalues = np.linalg.eigvalsh((h + h.T) / 2)
    largest = float(eigenvalues[-1])
    if float(eigenvalues[0]) < -PSD_TOLERANCE * max(largest, 0.0) or largest <= 0:
        raise ValueError(f"hessian must be positive semidefinite, got smallest eigenvalue {float(eigenvalues[0])!r}")
    return float(np.trace(h)) / largest
