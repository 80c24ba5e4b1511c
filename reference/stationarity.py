"""zo_o2nc §2, Definition 2.1 (Goldstein δ-subdifferential) and Corollary 2.3; the stationarity measures of
the proofs of Lemma 4.6 and Corollary 4.7: how far a point is from being Goldstein (δ, ε)-stationary.

Definition 2.1 (zo_o2nc §2). For δ > 0 and the open ball B(x, δ) = {y : ‖x − y‖ < δ},

    ∂_δ h(x) = conv( ∪_{y ∈ B(x, δ)} ∇h(y) ),        ‖∇h(x)‖_δ = inf{ ‖g‖ : g ∈ ∂_δ h(x) },

and x is a Goldstein (δ, ε)-stationary point when ‖∇h(x)‖_δ ≤ ε. The paper states it for differentiable h;
for a nonsmooth Lipschitz F read ∇F(y) as the Clarke subdifferential ∂F(y) (clarification zo_o2nc.E13).
Both readings give the same number: every Clarke subgradient at a point y of the *open* ball is a limit of
convex combinations of gradients at points of differentiability converging to y (Clarke, *Optimization and
Nonsmooth Analysis*, 1983, Thm 2.5.1), which eventually lie in the ball too; so the two hulls have the same
closure, and the infimum of the norm over a convex set equals the minimum over its closure.

What this module computes:

* ``min_norm_point``: the point of smallest norm in the convex hull of finitely many vectors, by Wolfe's
  algorithm (P. Wolfe, "Finding the nearest point in a polytope", Math. Programming 11, 1976), with an
  interval [lower, upper] that provably contains the hull's minimum norm (duality certificate plus a
  floating-point rounding allowance).
* ``goldstein_stationarity``: an upper bound on ‖∇F(x)‖_δ from the gradients at points sampled in the open
  ball (the hull of a subset of ∂_δ F(x) is a subset of ∂_δ F(x), so its minimum norm can only be larger).
* ``exact_goldstein_ridge``: the exact ‖∇F(x)‖_δ and ‖∇F̂_s(x)‖_δ for one ridge F(x) = L·φ(<a, x> − c)
  with ‖a‖ = 1 and the profiles of ``reference.smoothing`` ("abs", "capped", "wshape"); used to test the
  estimator and Corollary 2.3 (‖∇F̂_δ(x)‖_δ ≤ ε implies ‖∇F(x)‖_{2δ} ≤ ε).
* ``proxy_stationarity``: ‖(1/T) Σ_t ∇F̂_δ(w_t)‖, the quantity that the proof of Lemma 4.6 bounds (applied to
  F̂_δ in Corollary 4.7); an upper bound on ‖∇F(w̄)‖_{2δ} when every w_t lies within δ of w̄.
* ``sosp_level`` and ``is_sosp``: second-order stationarity (spider_sosp Definitions 1.1, 1.2): the smallest α for
  which a point is an α-SOSP, α* = max(‖∇F‖, max(0, −λ_min(∇²F))²/ρ), and the test α* ≤ α.

Arithmetic: float64 throughout (these are measurements of float64 iterates). mpmath inputs are refused with a
TypeError rather than rounded silently; convert them with ``reference.precision.to_float``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import optimize

from . import smoothing
from .rng import sample_ball
from .validation import check_array, check_int, check_real

__all__ = [
    "MinNormPoint",
    "GoldsteinEstimate",
    "ProxyStationarity",
    "min_norm_point",
    "certify_min_norm_point",
    "check_min_norm_inputs",
    "scale_rows",
    "stop_gap",
    "goldstein_stationarity",
    "exact_goldstein_ridge",
    "proxy_stationarity",
    "sosp_level",
    "is_sosp",
    "DEFAULT_TOLERANCE",
]

#: Default target for the width of Wolfe's duality gap, relative to the largest row norm.
DEFAULT_TOLERANCE = 1e-12

#: Unit roundoff of float64 (round to nearest): 2^−53.
_UNIT_ROUNDOFF = 2.0**-53

#: Wolfe's tolerance "Z2" on the affine weights: a weight at or below this is treated as non-positive. Zero:
#: a genuinely tiny optimal weight (the nearest point much shorter than the rows) must be kept.
_WEIGHT_FLOOR = 0.0

#: Brent's method tolerances for the critical points: the smallest rtol scipy accepts (4 ulp), no absolute floor.
_BRENT_RTOL = 4 * np.finfo(np.float64).eps
_TINY = np.finfo(np.float64).tiny

#: Number of scan points per smooth piece when locating the critical points of the smoothed ridge slope.
_SCAN_POINTS = 129


def _gamma(n: int) -> float:
    """γ_n = n u / (1 − n u): the classical bound on the relative rounding error of a length-n dot product."""
    nu = n * _UNIT_ROUNDOFF
    if nu >= 0.5:
        raise ValueError(f"problem too large for the float64 rounding bound (n = {n})")
    return nu / (1.0 - nu)


def _norms(rows: np.ndarray) -> np.ndarray:
    """Euclidean norms of the rows of a 2-d array; rows whose squares could overflow or underflow are scaled by
    a power of two first (exact)."""
    peaks = np.max(np.abs(rows), axis=1)
    nonzero = peaks[peaks > 0]
    if nonzero.size == 0 or (nonzero.min() >= 2.0**-500 and nonzero.max() <= 2.0**500):
        return np.sqrt(np.einsum("ij,ij->i", rows, rows))
    exponents = np.frexp(peaks)[1]
    return np.ldexp(np.linalg.norm(np.ldexp(rows, -exponents[:, None]), axis=1), exponents)


def _float_array(name: str, value, **rules) -> np.ndarray:
    """check_array, refusing mpmath (object) arrays: this module computes in float64."""
    arr = check_array(name, value, **rules)
    if arr.dtype == object:
        raise TypeError(
            f"{name} must be float64 (this module computes in float64); "
            "convert mpmath values with reference.precision.to_float"
        )
    return arr


def _check_float(name: str, value, **rules) -> float:
    value = check_real(name, value, **rules)
    if not isinstance(value, float):
        raise TypeError(
            f"{name} must be a float64 number (this module computes in float64); "
            "convert mpmath values with reference.precision.to_float"
        )
    return value


# ---------------------------------------------------------------------------------------------------
# Minimum-norm point of a convex hull: Wolfe's algorithm


@dataclass(frozen=True)
class MinNormPoint:
    """The minimum-norm point of conv{g_1, …, g_k} as found by Wolfe's algorithm, with its certificate.

    Attributes:
        point: (d,) array, Σ_i λ_i g_i (computed in float64).
        norm: ‖point‖ as computed.
        weights: (k,) array λ with λ_i ≥ 0 and Σ_i λ_i = 1 (to rounding); zero off the support.
        lower, upper: a certified interval, lower ≤ min{‖g‖ : g ∈ conv{g_i}} ≤ upper. ``upper`` is ``norm``
            plus a rounding allowance; ``lower`` is the duality bound min_i <g_i, p>/‖p‖ (p = the point, or
            the point re-orthogonalised against its face, whichever is larger) minus one, and 0 when that is
            negative. Both allowances follow the standard model of float64 arithmetic.
        iterations: Wolfe major cycles performed.
        converged: the duality gap (before rounding allowances) is at most ``tolerance`` × the largest row
            norm. A result that did not converge is still a valid interval, only a wider one.
    """

    point: np.ndarray
    norm: float
    weights: np.ndarray
    lower: float
    upper: float
    iterations: int
    converged: bool

    @property
    def gap(self) -> float:
        """upper − lower: how much the certificate leaves open."""
        return self.upper - self.lower

    @property
    def support(self) -> np.ndarray:
        """Indices i with λ_i > 0."""
        return np.flatnonzero(self.weights > 0)


def _affine_minimizer(rows: np.ndarray) -> np.ndarray:
    """Weights α (Σ α_i = 1) of the point of the affine hull of ``rows`` nearest to the origin.

    Writes the affine hull as q_0 + Σ_{i≥1} β_i (q_i − q_0) and solves the least-squares problem
    min_β ‖q_0 + D β‖ (D has columns q_i − q_0) with an SVD-based solver, which stays well defined when the
    rows are affinely dependent to rounding (it then returns the minimum-norm β).
    """
    if rows.shape[0] == 1:
        return np.ones(1)
    base = rows[0]
    differences = (rows[1:] - base).T
    beta = np.linalg.lstsq(differences, -base, rcond=None)[0]
    return np.concatenate(([1.0 - beta.sum()], beta))


def _wolfe(points: np.ndarray, stop_gap: float, max_iterations: int):
    """Wolfe's min-norm-point algorithm on the rows of ``points``; returns (support, weights, iterations).

    The state is a "corral": a set S of affinely independent rows and positive weights λ on S with
    x = Σ_{i∈S} λ_i p_i. Each *major cycle* checks the optimality condition <p_j, x> ≥ ‖x‖² for all j
    (then x is the min-norm point) and otherwise adds the most violating row j = argmin_j <p_j, x>. Each
    *minor cycle* moves x towards the nearest point y of the affine hull of S; if y lies inside conv(S) it
    is accepted, else x moves along [x, y] to the boundary of conv(S) and the rows whose weight reaches zero
    leave S. In exact arithmetic ‖x‖ decreases strictly at every major cycle, so no corral repeats (finite
    termination); in float64 a repeated corral ends the run.
    Stopping rule: the duality gap ‖x‖ − min_j <p_j, x>/‖x‖ is at most ``stop_gap``; or no progress is
    possible in float64 (the chosen row is already in S, ‖x‖ increased by more than rounding, a corral came
    back, or ‖x‖² showed no decrease for d + 2 major cycles in a row).
    """
    d = points.shape[1]
    squared_norms = np.einsum("ij,ij->i", points, points)
    largest = math.sqrt(float(squared_norms.max()))
    start = int(np.argmin(squared_norms))
    support = [start]
    weights = np.ones(1)
    x = points[start].copy()
    x_squared = float(squared_norms[start])
    visited = {frozenset(support)}
    flat = 0  # consecutive major cycles without a visible decrease of ‖x‖²
    iterations = 0
    while x_squared > 0.0 and iterations < max_iterations:
        products = np.einsum("ij,j->i", points, x)  # not BLAS: threaded BLAS stalls on a loaded machine
        j = int(np.argmin(products))
        if (x_squared - products[j]) / math.sqrt(x_squared) <= stop_gap:
            break  # optimal to the requested accuracy
        if j in support:
            break  # the most violating row is already in the corral: no progress possible in float64
        iterations += 1
        trial_support = support + [j]
        trial_weights = np.append(weights, 0.0)
        while True:  # minor cycles
            alpha = _affine_minimizer(points[trial_support])
            if np.all(alpha > _WEIGHT_FLOOR):
                trial_weights = alpha
                break
            # Move from λ towards α until the first weight reaches zero: θ = min λ_i / (λ_i − α_i).
            blocking = alpha <= _WEIGHT_FLOOR
            decrease = trial_weights[blocking] - alpha[blocking]
            safe = np.where(decrease > 0, decrease, 1.0)
            ratios = np.where(decrease > 0, trial_weights[blocking] / safe, 0.0)  # 0: that weight is already 0
            theta = float(min(1.0, ratios.min()))
            trial_weights = (1.0 - theta) * trial_weights + theta * alpha
            leaving = np.flatnonzero(blocking)[int(np.argmin(ratios))]
            keep = trial_weights > _WEIGHT_FLOOR
            keep[leaving] = False
            if not np.any(keep):  # cannot happen in exact arithmetic; keep the better of the two ends
                keep[int(np.argmax(trial_weights))] = True
            trial_support = [i for i, kept in zip(trial_support, keep) if kept]
            trial_weights = trial_weights[keep]
            trial_weights = trial_weights / trial_weights.sum()
        trial_x = trial_weights @ points[trial_support]
        trial_squared = float(trial_x @ trial_x)
        corral = frozenset(trial_support)
        if trial_squared > x_squared + 4.0 * _gamma(d + len(trial_support)) * largest * math.sqrt(x_squared):
            break  # ‖x‖ increased beyond rounding: the corral is optimal to rounding
        if corral in visited:
            break  # a corral came back: no progress possible in float64
        # A decrease hidden by rounding is accepted (once per corral, at most d + 1 times in a row): near the
        # optimum the change of ‖x‖² can be below its resolution while the direction of x, which the
        # certificate uses, still improves.
        flat = flat + 1 if trial_squared >= x_squared else 0
        if flat > d + 1:
            break
        visited.add(corral)
        support, weights, x, x_squared = trial_support, trial_weights, trial_x, trial_squared
    return support, weights, iterations


def _duality_bound(rows: np.ndarray, direction: np.ndarray) -> float:
    """max(0, min_i <g_i, p>/‖p‖): a lower bound on the norm of every point of conv(rows) (0 when p = 0)."""
    length = float(_norms(direction[None, :])[0])
    if length == 0.0:
        return 0.0
    unit = direction / length
    return max(0.0, float(np.min(np.einsum("ij,j->i", rows, unit))))


def _reorthogonalize(rows: np.ndarray, support, point: np.ndarray) -> np.ndarray:
    """The point with its components along aff(support) − p_0 removed twice ("twice is enough").

    The exact min-norm point x* is orthogonal to every difference p_i − p_0 of its face. The computed point
    carries an absolute error of order u·max‖p_i‖, which tilts its direction by about u·max‖p_i‖/‖x*‖ and
    weakens the duality bound when ‖x*‖ is much smaller than the rows. Projecting that error out restores
    the orthogonality to the working precision of the (small) point itself; the bound on the rows of the face
    then errs only to second order in the remaining tilt. Any direction gives a valid bound, so this only
    sharpens it.
    """
    if len(support) < 2:
        return point
    base = rows[support[0]]
    differences = (rows[support[1:]] - base).T
    left, singular, _ = np.linalg.svd(differences, full_matrices=False)
    keep = singular > singular[0] * max(differences.shape) * np.finfo(np.float64).eps
    basis = left[:, keep]
    for _ in range(2):
        point = point - basis @ (basis.T @ point)
    return point


def check_min_norm_inputs(gradients, tolerance, max_iterations):
    """The validated (gradients, tolerance, max_iterations) of ``min_norm_point`` (shared with its fast twin):
    a (k, d) float64 array of finite values with k, d ≥ 1, 0 < tolerance ≤ 1/2, and the iteration cap
    (default 10·(k + d) + 100)."""
    gradients = _float_array("gradients", gradients, ndim=2)
    k, d = gradients.shape
    if k < 1 or d < 1:
        raise ValueError(f"gradients must have shape (k, d) with k, d >= 1, got {gradients.shape}")
    tolerance = _check_float("tolerance", tolerance, positive=True, upper=0.5)
    if max_iterations is None:
        max_iterations = 10 * (k + d) + 100
    return gradients, tolerance, check_int("max_iterations", max_iterations, minimum=1)


def scale_rows(gradients: np.ndarray) -> tuple[np.ndarray, int]:
    """(rows·2^−e, e) with the largest absolute entry scaled into [1/2, 1): exact (a power of two), so that squares
    neither overflow nor underflow; entries that fall below 2^−1074 are covered by the certificate's allowance."""
    exponent = math.frexp(float(np.max(np.abs(gradients))))[1]
    return np.ldexp(gradients, -exponent), exponent


