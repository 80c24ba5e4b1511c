"""One-run auditing of f-DP, Gaussian-DP case (docs/audits.md, Bounds).

Source: Mahloujifar, Melis, Chaudhuri 2024 (ICML 2025), "Auditing f-Differential Privacy in One Run",
arXiv 2410.22235: the reconstruction-game test with abstentions, the procedure the paper's code calls
``audit_rh_with_cap`` (third-party implementations label it the paper's Algorithm 3; jax_privacy
``auditing.py`` implements it as ``_epsilon_one_run_fdp``). The setting is the one of
empirical_dp/one_run.py (Steinke–Nasr–Jagielski 2023): m canaries, each included by a fair coin, r ≤ m
guesses after one run, v of them correct.

The test. Let f be the hypothesised trade-off function and f̄(x) = 1 − f(x) its "blow-up" (the largest
true-positive rate at false-positive rate x); write f̄⁻¹ for its inverse. For a significance τ start from
    r_v = τ·v/m,   h_v = τ·(r − v)/m
and for i = v − 1, …, 0
    h_i = max(h_{i+1}, f̄⁻¹(r_{i+1})),   r_i = r_{i+1} + i/(r − i) · (h_i − h_{i+1}).
If the mechanism is f-DP in each canary and P[W ≥ v] ≥ τ then r_0 + h_0 ≤ r/m; so r_0 + h_0 > r/m
rejects the hypothesis at level τ (P[W ≥ v] < τ). This statement and the recursion are as implemented
by jax_privacy (``_epsilon_one_run_fdp``) and Meta's privacy_guard (``audit_rh_with_cap``); the paper's own
theorem/algorithm numbering could not be checked against its text here.

For μ-GDP, f_μ(x) = Φ(Φ⁻¹(1 − x) − μ), so f̄_μ(x) = Φ(Φ⁻¹(x) + μ) and f̄_μ⁻¹(y) = Φ(Φ⁻¹(y) − μ).

Implementation notes:
- r_i is capped at 1 (it is a probability mass; jax_privacy does the same), which keeps Φ⁻¹ finite;
- once h does not move, neither h nor r moves again, so the loop stops there (as in jax_privacy);
- rejection needs r_0 + h_0 > (r/m)·(1 + 1e-9): float rounding in the O(v) recursion (Φ, Φ⁻¹ via
  scipy.special.ndtr/ndtri, a few ulps each) is far below that margin, so it cannot create a rejection;
- the μ search is a bisection keeping p(lo) rejected, p(hi) not, and returns lo (never overshoots).
  jax_privacy uses brentq at xtol 1e-6, which may land on either side.

Relation to the ε-DP bound (checked numerically in tests/test_one_run_fdp.py, not a stated theorem): with
the ε-DP trade-off f̄⁻¹(y) = max(e^{−ε}y, 1 − e^{ε}(1 − y)), when every guess is correct (v = r) the test rejects when
q^r < τ, q = e^ε/(1 + e^ε): the Steinke–Nasr–Jagielski binomial bound. For v < r it was
slightly more conservative than that bound for pure ε-DP in every case checked (its gain is for curved
trade-offs such as Gaussian DP).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy.special import ndtr, ndtri

from reference.validation import check_int, check_probability, check_real

__all__ = [
    "fdp_one_run_rejects",
    "gaussian_blow_up_inverse",
    "one_run_gdp_p_value",
    "one_run_gdp_mu_lower_bound",
]

_REJECTION_MARGIN = 1e-9  # relative margin on r/m (module docstring)
_MU_TOLERANCE = 1e-10  # bisection on μ stops when hi − lo ≤ this
_MU_SEARCH_CAP = 64.0  # Φ(Φ⁻¹(y) − μ) underflows to 0 for y < 1 long before this
_SIGNIFICANCE_FLOOR = 1e-300  # smallest τ tried by the p-value search
_LOG_TAU_TOLERANCE = 1e-9  # bisection on log τ stops at this relative width


# ---------------------------------------------------------------------------------------------------
# Checks


def _check_counts(correct, guesses, canaries) -> tuple[int, int, int]:
    guesses = check_int("guesses", guesses, minimum=1)
    correct = check_int("correct", correct, minimum=0)
    canaries = check_int("canaries", canaries, minimum=1)
    if correct > guesses:
        raise ValueError(f"correct must be <= guesses (= {guesses}), got {correct}")
    if canaries < guesses:
        raise ValueError(f"canaries must be >= guesses (= {guesses}): at most one guess per canary, got {canaries}")
    return correct, guesses, canaries


# ---------------------------------------------------------------------------------------------------
# Trade-off function


def gaussian_blow_up_inverse(mu: float) -> Callable[[float], float]:
    """f̄_μ⁻¹(y) = Φ(Φ⁻¹(y) − μ), the inverse of y = 1 − f_μ(x), f_μ(x) = Φ(Φ⁻¹(1 − x) − μ) (μ-GDP).

    mu: μ ≥ 0, the Gaussian-DP parameter of the hypothesis.
    """
    mu = check_real("mu", mu, nonnegative=True)
    return lambda y: float(ndtr(ndtri(y) - mu))


# ---------------------------------------------------------------------------------------------------
# The test


def fdp_one_run_rejects(correct, guesses, canaries, blow_up_inverse, significance) -> bool:
    """Whether v correct guesses out of r (m canaries) reject "f-DP" at level τ.

    Mahloujifar–Melis–Chaudhuri 2024 (arXiv 2410.22235), the abstention test ``audit_rh_with_cap``
    (module docstring): r_v = τv/m, h_v = τ(r − v)/m; for i = v − 1 … 0,
    h_i = max(h_{i+1}, f̄⁻¹(r_{i+1})), r_i = min(1, r_{i+1} + i/(r − i)·(h_i − h_{i+1}));
    reject iff r_0 + h_0 > r/m (with the relative rounding margin 1e-9).

    correct: v; guesses: r ≥ 1; canaries: m ≥ r; blow_up_inverse: f̄⁻¹, increasing map [0, 1] → [0, 1]
    (e.g. ``gaussian_blow_up_inverse(mu)``); significance: τ ∈ (0, 1].
    """
    correct, guesses, canaries = _check_counts(correct, guesses, canaries)
    significance = check_probability("significance", significance, open_right=False)
    if not callable(blow_up_inverse):
        raise TypeError(f"blow_up_inverse must be callable, got {type(blow_up_inverse).__name__}")
    mass_correct = significance * correct / canaries  # r_v
    mass_wrong = significance * (guesses - correct) / canaries  # h_v
    for i in range(correct - 1, -1, -1):
        new_mass_wrong = max(mass_wrong, blow_up_inverse(mass_correct))
        if new_mass_wrong == mass_wrong:  # a fixed point: nothing changes for smaller i
            break
        # i < v ≤ r, so r − i ≥ 1.
        mass_correct = min(1.0, mass_correct + i / (guesses - i) * (new_mass_wrong - mass_wrong))
        mass_wrong = new_mass_wrong
    return mass_correct + mass_wrong > (guesses / canaries) * (1 + _REJECTION_MARGIN)


# ---------------------------------------------------------------------------------------------------
# p-value and μ lower bound


def one_run_gdp_p_value(correct, guesses, canaries, mu):
    """Upper bound on P[W ≥ v] under μ-GDP: the smallest level τ at which the test rejects.

    p = inf{τ ∈ (0, 1] : fdp_one_run_rejects(v, r, m, f̄_μ⁻¹, τ)} (Mahloujifar–Melis–Chaudhuri 2024,
    arXiv 2410.22235, ``audit_rh_with_cap`` read as a p-value), by bisection on log τ over [1e-300, 1] to
    relative width 1e-9. The upper end of the final bracket is returned: a level at which the test
    rejects, hence a valid bound. Returns 1.0 when even τ = 1 is not rejected (e.g. v = 0).

    correct: v; guesses: r ≥ 1; canaries: m ≥ r; mu: μ ≥ 0.
    """
    correct, guesses, canaries = _check_counts(correct, guesses, canaries)
    blow_up_inverse = gaussian_blow_up_inverse(mu)

    def rejected(significance: float) -> bool:
        return fdp_one_run_rejects(correct, guesses, canaries, blow_up_inverse, significance)

    if not rejected(1.0):
        return 1.0
    if rejected(_SIGNIFICANCE_FLOOR):
        return _SIGNIFICANCE_FLOOR
    log_lower, log_upper = math.log(_SIGNIFICANCE_FLOOR), 0.0  # rejected at the upper end only
    while log_upper - log_lower > _LOG_TAU_TOLERANCE:
        log_middle = 0.5 * (log_lower + log_upper)
        if log_middle <= log_lower or log_middle >= log_upper:  # bracket at float resolution
            break
        if rejected(math.exp(log_middle)):
            log_upper = log_middle
        else:
            log_lower = log_middle
    return min(1.0, math.exp(log_upper))


def one_run_gdp_mu_lower_bound(correct, guesses, canaries, confidence=0.95):
    """Largest μ at which v correct guesses out of r (m canaries) reject μ-GDP at level α = 1 − confidence.

    μ_lb = sup{μ ≥ 0 : fdp_one_run_rejects(v, r, m, f̄_μ⁻¹, α)} (Mahloujifar–Melis–Chaudhuri 2024,
    arXiv 2410.22235; jax_privacy ``_epsilon_one_run_fdp`` searches the same set in ε), by bisection to a
    bracket width of 1e-10; the lower end of the final bracket, at which the test rejects, is returned.
    Returns 0.0 when even μ = 0 is not rejected.

    correct: v; guesses: r ≥ 1; canaries: m ≥ r; confidence: 1 − α ∈ (0, 1).
    """
    correct, guesses, canaries = _check_counts(correct, guesses, canaries)
    confidence = check_probability("confidence", confidence)
    significance = 1 - confidence

    def rejected(mu: float) -> bool:
        return fdp_one_run_rejects(correct, guesses, canaries, gaussian_blow_up_inverse(mu), significance)

    if not rejected(0.0):
        return 0.0
    lower, upper = 0.0, 1.0
    while rejected(upper):  # double until the bracket holds the crossing
        lower, upper = upper, 2 * upper
        if upper > _MU_SEARCH_CAP:
            # Unreachable: f̄_μ⁻¹(y) = 0 in float64 for y < 1 and μ > 40, so h never moves.
            raise RuntimeError(f"one-run μ search did not find a non-rejected μ below {_MU_SEARCH_CAP}")
    while upper - lower > _MU_TOLERANCE:
        middle = 0.5 * (lower + upper)
        if middle <= lower or middle >= upper:
            break
        if rejected(middle):
            lower = middle
        else:
            upper = middle
    return lower
