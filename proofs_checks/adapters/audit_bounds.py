"""The audit bounds of ``empirical_dp`` as claim subjects: ``epsilon_lower_bound``, ``gdp_mu_lower_bound``,
``epsilon_ceiling`` and ``one_run_epsilon_lower_bound`` (see :mod:`proofs_checks.protocols`).

``empirical_dp.bounds`` returns dataclasses that carry the observed rates and their confidence bounds beside the
certified number; the protocols are the number alone (``epsilon_lb``, ``mu_lb``), so these wrappers return that
field and nothing else. The bounds are float64 SciPy/statsmodels computations with no reference/fast split: the
same functions serve ``reference`` and ``fast`` (``fast_subject`` lists them in ``Subject.borrowed``).
"""

from __future__ import annotations

from collections.abc import Callable

from empirical_dp import bounds, one_run

__all__ = ["implementations"]


def _epsilon_lower_bound(false_positives, negatives, false_negatives, positives, delta, confidence):
    return bounds.epsilon_lower_bound(false_positives, negatives, false_negatives, positives, delta,
                                      confidence).epsilon_lb


def _gdp_mu_lower_bound(false_positives, negatives, false_negatives, positives, confidence):
    return bounds.gdp_mu_lower_bound(false_positives, negatives, false_negatives, positives, confidence).mu_lb


def _epsilon_ceiling(trials_per_side, delta, confidence):
    return bounds.epsilon_ceiling(trials_per_side, delta, confidence)


def _one_run_epsilon_lower_bound(correct, guesses, delta, confidence, canaries):
    return one_run.one_run_epsilon_lower_bound(correct, guesses, delta, confidence, canaries)


_CODE = {
    "epsilon_lower_bound": "empirical_dp.bounds.epsilon_lower_bound(...).epsilon_lb",
    "gdp_mu_lower_bound": "empirical_dp.bounds.gdp_mu_lower_bound(...).mu_lb",
    "epsilon_ceiling": "empirical_dp.bounds.epsilon_ceiling",
    "one_run_epsilon_lower_bound": "empirical_dp.one_run.one_run_epsilon_lower_bound",
}


def implementations() -> dict[str, Callable]:
    """The audit-bound protocols, each returning the certified float (shared by ``reference`` and ``fast``)."""
    found = {
        "epsilon_lower_bound": _epsilon_lower_bound,
        "gdp_mu_lower_bound": _gdp_mu_lower_bound,
        "epsilon_ceiling": _epsilon_ceiling,
        "one_run_epsilon_lower_bound": _one_run_epsilon_lower_bound,
    }
    for name, function in found.items():
        function.__dpref_code__ = _CODE[name]
    return found
