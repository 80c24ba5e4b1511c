"""bgm21 privacy accounting: Lemma 1, the exact composition of pure-DP steps, and a per-record ledger.

Bassily, Guzmán, Menart — *Differentially Private Stochastic Optimization: New Results in Convex and
Non-Convex Settings* (NeurIPS 2021). Their Lemma 1 (advanced composition) certifies the noisy report-min
steps of Algorithm 1 (Theorem 7); Algorithm 6 (Theorem 10) uses Gaussian releases on disjoint batches.

Sources of every formula (all mpmath at the caller's working precision, ``reference.precision``):

* **Lemma 1 as printed** (bgm21, Sec. 2, "Advanced composition [DRV10, DR14]"): for ε > 0, δ ∈ [0, 1),
  δ′ ∈ (0, 1), the k-fold adaptive composition of (ε, δ)-DP algorithms is (ε′, kδ + δ′)-DP with
  ε′ = ε√(2k log(1/δ′)) + kε(e^ε − 1). Dwork, Rothblum, Vadhan 2010 ("Boosting and differential privacy",
  Thm III.3) and Dwork–Roth 2014 (Thm 3.20) state the same formula with the same δ budget; the printed lemma
  differs only in requiring ε > 0 (DRV allow ε ≥ 0, where ε′ = 0 trivially). ``advanced_composition(form=...)``
  labels which statement is applied; the numbers coincide. Evaluation reuses
  ``reference.accounting.composition.advanced_composition``.
* **Basic composition** (Dwork–Roth 2014 Thm 3.16): re-exported from ``reference.accounting.composition``.
* **Exact optimal composition** of k ε0-DP mechanisms (Kairouz, Oh, Viswanath 2015, "The composition theorem
  for differential privacy", ICML 2015, Thm 3.3): the k-fold randomized response RR_{ε0}^k dominates every
  k-fold adaptive composition of (ε0, δ0)-DP mechanisms, so the smallest δ at level ε is
      δ_exact(ε) = 1 − (1 − δ0)^k (1 − δ_RR(ε)),
      δ_RR(ε) = (1 + e^{ε0})^{−k} Σ_{i=0}^{k} C(k, i) [e^{ε0(k−i)} − e^ε e^{ε0 i}]_+ ,
  the hockey-stick divergence of the two laws of the number of flipped answers. At the corners
  ε = (k − 2i)ε0 it is KOV's printed δ_i = Σ_{l<i} C(k,l)(e^{(k−l)ε0} − e^{(k−2i+l)ε0})/(1 + e^{ε0})^k
  (``kov_corner_delta``). Each positive term is formed as C(k,i) e^{ε0(k−i)}·(−expm1(ε − ε0(k−2i))) in log
  space with guard bits, so the sum has no cancellation; only the terms within 2^{−prec} of the (unimodal)
  peak are summed (``_kov_log_delta_rr``).
* **zCDP** (Bun–Steinke 2016): ε-DP ⇒ (ε²/2)-zCDP (Prop 1.4), additive under composition (Lemma 1.7),
  Gaussian with sensitivity Δ and σ is (Δ²/2σ²)-zCDP (Prop 1.6), ρ-zCDP ⇒ (ρ + 2√(ρ log(1/δ)), δ)-DP
  (Prop 1.3, ``zcdp_to_dp(method="simple")``; ``method="optimal"`` uses the exact RDP-route conversion of
  ``reference.accounting.conversions.epsilon_from_zcdp``).
* **Gaussian releases** are μ-GDP with μ = Δ/σ and compose exactly to √(Σ μ_j²)-GDP (Dong–Roth–Su 2022
  Cor. 3.3); the ε at δ is ``reference.accounting.gaussian.gaussian_epsilon``.
* **Report-noisy-min** with iid Lap(s) noise over scores with centred ℓ_∞ sensitivity Δ is (2Δ/s)-DP
  (``reference.selection.report_noisy_min_epsilon``, computed here in mpmath).

Per-record participation (``Bgm21Ledger``). bgm21's algorithms make a single pass: batches are disjoint slices of a
uniformly random permutation drawn independently of the data (bgm21 Sec. 4: "disjoint batches ... single pass").
Under replace-one neighbouring, for a fixed permutation the changed index lies in exactly one batch β, the same for
S and S′. Every release whose input does not depend on batch β (directly or through the recursive gradient
estimate) has the same conditional law given all earlier outputs under S and S′, so by adaptive composition the
privacy loss is that of the composition of only the releases that read β. The run is therefore (ε, δ)-DP with
(ε, δ) the worst, over batches β, of the certified composition of the releases reading β; mixing over the
data-independent permutation keeps that guarantee. This is parallel composition *with the dependence made
explicit*: a release of Algorithm 1 at step (r, t′) reads every batch B_r^t with t ≤ t′ of its round, so a record
of B_r^t pays for the 2^r − t report-noisy-min steps (r, t), …, (r, 2^r − 1) — not for one step. Declaring a
release's batches is the caller's responsibility; the ledger composes what it is told.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterable

import mpmath

from ..accounting.composition import advanced_composition as _drv_advanced_composition
from ..accounting.composition import basic_composition, zcdp_of_pure
from ..accounting.conversions import epsilon_from_zcdp, epsilon_from_zcdp_simple
from ..accounting.errors import AccountingError
from ..accounting.gaussian import gaussian_epsilon
from ..precision import logsumexp
from ..validation import check_int, check_probability, check_real

__all__ = [
    "LEMMA1_FORMS",
    "DEFAULT_KOV_MAX_STEPS",
    "advanced_composition",
    "basic_composition",
    "kov_exact_delta",
    "kov_corner_delta",
    "kov_exact_epsilon",
    "zcdp_of_pure",
    "zcdp_to_dp",
    "PureCertificate",
    "certify_pure",
    "calibrate_pure_steps",
    "Release",
    "BatchCertificate",
    "LedgerReport",
    "Bgm21Ledger",
]

#: "lemma1": bgm21 Lemma 1 exactly as printed (ε > 0 required); "drv": Dwork–Rothblum–Vadhan 2010 Thm III.3 /
#: Dwork–Roth 2014 Thm 3.20 (ε ≥ 0). Same formula and δ budget.
LEMMA1_FORMS = ("lemma1", "drv")

#: The exact KOV route costs O(k) mpmath operations per evaluation; above this many steps certify_pure skips it
#: (reported as not evaluated) unless the caller raises the limit.
DEFAULT_KOV_MAX_STEPS = 20_000


# ---------------------------------------------------------------------------------------------------
# Lemma 1


def advanced_composition(eps, k, delta_prime, delta=0, form: str = "lemma1"):
    """bgm21 Lemma 1: k-fold adaptive composition of (ε, δ)-DP is (ε′, kδ + δ′)-DP, ε′ = ε√(2k log(1/δ′)) + kε(e^ε − 1).

    ``form="lemma1"`` applies the lemma as printed (ε > 0, δ ∈ [0, 1), δ′ ∈ (0, 1)); ``form="drv"`` applies
    DRV10 Thm III.3 / DR14 Thm 3.20, which also allow ε = 0. The formulas coincide. The total δ is capped at 1.
    Returns (ε′, kδ + δ′) as mpf.
    """
    if form not in LEMMA1_FORMS:
        raise ValueError(f"form must be one of {LEMMA1_FORMS}, got {form!r}")
    eps = mpmath.mpf(check_real("eps", eps, positive=(form == "lemma1"), nonnegative=True))
    k = check_int("k", k, minimum=1)
    return _drv_advanced_composition(eps, delta, k, delta_prime)


# ---------------------------------------------------------------------------------------------------
# Kairouz–Oh–Viswanath exact composition


def _guard_bits(*magnitudes) -> int:
    return 32 + int(mpmath.log(2 + sum(abs(m) for m in magnitudes), 2))


def _kov_log_delta_rr(eps0, k: int, eps_total):
    """log δ_RR(ε) (−inf when 0) at the current precision; eps0 > 0.

    Term i (log) is t(i) = log C(k,i) + ε0(k−i) + log(1 − e^{−g_i}), g_i = ε0(k−2i) − ε > 0 for i ≤ i_max. Each
    summand is concave in i (log C(k,i) is, log(1 − e^{−x}) is concave and g_i is affine), so t is unimodal: the
    mode is found by bisection on the sign of t(i+1) − t(i) and the sum is taken outwards from it until the terms
    fall below t(mode) − (prec·log 2 + log(k+1) + 20); the dropped mass is then below 2^{−prec}·e^{−20} relative.
    This makes one evaluation cost O(√k·prec) terms instead of O(k).
    """
    i_max = int(mpmath.ceil((k - eps_total / eps0) / 2)) - 1  # largest i with g_i > 0 (checked below)
    while i_max >= 0 and eps0 * (k - 2 * i_max) - eps_total <= 0:
        i_max -= 1
    while i_max + 1 <= k and eps0 * (k - 2 * (i_max + 1)) - eps_total > 0:
        i_max += 1
    if i_max < 0:
        return -mpmath.inf
    log_k_fact = mpmath.loggamma(k + 1)

    def term(i):
        gap = eps0 * (k - 2 * i) - eps_total
        return log_k_fact - mpmath.loggamma(i + 1) - mpmath.loggamma(k - i + 1) + eps0 * (k - i) + mpmath.log(
            -mpmath.expm1(-gap)
        )

    lo, hi = 0, i_max  # the mode is the first i in [0, i_max] with t(i+1) ≤ t(i) (or i_max)
    while lo < hi:
        mid = (lo + hi) // 2
        if term(mid + 1) > term(mid):
            lo = mid + 1
        else:
            hi = mid
    mode = lo
    peak = term(mode)
    cutoff = peak - (mpmath.mp.prec * mpmath.log(2) + mpmath.log(k + 1) + 20)
    terms = [peak]
    i = mode - 1
    while i >= 0:
        value = term(i)
        if value < cutoff:
            break
        terms.append(value)
        i -= 1
    i = mode + 1
    while i <= i_max:
        value = term(i)
        if value < cutoff:
            break
        terms.append(value)
        i += 1
    log_norm = k * (eps0 + mpmath.log1p(mpmath.exp(-eps0)))  # log (1 + e^{ε0})^k
    return logsumexp(terms) - log_norm


def kov_exact_delta(eps0, k, eps_total, delta0=0):
    """Smallest δ such that every k-fold adaptive composition of (ε0, δ0)-DP mechanisms is (ε_total, δ)-DP.

    Kairouz–Oh–Viswanath 2015 Thm 3.3 (randomized response is the worst case):
    δ = 1 − (1 − δ0)^k (1 − δ_RR), δ_RR = (1+e^{ε0})^{−k} Σ_i C(k,i)[e^{ε0(k−i)} − e^{ε_total} e^{ε0 i}]_+.
    ``eps0`` ≥ 0, ``k`` ≥ 1, ``eps_total`` ≥ 0, ``delta0`` ∈ [0, 1). Returns mpf, accurate to working precision
    (log space, guard bits scaled with kε0). Exact: kov_exact_delta(ε0, 1, ε0) = δ0.
    """
    eps0 = mpmath.mpf(check_real("eps0", eps0, nonnegative=True))
    k = check_int("k", k, minimum=1)
    eps_total = mpmath.mpf(check_real("eps_total", eps_total, nonnegative=True))
    delta0 = mpmath.mpf(check_probability("delta0", delta0, open_left=False))
    if eps0 == 0:
        delta_rr = mpmath.mpf(0)
        log_delta_rr = -mpmath.inf
    else:
        with mpmath.workprec(mpmath.mp.prec + _guard_bits(k * eps0, eps_total, k)):
            log_delta_rr = _kov_log_delta_rr(eps0, k, eps_total)
    if delta0 == 0:
        return +mpmath.exp(log_delta_rr) if log_delta_rr != -mpmath.inf else mpmath.mpf(0)
    with mpmath.workprec(mpmath.mp.prec + _guard_bits(k)):
        # 1 − (1−δ0)^k (1−δ_RR) = −expm1(k log1p(−δ0) + log1p(−δ_RR))
        delta_rr = mpmath.exp(log_delta_rr) if log_delta_rr != -mpmath.inf else mpmath.mpf(0)
        value = -mpmath.expm1(k * mpmath.log1p(-delta0) + mpmath.log1p(-delta_rr))
    return +value


def kov_corner_delta(eps0, k, i):
    """KOV 2015 Thm 3.3 as printed (δ0 = 0) at its corner ε = (k − 2i)ε0, i ∈ {0, …, ⌊k/2⌋}:
    δ_i = Σ_{l=0}^{i−1} C(k,l)(e^{(k−l)ε0} − e^{(k−2i+l)ε0}) / (1 + e^{ε0})^k. Direct mpmath sum with guard bits
    (kept independent of ``kov_exact_delta`` so that each checks the other). Returns mpf."""
    eps0 = mpmath.mpf(check_real("eps0", eps0, nonnegative=True))
    k = check_int("k", k, minimum=1)
    i = check_int("i", i, minimum=0, maximum=k // 2)
    with mpmath.workprec(2 * mpmath.mp.prec + _guard_bits(k * eps0, k)):
        total = mpmath.fsum(
            mpmath.binomial(k, l) * (mpmath.exp((k - l) * eps0) - mpmath.exp((k - 2 * i + l) * eps0)) for l in range(i)
        )
        value = total / (1 + mpmath.exp(eps0)) ** k
    return +value  # rounded to the caller's precision


def kov_exact_epsilon(eps0, k, delta, delta0=0):
    """Smallest ε with kov_exact_delta(ε0, k, ε, δ0) ≤ δ, rounded up (never understates ε).

    δ_exact(ε) is non-increasing and continuous in ε, equal to 1 − (1−δ0)^k at ε = kε0 (nothing beyond the δ0's).
    Raises ValueError when δ < 1 − (1−δ0)^k (no ε certifies). Bisection in ε ∈ [0, kε0] keeps δ(lo) > δ ≥ δ(hi)
    (both as computed) until hi − lo ≤ 4·2^{−prec}·hi; returns hi. ``delta`` ∈ (0, 1). Returns mpf.
    """
    eps0 = mpmath.mpf(check_real("eps0", eps0, nonnegative=True))
    k = check_int("k", k, minimum=1)
    delta = mpmath.mpf(check_probability("delta", delta))
    delta0 = mpmath.mpf(check_probability("delta0", delta0, open_left=False))

    def ok(eps):
        return kov_exact_delta(eps0, k, eps, delta0) <= delta

    hi = k * eps0
    if not ok(hi):
        raise ValueError(f"delta={delta} is below the k*delta0 floor 1-(1-delta0)^k of the composition: no epsilon certifies")
    lo = mpmath.mpf(0)
    if ok(lo):
        return lo
    tolerance = 4 * mpmath.eps
    for _ in range(4 * mpmath.mp.prec + 64):
        if hi - lo <= tolerance * hi:
            return hi
        mid = (lo + hi) / 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    raise AccountingError("kov_exact_epsilon: bisection did not converge")  # unreachable: width halves each step


# ---------------------------------------------------------------------------------------------------
# zCDP


def zcdp_to_dp(rho, delta, method: str = "simple"):
    """ρ-zCDP ⇒ (ε, δ)-DP. ``method="simple"``: Bun–Steinke 2016 Prop 1.3, ε = ρ + 2√(ρ log(1/δ));
    ``"optimal"``: the exact RDP-route infimum (``conversions.epsilon_from_zcdp``, never larger). Returns mpf."""
    if method == "simple":
        return epsilon_from_zcdp_simple(rho, delta)
    if method == "optimal":
        return epsilon_from_zcdp(rho, delta)
    raise ValueError(f"method must be 'simple' or 'optimal', got {method!r}")


# ---------------------------------------------------------------------------------------------------
# Certification and calibration of pure-DP steps


@dataclasses.dataclass(frozen=True)
class PureCertificate:
    """Certified ε at total δ for k pure steps. ``routes`` maps each route label to its ε (None: not applicable or
    not evaluated, with the reason in ``skipped``); ``route`` is the label that decided (the smallest ε)."""

    epsilon: mpmath.mpf
    delta: mpmath.mpf
    route: str
    routes: dict
    skipped: dict


_ROUTES = ("basic", "lemma1", "zcdp", "kov_exact")


def _checked_steps(eps_steps) -> list:
    if isinstance(eps_steps, (str, bytes)) or not isinstance(eps_steps, Iterable):
        raise TypeError(f"eps_steps must be a sequence of real numbers, got {type(eps_steps).__name__}")
    steps = [mpmath.mpf(check_real(f"eps_steps[{i}]", e, nonnegative=True)) for i, e in enumerate(eps_steps)]
    if not steps:
        raise ValueError("eps_steps must contain at least one step")
    return steps


def certify_pure(eps_steps, delta, *, kov_max_steps: int = DEFAULT_KOV_MAX_STEPS) -> PureCertificate:
    """Smallest certified ε at total δ for the adaptive composition of pure ε_i-DP steps, over four labelled routes:

    * ``basic``: Σ ε_i (Dwork–Roth Thm 3.16; valid at δ = 0 already);
    * ``lemma1``: ε√(2k log(1/δ)) + kε(e^ε − 1) — bgm21 Lemma 1 with δ_i = 0, δ′ = δ; homogeneous steps only, ε > 0;
    * ``zcdp``: ρ + 2√(ρ log(1/δ)), ρ = ½ Σ ε_i² (Bun–Steinke Props 1.4, 1.3, Lemma 1.7);
    * ``kov_exact``: the exact optimum (KOV 2015 Thm 3.3); homogeneous steps only, k ≤ ``kov_max_steps``.
    Every route is a valid bound, so the minimum is: the composition is (epsilon, δ)-DP. ``delta`` ∈ (0, 1).
    """
    steps = _checked_steps(eps_steps)
    delta = mpmath.mpf(check_probability("delta", delta))
    kov_max_steps = check_int("kov_max_steps", kov_max_steps, minimum=0)
    k = len(steps)
    homogeneous = all(e == steps[0] for e in steps)
    routes, skipped = {}, {}
    routes["basic"] = mpmath.fsum(steps)
    if homogeneous and steps[0] > 0:
        routes["lemma1"] = advanced_composition(steps[0], k, delta)[0]
    else:
        skipped["lemma1"] = "steps not homogeneous" if not homogeneous else "Lemma 1 requires eps > 0"
    routes["zcdp"] = zcdp_to_dp(mpmath.fsum(e * e for e in steps) / 2, delta)
    if not homogeneous:
        skipped["kov_exact"] = "steps not homogeneous (the exact heterogeneous optimum is #P-hard, Murtagh-Vadhan 2016)"
    elif k > kov_max_steps:
        skipped["kov_exact"] = f"k={k} > kov_max_steps={kov_max_steps}"
    else:
        routes["kov_exact"] = kov_exact_epsilon(steps[0], k, delta)
    route = min(routes, key=lambda name: (routes[name], _ROUTES.index(name)))
    for name in _ROUTES:
        routes.setdefault(name, None)
    return PureCertificate(epsilon=routes[route], delta=delta, route=route, routes=routes, skipped=skipped)


def _certifies(step, k: int, eps, delta, log_inv_delta, use_kov: bool) -> bool:
    """Does some route certify k steps of ε_step = step at (≤ eps, δ)? Monotone in ``step`` (each route is)."""
    if k * step <= eps:
        return True
    if step > 0 and step * mpmath.sqrt(2 * k * log_inv_delta) + k * step * mpmath.expm1(step) <= eps:
        return True
    rho = k * step * step / 2
    if rho + 2 * mpmath.sqrt(rho * log_inv_delta) <= eps:
        return True
    # kov_exact_epsilon returns a value up to 4·2^{−prec} (relative) above the true minimum, so test at a margin
    return use_kov and kov_exact_delta(step, k, eps * (1 - 16 * mpmath.eps)) <= delta


def calibrate_pure_steps(k, eps, delta, *, kov_max_steps: int = DEFAULT_KOV_MAX_STEPS):
    """Largest per-step ε0 whose k-fold composition certify_pure([ε0]*k, δ) certifies ≤ ε; never overshoots.

    Bisection on ε0 over the exact certificate (all four routes; KOV when k ≤ ``kov_max_steps``): the predicate
    "some route certifies ≤ ε" is monotone in ε0, true at 0. Upper end: ε0 = ε is doubled while it still certifies
    (possible only through zCDP/KOV when δ is close to 1). Stops when hi − lo ≤ 4·2^{−prec}·hi; the returned lo is
    then re-verified with ``certify_pure`` and lowered by relative steps of 2^{−prec+8} if rounding requires it.
    ``k`` ≥ 1, ``eps`` > 0, ``delta`` ∈ (0, 1). Returns mpf.
    """
    k = check_int("k", k, minimum=1)
    eps = mpmath.mpf(check_real("eps", eps, positive=True))
    delta = mpmath.mpf(check_probability("delta", delta))
    kov_max_steps = check_int("kov_max_steps", kov_max_steps, minimum=0)
    use_kov = k <= kov_max_steps
    log_inv_delta = -mpmath.log(delta)

    def ok(step):
        return _certifies(step, k, eps, delta, log_inv_delta, use_kov)

    lo, hi = mpmath.mpf(0), eps
    for _ in range(4096):
        if not ok(hi):
            break
        lo, hi = hi, 2 * hi
    else:
        raise AccountingError("calibrate_pure_steps: could not bracket the per-step epsilon")
    tolerance = 4 * mpmath.eps
    for _ in range(4 * mpmath.mp.prec + 64):
        if hi - lo <= tolerance * hi:
            break
        mid = (lo + hi) / 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    for _ in range(64):
        if lo == 0 or certify_pure([lo] * k, delta, kov_max_steps=kov_max_steps).epsilon <= eps:
            return lo
        lo *= 1 - 256 * mpmath.eps
    raise AccountingError("calibrate_pure_steps: the calibrated step does not re-certify")


# ---------------------------------------------------------------------------------------------------
# The ledger


RELEASE_KINDS = ("report_noisy_min", "gaussian")


@dataclasses.dataclass(frozen=True)
class Release:
    """One noisy release. ``batches``: the batches whose records this release depends on (directly or through the
    recursive gradient estimate). ``sensitivity``: centred ℓ_∞ score sensitivity (report-noisy-min) or ℓ2
    sensitivity (Gaussian) for a replace-one change inside any one of those batches; ``scale``: Laplace scale s or
    Gaussian σ. ``cost``: ε0 = 2Δ/s (pure) or μ = Δ/σ (GDP)."""

    kind: str
    sensitivity: mpmath.mpf
    scale: mpmath.mpf
    batches: frozenset
    label: str
    cost: mpmath.mpf


@dataclasses.dataclass(frozen=True)
class BatchCertificate:
    """Certified ε at δ for a record of one batch: the releases it pays for and the route that decided."""

    batch: Hashable
    epsilon: mpmath.mpf
    route: str
    pure_epsilons: tuple
    gaussian_mu: mpmath.mpf
    routes: dict


@dataclasses.dataclass(frozen=True)
class LedgerReport:
    """``certified(eps_target, delta_target)``: the run is (epsilon, delta_target)-DP; ``route`` decided the worst
    batch ``worst_batch``; ``meets_target`` = epsilon ≤ eps_target."""

    epsilon: mpmath.mpf
    delta: mpmath.mpf
    eps_target: mpmath.mpf
    meets_target: bool
    route: str
    worst_batch: Hashable
    per_batch: dict
    composition: str


def _batch_set(batches) -> frozenset:
    if isinstance(batches, (str, bytes)) or not isinstance(batches, Iterable):
        batches = [batches]
    out = frozenset(batches)
    if not out:
        raise ValueError("batches must name at least one batch the release depends on")
    for b in out:
        if not isinstance(b, Hashable):
            raise TypeError(f"batch ids must be hashable, got {type(b).__name__}")
    return out


@dataclasses.dataclass
class Bgm21Ledger:
    """Per-record privacy ledger for bgm21's single-pass algorithms (Algorithms 1 and 6; see module docstring for the
    parallel-composition argument). Record releases, then ask ``certified(eps_target, delta_target)``.
    ``kov_max_steps``: passed to ``certify_pure``."""

    releases: list = dataclasses.field(default_factory=list)
    kov_max_steps: int = DEFAULT_KOV_MAX_STEPS

    def record_report_noisy_min(self, sensitivity, scale, batches, label: str = "") -> Release:
        """Report-noisy-min over scores with centred ℓ_∞ sensitivity Δ and Laplace scale s: ε0 = 2Δ/s
        (``reference.selection.report_noisy_min_epsilon``; bgm21 Algorithm 1 lines 6, 12)."""
        sensitivity = mpmath.mpf(check_real("sensitivity", sensitivity, nonnegative=True))
        scale = mpmath.mpf(check_real("scale", scale, positive=True))
        release = Release("report_noisy_min", sensitivity, scale, _batch_set(batches), str(label), 2 * sensitivity / scale)
        self.releases.append(release)
        return release

    def record_gaussian(self, sensitivity, sigma, batches, label: str = "") -> Release:
        """Gaussian release with ℓ2 sensitivity Δ and noise N(0, σ²I): μ = Δ/σ (bgm21 Algorithm 6)."""
        sensitivity = mpmath.mpf(check_real("sensitivity", sensitivity, nonnegative=True))
        sigma = mpmath.mpf(check_real("sigma", sigma, positive=True))
        release = Release("gaussian", sensitivity, sigma, _batch_set(batches), str(label), sensitivity / sigma)
        self.releases.append(release)
        return release

    def batches(self) -> list:
        seen = []
        for release in self.releases:
            for b in release.batches:
                if b not in seen:
                    seen.append(b)
        return seen

    def _profile(self, batch) -> tuple:
        """What a batch's certificate depends on: the multiset of its pure costs and of its Gaussian costs."""
        pure = sorted(r.cost for r in self.releases if batch in r.batches and r.kind == "report_noisy_min")
        gaussian = sorted(r.cost for r in self.releases if batch in r.batches and r.kind == "gaussian")
        return tuple(pure), tuple(gaussian)

    def _certify_batch(self, batch, delta) -> BatchCertificate:
        pure = tuple(r.cost for r in self.releases if batch in r.batches and r.kind == "report_noisy_min")
        mus = [r.cost for r in self.releases if batch in r.batches and r.kind == "gaussian"]
        mu = mpmath.sqrt(mpmath.fsum(m * m for m in mus)) if mus else mpmath.mpf(0)
        routes = {}
        if pure and not mus:
            cert = certify_pure(pure, delta, kov_max_steps=self.kov_max_steps)
            routes = {f"pure:{name}": value for name, value in cert.routes.items() if value is not None}
        elif mus and not pure:
            routes["gdp_exact"] = gaussian_epsilon(delta, mu)
        else:
            rho = mpmath.fsum(e * e for e in pure) / 2 + mu * mu / 2
            routes["zcdp"] = zcdp_to_dp(rho, delta)
            routes["basic_pure+gdp_exact"] = mpmath.fsum(pure) + gaussian_epsilon(delta, mu)
            half = delta / 2
            routes["pure(delta/2)+gdp_exact(delta/2)"] = (
                certify_pure(pure, half, kov_max_steps=self.kov_max_steps).epsilon + gaussian_epsilon(half, mu)
            )
        route = min(routes, key=lambda name: routes[name])
        return BatchCertificate(batch, routes[route], route, pure, mu, routes)

    def certified(self, eps_target, delta_target) -> LedgerReport:
        """The run is (ε, δ_target)-DP with ε = max over batches of the certified composition of the releases that
        read the batch. Reports the deciding route and whether ε ≤ eps_target."""
        eps_target = mpmath.mpf(check_real("eps_target", eps_target, nonnegative=True))
        delta_target = mpmath.mpf(check_probability("delta_target", delta_target))
        if not self.releases:
            raise ValueError("the ledger holds no release")
        # batches paying for the same costs have the same certificate: certify each distinct cost profile once
        memo: dict = {}
        per_batch = {}
        for batch in self.batches():
            profile = self._profile(batch)
            if profile not in memo:
                memo[profile] = self._certify_batch(batch, delta_target)
            per_batch[batch] = dataclasses.replace(memo[profile], batch=batch)
        worst = max(per_batch.values(), key=lambda c: c.epsilon)
        return LedgerReport(
            epsilon=worst.epsilon,
            delta=delta_target,
            eps_target=eps_target,
            meets_target=bool(worst.epsilon <= eps_target),
            route=worst.route,
            worst_batch=worst.batch,
            per_batch=per_batch,
            composition="parallel over disjoint batches (single pass); within a batch, adaptive composition",
        )
