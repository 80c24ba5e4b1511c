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


# ---------------------------------------------------------------------------------------------------
# spider_sosp Definitions 1.1 and 1.2: second-order stationarity — twins of reference.stationarity's sosp_level and
# is_sosp, vectorized over points. One point (gradient (d,), hessian (d, d)): the reference's refusals, operations
# and result (a float, a bool), bit for bit. Extension: leading axes, gradient (..., d) and hessian (..., d, d),
# give an array of levels or of decisions, one per point (e.g. a whole trajectory), each equal to the reference's
# value at that point (every step is per point: per-row norm with the reference's scaling rule, LAPACK per matrix).

from reference.validation import check_array, check_real  # noqa: E402 — appended section

__all__ += ["sosp_level", "is_sosp"]

_U = 2.0**-53


def _rounding_gamma(n: int) -> float:
    """γ_n = nu/(1 − nu), the relative rounding bound of a length-n sum of products (the reference's allowance)."""
    nu = n * _U
    if nu >= 0.5:
        raise ValueError(f"problem too large for the float64 rounding bound (n = {n})")
    return nu / (1.0 - nu)


def _float_input(name: str, value, shape_rule) -> np.ndarray:
    """check_array in the reference's order — shape, then finiteness, then the refusal of mpmath (object) arrays."""
    arr = check_array(name, value, finite=False)
    shape_rule(arr)
    arr = check_array(name, arr)
    if arr.dtype == object:
        raise TypeError(f"{name} must be float64 (this module computes in float64); convert mpmath values with "
                        "reference.precision.to_float")
    return arr


def _check_float(name: str, value, **rules) -> float:
    value = check_real(name, value, **rules)
    if not isinstance(value, float):
        raise TypeError(f"{name} must be a float64 number (this module computes in float64); convert mpmath values "
                        "with reference.precision.to_float")
    return value


def _gradient_shape(arr: np.ndarray) -> None:
    if arr.ndim < 1:
        raise ValueError(f"gradient must have 1 dimension(s) (or shape (..., d) for several points), got shape "
                         f"{arr.shape}")


def _sosp_arrays(gradient, hessian, rho):
    """The checked gradients (k, d), symmetrised Hessians (k, d, d), ρ, and the leading shape of the points."""
    gradient = _float_input("gradient", gradient, _gradient_shape)
    d = gradient.shape[-1]
    if d < 1:
        raise ValueError("gradient must have at least one entry (dimension d >= 1)")
    want = (*gradient.shape, d)

    def hessian_shape(arr):
        if arr.shape != want:
            raise ValueError(f"hessian must have shape ({', '.join(map(str, want))}), got {arr.shape}")

    hessian = _float_input("hessian", hessian, hessian_shape)
    rho = _check_float("rho", rho, positive=True)
    leading = gradient.shape[:-1]
    gradients = gradient.reshape(-1, d)
    hessians = hessian.reshape(-1, d, d)
    # eigvalsh reads one triangle: an asymmetric matrix would give a silently wrong λ_min, so more asymmetry than
    # the float64 rounding of its entries allows (2γ_d·max|H|, the reference's rule) is refused, point by point
    transposed = np.swapaxes(hessians, -1, -2)
    scale = np.max(np.abs(hessians), axis=(-2, -1), initial=0.0)
    asymmetry = np.max(np.abs(hessians - transposed), axis=(-2, -1), initial=0.0)
    allowance = 2 * _rounding_gamma(max(d, 2)) * scale
    refused = np.flatnonzero(asymmetry > allowance)
    if refused.size:
        i = int(refused[0])
        where = "" if not leading else f" at point {tuple(int(k) for k in np.unravel_index(i, leading))}"
        raise ValueError(f"hessian must be symmetric (max |H - H^T| = {float(asymmetry[i])} exceeds the float64 "
                         f"rounding allowance {float(allowance[i])}){where}")
    return gradients, (hessians + transposed) / 2, rho, leading


def _gradient_norms(rows: np.ndarray) -> np.ndarray:
    """‖g‖ of every row with the reference's rule for one row: √(Σ g_j²) when max|g_j| is 0 or in [2⁻⁵⁰⁰, 2⁵⁰⁰],
    else the row scaled by a power of two (exact) before ``np.linalg.norm``."""
    peaks = np.max(np.abs(rows), axis=1, initial=0.0)
    plain = (peaks == 0) | ((peaks >= 2.0**-500) & (peaks <= 2.0**500))
    with np.errstate(over="ignore", under="ignore"):
        out = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    if not plain.all():
        scaled = ~plain
        exponents = np.frexp(peaks[scaled])[1]
        out[scaled] = np.ldexp(np.linalg.norm(np.ldexp(rows[scaled], -exponents[:, None]), axis=1), exponents)
    return out


def _levels(gradients: np.ndarray, hessians: np.ndarray):
    """(‖∇F‖, λ_min⁻ = max(0, −λ_min)) per point."""
    curvature = np.maximum(0.0, -np.linalg.eigvalsh(hessians)[:, 0]) if hessians.shape[0] else np.zeros(0)
    return _gradient_norms(gradients), curvature


def sosp_level(gradient, hessian, rho):
    """α*(x) = max(‖∇F(x)‖, λ_min⁻(∇²F(x))²/ρ), the smallest α for which x is an α-SOSP (spider_sosp Definition
    1.2): ``reference.stationarity.sosp_level``, and for gradient (..., d), hessian (..., d, d) an array of α*
    over the leading axes (section comment above)."""
    gradients, hessians, rho, leading = _sosp_arrays(gradient, hessian, rho)
    norms, curvature = _levels(gradients, hessians)
    levels = np.maximum(norms, curvature * curvature / rho)
    return float(levels[0]) if np.ndim(gradient) == 1 else levels.reshape(leading)


def is_sosp(gradient, hessian, rho, alpha):
    """‖∇F(x)‖ ≤ α and λ_min⁻² ≤ ρα (spider_sosp Definition 1.2): ``reference.stationarity.is_sosp``, and for
    several points an array of decisions (section comment above)."""
    gradients, hessians, rho, leading = _sosp_arrays(gradient, hessian, rho)
    alpha = _check_float("alpha", alpha, nonnegative=True)
    norms, curvature = _levels(gradients, hessians)
    # the level's own operations: a point is an α-SOSP at its own level (the reference's rule)
    decisions = np.maximum(norms, curvature * curvature / rho) <= alpha
    return bool(decisions[0]) if np.ndim(gradient) == 1 else decisions.reshape(leading)