def stop_gap(scaled: np.ndarray, tolerance: float) -> float:
    """The duality gap at which a solver may stop on the scaled rows: the tolerance (raised to the rounding level of
    the gap, about 16·(d + 2)·u) times the largest scaled row norm."""
    d = scaled.shape[1]
    return max(tolerance, 16.0 * (d + 2) * _UNIT_ROUNDOFF) * float(_norms(scaled).max())


def certify_min_norm_point(gradients: np.ndarray, weights: np.ndarray, target_gap: float, iterations: int) -> MinNormPoint:
    """The MinNormPoint of the hull of ``gradients`` (k, d) at the convex weights a solver found, with
    its certified interval; ``target_gap`` is the solver's ``stop_gap`` (on the scaled rows).

    The point Σ_i λ_i g_i is recombined from the caller's rows; if rounding left it longer than the shortest row,
    that row (a vertex of the hull) is returned instead. The interval is ``min_norm_point``'s certificate: the
    duality bound of the point (and of its copy re-orthogonalised against its face) below, its norm above, both
    widened by 4·γ_n·max_i ‖g_i‖ (n = max(|support|, d) + 4) and by the effect of subnormal entries of the scaling.
    It holds for any weights in the simplex; the solver only decides how narrow it is.
    """
    k, d = gradients.shape
    if not np.any(gradients):  # every row is the zero vector: so is the hull
        first = np.zeros(k)
        first[0] = 1.0
        return MinNormPoint(np.zeros(d), 0.0, first, 0.0, 0.0, iterations, True)
    scaled, exponent = scale_rows(gradients)
    radius = float(_norms(scaled).max())
    weights = np.asarray(weights, dtype=np.float64) / float(np.sum(weights))
    support = [int(i) for i in np.flatnonzero(weights > 0)]
    point = weights[support] @ gradients[support]
    norm = float(_norms(point[None, :])[0])
    original_norms = _norms(gradients)
    best_row = int(np.argmin(original_norms))
    if norm > original_norms[best_row]:
        weights = np.zeros(k)
        weights[best_row] = 1.0
        point = gradients[best_row].copy()
        norm = float(original_norms[best_row])
        support = [best_row]

    # Certificate, computed on the scaled rows. Scaling by 2^±e is exact except for entries that fall below
    # 2^-1074 on either side of it; ``underflow`` covers their effect on the hull and on the point.
    scaled_point = np.ldexp(point, -exponent)
    scaled_norm = float(_norms(scaled_point[None, :])[0])
    refined = _reorthogonalize(scaled, support, scaled_point)
    raw_lower = max(_duality_bound(scaled, scaled_point), _duality_bound(scaled, refined))
    allowance = math.ldexp(4.0 * _gamma(max(len(support), d) + 4) * radius, exponent)
    underflow = (d + 2) * math.ldexp(1.0, max(exponent, 0) - 1074)
    lower = max(0.0, float(np.nextafter(math.ldexp(raw_lower, exponent) - allowance - underflow, -np.inf)))
    upper = float(np.nextafter(norm + allowance + underflow, np.inf))
    if not math.isfinite(upper):
        raise OverflowError("the minimum norm of the hull of gradients is out of float64 range")
    return MinNormPoint(point=point, norm=norm, weights=weights, lower=lower, upper=upper, iterations=iterations,
                        converged=bool(scaled_norm - raw_lower <= target_gap))


