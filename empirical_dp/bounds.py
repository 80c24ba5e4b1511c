"""Statistical lower bounds on privacy from one threshold (membership) test (docs/audits.md, Bounds).

Sources:
- Kairouz, Oh, Viswanath 2015 (ICML), "The composition theorem for differential privacy", Thm 2.1: a mechanism is
  (ε, δ)-DP iff every test between neighbouring D, D' has FPR + e^ε·FNR ≥ 1 − δ and FNR + e^ε·FPR ≥ 1 − δ.
- Dong, Roth, Su 2022 (JRSS-B), "Gaussian differential privacy": μ-GDP means every test has
  FNR ≥ G_μ(FPR) = Φ(Φ⁻¹(1 − FPR) − μ) (Def. 2.6), and μ-GDP is (ε, δ(ε))-DP for all ε with
  δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) (Cor. 2.13).
- Jagielski, Ullman, Oprea 2020 (NeurIPS) and Nasr et al. 2021 (S&P), "Adversary instantiation": audits count a
  threshold attack's false positives/negatives over independent trials and turn Clopper–Pearson bounds on the two
  error rates into an ε lower bound.
- jax_privacy ``auditing.py`` (CanaryScoreAuditor) as a model of small pure functions, each one fact.

Validity: the ε (and μ) bounds below are decreasing in both error rates, so plugging in *upper* confidence bounds
for FPR and FNR gives a lower bound that holds with probability ≥ ``confidence`` (Bonferroni over the two rates,
each at 1 − (1 − confidence)/2). The threshold must be fixed before the counted trials are drawn (chosen on a
disjoint split); searching thresholds on the counted data voids the confidence (the Jagielski ``compute_results``
pitfall).

Rounding (float64 only; mpmath is not needed for a lower bound computed on the safe side):
- the Clopper–Pearson upper bounds fed into ε and μ are inflated by a relative ``_RATE_INFLATION`` = 1e-12 (SciPy's
  beta quantile, Boost ``ibeta_inv``, is accurate to a few ulps, ~1e-15 relative), so they are never below the
  exact beta quantiles;
- 1 − δ − FNR_u is formed with ``math.fsum`` (one correct rounding) and then stepped one ulp towards 0;
- the final ε or μ is shaved by 8 machine epsilons times the sum of the magnitudes of its terms, which covers the
  ≤ 1 ulp error of each log/quantile and of the subtraction.
Together the reported bound is never larger than the formula's value with exact CP bounds and exact arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm
from statsmodels.stats.proportion import proportion_confint

from reference.fast.conversions import gaussian_epsilon
from reference.validation import check_int, check_probability, check_real

__all__ = [
    "EpsilonLowerBound",
    "GdpMuLowerBound",
    "clopper_pearson_upper",
    "clopper_pearson_lower",
    "epsilon_lower_bound",
    "gdp_mu_lower_bound",
    "gdp_epsilon",
    "epsilon_ceiling",
    "epsilon_ceiling_closed_form",
    "ceiling_table",
]

_RATE_INFLATION = 1e-12
_MACHINE_EPSILON = float(np.finfo(np.float64).eps)


# ---------------------------------------------------------------------------------------------------
# Checks


def _check_count(name: str, count, trials_name: str, trials) -> tuple[int, int]:
    trials = check_int(trials_name, trials, minimum=1)
    count = check_int(name, count, minimum=0)
    if count > trials:
        raise ValueError(f"{name} must be <= {trials_name} (= {trials}), got {count}")
    return count, trials


def _check_one_sided_confidence(confidence) -> float:
    # The one-sided bound is one end of the two-sided interval at α = 2(1 − confidence), which needs α < 1.
    confidence = check_real("confidence", confidence)
    if not 0.5 < confidence < 1:
        raise ValueError(f"confidence must lie in (0.5, 1), got {confidence}")
    return confidence


def _check_delta(delta) -> float:
    return check_probability("delta", delta, open_left=False)  # δ = 0 is pure DP


# ---------------------------------------------------------------------------------------------------
# Clopper–Pearson


def clopper_pearson_upper(count, trials, confidence):
    """One-sided Clopper–Pearson upper bound p_u on a binomial rate: P(p ≤ p_u) ≥ confidence.

    count: successes k; trials: n; confidence: 1 − α, in (0.5, 1).
    The upper end of the two-sided exact (beta) interval at level 2·(1 − confidence) is the beta quantile
    B⁻¹(confidence; k + 1, n − k), i.e. the one-sided bound (and 1 when k = n); statsmodels computes it.
    For k = 0 it is 1 − (1 − confidence)^{1/n}.
    """
    count, trials = _check_count("count", count, "trials", trials)
    confidence = _check_one_sided_confidence(confidence)
    _, upper = proportion_confint(count, trials, alpha=2 * (1 - confidence), method="beta")
    return float(upper)


def clopper_pearson_lower(count, trials, confidence):
    """One-sided Clopper–Pearson lower bound p_l on a binomial rate: P(p ≥ p_l) ≥ confidence.

    The lower end of the two-sided beta interval at level 2·(1 − confidence): B⁻¹(1 − confidence; k, n − k + 1)
    (0 when k = 0; (1 − confidence)^{1/n} when k = n).
    """
    count, trials = _check_count("count", count, "trials", trials)
    confidence = _check_one_sided_confidence(confidence)
    lower, _ = proportion_confint(count, trials, alpha=2 * (1 - confidence), method="beta")
    return float(lower)


def _inflated_upper(count: int, trials: int, confidence: float) -> float:
    """CP upper bound rounded up (module docstring, Rounding)."""
    return min(1.0, clopper_pearson_upper(count, trials, confidence) * (1 + _RATE_INFLATION))


def _shave(value: float, *terms: float) -> float:
    """value minus a margin covering ≤ 1 ulp of error in each term and in the combination (module docstring)."""
    margin = 8 * _MACHINE_EPSILON * (abs(value) + sum(abs(t) for t in terms)) + 1e-300
    return value - margin


# ---------------------------------------------------------------------------------------------------
# (ε, δ)-DP lower bound


@dataclass(frozen=True)
class EpsilonLowerBound:
    """Result of ``epsilon_lower_bound``.

    epsilon_lb: ε_lb, certified with probability ≥ confidence; false_positive_rate / false_negative_rate: the
    observed rates FP/negatives and FN/positives; *_upper: their one-sided CP upper bounds (each at
    1 − (1 − confidence)/2, rounded up); delta: δ; confidence: the joint confidence.
    """

    epsilon_lb: float
    false_positive_rate: float
    false_negative_rate: float
    false_positive_rate_upper: float
    false_negative_rate_upper: float
    delta: float
    confidence: float


def _log_ratio_lower(one_minus_delta_terms: tuple[float, float], denominator: float) -> float:
    """log((1 − δ − r)/d) rounded down, or −inf when 1 − δ − r ≤ 0 (module docstring, Rounding)."""
    delta, rate = one_minus_delta_terms
    numerator = math.fsum((1.0, -delta, -rate))
    if not numerator > 0:
        return -math.inf
    numerator = float(np.nextafter(numerator, 0.0))
    if numerator <= 0:
        return -math.inf
    log_num, log_den = math.log(numerator), math.log(denominator)
    return _shave(log_num - log_den, log_num, log_den)


def epsilon_lower_bound(false_positives, negatives, false_negatives, positives, delta, confidence):
    """ε lower bound for (ε, δ)-DP certified by one fixed threshold test (Kairouz–Oh–Viswanath Thm 2.1).

    false_positives: FP, test says D' on a sample drawn under D, out of ``negatives`` trials under D;
    false_negatives: FN, test says D on a sample drawn under D', out of ``positives`` trials under D';
    delta: δ of the (ε, δ) claim; confidence: joint confidence 1 − α, in (0, 1).
    With FPR_u, FNR_u the one-sided CP upper bounds at 1 − α/2 each (Bonferroni),
        ε_lb = max(0, log((1 − δ − FNR_u)/FPR_u), log((1 − δ − FPR_u)/FNR_u)),
    a term counting as 0 when its numerator is ≤ 0. FPR_u, FNR_u > 0 always (the CP upper bound of 0 successes is
    1 − (α/2)^{1/n} > 0), so nothing divides by 0.
    """
    false_positives, negatives = _check_count("false_positives", false_positives, "negatives", negatives)
    false_negatives, positives = _check_count("false_negatives", false_negatives, "positives", positives)
    delta = _check_delta(delta)
    confidence = check_probability("confidence", confidence)
    per_rate_confidence = 1 - (1 - confidence) / 2  # Bonferroni over the two rates
    fpr_upper = _inflated_upper(false_positives, negatives, per_rate_confidence)
    fnr_upper = _inflated_upper(false_negatives, positives, per_rate_confidence)
    epsilon_lb = max(
        0.0,
        _log_ratio_lower((delta, fnr_upper), fpr_upper),
        _log_ratio_lower((delta, fpr_upper), fnr_upper),
    )
    return EpsilonLowerBound(
        epsilon_lb=epsilon_lb,
        false_positive_rate=false_positives / negatives,
        false_negative_rate=false_negatives / positives,
        false_positive_rate_upper=fpr_upper,
        false_negative_rate_upper=fnr_upper,
        delta=delta,
        confidence=confidence,
    )


# ---------------------------------------------------------------------------------------------------
# Gaussian DP


@dataclass(frozen=True)
class GdpMuLowerBound:
    """Result of ``gdp_mu_lower_bound``: mu_lb (μ_lb) and the same rate fields as ``EpsilonLowerBound``."""

    mu_lb: float
    false_positive_rate: float
    false_negative_rate: float
    false_positive_rate_upper: float
    false_negative_rate_upper: float
    confidence: float


def gdp_mu_lower_bound(false_positives, negatives, false_negatives, positives, confidence):
    """μ lower bound for μ-GDP certified by one fixed threshold test (Dong–Roth–Su Def. 2.6).

    μ-GDP forces FNR ≥ Φ(Φ⁻¹(1 − FPR) − μ), i.e. μ ≥ Φ⁻¹(1 − FPR) − Φ⁻¹(FNR), decreasing in both rates; with
    the Bonferroni CP upper bounds (each at 1 − α/2)
        μ_lb = max(0, Φ⁻¹(1 − FPR_u) − Φ⁻¹(FNR_u)).
    G_μ is symmetric, so swapping the roles of the rates gives the same expression. Φ⁻¹(1 − FPR_u) is taken as
    ``norm.isf(FPR_u)`` (no cancellation in 1 − FPR_u for small rates).
    """
    false_positives, negatives = _check_count("false_positives", false_positives, "negatives", negatives)
    false_negatives, positives = _check_count("false_negatives", false_negatives, "positives", positives)
    confidence = check_probability("confidence", confidence)
    per_rate_confidence = 1 - (1 - confidence) / 2
    fpr_upper = _inflated_upper(false_positives, negatives, per_rate_confidence)
    fnr_upper = _inflated_upper(false_negatives, positives, per_rate_confidence)
    # Both quantiles are finite or −inf here (FPR_u, FNR_u ∈ (0, 1]), so no inf − inf.
    upper_quantile = float(norm.isf(fpr_upper))
    lower_quantile = float(norm.ppf(fnr_upper))
    raw = upper_quantile - lower_quantile
    if not math.isfinite(raw):
        mu_lb = 0.0
    else:
        mu_lb = max(0.0, _shave(raw, upper_quantile, lower_quantile))
    return GdpMuLowerBound(
        mu_lb=mu_lb,
        false_positive_rate=false_positives / negatives,
        false_negative_rate=false_negatives / positives,
        false_positive_rate_upper=fpr_upper,
        false_negative_rate_upper=fnr_upper,
        confidence=confidence,
    )


def gdp_epsilon(mu, delta):
    """ε of μ-GDP at δ: the root of Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) = δ (Dong–Roth–Su Cor. 2.13).

    mu: μ ≥ 0; delta: δ ∈ (0, 1). Delegates to ``reference.fast.conversions.gaussian_epsilon`` (brentq in log ε on
    the Mills-ratio form of log δ); that value is the accountant's, rounded *up* by at most a few ulps. Applied to
    a certified μ_lb (already shaved by ≥ 8 ulps relative) it stays on the safe side up to that ulp-level step.
    Returns 0 when δ ≥ δ_μ(0) = 2Φ(μ/2) − 1.
    """
    mu = check_real("mu", mu, nonnegative=True)
    delta = check_probability("delta", delta)
    return gaussian_epsilon(delta, mu)


# ---------------------------------------------------------------------------------------------------
# Sample-size ceiling


def epsilon_ceiling(trials_per_side, delta, confidence):
    """The largest ε any fixed threshold attack can certify with N = trials_per_side trials per dataset.

    ``epsilon_lower_bound`` is decreasing in both error counts, so its maximum is at perfect separation
    (0 false positives, 0 false negatives); that value is returned (see ``epsilon_ceiling_closed_form``).
    """
    trials_per_side = check_int("trials_per_side", trials_per_side, minimum=1)
    return epsilon_lower_bound(0, trials_per_side, 0, trials_per_side, delta, confidence).epsilon_lb


def epsilon_ceiling_closed_form(trials_per_side, delta, confidence):
    """Closed form of ``epsilon_ceiling``: with α = 1 − confidence and u = 1 − (α/2)^{1/N} (the CP upper bound of
    0 successes in N at confidence 1 − α/2),  ε_max = max(0, log((1 − δ − u)/u)).

    u is formed as −expm1(log(α/2)/N) so it keeps its digits for large N; for large N, ε_max ≈ log(N/log(2/α)).
    Plain float64 (no safe-side rounding): a check on ``epsilon_ceiling``, not a certificate.
    """
    trials_per_side = check_int("trials_per_side", trials_per_side, minimum=1)
    delta = _check_delta(delta)
    confidence = check_probability("confidence", confidence)
    u = -math.expm1(math.log((1 - confidence) / 2) / trials_per_side)
    numerator = 1 - delta - u
    if numerator <= 0:
        return 0.0
    return max(0.0, math.log(numerator) - math.log(u))


def ceiling_table(trial_counts: Iterable, delta, confidence) -> pd.DataFrame:
    """``epsilon_ceiling`` for each N in trial_counts: columns trials_per_side, rate_upper (u), epsilon_ceiling."""
    delta = _check_delta(delta)
    confidence = check_probability("confidence", confidence)
    if isinstance(trial_counts, (str, bytes)) or not isinstance(trial_counts, Iterable):
        raise TypeError(f"trial_counts must be an iterable of integers, got {type(trial_counts).__name__}")
    counts = [check_int(f"trial_counts[{i}]", n, minimum=1) for i, n in enumerate(trial_counts)]
    if not counts:
        raise ValueError("trial_counts must not be empty")
    rows = []
    for n in counts:
        bound = epsilon_lower_bound(0, n, 0, n, delta, confidence)
        rows.append({"trials_per_side": n, "rate_upper": bound.false_positive_rate_upper,
                     "epsilon_ceiling": bound.epsilon_lb})
    return pd.DataFrame(rows, columns=["trials_per_side", "rate_upper", "epsilon_ceiling"])
