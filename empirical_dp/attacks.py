"""Distinguishing attacks: score functions mapping mechanism outputs (trials, k) to scores (trials,) (docs/audits.md,
Attacks). A high score means "the output came from D'".

Sources:
- Neyman–Pearson lemma (e.g. Dong, Roth, Su 2022 §2.1): thresholding the log-likelihood ratio is the most
  powerful test at every level, so ``likelihood_ratio_score`` gives the tight trade-off curve when the law is known.
- Jagielski, Ullman, Oprea 2020 (NeurIPS) §4 and Nasr et al. 2021 (S&P): projections of the output on the canary
  direction as the membership score.
- Bichsel et al. 2021 (S&P), DP-Sniper §5: a logistic-regression classifier trained on outputs of D and D' as a
  near-optimal threshold attack when the law is unknown.

The threshold on a score is chosen elsewhere (``empirical_dp.audit``), on a split disjoint from the counted one;
a learned attack must likewise be trained on outputs not used for selection or counting.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import statsmodels.api as sm

from reference.validation import check_array

__all__ = ["likelihood_ratio_score", "projection_score", "logistic_score"]

Score = Callable[[np.ndarray], np.ndarray]


def _check_outputs(outputs, dimension: int | None = None) -> np.ndarray:
    outputs = check_array("outputs", outputs, ndim=2)
    if dimension is not None and outputs.shape[1] != dimension:
        raise ValueError(f"outputs must have shape (trials, {dimension}), got {outputs.shape}")
    return outputs


def likelihood_ratio_score(scenario) -> Score:
    """The Neyman–Pearson score log dP_{D'}/dP_D(x) of a scenario whose law is known.

    scenario: an ``empirical_dp.scenarios.Scenario`` with ``log_likelihood_ratio`` set (else ValueError).
    """
    log_likelihood_ratio = getattr(scenario, "log_likelihood_ratio", None)
    if log_likelihood_ratio is None:
        raise ValueError(f"scenario {getattr(scenario, 'name', scenario)!r} has no known log_likelihood_ratio; "
                         "use projection_score or logistic_score")

    def score(outputs):
        return np.asarray(log_likelihood_ratio(_check_outputs(outputs)), dtype=np.float64)

    return score


def projection_score(direction) -> Score:
    """Score ⟨x, v⟩ for a fixed direction v (k,) (the canary direction in Jagielski et al. 2020)."""
    direction = check_array("direction", direction, ndim=1)
    if direction.size == 0 or not np.any(direction):
        raise ValueError("direction must be a non-empty, non-zero vector")
    direction = np.asarray(direction, dtype=np.float64)

    def score(outputs):
        return _check_outputs(outputs, direction.size) @ direction

    return score


def logistic_score(train_a, train_b) -> Score:
    """A logistic-regression score (DP-Sniper §5) fitted on outputs train_a (from D, label 0) and train_b (from D',
    label 1), each (n, k); the score is the fitted linear predictor β₀ + ⟨β, x⟩ (monotone in P(D' | x)).

    Fitted by ``statsmodels.api.Logit`` (Newton, no regularisation); perfectly separable training data raises
    statsmodels' PerfectSeparationError/Warning rather than returning an infinite score.
    """
    train_a = check_array("train_a", train_a, ndim=2)
    train_b = check_array("train_b", train_b, ndim=2)
    if train_a.shape[1] != train_b.shape[1]:
        raise ValueError(f"train_a and train_b must have the same number of columns, got {train_a.shape[1]} "
                         f"and {train_b.shape[1]}")
    if len(train_a) < 2 or len(train_b) < 2:
        raise ValueError("train_a and train_b must each have at least 2 rows")
    features = sm.add_constant(np.vstack([train_a, train_b]), has_constant="add")
    labels = np.concatenate([np.zeros(len(train_a)), np.ones(len(train_b))])
    coefficients = np.asarray(sm.Logit(labels, features).fit(disp=0).params, dtype=np.float64)
    dimension = train_a.shape[1]

    def score(outputs):
        outputs = _check_outputs(outputs, dimension)
        return coefficients[0] + outputs @ coefficients[1:]

    return score
