"""Composition of (ε, δ)-DP and pure-DP guarantees (bgm21 Lemma 1; certification of the pure-DP steps of bgm21
Algorithms 1 and 5).

- Basic composition (Dwork–Roth 2014, Thm 3.16): k mechanisms (ε_i, δ_i)-DP compose to (Σε_i, Σδ_i)-DP.
- Advanced composition (Dwork, Rothblum, Vadhan 2010, "Boosting and differential privacy", Thm III.3; Dwork–Roth
  2014, Thm 3.20) = bgm21 Lemma 1: k-fold adaptive composition of (ε, δ)-DP mechanisms is (ε', kδ + δ')-DP with
  ε' = ε√(2k ln(1/δ')) + kε(e^ε − 1). bgm21's printed Lemma 1 is exactly this statement, with the same
  constants and ranges (ε > 0, δ ∈ [0, 1), δ' ∈ (0, 1)), so no separate "as printed" variant is needed.
- Pure DP to zCDP (Bun–Steinke 2016, Prop 1.4): ε-DP ⇒ (ε²/2)-zCDP; zCDP adds up under composition (Lemma 1.7) and
  ρ-zCDP ⇒ (ρ + 2√(ρ ln(1/δ)), δ)-DP (Prop 1.3).
- bgm21 Algorithms 1 and 5: ``certify_pure`` takes the best of the three routes for k pure-DP steps, and
  ``calibrate_pure_steps`` inverts it by bisection without ever overshooting.
All results are mpmath numbers at the caller's working precision.
"""

from __future__ import annotations

from collections.abc import Iterable

import mpmath

from reference.accounting.errors import AccountingError
from reference.validation import check_int, check_probability, check_real

__all__ = [
    "basic_composition",
    "advanced_composition",
    "zcdp_of_pure",
    "certify_pure",
    "certify_equal_steps",
    "calibrate_pure_steps",
]


def _as_list(name: str, values) -> list:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of real numbers, got {type(values).__name__}")
    return list(values)


def basic_composition(epsilons, deltas):
    """Basic composition: (ε_i, δ_i)-DP for i = 1..k compose (adaptively) to (Σ ε_i, min(1, Σ δ_i))-DP.

    Dwork–Roth 2014 Thm 3.16 (and Dwork et al. 2006 for adaptivity). ``epsilons``: ε_i ≥ 0; ``deltas``: δ_i ∈ [0, 1],
    one per ε_i. The δ sum is capped at 1 because every mechanism is (ε, 1)-DP: a sum above 1 certifies nothing more.
    Returns (ε, δ) as mpf (exact sums, mpmath.fsum).
    """
    epsilons, deltas = _as_list("epsilons", epsilons), _as_list("deltas", deltas)
    if len(epsilons) == 0:
        raise ValueError("epsilons must contain at least one mechanism")
    if len(epsilons) != len(deltas):
        raise ValueError(f"epsilons and deltas must have the same length, got {len(epsilons)} and {len(deltas)}")
    eps = [mpmath.mpf(check_real(f"epsilons[{i}]", e, nonnegative=True)) for i, e in enumerate(epsilons)]
    dels = [
        mpmath.mpf(check_probability(f"deltas[{i}]", d, open_left=False, open_right=False)) for i, d in enumerate(deltas)
    ]
    return mpmath.fsum(eps), min(mpmath.mpf(1), mpmath.fsum(dels))


def _advanced_epsilon(epsilon, count, log_inv_delta_slack):
    """ε√(2k ln(1/δ')) + kε(e^ε − 1) (DRV 2010 Thm III.3), with e^ε − 1 as expm1 for small ε."""
    return epsilon * mpmath.sqrt(2 * count * log_inv_delta_slack) + count * epsilon * mpmath.expm1(epsilon)


def advanced_composition(epsilon, delta, count, delta_slack):
    """Advanced composition (DRV 2010 Thm III.3 = bgm21 Lemma 1): returns (ε', δ'') for k-fold adaptive composition.

    ε' = ε√(2k ln(1/δ')) + kε(e^ε − 1),   δ'' = kδ + δ'   (capped at 1; see basic_composition).
    ``epsilon``: per-mechanism ε ≥ 0; ``delta``: per-mechanism δ ∈ [0, 1); ``count``: k ≥ 1;
    ``delta_slack``: δ' ∈ (0, 1). Returns mpf. Note ε' can exceed kε (basic composition) — certify_pure takes the min.
    """
    epsilon = mpmath.mpf(check_real("epsilon", epsilon, nonnegative=True))
    delta = mpmath.mpf(check_probability("delta", delta, open_left=False))
    count = check_int("count", count, minimum=1)
    delta_slack = mpmath.mpf(check_probability("delta_slack", delta_slack))
    epsilon_total = _advanced_epsilon(epsilon, count, -mpmath.log(delta_slack))
    return epsilon_total, min(mpmath.mpf(1), count * delta + delta_slack)


def zcdp_of_pure(epsilon):
    """ε-DP ⇒ (ε²/2)-zCDP (Bun–Steinke 2016 Prop 1.4). ``epsilon`` ≥ 0; returns ρ as mpf."""
    epsilon = mpmath.mpf(check_real("epsilon", epsilon, nonnegative=True))
    return epsilon * epsilon / 2


