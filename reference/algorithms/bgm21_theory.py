"""bgm21 Theorems 8, 11 and 16: the hyper-parameters the theory prescribes for Algorithm 1 (A_polySFW), Algorithm 6
(A_nSFW) and Algorithm 2 (proximally guided private stochastic mirror descent), the ℓ_p-geometry constants they use,
and the theorems' rates as expressions with every hidden constant 1.

Bassily, Guzmán, Menart, *Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex
Settings* (NeurIPS 2021). The theorems state their parameters as real numbers inside O(·) bounds; here every
rounding is explicit, every hidden constant is 1, and every setting reports the fraction of the data it reads.

Geometry (Theorems 11 and 16; the paper's Appendix B on regularity of normed spaces is missing — REBUILT pieces are
marked):

* κ(p, d; c) = min{1/(p−1), c·ln d}: c = 2 in Theorem 11, c = 1 in Theorem 16 (the paper uses both; each theorem keeps
  its own). p = 1 gives c·ln d. (Both are O(·) proxies for the regularity constant of ℓ_q, q = p/(p−1).)
* κ̃(p, d) = 1 + ln d·1[p < 2].
* p̄(p, d) = max{p, 1 + 1/ln d} (Algorithm 2), clipped to 2 (REBUILT: for d ≤ 2, 1 + 1/ln d > 2 and ½‖·‖²_p̄ would
  not be strongly convex).
* ν_eff(p, d) = (p̄ − 1)·d^{−2(1/p − 1/p̄)} (REBUILT): the strong-convexity modulus of ½‖·‖²_p̄ with respect to ‖·‖_p
  (½‖·‖²_p̄ is (p̄ − 1)-strongly convex w.r.t. ‖·‖_p̄, and ‖x‖_p̄ ≥ d^{1/p̄ − 1/p}‖x‖_p). Equals p − 1 when p̄ = p.

Theorem 8 (Algorithm 1), ``schedule="theory"``: R = (2/3)·log₂(nε/(ln²J·ln²n·√ln(1/δ))) — log₂, because 2^R
appears in the algorithm and the dominant term D(L0 + L1D)/2^{R/2} must balance (nε/…)^{1/3}; every other log is
natural — rounded to R_int = max(1, ⌊R⌋); b = ⌊n/ln²n⌋; η_{r,t} = 1/√(t+1).
Theorem 11 (Algorithm 6), ``schedule="theory"``: κ = κ(p, d; 2), R = (4/5)·log₂(nε/(√(dκ̃ ln(1/δ))·κ^{5/3}·ln²n)),
same rounding, b and η.
At practical n the theory schedules are degenerate (R < 1, or a few rounds reading a few per cent of the data).
``schedule="practical"`` (REBUILT, not in the paper): for every integer R in [1, ⌊log₂ n⌋], b(R) is the largest b
whose one-pass schedule fits in n records (``sfw_data_budget(b, R) ≤ n``, 2^{R−1} ≤ b), and R minimises the proxy
read off Lemma 9 / Lemma 12 and the Frank–Wolfe descent inequality (constants 1):
    Alg 1:  2^{−R/2} + 2^R·ln J·√ln(1/δ)/(b(R)ε),
    Alg 6:  2^{−R/2} + κ·2^{R/4}/√b(R) + √(dκκ̃ ln(1/δ))·2^{3R/4}/(b(R)ε).
The smallest R attains ties.

Theorem 16 (Algorithm 2): κ = κ(p, d; 1), p̄, ν_eff as above;
R = min{√(nDρ/(κL0)), (κ̃κ²)^{−1/3}·(D(nε)²ρ/(L0·d·ln(1/δ)))^{1/3}}, R_int = ⌊R⌋ clipped to [1, n] (the paper's
bracket is unspecified and its assumption nd ≥ ρD/L0 plays no visible role; the clip is what it must guarantee);
R disjoint batches of ⌊n/R_int⌋ records. β: ``beta_variant="printed"`` is the paper's β = 2ρκ; ``"corrected"``
(default, REBUILT) is β = 2ρ/ν_eff. Proposition 13 needs ν_eff·β > ρ for the prox subproblem to be strongly convex;
with β = 2ρκ that is 2κν_eff > 1, which fails for p near 1 (p < 1 + 1/ln d, where p̄ ≠ p; e.g. p = 1, d = 10:
2κν_eff ≈ 0.50). The two agree whenever p ≥ 1 + 1/ln d. Both report μ = ν_eff·β − ρ (the modulus A_SC sees;
= ρ for the corrected β) and whether it is positive.

Rates (``rate_theorem8``, ``rate_theorem11``, ``rate_theorem16``): the O(·) expressions of Theorems 8 and 11 (bounds on
E Gap_{F_𝒟}(ŵ)) and eq. (7) of Theorem 16 (ϑ), with constant 1, as printed (including the max{1, 2ρDκ} of eq. (7),
whose normalisation mixes units).

Refusals: one ValueError (naming what is needed) for settings the data cannot support; TypeError for non-numbers.
"""

