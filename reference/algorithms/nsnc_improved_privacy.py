"""nsnc_improved Proposition 2.5: the noise of the tree mechanism, as printed, corrected and exact.

Kornowski, Liu, Talwar — *Improved Sample Complexity for Private Nonsmooth Nonconvex Optimization*
(ICML 2025). Proposition 2.5 calibrates the tree mechanism by σ = 4s√(log Σ·log(1/δ))/ε for a tree of Σ
leaves whose increments have sensitivity s. As printed it gives σ = 0 at Σ = 1 (erratum nsnc_improved.E3):

* ``nsnc_tree_sigma``: the corrected rule, log(max(Σ, 2)); ``nsnc_tree_sigma_as_printed`` refuses Σ = 1;
* ``nsnc_tree_mu``: the exact Gaussian-DP μ of one tree with noise σ (a record lies in bitlen(Σ) nodes);
* ``nsnc_tree_gdp_sigma``: the exact Gaussian-DP calibration, σ = s√bitlen(Σ)/μ*(ε, δ) (not the paper's).

Scalars are mpmath numbers computed at the caller's working precision
(``reference.precision.working_precision``).
"""

from __future__ import annotations

import mpmath

from ..accounting.gaussian import gaussian_mu
from ..validation import check_int
from ._privacy_common import mp_delta, mp_positive

__all__ = ["nsnc_tree_sigma", "nsnc_tree_sigma_as_printed", "nsnc_tree_mu", "nsnc_tree_gdp_sigma"]


def nsnc_tree_sigma(sensitivity, tree_size, epsilon, delta):
    """nsnc_improved Proposition 2.5, corrected: σ = 4s√(log(max(Σ, 2))·log(1/δ))/ε (erratum nsnc_improved.E3).

    sensitivity: s, the sensitivity of each tree increment (for every auxiliary input). tree_size:
    Σ, the number of leaves of one tree (period length). The printed σ = 4s√(log Σ·log(1/δ))/ε is 0
    at Σ = 1 (``nsnc_tree_sigma_as_printed`` refuses it); log(max(Σ, 2)) is our repair. The
    result is (ε, δ)-DP: exactly, it gives μ = s√bitlen(Σ)/σ and δ_GDP(ε; μ) ≤ 1.5e-3·δ/2 for
    Σ ≤ 10^6, ε ∈ [0.01, 10], δ ∈ [1e-10, 1e-2] (tests/test_accounting_calibration.py).
    """
    s = mp_positive("sensitivity", sensitivity)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    eps = mp_positive("epsilon", epsilon)
    delta = mp_delta("delta", delta)
    return 4 * s * mpmath.sqrt(mpmath.log(max(tree_size, 2)) * mpmath.log(1 / delta)) / eps


def nsnc_tree_sigma_as_printed(sensitivity, tree_size, epsilon, delta):
    """nsnc_improved Proposition 2.5 as printed: σ = 4s√(log Σ·log(1/δ))/ε; refuses Σ = 1 (σ = 0, nsnc_improved.E3)."""
    tree_size = check_int("tree_size", tree_size, minimum=1)
    if tree_size == 1:
        raise ValueError("tree_size must be >= 2 for the printed Proposition 2.5 (log 1 = 0 gives sigma = 0, erratum nsnc_improved.E3)")
    return nsnc_tree_sigma(sensitivity, tree_size, epsilon, delta)


def nsnc_tree_mu(sensitivity, tree_size, sigma):
    """Exact GDP of one tree (nsnc_improved Proposition 2.5's mechanism): μ = s·√bitlen(Σ)/σ.

    A record lives in one leaf; the leaf lies in at most bitlen(Σ) = ⌊log2 Σ⌋ + 1 released nodes,
    each a Gaussian mechanism with sensitivity ≤ s and noise σ (adaptive GDP composition is tight).
    """
    s = mp_positive("sensitivity", sensitivity)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    sigma = mp_positive("sigma", sigma)
    return s * mpmath.sqrt(tree_size.bit_length()) / sigma


def nsnc_tree_gdp_sigma(sensitivity, tree_size, epsilon, delta):
    """Exact-GDP tree calibration (not the paper's; accountant "gdp"): σ = s√bitlen(Σ)/μ*(ε, δ)."""
    s = mp_positive("sensitivity", sensitivity)
    tree_size = check_int("tree_size", tree_size, minimum=1)
    eps = mp_positive("epsilon", epsilon)
    delta = mp_delta("delta", delta)
    return s * mpmath.sqrt(tree_size.bit_length()) / gaussian_mu(eps, delta)