def min_norm_point(
    gradients, *, tolerance: float = DEFAULT_TOLERANCE, max_iterations: int | None = None
) -> MinNormPoint:
    """The minimum-norm point of the convex hull of the rows of ``gradients``, with a certified interval.

    This is the min-norm element of the hull of finitely many gradients, i.e. ‖∇F(x)‖_δ of zo_o2nc
    Definition 2.1 restricted to a finite subset of the ball. Wolfe's algorithm (1976) is exact in exact
    arithmetic and terminates finitely.

    Certificate (``certify_min_norm_point``). For any nonzero vector p and any g in the hull,
    ‖g‖ ≥ <g, p>/‖p‖ ≥ min_i <g_i, p>/‖p‖ (Cauchy–Schwarz; <·, p> is linear, so its minimum over the hull is at a
    vertex). With p the returned point (and its re-orthogonalised copy, below) this gives ``lower``; the returned
    point lies in the hull, which gives ``upper``. Both ends are
    widened by an a-priori rounding allowance 4·γ_n·max_i ‖g_i‖ (γ_n = nu/(1 − nu), n = max(|support|, d) + 4,
    u = 2^−53), so that lower ≤ min_{g ∈ hull} ‖g‖ ≤ upper holds for the exact hull of the float64 rows.
    At the exact min-norm point p* the bound is tight (min_i <g_i, p*> = ‖p*‖², Wolfe's optimality condition);
    the direction of the computed point is re-orthogonalised against its face first, so the returned gap is of
    the order of the rounding allowance. One regime stays loose: when 0 < ‖p*‖ ≲ √u·max_i ‖g_i‖ (about 1e−8
    of the largest row), some optimal weights are of order ‖p*‖²/max‖g_i‖² < u and float64 cannot resolve
    them; the gap is then up to about u·max‖g_i‖²/‖p*‖ (``converged`` is False), and the interval is still valid.

    Args:
        gradients: (k, d) array of finite float64 values, k ≥ 1 rows g_i, d ≥ 1.
        tolerance: target for the duality gap relative to max_i ‖g_i‖ (0 < tolerance ≤ 1/2); targets below
            the rounding level of the gap (about 16·(d + 2)·u) are raised to it.
        max_iterations: cap on Wolfe major cycles (default 10·(k + d) + 100).

    Returns:
        MinNormPoint (point, norm, weights λ, lower, upper, iterations, converged).

    Robust to duplicate and collinear rows, k = 1, zero rows, d = 1; rows are scaled by a power of two
    (exact) before the computation so that squares neither overflow nor underflow.
    """
    gradients, tolerance, max_iterations = check_min_norm_inputs(gradients, tolerance, max_iterations)
    k, d = gradients.shape
    scaled, _ = scale_rows(gradients)
    target_gap = stop_gap(scaled, tolerance)
    support, support_weights, iterations = _wolfe(scaled, target_gap, max_iterations)
    weights = np.zeros(k)
    weights[support] = support_weights
    return certify_min_norm_point(gradients, weights, target_gap, iterations)