from __future__ import annotations

import dataclasses
import math

from ..validation import check_int, check_real
from .bgm21_sfw import MAX_ROUNDS, inverse_sqrt_step, sfw_data_budget

__all__ = [
    "SCHEDULES",
    "BETA_VARIANTS",
    "kappa",
    "kappa_tilde",
    "p_bar",
    "nu_eff",
    "SFWParams",
    "ProxGuidedParams",
    "theorem8_params",
    "theorem11_params",
    "theorem16_params",
    "practical_proxy_theorem8",
    "practical_proxy_theorem11",
    "rate_theorem8",
    "rate_theorem11",
    "rate_theorem16",
]

SCHEDULES = ("theory", "practical")
BETA_VARIANTS = ("corrected", "printed")


# ---------------------------------------------------------------------------------------------------
# Input helpers


def _choice(name, value, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def _pos(name, value) -> float:
    return float(check_real(name, value, positive=True))


def _eps(value) -> float:
    return _pos("eps", value)


def _delta(value) -> float:
    delta = float(check_real("delta", value))
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1) (the schedules use log(1/delta)), got {delta}")
    return delta


def _dim(d) -> int:
    return check_int("d", d, minimum=2)  # ln d > 0: κ, κ̃ and p̄ need it


def _p(p, lower_open: bool) -> float:
    p = float(check_real("p", p))
    ok = (1.0 < p <= 2.0) if lower_open else (1.0 <= p <= 2.0)
    if not ok:
        rng = "(1, 2]" if lower_open else "[1, 2]"
        raise ValueError(f"p must lie in {rng}, got {p}")
    return p


def _n(n) -> int:
    return check_int("n", n, minimum=2)  # ln n > 0


# ---------------------------------------------------------------------------------------------------
# ℓ_p geometry


def kappa(p, d, c_log) -> float:
    """κ = min{1/(p−1), c_log·ln d}; c_log = 2 (Theorem 11) or 1 (Theorem 16). p ∈ [1, 2] (p = 1 gives c_log·ln d)."""
    p = _p(p, lower_open=False)
    d = _dim(d)
    c_log = _pos("c_log", c_log)
    log_term = c_log * math.log(d)
    return log_term if p == 1.0 else min(1.0 / (p - 1.0), log_term)


def kappa_tilde(p, d) -> float:
    """κ̃ = 1 + ln d·1[p < 2]."""
    p = _p(p, lower_open=False)
    d = _dim(d)
    return 1.0 + (math.log(d) if p < 2.0 else 0.0)


def p_bar(p, d, clip_to_2: bool = True) -> float:
    """p̄ = max{p, 1 + 1/ln d} (Algorithm 2), clipped to 2 unless ``clip_to_2=False`` (clip REBUILT)."""
    p = _p(p, lower_open=False)
    d = _dim(d)
    if not isinstance(clip_to_2, bool):
        raise TypeError(f"clip_to_2 must be a bool, got {type(clip_to_2).__name__}")
    value = max(p, 1.0 + 1.0 / math.log(d))
    return min(2.0, value) if clip_to_2 else value


def nu_eff(p, d) -> float:
    """ν_eff = (p̄ − 1)·d^{−2(1/p − 1/p̄)}: strong convexity of ½‖·‖²_p̄ w.r.t. ‖·‖_p (REBUILT; p̄ clipped to 2)."""
    pb = p_bar(p, d)
    p = float(p)
    return (pb - 1.0) * float(d) ** (-2.0 * (1.0 / p - 1.0 / pb))


