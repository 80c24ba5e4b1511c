"""One-run privacy auditing (docs/audits.md, Bounds).

Source: Steinke, Nasr, Jagielski 2023 (NeurIPS), "Privacy Auditing with One (1) Training Run", arXiv 2305.08846.
m canaries are each included or excluded by an independent fair coin S_i ∈ {−1, +1}; after one run the auditor
makes r ≤ m guesses T_i ∈ {−1, +1} (abstaining on the other m − r) and counts the v correct ones
W = Σ_i max(0, T_i·S_i). The main result (Theorem 3 of arXiv 2305.08846, the general (ε, δ) case; its δ = 0 case
is the simplified statement of §1; the paper's appendix gives it as code, ``p_value_DP_audit`` and
``get_eps_audit``) says that if the mechanism is (ε, δ)-DP in each canary then for every v
    P[W ≥ v] ≤ f(v) + 2mδ · max_{i ∈ {1, …, v}} (f(v − i) − f(v)) / i,
    f(v) := P[Binomial(r, q) ≥ v],   q = e^ε / (1 + e^ε),
so for δ = 0 the correct-guess count is stochastically dominated by Binomial(r, e^ε/(1 + e^ε)). Rejecting
"(ε, δ)-DP" when that bound is ≤ 1 − confidence and reporting the largest rejected ε gives the paper's one-run
ε lower bound (``get_eps_audit``).

Implementation notes, after jax_privacy ``auditing.py`` (``_one_run_p_value``, ``_epsilon_one_run``):
- f(v − i) − f(v) = P[v − i ≤ X ≤ v − 1] is accumulated as a cumulative sum of binomial pmfs (as the paper's
  code and jax_privacy's naive test oracle do), which avoids the cancellation of subtracting two tails; the
  theorem's max over i ≤ m may stop at v because for i > v, f(v − i) − f(v) = 1 − f(v) is constant and the
  quotient only shrinks;
- the bound is capped at 1 (it is a probability bound);
- the ε search is a bisection that keeps a bracket [lo, hi] with p(lo) ≤ α < p(hi) and returns lo, so the
  reported ε is always one at which (ε, δ)-DP is rejected (never overshoots). jax_privacy uses brentq at
  xtol = 1e-6, which may land on either side of the root.

Rounding: scipy's binomial tail (Boost incomplete beta) is accurate to a few ulps relative; a p-value is counted
as a rejection only when p ≤ α·(1 − 1e-9), a margin far above that error, so float64 rounding cannot turn a
non-rejection into a rejection.

Not implemented here: the f-DP refinement (Mahloujifar, Melis, Chaudhuri 2024, arXiv 2410.22235; jax_privacy
``_epsilon_one_run_fdp``).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from scipy.stats import binom

from reference.validation import check_int, check_probability, check_real

__all__ = ["one_run_p_value", "one_run_epsilon_lower_bound"]

_REJECTION_MARGIN = 1e-9  # relative margin on α (module docstring, Rounding)
_EPSILON_TOLERANCE = 1e-10  # bisection stops when hi − lo ≤ this
_EPSILON_SEARCH_CAP = 1024.0  # expit(ε) rounds to 1 for ε > 37, so the tail is 1 long before this


# ---------------------------------------------------------------------------------------------------
# Checks


def _check_counts(correct, guesses) -> tuple[int, int]:
    guesses = check_int("guesses", guesses, minimum=1)
    correct = check_int("correct", correct, minimum=0)
    if correct > guesses:
        raise ValueError(f"correct must be <= guesses (= {guesses}), got {correct}")
    return correct, guesses


def _check_canaries(canaries, guesses: int, delta: float) -> int | None:
    if canaries is None:
        if delta > 0:
            raise ValueError("canaries (m, the number of canaries) is required when delta > 0")
        return None
    canaries = check_int("canaries", canaries, minimum=1)
    if canaries < guesses:
        raise ValueError(f"canaries must be >= guesses (= {guesses}): at most one guess per canary, got {canaries}")
    return canaries


def _check_delta(delta) -> float:
    return check_probability("delta", delta, open_left=False)  # δ = 0 is pure DP


# ---------------------------------------------------------------------------------------------------
# p-value


def one_run_p_value(correct, guesses, epsilon, delta=0.0, canaries=None):
    """Upper bound on P[W ≥ v] under (ε, δ)-DP: the p-value of v correct out of r guesses among m canaries.

    Steinke–Nasr–Jagielski 2023, Theorem 3 (module docstring):
        p = min(1, f(v) + 2mδ · max_{1 ≤ i ≤ v} (f(v − i) − f(v)) / i),   f(k) = P[Binomial(r, q) ≥ k],
        q = e^ε / (1 + e^ε).
    For δ = 0 this is the binomial tail f(v) = ``binom.sf(v − 1, r, q)``.

    correct: v, the number of correct guesses; guesses: r ≥ 1, the number of guesses (abstentions excluded);
    epsilon: ε ≥ 0 of the null hypothesis; delta: δ ∈ [0, 1); canaries: m ≥ r, the number of canaries (required
    when δ > 0, ignored otherwise). v = 0 gives p = 1.
    """
    correct, guesses = _check_counts(correct, guesses)
    epsilon = check_real("epsilon", epsilon, nonnegative=True)
    delta = _check_delta(delta)
    canaries = _check_canaries(canaries, guesses, delta)
    success_probability = float(expit(epsilon))  # q = e^ε/(1 + e^ε), without overflow for large ε
    tail = float(binom.sf(correct - 1, guesses, success_probability))  # f(v) = P[X ≥ v]
    if delta == 0:
        return tail
    # max_i (f(v − i) − f(v))/i with f(v − i) − f(v) = Σ_{k=v−i}^{v−1} P[X = k]: the pmfs at v − 1,
    # v − 2, …, 0 (one vectorized scipy call), summed as i grows.
    i = np.arange(1, correct + 1)
    window_mass = np.cumsum(binom.pmf(correct - i, guesses, success_probability))
    best_ratio = float(np.max(window_mass / i, initial=0.0))
    return min(1.0, tail + 2 * canaries * delta * best_ratio)


# ---------------------------------------------------------------------------------------------------
# ε lower bound


def one_run_epsilon_lower_bound(correct, guesses, delta=0.0, confidence=0.95, canaries=None):
    """Largest ε at which v correct guesses out of r reject (ε, δ)-DP at level α = 1 − confidence.

    ε_lb = sup{ε ≥ 0 : one_run_p_value(v, r, ε, δ, m) ≤ α} (Steinke–Nasr–Jagielski 2023, Theorem 3 read
    as a hypothesis test; the paper's ``get_eps_audit``), computed by bisection to a bracket width of 1e-10;
    the lower end of the final bracket is returned, at which the p-value is ≤ α·(1 − 1e-9) (module docstring).
    Returns 0.0 when even ε = 0 is not rejected — in particular whenever v/r ≤ 1/2 and confidence ≥ 1/2,
    since then P[Binomial(r, 1/2) ≥ v] ≥ 1/2.

    For δ = 0 the p-value is the binomial tail, strictly increasing in q and so in ε, and the bisection finds the
    unique crossing. For δ > 0 the bisection (like jax_privacy's brentq) assumes the crossing is unique; whatever
    it returns is still a point where the p-value is ≤ α.

    correct: v; guesses: r ≥ 1; delta: δ ∈ [0, 1); confidence: 1 − α ∈ (0, 1); canaries: m ≥ r (required
    when δ > 0).
    """
    correct, guesses = _check_counts(correct, guesses)
    delta = _check_delta(delta)
    confidence = check_probability("confidence", confidence)
    canaries = _check_canaries(canaries, guesses, delta)
    threshold = (1 - confidence) * (1 - _REJECTION_MARGIN)

    def rejected(epsilon: float) -> bool:
        return one_run_p_value(correct, guesses, epsilon, delta, canaries) <= threshold

    if not rejected(0.0):
        return 0.0
    lower, upper = 0.0, 1.0
    while rejected(upper):  # double until the bracket holds the crossing
        lower, upper = upper, 2 * upper
        if upper > _EPSILON_SEARCH_CAP:
            # Unreachable for r ≥ 1: expit(ε) = 1.0 for ε > 37, making the tail 1 > α.
            raise RuntimeError(f"one-run ε search did not find a non-rejected ε below {_EPSILON_SEARCH_CAP}")
    while upper - lower > _EPSILON_TOLERANCE:
        middle = 0.5 * (lower + upper)
        if middle <= lower or middle >= upper:  # bracket at float resolution
            break
        if rejected(middle):
            lower = middle
        else:
            upper = middle
    return lower