# ---------------------------------------------------------------------------------------------------
# Goldstein stationarity from sampled gradients


@dataclass(frozen=True)
class GoldsteinEstimate:
    """An upper bound on ‖∇F(x)‖_δ (zo_o2nc Definition 2.1) from gradients at points of B(x, δ).

    Attributes:
        upper_bound: ``hull.upper``: ‖∇F(x)‖_radius ≤ upper_bound (for the gradients as the oracle returned
            them). It never falls below ‖∇F(x)‖_radius (beyond rounding) and adding points can only lower it.
        radius: δ, the Goldstein radius.
        samples: number of points drawn in the ball (the centre, if included, is not counted).
        include_center: whether the gradient at x itself was included.
        points: (m, d) array of the points y at which the oracle was called (the centre first if included).
        gradients: (m, d) array of the oracle's values at those points.
        hull: the MinNormPoint of the rows of ``gradients``: its [lower, upper] brackets the minimum norm of
            the hull of the *sampled* gradients, which is ≥ ‖∇F(x)‖_radius; ``hull.lower`` is therefore not
            a lower bound on ‖∇F(x)‖_radius.
    """

    upper_bound: float
    radius: float
    samples: int
    include_center: bool
    points: np.ndarray
    gradients: np.ndarray
    hull: MinNormPoint