# ---------------------------------------------------------------------------------------------------
# Settings


@dataclasses.dataclass(frozen=True)
class SFWParams:
    """Hyper-parameters of Algorithm 1 (Theorem 8) or Algorithm 6 (Theorem 11).

    n_rounds (R_int), b (base batch), the step size η_{r,t} = 1/√(t+1) (``step``), records_used =
    ``sfw_data_budget(b, n_rounds)`` ≤ n and data_fraction = records_used/n. n_rounds_real and b_real are the
    theorem's real-valued R and n/ln²n (both reported for either schedule); proxy is the practical schedule's
    objective at the chosen (R, b). notes: what was rounded, rebuilt or corrected.
    """

    theorem: str
    schedule: str
    n: int
    eps: float
    delta: float
    n_rounds: int
    b: int
    n_rounds_real: float
    b_real: float
    records_used: int
    data_fraction: float
    proxy: float
    J: int | None = None
    d: int | None = None
    p: float | None = None
    kappa: float | None = None
    kappa_tilde: float | None = None
    eta: str = "1/sqrt(t+1)"
    notes: tuple[str, ...] = ()

    @staticmethod
    def step(r: int, t: int) -> float:
        """η_{r,t} = 1/√(t+1) (Theorems 8 and 11)."""
        return inverse_sqrt_step(r, t)

    @property
    def n_steps(self) -> int:
        """2^R − 1: the number of Frank–Wolfe steps, and of output candidates."""
        return 2**self.n_rounds - 1


@dataclasses.dataclass(frozen=True)
class ProxGuidedParams:
    """Hyper-parameters of Algorithm 2 (Theorem 16).

    beta: the prox regularisation used (per beta_variant); beta_printed = 2ρκ and beta_corrected = 2ρ/ν_eff are both
    reported. mu = ν_eff·β − ρ (strong convexity of each prox subproblem w.r.t. ‖·‖_p, Proposition 13) and
    strongly_convex = mu > 0. n_rounds = ⌊R⌋ clipped to [1, n] (clipped says whether the clip acted), batch_size =
    ⌊n/n_rounds⌋, records_used = n_rounds·batch_size, data_fraction = records_used/n.
    """

    n: int
    d: int
    p: float
    rho_wc: float
    L0: float
    D: float
    eps: float
    delta: float
    beta_variant: str
    kappa: float
    kappa_tilde: float
    p_bar: float
    nu_eff: float
    beta: float
    beta_printed: float
    beta_corrected: float
    mu: float
    strongly_convex: bool
    n_rounds_real: float
    n_rounds: int
    clipped: bool
    batch_size: int
    records_used: int
    data_fraction: float
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------------
# Algorithms 1 and 6 (Theorems 8 and 11)


def practical_proxy_theorem8(n_rounds, b, J, eps, delta) -> float:
    """2^{−R/2} + 2^R·ln J·√ln(1/δ)/(bε) (REBUILT proxy, constants 1)."""
    R = check_int("n_rounds", n_rounds, minimum=1)
    b = check_int("b", b, minimum=1)
    J = check_int("J", J, minimum=2)
    eps, delta = _eps(eps), _delta(delta)
    return 2.0 ** (-R / 2) + 2.0**R * math.log(J) * math.sqrt(math.log(1 / delta)) / (b * eps)


def practical_proxy_theorem11(n_rounds, b, d, p, eps, delta) -> float:
    """2^{−R/2} + κ2^{R/4}/√b + √(dκκ̃ ln(1/δ))·2^{3R/4}/(bε), κ = κ(p, d; 2) (REBUILT proxy, constants 1)."""
    R = check_int("n_rounds", n_rounds, minimum=1)
    b = check_int("b", b, minimum=1)
    k, kt = kappa(p, d, 2.0), kappa_tilde(p, d)
    eps, delta = _eps(eps), _delta(delta)
    return (2.0 ** (-R / 2) + k * 2.0 ** (R / 4) / math.sqrt(b)
            + math.sqrt(d * k * kt * math.log(1 / delta)) * 2.0 ** (0.75 * R) / (b * eps))


