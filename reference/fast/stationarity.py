"""zo_o2nc §2, Definition 2.1: the minimum-norm point of a convex hull of gradients — fast twin of
``reference.stationarity.min_norm_point`` by non-negative least squares.

Same signature, inputs, refusals and result (``MinNormPoint`` with the same certified interval) as the reference;
a different solver. The reference runs Wolfe's algorithm (1976) in Python; this twin reduces the problem to one
non-negative least-squares problem solved by SciPy's Lawson–Hanson active-set method (compiled):

    u* = argmin_{u ≥ 0} ‖ [Gᵀ; 1ᵀ] u − e_{d+1} ‖²,        λ = u*/Σ_i u*_i.

Why λ is the min-norm weights: write u = t·w with t ≥ 0 and w in the simplex; the objective is t²‖Gᵀw‖² + (t − 1)².
For fixed t it is smallest at the min-norm weights w* (‖Gᵀw*‖ = ν, the hull's minimum norm), and then at
t = 1/(1 + ν²); so u* = w*/(1 + ν²) and λ = w* (Lawson & Hanson, *Solving Least Squares Problems*, 1974, ch. 23,
use the same device for least-distance programming). The problem is solved on the rows scaled by a power of two
(``reference.stationarity.scale_rows``), where the last row of ones is of the same size as the gradients.

The certified interval is computed from λ by ``reference.stationarity.certify_min_norm_point``, the reference's
own certificate (duality bound below, the point's norm above, rounding allowances): it holds for any weights in
the simplex, so the twin's solver only decides how narrow the interval is, and the claims of
proofs_checks/claims/zo_o2nc/stationarity.py check that it is as narrow as the reference promises.

``max_iterations`` caps the Lawson–Hanson iterations (SciPy's ``maxiter``); a run that reaches the cap returns the
shortest row (a vertex of the hull) with its certified, wide interval and ``converged`` False, as Wolfe's
algorithm does when stopped early. ``iterations`` is the size of the final support: each Lawson–Hanson outer
iteration adds one index, so it is a lower bound on the iterations made (SciPy does not report the count).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from reference.stationarity import (
    DEFAULT_TOLERANCE,
    MinNormPoint,
    certify_min_norm_point,
    check_min_norm_inputs,
    scale_rows,
    stop_gap,
)

__all__ = ["MinNormPoint", "min_norm_point", "DEFAULT_TOLERANCE"]


def _nnls_weights(scaled: np.ndarray, max_iterations: int) -> tuple[np.ndarray, int]:
    """The min-norm weights of the hull of the rows of ``scaled`` (k, d), and the support size; the shortest row
    when the solver reaches ``max_iterations``."""
    k, d = scaled.shape
    system = np.vstack([scaled.T, np.ones((1, k))])
    target = np.zeros(d + 1)
    target[d] = 1.0
    try:
        u, _ = optimize.nnls(system, target, maxiter=max_iterations)
    except RuntimeError:  # "Maximum number of iterations reached."
        u = None
    if u is None or not np.any(u > 0):
        weights = np.zeros(k)
        weights[int(np.argmin(np.einsum("ij,ij->i", scaled, scaled)))] = 1.0
        return weights, max_iterations
    return u / u.sum(), int(np.count_nonzero(u > 0))


def min_norm_point(
    gradients, *, tolerance: float = DEFAULT_TOLERANCE, max_iterations: int | None = None
) -> MinNormPoint:
    """The minimum-norm point of the convex hull of the rows of ``gradients``, with a certified interval
    (``reference.stationarity.min_norm_point``'s contract; solver: non-negative least squares, see the module
    docstring).

    Args:
        gradients: (k, d) array of finite float64 values, k ≥ 1 rows g_i, d ≥ 1.
        tolerance: target for the duality gap relative to max_i ‖g_i‖ (0 < tolerance ≤ 1/2); it decides
            ``converged`` only: the solver runs to its own optimality test.
        max_iterations: cap on the Lawson–Hanson iterations (default 10·(k + d) + 100).
    """
    gradients, tolerance, max_iterations = check_min_norm_inputs(gradients, tolerance, max_iterations)
    scaled, _ = scale_rows(gradients)
    weights, iterations = _nnls_weights(scaled, max_iterations)
    return certify_min_norm_point(gradients, weights, stop_gap(scaled, tolerance), iterations)