def _certify_equal_steps(step_epsilon, count, log_inv_delta):
    """certify_pure([ε]*k, δ) in closed form: min{kε; ε√(2k ln 1/δ) + kε(e^ε−1); ρ + 2√(ρ ln 1/δ), ρ = kε²/2}."""
    rho = count * step_epsilon * step_epsilon / 2
    return min(
        count * step_epsilon,
        _advanced_epsilon(step_epsilon, count, log_inv_delta),
        rho + 2 * mpmath.sqrt(rho * log_inv_delta),
    )


def certify_pure(epsilons, delta):
    """Certified ε at total δ for the adaptive composition of pure ε_i-DP steps (bgm21 Algorithms 1 and 5).

    certify_pure(ε_1..ε_k, δ) = min{ Σ ε_i                                   (basic composition, δ not even used),
                                     ε_max√(2k ln(1/δ)) + kε_max(e^{ε_max} − 1)  (advanced composition, δ_i = 0, δ' = δ),
                                     ρ + 2√(ρ ln(1/δ)), ρ = ½ Σ ε_i²          (Bun–Steinke zCDP, simple conversion) },
    and the composition is (certify_pure, δ)-DP. bgm21 Lemma 1 states the advanced route for k equal ε; using
    ε_max = max ε_i gives the same value when all ε_i are equal and stays valid otherwise (every step is ε_max-DP).
    The zCDP route (Bun–Steinke 2016; not in bgm21) uses the simple conversion (the optimal one,
    conversions.epsilon_from_zcdp, would be smaller still).
    ``epsilons``: ε_i ≥ 0 (at least one); ``delta``: δ ∈ (0, 1). Returns mpf.
    """
    epsilons = _as_list("epsilons", epsilons)
    if len(epsilons) == 0:
        raise ValueError("epsilons must contain at least one step")
    eps = [mpmath.mpf(check_real(f"epsilons[{i}]", e, nonnegative=True)) for i, e in enumerate(epsilons)]
    delta = mpmath.mpf(check_probability("delta", delta))
    log_inv_delta = -mpmath.log(delta)
    count = len(eps)
    if all(e == eps[0] for e in eps):
        # the same arithmetic as calibrate_pure_steps, so that its "≤ ε" holds for this function to the last bit
        return _certify_equal_steps(eps[0], count, log_inv_delta)
    rho = mpmath.fsum(e * e for e in eps) / 2
    return min(
        mpmath.fsum(eps),
        _advanced_epsilon(max(eps), count, log_inv_delta),
        rho + 2 * mpmath.sqrt(rho * log_inv_delta),
    )


def certify_equal_steps(step_epsilon, count, delta):
    """``certify_pure([step_epsilon] * count, delta)`` without building the list (k may be 10⁷ or more): the same
    arithmetic, so the two agree to the last bit. ``step_epsilon`` ≥ 0, ``count`` ≥ 1, δ ∈ (0, 1). Returns mpf."""
    step_epsilon = mpmath.mpf(check_real("step_epsilon", step_epsilon, nonnegative=True))
    count = check_int("count", count, minimum=1)
    delta = mpmath.mpf(check_probability("delta", delta))
    return _certify_equal_steps(step_epsilon, count, -mpmath.log(delta))


def calibrate_pure_steps(count, epsilon, delta):
    """Largest per-step ε_step with certify_pure([ε_step]*k, δ) ≤ ε, never overshooting.

    certify_pure([s]*k, δ) is continuous and strictly increasing in s (each of its three routes is), 0 at s = 0 and
    ≤ ks. A bisection on s ∈ (0, ε] needs certify([ε]*k) > ε, which holds except when δ is close to 1 (the zCDP route
    ks²/2 + s√(2k ln(1/δ)) can then be below ε even at s = ε), so the upper end is doubled until certify(hi) > ε —
    the same answer whenever the bracket (0, ε] is valid, the true largest ε_step otherwise. Bisection keeps
    certify(lo) ≤ ε < certify(hi) and stops when hi − lo ≤ 4·2^{−prec}·hi (tighter than a relative 1e-12); returns
    lo, verified. Closed form of the zCDP route alone (for comparison): s = √(2ρ*/k), ρ* = (√(ln(1/δ) + ε) − √ln(1/δ))².
    ``count``: k ≥ 1; ``epsilon``: target ε > 0; ``delta``: δ ∈ (0, 1). Returns mpf.
    """
    count = check_int("count", count, minimum=1)
    epsilon = mpmath.mpf(check_real("epsilon", epsilon, positive=True))
    delta = mpmath.mpf(check_probability("delta", delta))
    log_inv_delta = -mpmath.log(delta)
    lo, hi = mpmath.mpf(0), epsilon
    while _certify_equal_steps(hi, count, log_inv_delta) <= epsilon:
        # Only for δ near 1 (the zCDP route can certify less than the step's own ε); basic composition bounds it.
        lo, hi = hi, 2 * hi
    tolerance = 4 * mpmath.eps
    for _ in range(4 * mpmath.mp.prec + 200):
        if hi - lo <= tolerance * hi:
            return lo
        mid = (lo + hi) / 2
        if _certify_equal_steps(mid, count, log_inv_delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    raise AccountingError("calibrate_pure_steps: bisection did not converge")  # unreachable: width halves each step