def _largest_b(n: int, R: int) -> int | None:
    """The largest b ≥ 2^{R−1} with sfw_data_budget(b, R) ≤ n, or None (the budget is nondecreasing in b)."""
    lo = 2 ** (R - 1)
    if sfw_data_budget(lo, R) > n:
        return None
    hi = max(lo, n // R)  # round r reads b records at t = 0, so R·b ≤ budget
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sfw_data_budget(mid, R) <= n:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _practical(n: int, proxy) -> tuple[int, int, float]:
    best = None
    for R in range(1, min(MAX_ROUNDS, int(math.floor(math.log2(n)))) + 1):
        b = _largest_b(n, R)
        if b is None:
            break  # sfw_data_budget(2^{R−1}, R) grows with R: no larger R fits either
        value = proxy(R, b)
        if best is None or value < best[2]:
            best = (R, b, value)
    if best is None:
        raise ValueError(f"n = {n} records cannot hold one round (needs n >= 1 record per batch)")
    return best


def _theory(n: int, R_real: float, b_real: float, what: str) -> tuple[int, int, list[str]]:
    notes = [f"{what}: R = log2-based (2^R appears in the algorithm); R_int = max(1, floor(R)), b = floor(n/ln^2 n)"]
    R = max(1, math.floor(R_real)) if math.isfinite(R_real) else MAX_ROUNDS + 1
    b = max(1, math.floor(b_real))
    if R_real < 1:
        notes.append(f"degenerate: theory R = {R_real:.4g} < 1, raised to 1")
    if R > MAX_ROUNDS:
        raise ValueError(f"{what}: the theory schedule asks for R = {R_real:.4g} rounds, more than MAX_ROUNDS = "
                         f"{MAX_ROUNDS}; needs a smaller n·eps")
    if 2 ** (R - 1) > b:
        raise ValueError(f"{what}: R = {R} rounds need b >= 2**(R-1) = {2 ** (R - 1)} records per base batch, but "
                         f"b = floor(n/ln^2 n) = {b} at n = {n}; needs a larger n or a smaller eps")
    used = sfw_data_budget(b, R)
    if used > n:
        raise ValueError(f"{what}: the theory schedule (R = {R}, b = {b}) reads {used} records but only n = {n} "
                         "are available; needs n >= that many records")
    return R, b, notes


def theorem8_params(n, eps, delta, J, schedule="theory") -> SFWParams:
    """Theorem 8's R, b, η for Algorithm 1 (J ≥ 2 vertices), or the practical schedule (see the module docstring)."""
    n, eps, delta = _n(n), _eps(eps), _delta(delta)
    J = check_int("J", J, minimum=2)
    schedule = _choice("schedule", schedule, SCHEDULES)
    ln_n = math.log(n)
    R_real = (2.0 / 3.0) * math.log2(n * eps / (math.log(J) ** 2 * ln_n**2 * math.sqrt(math.log(1 / delta))))
    b_real = n / ln_n**2

    def proxy(R, b):
        return practical_proxy_theorem8(R, b, J, eps, delta)

    if schedule == "theory":
        R, b, notes = _theory(n, R_real, b_real, "Theorem 8")
        value = proxy(R, b)
    else:
        R, b, value = _practical(n, proxy)
        notes = ["practical schedule (not in the paper): R in [1, floor(log2 n)] minimising "
                 "2^(-R/2) + 2^R ln J sqrt(ln(1/delta))/(b eps), b = largest fitting in n records"]
    notes.append("batches m_t = ceil(b/(t+1)) (the printed b/(t+1) is not an integer)")
    used = sfw_data_budget(b, R)
    return SFWParams(theorem="8", schedule=schedule, n=n, eps=eps, delta=delta, n_rounds=R, b=b,
                     n_rounds_real=R_real, b_real=b_real, records_used=used, data_fraction=used / n, proxy=value,
                     J=J, notes=tuple(notes))


def theorem11_params(n, d, p, eps, delta, schedule="theory") -> SFWParams:
    """Theorem 11's R, b, η for Algorithm 6 (ℓ_p, 1 < p ≤ 2, d ≥ 2), or the practical schedule."""
    n, eps, delta = _n(n), _eps(eps), _delta(delta)
    d = _dim(d)
    p = _p(p, lower_open=True)
    schedule = _choice("schedule", schedule, SCHEDULES)
    k, kt = kappa(p, d, 2.0), kappa_tilde(p, d)
    ln_n = math.log(n)
    R_real = 0.8 * math.log2(n * eps / (math.sqrt(d * kt * math.log(1 / delta)) * k ** (5.0 / 3.0) * ln_n**2))
    b_real = n / ln_n**2

    def proxy(R, b):
        return practical_proxy_theorem11(R, b, d, p, eps, delta)

    notes = [f"kappa = min(1/(p-1), 2 ln d) = {k:.6g} (Theorem 11's constant 2; Theorem 16 uses 1)"]
    if schedule == "theory":
        R, b, more = _theory(n, R_real, b_real, "Theorem 11")
        notes += more
        value = proxy(R, b)
    else:
        R, b, value = _practical(n, proxy)
        notes.append("practical schedule (not in the paper): R in [1, floor(log2 n)] minimising "
                     "2^(-R/2) + kappa 2^(R/4)/sqrt(b) + sqrt(d kappa kappa~ ln(1/delta)) 2^(3R/4)/(b eps)")
    notes.append("batches m_t = ceil(b/(t+1)); sigma_hat should use eta_{r,t-1} (bgm21_sfw, sigma_hat_eta='prev')")
    used = sfw_data_budget(b, R)
    return SFWParams(theorem="11", schedule=schedule, n=n, eps=eps, delta=delta, n_rounds=R, b=b,
                     n_rounds_real=R_real, b_real=b_real, records_used=used, data_fraction=used / n, proxy=value,
                     d=d, p=p, kappa=k, kappa_tilde=kt, notes=tuple(notes))


# ---------------------------------------------------------------------------------------------------
# Algorithm 2 (Theorem 16)


def theorem16_params(n, d, p, rho_wc, L0, D, eps, delta, beta_variant="corrected") -> ProxGuidedParams:
    """Theorem 16's R, β (and p̄, ν_eff, μ) for Algorithm 2; ℓ_p with 1 ≤ p ≤ 2, ρ-weakly convex L0-Lipschitz losses
    (every f(·, z), not only F_𝒟), W of ‖·‖_p-diameter D."""
    n, eps, delta = check_int("n", n, minimum=1), _eps(eps), _delta(delta)
    d = _dim(d)
    p = _p(p, lower_open=False)
    rho, L0, D = _pos("rho_wc", rho_wc), _pos("L0", L0), _pos("D", D)
    beta_variant = _choice("beta_variant", beta_variant, BETA_VARIANTS)
    k, kt = kappa(p, d, 1.0), kappa_tilde(p, d)
    pb, nu = p_bar(p, d), nu_eff(p, d)
    beta_printed, beta_corrected = 2.0 * rho * k, 2.0 * rho / nu
    beta = beta_corrected if beta_variant == "corrected" else beta_printed
    mu = nu * beta - rho
    first = math.sqrt(n * D * rho / (k * L0))
    second = (kt * k**2) ** (-1.0 / 3.0) * (D * (n * eps) ** 2 * rho / (L0 * d * math.log(1 / delta))) ** (1.0 / 3.0)
    R_real = min(first, second)
    R = min(max(1, math.floor(R_real)), n)
    clipped = not (1.0 <= R_real < n + 1)
    m = n // R
    notes = [f"kappa = min(1/(p-1), ln d) = {k:.6g} (Theorem 16's constant 1)",
             f"p_bar = min(2, max(p, 1 + 1/ln d)) = {pb:.6g}; nu_eff = (p_bar-1) d^(-2(1/p-1/p_bar)) = {nu:.6g}",
             "R_int = floor(R) clipped to [1, n] (in place of the assumption nd >= rho D/L0)"]
    if clipped:
        notes.append(f"clipped: theory R = {R_real:.4g} lies outside [1, n]")
    if beta_variant == "corrected":
        notes.append("beta = 2 rho/nu_eff (corrected; equals the printed 2 rho kappa when p >= 1 + 1/ln d)")
    else:
        notes.append("beta = 2 rho kappa (printed)")
    if not math.isclose(beta_printed, beta_corrected, rel_tol=1e-12):
        notes.append(f"printed beta {beta_printed:.6g} differs from corrected {beta_corrected:.6g} "
                     f"(2 kappa nu_eff = {2 * k * nu:.4g})")
    if mu <= 0:
        notes.append(f"mu = nu_eff beta - rho = {mu:.4g} <= 0: the prox subproblems need not be strongly convex "
                     "(Proposition 13 fails)")
    return ProxGuidedParams(n=n, d=d, p=p, rho_wc=rho, L0=L0, D=D, eps=eps, delta=delta, beta_variant=beta_variant,
                            kappa=k, kappa_tilde=kt, p_bar=pb, nu_eff=nu, beta=beta, beta_printed=beta_printed,
                            beta_corrected=beta_corrected, mu=mu, strongly_convex=mu > 0, n_rounds_real=R_real,
                            n_rounds=R, clipped=clipped, batch_size=m, records_used=R * m, data_fraction=R * m / n,
                            notes=tuple(notes))


# ---------------------------------------------------------------------------------------------------
# Rates (constants 1)


def rate_theorem8(n, eps, delta, J, D, L0, L1) -> float:
    """D(L0 + L1D)·ln^{2/3}J·ln^{2/3}n·ln^{1/6}(1/δ)/(nε)^{1/3} (Theorem 8, constant 1)."""
    n, eps, delta, J = _n(n), _eps(eps), _delta(delta), check_int("J", J, minimum=2)
    D, L0 = _pos("D", D), float(check_real("L0", L0, nonnegative=True))
    L1 = float(check_real("L1", L1, nonnegative=True))
    return (D * (L0 + L1 * D) * math.log(J) ** (2 / 3) * math.log(n) ** (2 / 3)
            * math.log(1 / delta) ** (1 / 6) / (n * eps) ** (1 / 3))


def rate_theorem11(n, d, p, eps, delta, D, L0, L1) -> float:
    """D(L0 + L1D)κ^{2/3}(ln^{2/3}n/n^{1/3} + d^{1/5}κ̃^{1/5}ln^{1/5}(1/δ)ln^{4/5}n/(n^{2/5}ε^{2/5})), κ = κ(p, d; 2)
    (Theorem 11, constant 1)."""
    n, eps, delta, d = _n(n), _eps(eps), _delta(delta), _dim(d)
    p = _p(p, lower_open=True)
    D, L0 = _pos("D", D), float(check_real("L0", L0, nonnegative=True))
    L1 = float(check_real("L1", L1, nonnegative=True))
    k, kt, ln_n = kappa(p, d, 2.0), kappa_tilde(p, d), math.log(n)
    return D * (L0 + L1 * D) * k ** (2 / 3) * (
        ln_n ** (2 / 3) / n ** (1 / 3)
        + (d * kt * math.log(1 / delta)) ** (1 / 5) * ln_n ** (4 / 5) / (n * eps) ** (2 / 5))


def rate_theorem16(n, d, p, rho_wc, L0, D, eps, delta) -> float:
    """ϑ of eq. (7), constant 1: (max{1, 2ρDκ}/√ρ)·(L0^{3/4}(κD)^{1/4}/(nρ)^{1/4}
    + (κ̃κ²)^{1/6}(L0²D)^{1/3}(d ln(1/δ)/((nε)²ρ))^{1/6}), κ = κ(p, d; 1)."""
    n, eps, delta, d = check_int("n", n, minimum=1), _eps(eps), _delta(delta), _dim(d)
    p = _p(p, lower_open=False)
    rho, L0, D = _pos("rho_wc", rho_wc), _pos("L0", L0), _pos("D", D)
    k, kt = kappa(p, d, 1.0), kappa_tilde(p, d)
    return (max(1.0, 2 * rho * D * k) / math.sqrt(rho)) * (
        L0 ** 0.75 * (k * D) ** 0.25 / (n * rho) ** 0.25
        + (kt * k**2) ** (1 / 6) * (L0**2 * D) ** (1 / 3) * (d * math.log(1 / delta) / ((n * eps) ** 2 * rho)) ** (1 / 6))