def _call_oracle(gradient, point: np.ndarray, d: int, name: str) -> np.ndarray:
    value = gradient(point.copy())
    try:
        value = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must return a real vector of shape ({d},) ({exc})") from None
    if value.shape != (d,):
        raise ValueError(f"{name} must return a vector of shape ({d},), got shape {value.shape}")
    if not np.all(np.isfinite(value)):
        raise ValueError(f"{name} returned a non-finite gradient at {point!r}")
    return value


def _inside_open_ball(point: np.ndarray, center: np.ndarray, radius: float) -> bool:
    """‖point − center‖ < radius for the exact float64 vectors, tested with a rounding margin."""
    d = point.shape[0]
    return float(_norms((point - center)[None, :])[0]) <= radius * (1.0 - 4.0 * _gamma(d + 4))


def goldstein_stationarity(
    gradient,
    x,
    radius,
    *,
    samples: int,
    rng: np.random.Generator,
    include_center: bool = True,
    tolerance: float = DEFAULT_TOLERANCE,
) -> GoldsteinEstimate:
    """An upper bound on the Goldstein stationarity ‖∇F(x)‖_δ of zo_o2nc Definition 2.1 (δ = ``radius``).

    Samples y_1, …, y_m uniformly in the open ball B(x, δ), calls the oracle at each (and at x when
    ``include_center``), and returns the minimum norm of the convex hull of those gradients (Wolfe's
    algorithm, ``min_norm_point``). This is the paper's quantity computed over a finite subset of the ball:

    * What it bounds: every ∇F(y_i) with y_i ∈ B(x, δ) belongs to ∂_δ F(x), so the hull of the samples is a
      subset of ∂_δ F(x), and its minimum norm is ≥ ‖∇F(x)‖_δ. The result is an UPPER bound, for any number
      of samples; it decreases towards ‖∇F(x)‖_δ as the samples fill the ball (for continuous ∇F, or when
      every region of differentiability in the ball is hit). ``upper_bound`` includes the rounding allowance
      of the min-norm computation, so the inequality holds for the gradients as returned by the oracle.
    * Nonsmooth F (clarification zo_o2nc.E13): the oracle must return an element of the Clarke
      subdifferential ∂F(y) (the gradient wherever F is differentiable, which is almost everywhere, so the
      sampled points hit a kink with probability 0; the centre x may sit on one). Clarke subgradients at
      points of the *open* ball lie in the closure of ∂_δ F(x), which has the same minimum norm. Caution: for
      a sum F = Σ_i f_i, a sum of Clarke subgradients of the f_i lies in Σ_i ∂f_i(y), which can be larger than
      ∂F(y); ``RidgeSum.empirical_gradient`` is safe (at a kink its midpoint convention is the average of the
      gradients of F on two opposite sides, an element of ∂F(y)).
    * The open ball: the points are drawn with ``reference.rng.sample_ball`` and each y is checked to satisfy
      ‖y − x‖ < δ in float64 with a rounding margin; a point that fails (probability ~0) is drawn again.

    Draw schedule: one ``sample_ball(rng, samples, d, radius)`` call (one ``standard_normal((samples, d))``,
    then ``random(samples)``); then, in row order, one ``sample_ball(rng, 1, d, radius)`` for each rejected
    row until it is accepted.

    Args:
        gradient: callable y ↦ ∇F(y) (or a Clarke subgradient), y a float64 array (d,), returning (d,); e.g.
            ``objective.empirical_gradient`` or ``lambda y: objective.empirical_smoothed_gradient(y, δ)``.
        x: the centre, a finite float64 array (d,).
        radius: δ > 0 (zo_o2nc's Goldstein radius; 2δ for the bound of Corollary 4.7).
        samples: number of points drawn in the ball, ≥ 0 (≥ 1 without the centre).
        rng: numpy.random.Generator supplying the points (public randomness).
        include_center: also use ∇F(x) (then the result is ≤ ‖∇F(x)‖ up to rounding).
        tolerance: passed to ``min_norm_point``.

    Returns:
        GoldsteinEstimate (upper_bound, radius, samples, include_center, points, gradients, hull).
    """
    if not callable(gradient):
        raise TypeError(f"gradient must be a callable y -> gradient at y, got {type(gradient).__name__}")
    x = _float_array("x", x, ndim=1)
    d = x.shape[0]
    if d < 1:
        raise ValueError("x must have at least one coordinate")
    radius = _check_float("radius", radius, positive=True)
    samples = check_int("samples", samples, minimum=0 if include_center else 1)
    if not isinstance(include_center, bool):
        raise TypeError(f"include_center must be a bool, got {type(include_center).__name__}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    _check_float("tolerance", tolerance, positive=True, upper=0.5)  # early: before any oracle call
    resolution = float(np.max(np.spacing(np.abs(x))))
    if radius <= 1e3 * math.sqrt(d) * resolution:
        raise ValueError(
            f"radius must be well above the float64 spacing of x ({resolution:.3g}) so that the ball contains "
            f"distinct float64 points, got {radius!r}"
        )

    rows = []
    if include_center:
        rows.append(x.copy())
    if samples:
        offsets = sample_ball(rng, samples, d, radius)
        for offset in offsets:
            point = x + offset
            while not _inside_open_ball(point, x, radius):
                point = x + sample_ball(rng, 1, d, radius)[0]
            rows.append(point)
    points = np.array(rows)
    gradients = np.array([_call_oracle(gradient, y, d, "gradient") for y in points])
    hull = min_norm_point(gradients, tolerance=tolerance)
    return GoldsteinEstimate(
        upper_bound=hull.upper,
        radius=radius,
        samples=samples,
        include_center=include_center,
        points=points,
        gradients=gradients,
        hull=hull,
    )


# ---------------------------------------------------------------------------------------------------
# Exact values for one ridge F(x) = L·φ(<a, x> − c), ‖a‖ = 1


def _segment_distance(low: float, high: float) -> float:
    """Distance from 0 to the segment [low, high] of the real line."""
    if low <= 0.0 <= high:
        return 0.0
    return min(abs(low), abs(high))


def _piece_slopes(profile: str, tau: float):
    """Sorted kinks b_1 < … < b_m of φ and the slope of φ on each of the m + 1 pieces between them.

    From the kink expansion φ(r) = Σ_j w_j |r − b_j| + φ_0 (``reference.smoothing``): on the piece to the
    right of exactly the first p kinks, φ' = Σ_{j ≤ p} w_j − Σ_{j > p} w_j (exact: the w_j are 1, −1, ±1/2).
    """
    terms = sorted(((float(b), float(w)) for w, b in smoothing._kink_expansion(profile, tau)[0]))
    kinks = [b for b, _ in terms]
    slopes = [sum(w for _, w in terms[:p]) - sum(w for _, w in terms[p:]) for p in range(len(terms) + 1)]
    return kinks, slopes


def _exact_nonsmooth(residual: float, radius: float, profile: str, tau: float) -> float:
    """dist(0, conv{φ'(r') : r' ∈ (r − δ, r + δ), r' not a kink}) (Clarke sets at kinks add nothing new).

    Interval tests are done in exact rational arithmetic on the float64 inputs.
    """
    kinks, slopes = _piece_slopes(profile, tau)
    low = Fraction(residual) - Fraction(radius)
    high = Fraction(residual) + Fraction(radius)
    edges = [None] + [Fraction(b) for b in kinks] + [None]
    present = []
    for p, slope in enumerate(slopes):
        left, right = edges[p], edges[p + 1]
        if (right is None or low < right) and (left is None or high > left):
            present.append(slope)
    return _segment_distance(min(present), max(present))


def _smoothed_slope_derivative(t: np.ndarray, smoothing_radius: float, d: int, profile: str, tau: float):
    """ψ''(t) = Σ_j w_j (2/s) p_d((t − b_j)/s): the derivative of the smoothed slope ψ'(t) = E φ'(t + s v_1)."""
    total = np.zeros_like(t, dtype=np.float64)
    for w, b in smoothing._kink_expansion(profile, tau)[0]:
        total = total + w * (2.0 / smoothing_radius) * smoothing.ball_marginal_pdf((t - b) / smoothing_radius, d)
    return total


def _exact_smoothed(residual, radius, smoothing_radius, d, profile, tau) -> float:
    """dist(0, [min ψ', max ψ'] over [r − δ, r + δ]) for ψ'(t) = E φ'(t + s v_1) (continuous in t).

    The extremes of ψ' on the closed interval (which equal its inf and sup on the open one) are attained at
    the ends, at the breakpoints b_j ± s of ψ'' and at the interior zeros of ψ''. The zeros are located on
    each smooth piece by a sign scan of the closed-form ψ'' at ``_SCAN_POINTS`` points and refined by Brent's
    method; every scan point is a candidate too (a candidate never makes the result too small).
    """
    low, high = residual - radius, residual + radius
    kinks = [float(b) for _, b in smoothing._kink_expansion(profile, tau)[0]]
    breaks = sorted({b + shift for b in kinks for shift in (-smoothing_radius, 0.0, smoothing_radius)})
    inner = [b for b in breaks if low < b < high]
    edges = [low] + inner + [high]
    candidates = list(edges)

    def derivative(t):
        return float(_smoothed_slope_derivative(np.array([t]), smoothing_radius, d, profile, tau)[0])

    for a, b in zip(edges[:-1], edges[1:]):
        grid = np.linspace(a, b, _SCAN_POINTS)
        candidates.extend(grid)
        values = _smoothed_slope_derivative(grid, smoothing_radius, d, profile, tau)
        for i in np.flatnonzero(np.sign(values[:-1]) * np.sign(values[1:]) < 0):
            candidates.append(optimize.brentq(derivative, grid[i], grid[i + 1], xtol=_TINY, rtol=_BRENT_RTOL))
    slopes = smoothing.smoothed_ridge_slope(np.array(candidates), smoothing_radius, d, profile, tau)
    return _segment_distance(float(np.min(slopes)), float(np.max(slopes)))


def exact_goldstein_ridge(
    residual,
    radius,
    *,
    profile: str = "abs",
    tau=1.0,
    lipschitz=1.0,
    smoothing_radius=None,
    d: int | None = None,
) -> float:
    """The exact ‖∇F(x)‖_δ (zo_o2nc Definition 2.1) for one ridge F(x) = L·φ(<a, x> − c), ‖a‖ = 1, or for its
    uniform smoothing F̂_s (zo_o2nc §2) when ``smoothing_radius`` = s is given.

    Only r = <a, x> − c matters: the points y of the open ball B(x, δ) have residuals r' = <a, y> − c filling
    the open interval (r − δ, r + δ), and every gradient is a multiple of a, ∇F(y) = L·a·φ'(r'). The hull of
    the gradients is the segment L·a·[m, M] with m, M the inf and sup of the slope over that interval, and its
    minimum norm is L times the distance from 0 to [m, M] (0 when the slope takes both signs or vanishes).

    * Unsmoothed (clarification zo_o2nc.E13 for the kinks: the Clarke set at a kink is the segment between the
      adjacent slopes, which both occur in the open interval, so it adds nothing). Slopes on the pieces:
      "abs" |r|: ±1, so the value is 0 if |r| < δ and L otherwise;
      "capped" min(|r|, τ): ±1 inside (−τ, τ), 0 outside, so 0 if |r| < δ or |r| + δ > τ, else L;
      "wshape" ||r| − τ|: ±1 alternating at the kinks −τ, 0, τ, so 0 if a kink lies in (r − δ, r + δ), else L.
      Boundary cases are decided exactly (rational arithmetic on the float64 inputs).
    * Smoothed: ∇F̂_s(y) = L·a·ψ'(r') with ψ'(t) = E φ'(t + s v_1) = ``smoothing.smoothed_ridge_slope``,
      continuous in t, so m and M are the min and max of ψ' over the closed interval [r − δ, r + δ]. For
      "abs", ψ' is increasing and the value is L·|ψ'(|r| − δ)| when |r| > δ, else 0. For "capped"/"wshape"
      the extremes are found at the interval ends and the critical points of ψ' (see ``_exact_smoothed``).

    Args:
        residual: r = <a, x> − c, finite float.
        radius: the Goldstein radius δ > 0.
        profile: one of ``smoothing.RIDGE_PROFILES``; tau: τ > 0.
        lipschitz: L ≥ 0.
        smoothing_radius: s > 0 for F̂_s, or None for F itself.
        d: the dimension (the law of v_1 depends on it); required with ``smoothing_radius``, refused without.

    Returns:
        ‖∇F(x)‖_δ (or ‖∇F̂_s(x)‖_δ) as a float.
    """
    residual = _check_float("residual", residual)
    radius = _check_float("radius", radius, positive=True)
    if profile not in smoothing.RIDGE_PROFILES:
        raise ValueError(f"profile must be one of {smoothing.RIDGE_PROFILES}, got {profile!r}")
    tau = _check_float("tau", tau, positive=True)
    lipschitz = _check_float("lipschitz", lipschitz, nonnegative=True)
    if smoothing_radius is None:
        if d is not None:
            raise ValueError("d is only used with smoothing_radius (the unsmoothed value does not depend on d)")
        return lipschitz * _exact_nonsmooth(residual, radius, profile, tau)
    smoothing_radius = _check_float("smoothing_radius", smoothing_radius, positive=True)
    if d is None:
        raise ValueError("d (the dimension) is required with smoothing_radius")
    d = check_int("d", d, minimum=1)
    return lipschitz * _exact_smoothed(residual, radius, smoothing_radius, d, profile, tau)


# ---------------------------------------------------------------------------------------------------
# The proxy bounded in the proofs of Lemma 4.6 / Corollary 4.7


@dataclass(frozen=True)
class ProxyStationarity:
    """‖(1/T) Σ_t ∇F̂_δ(w_t)‖ and what it bounds.

    Attributes:
        value: ‖mean_gradient‖.
        mean_gradient: (1/T) Σ_t ∇F̂_δ(w_t), shape (d,).
        center: w̄, the mean of the points (or the centre passed in).
        spread: max_t ‖w_t − w̄‖ (computed in float64).
    """

    value: float
    mean_gradient: np.ndarray
    center: np.ndarray
    spread: float


def proxy_stationarity(smoothed_gradient, points, *, center=None) -> ProxyStationarity:
    """‖(1/T) Σ_{t=1}^T ∇F̂_δ(w_t)‖: the quantity that the proof of zo_o2nc Lemma 4.6 bounds (for F̂_δ, as used
    in Corollary 4.7), for one epoch's points w_1, …, w_T of Algorithm 3.

    What it bounds: ∇F̂_δ(w_t) = E_v ∇F(w_t + δv) lies in (the closure of) ∂_δ F(w_t) (zo_o2nc Corollary 2.3
    and its proof), and B(w_t, δ) ⊂ B(w̄, δ + ρ) when ‖w_t − w̄‖ ≤ ρ. So the mean is an element of (the
    closure of) ∂_{δ+ρ} F(w̄) and value ≥ ‖∇F(w̄)‖_{δ+ρ} with ρ = ``spread``. In Algorithm 3 (with D = δ/T)
    every w_t lies within δ of w̄ = (1/T) Σ_t w_t, so value ≥ ‖∇F(w̄)‖_{2δ}. Check ``spread`` ≤ δ (up to
    rounding) before reading it that way.

    Args:
        smoothed_gradient: callable w ↦ ∇F̂_δ(w), w a float64 array (d,), returning (d,); e.g.
            ``lambda w: objective.empirical_smoothed_gradient(w, δ)``.
        points: (T, d) finite float64 array, row t = w_t, T ≥ 1.
        center: w̄ as a (d,) array; default the mean of the points (Algorithm 3 line 7).

    Returns:
        ProxyStationarity (value, mean_gradient, center, spread).
    """
    if not callable(smoothed_gradient):
        raise TypeError(
            f"smoothed_gradient must be a callable w -> gradient at w, got {type(smoothed_gradient).__name__}"
        )
    points = _float_array("points", points, ndim=2)
    count, d = points.shape
    if count < 1 or d < 1:
        raise ValueError(f"points must have shape (T, d) with T, d >= 1, got {points.shape}")
    if center is None:
        center = points.mean(axis=0)
    else:
        center = _float_array("center", center, shape=(d,))
    gradients = np.array([_call_oracle(smoothed_gradient, w, d, "smoothed_gradient") for w in points])
    mean_gradient = gradients.mean(axis=0)
    spread = float(np.max(_norms(points - center)))
    return ProxyStationarity(
        value=float(_norms(mean_gradient[None, :])[0]),
        mean_gradient=mean_gradient,
        center=np.array(center, dtype=np.float64),
        spread=spread,
    )


# ---------------------------------------------------------------------------------------------------
# Second-order stationarity (spider_sosp Definitions 1.1 and 1.2)


def _sosp_inputs(gradient, hessian, rho):
    """The checked (gradient, symmetrised Hessian, ρ) of ``sosp_level`` and ``is_sosp``."""
    gradient = _float_array("gradient", gradient, ndim=1)
    d = gradient.shape[0]
    if d < 1:
        raise ValueError("gradient must have at least one entry (dimension d >= 1)")
    hessian = _float_array("hessian", hessian, shape=(d, d))
    rho = _check_float("rho", rho, positive=True)
    # eigvalsh reads one triangle only, so an asymmetric matrix would give a silently wrong λ_min. A Hessian computed
    # in float64 is symmetric up to the rounding of its entries: each entry is a sum of at most d products, whose
    # relative error is at most γ_d (``_gamma``), so |H_ij − H_ji| ≤ 2γ_d·max|H|; more is refused.
    scale = float(np.max(np.abs(hessian)))
    asymmetry = float(np.max(np.abs(hessian - hessian.T)))
    if asymmetry > 2 * _gamma(max(d, 2)) * scale:
        raise ValueError(f"hessian must be symmetric (max |H - H^T| = {asymmetry} exceeds the float64 rounding "
                         f"allowance {2 * _gamma(max(d, 2)) * scale})")
    return gradient, (hessian + hessian.T) / 2, rho


def _negative_curvature(hessian: np.ndarray) -> float:
    """λ_min⁻ = max(0, −λ_min(H)) for a symmetric H (LAPACK's symmetric eigensolver)."""
    return max(0.0, -float(np.linalg.eigvalsh(hessian)[0]))


def sosp_level(gradient, hessian, rho) -> float:
    """The smallest α for which a point is an α-SOSP (spider_sosp Definition 1.2; Nesterov–Polyak 2006):

        α*(x) = max( ‖∇F(x)‖, λ_min⁻(∇²F(x))² / ρ ),   λ_min⁻ = max(0, −λ_min).

    Definition 1.2: x is an α-SOSP of a ρ-Hessian-Lipschitz F iff ‖∇F(x)‖ ≤ α and ∇²F(x) ⪰ −√(ρα)·I, i.e.
    λ_min ≥ −√(ρα) ⟺ λ_min⁻ ≤ √(ρα) ⟺ λ_min⁻²/ρ ≤ α. So x is an α-SOSP iff α*(x) ≤ α, and α*(x) = 0 exactly at
    critical points with a positive semi-definite Hessian. ρ is the constant of Assumption 3.1 (an upper bound on the
    Hessian-Lipschitz constant of F), as in the paper.

    Args:
        gradient: ∇F(x), a finite float64 vector (d,), d ≥ 1.
        hessian: ∇²F(x), a finite float64 (d, d) matrix, symmetric up to float64 rounding (it is symmetrised).
        rho: ρ > 0, finite.

    Returns α* as a float (≥ 0). λ_min comes from ``numpy.linalg.eigvalsh``, backward stable: its error is at most a
    small multiple of d·u·‖H‖ (u = 2^−53).
    """
    gradient, hessian, rho = _sosp_inputs(gradient, hessian, rho)
    curvature = _negative_curvature(hessian)
    return max(float(_norms(gradient[None, :])[0]), curvature * curvature / rho)


def is_sosp(gradient, hessian, rho, alpha) -> bool:
    """Whether a point is an α-SOSP (spider_sosp Definition 1.2): ‖∇F(x)‖ ≤ α and λ_min(∇²F(x)) ≥ −√(ρα).

    Both inequalities are non-strict, so a point with λ_min = −√(ρα) is an α-SOSP (and also a saddle point in the
    sense of Lemma 3.3). Evaluated as ``sosp_level(...) <= alpha`` with the same float64 operations, so that a point
    is always an α-SOSP at its own level (testing λ_min⁻² ≤ ρα instead rounds differently from λ_min⁻²/ρ ≤ α).
    Arguments as in ``sosp_level``; alpha: α ≥ 0, finite.
    """
    alpha = _check_float("alpha", alpha, nonnegative=True)
    return bool(sosp_level(gradient, hessian, rho) <= alpha)
