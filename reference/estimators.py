"""zo_o2nc Alg 1 (GRAD), Alg 2 (DIFF), Alg 6 and Lemma 2.2(iv); dpzero eq. (2), Alg 1/2 finite differences;
nsnc_improved Algorithm 5 (first-order estimator).

Gradient estimators, written as the pseudocode has them: plain loops over the samples z_i of a batch and
the directions u_ij (or perturbations y_ij) of each sample.

* ``finite_difference``: the central difference (f(x+hu; z) − f(x−hu; z)) / (2h) (dpzero Alg 2 line 4, eq. (2);
  the scalar of zo_o2nc Alg 1 line 2).
* ``per_sample_finite_differences``: DPZero's a_i for one direction shared by the batch (dpzero Alg 2,
  "for i = 1..n").
* ``two_point_estimate``: zo_o2nc Alg 1 (GRAD) with m directions per sample; m = d is GRAD, m = 1 is
  the inner estimator of Alg 6, and ``direction_law="scaled_sphere"``/``"gaussian"`` with m = 1 is
  dpzero eq. (2).
* ``one_point_estimate``: the one-point form of zo_o2nc Lemma 2.2(iv).
* ``diff_estimate``: zo_o2nc Alg 2 (DIFF), the same u_ij at x and at y.
* ``first_order_estimate``: nsnc_improved Algorithm 5, (1/b) Σ_i (1/m) Σ_j ∇f(x + y_ij; z_i) with
  perturbations y_ij ~ Unif(𝔹_α) (unbiased for ∇f_α; the sphere version of the paper's eq. (17) is not:
  erratum nsnc_improved.E8).

Conventions shared by every function here:

* ``loss(x, z)`` is the per-sample loss f(x; z), called with one point x of shape (d,) and one data
  row z of shape (p,); it returns a real scalar. ``gradient(x, z)`` (first-order estimator) is called the
  same way and returns ∇f(x; z), shape (d,).
* Directions and perturbations are used exactly as given (no normalisation, no norm check): the
  sensitivity claims use degenerate realisations such as u_ij ≡ e. The law of the directions enters only
  through ``direction_scale``; perturbations are already scaled (drawn from the ball of radius α).
* Points x ± h·u and x + y are built out of place and the data rows reach the loss (the gradient) as
  read-only views, so the inputs are never mutated (not even by a function that writes into its arguments).
* Arithmetic follows the inputs: if any operand is mpmath (an object array of ``mpf`` or an ``mpf``
  scalar), every operand is converted exactly with ``precision.to_mp`` and the computation runs at the
  current mpmath working precision (set it with ``precision.working_precision``); the result is an
  object array. Otherwise everything is float64.
* A loss value (a gradient entry) that is NaN or ±inf raises ``ValueError`` naming the sample and the
  direction (perturbation); nothing returns NaN.

The vectorized float64 twins live in ``reference.fast.estimators``.
"""

from __future__ import annotations

import math
import numbers

import mpmath
import numpy as np

from .precision import is_mp, to_mp
from .validation import check_array, check_int, check_real

__all__ = [
    "DIRECTION_LAWS",
    "direction_scale",
    "finite_difference",
    "per_sample_finite_differences",
    "two_point_estimate",
    "one_point_estimate",
    "diff_estimate",
    "first_order_estimate",
]

#: What ``per_sample_finite_differences`` does with a non-finite loss value.
NONFINITE_MODES = ("raise", "return")

#: Direction laws understood by ``direction_scale``.
DIRECTION_LAWS = ("unit_sphere", "scaled_sphere", "gaussian")


def direction_scale(direction_law: str, d: int) -> int:
    """The factor c with E[c·u u^T] = I_d for directions u drawn from ``direction_law``.

    - ``"unit_sphere"``: u ~ U_S, ‖u‖ = 1, E[uu^T] = I/d, so c = d (zo_o2nc §2, Alg 1 factor d/(2δ)).
    - ``"scaled_sphere"``: u ~ Unif(√d S^{d−1}), ‖u‖ = √d, E[uu^T] = I, so c = 1 (DPZero theory, eq. (2)).
    - ``"gaussian"``: u ~ N(0, I_d), E[uu^T] = I, so c = 1 (MeZO, DPZero experiments, dpzero App. B.2).
    """
    d = check_int("d", d, minimum=1)
    if direction_law == "unit_sphere":
        return d
    if direction_law in ("scaled_sphere", "gaussian"):
        return 1
    raise ValueError(f"direction_law must be one of {DIRECTION_LAWS}, got {direction_law!r}")


# ---------------------------------------------------------------------------------------------------
# Validation and arithmetic (private; reference.fast.estimators reuses the checks)


def _check_loss(loss) -> None:
    if not callable(loss):
        raise TypeError(f"loss must be callable as loss(x, z), got {type(loss).__name__}")


def _check_gradient(gradient) -> None:
    if not callable(gradient):
        raise TypeError(f"gradient must be callable as gradient(x, z), got {type(gradient).__name__}")


def _check_point(name: str, value, d: int | None = None) -> np.ndarray:
    """A finite 1-D point with d ≥ 1 coordinates (or exactly ``d`` if given)."""
    arr = check_array(name, value, ndim=1)
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must have at least one coordinate (d >= 1), got shape {arr.shape}")
    if d is not None and arr.shape[0] != d:
        raise ValueError(f"{name} must have shape ({d},) to match x, got {arr.shape}")
    return arr


def _check_batch(batch) -> np.ndarray:
    """A finite batch z_{1:b} of shape (b, p) with b ≥ 1 (p = 0 is allowed: a loss may ignore z)."""
    arr = check_array("batch", batch, ndim=2)
    if arr.shape[0] == 0:
        raise ValueError(f"batch must have at least one row (b >= 1), got shape {arr.shape}")
    return arr


def _check_directions(directions, b: int, d: int, name: str = "directions") -> np.ndarray:
    """Finite directions u_ij (or perturbations y_ij: ``name``) of shape (b, m, d), m ≥ 1; the norms are
    deliberately not checked."""
    arr = check_array(name, directions, ndim=3)
    if arr.shape[0] != b or arr.shape[2] != d:
        raise ValueError(
            f"{name} must have shape (b, m, d) = ({b}, m, {d}) to match batch and x, got {arr.shape}"
        )
    if arr.shape[1] == 0:
        raise ValueError(f"{name} must have at least one entry per sample (m >= 1), got shape {arr.shape}")
    return arr


def _uses_mpmath(*operands) -> bool:
    return any(is_mp(v) for v in operands)


def _in_arithmetic(value, use_mp: bool):
    """``value`` in the computation's arithmetic: exact mpmath copies, or float64."""
    if use_mp:
        return to_mp(value) if isinstance(value, np.ndarray) else mpmath.mpf(value)
    return value if isinstance(value, np.ndarray) else float(value)


def _read_only(arr: np.ndarray) -> np.ndarray:
    """A read-only view, so a loss that writes into its z argument cannot corrupt the caller's batch."""
    view = arr.view()
    view.flags.writeable = False
    return view


def _zeros(d: int, use_mp: bool) -> np.ndarray:
    if use_mp:
        out = np.empty(d, dtype=object)
        out[:] = [mpmath.mpf(0)] * d
        return out
    return np.zeros(d, dtype=np.float64)


def _evaluate_loss(loss, point: np.ndarray, z: np.ndarray, use_mp: bool, where: str, allow_nonfinite: bool = False):
    """f(point; z) as an mpf or float, refusing non-scalars and (unless allowed) non-finite values."""
    value = loss(point, z)
    if isinstance(value, np.ndarray):
        if value.shape != ():
            raise ValueError(f"loss must return a scalar, got an array of shape {value.shape} at {where}")
        value = value[()]
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, mpmath.mpf)):
        raise TypeError(f"loss must return a real number, got {type(value).__name__} at {where}")
    if use_mp:
        value = mpmath.mpf(value)
        finite = mpmath.isfinite(value)
    else:
        value = float(value)
        finite = math.isfinite(value)
    if not finite and not allow_nonfinite:
        raise ValueError(f"loss returned a non-finite value ({value}) at {where}")
    return value


def _evaluate_gradient(gradient, point: np.ndarray, z: np.ndarray, d: int, use_mp: bool, where: str) -> np.ndarray:
    """∇f(point; z) as a new (d,) array (mpf or float64), refusing other shapes, non-reals and non-finite entries."""
    value = gradient(point, z)
    value = np.asarray(value, dtype=object) if isinstance(value, (list, tuple)) else np.asarray(value)
    if value.shape != (d,):
        raise ValueError(f"gradient must return shape ({d},), got {value.shape} at {where}")
    if value.dtype.kind in "fiu":
        out = to_mp(value.astype(np.float64)) if use_mp else value.astype(np.float64)  # a copy either way
    else:
        entries = value.tolist()
        if any(isinstance(v, bool) or not isinstance(v, (numbers.Real, mpmath.mpf)) for v in entries):
            kinds = sorted({type(v).__name__ for v in entries})
            raise TypeError(f"gradient must return real numbers, got {', '.join(kinds)} at {where}")
        if use_mp:
            out = np.empty(d, dtype=object)
            out[:] = [mpmath.mpf(v) for v in entries]
        else:
            out = np.array([float(v) for v in entries], dtype=np.float64)
    finite = all(mpmath.isfinite(v) for v in out) if use_mp else bool(np.all(np.isfinite(out)))
    if not finite:
        raise ValueError(f"gradient returned a non-finite value ({value.tolist()}) at {where}")
    return out


def _central_difference(loss, x, z, u, h, use_mp: bool, where: str, allow_nonfinite: bool = False):
    """(f(x+hu; z) − f(x−hu; z)) / (2h) on validated operands already in one arithmetic."""
    step = h * u  # new array: x is never touched
    f_plus = _evaluate_loss(loss, x + step, z, use_mp, f"{where}, point x + perturbation·u", allow_nonfinite)
    f_minus = _evaluate_loss(loss, x - step, z, use_mp, f"{where}, point x − perturbation·u", allow_nonfinite)
    return (f_plus - f_minus) / (2 * h)


# ---------------------------------------------------------------------------------------------------
# Public estimators


def finite_difference(loss, x, z, direction, perturbation):
    """Central finite difference (f(x+hu; z) − f(x−hu; z)) / (2h).

    dpzero Alg 2 line 4 (the finite difference fd_i(x, u)) and eq. (2); the scalar of zo_o2nc Alg 1 line 2.

    Args:
        loss: per-sample loss f(x; z), called as ``loss(point, z)`` with point of shape (d,).
        x: the point x, shape (d,); not mutated (x ± hu are new arrays).
        z: one data row z (ξ_i in dpzero), shape (p,).
        direction: u, shape (d,), used as given (any norm).
        perturbation: h > 0; δ in zo_o2nc (smoothing radius for unit directions), λ in dpzero.

    Returns:
        float, or ``mpf`` if any operand is mpmath.
    """
    _check_loss(loss)
    x = _check_point("x", x)
    z = check_array("z", z, ndim=1)
    direction = _check_point("direction", direction, d=x.shape[0])
    h = check_real("perturbation", perturbation, positive=True)
    use_mp = _uses_mpmath(x, z, direction, h)
    x, z, direction, h = (_in_arithmetic(v, use_mp) for v in (x, z, direction, h))
    z = _read_only(z)
    return _central_difference(loss, x, z, direction, h, use_mp, "the given direction")


def per_sample_finite_differences(loss, x, batch, direction, perturbation, *, nonfinite: str = "raise") -> np.ndarray:
    """DPZero's per-sample scalars a_i = (f(x+λu; ξ_i) − f(x−λu; ξ_i)) / (2λ) for one shared u.

    dpzero Alg 2, lines "for i = 1..n: a_i := ..." (also the fd_i of Alg 1, where g_i = a_i·u).

    Args:
        loss: per-sample loss f(x; ξ).
        x: x_t, shape (d,).
        batch: the samples ξ_1..ξ_b, shape (b, p).
        direction: u_t, shape (d,), shared by every sample.
        perturbation: λ > 0 in dpzero (δ in zo_o2nc).
        nonfinite: "raise" (default): a NaN or ±inf loss value is refused, naming the sample and the point;
            "return": it flows into a_i (NaN or ±inf), for a private algorithm that replaces such values inside
            its mechanism rather than letting one record abort the run.

    Returns:
        shape (b,): float64, or an object array of ``mpf`` if any operand is mpmath.
    """
    if nonfinite not in NONFINITE_MODES:
        raise ValueError(f"nonfinite must be one of {NONFINITE_MODES}, got {nonfinite!r}")
    _check_loss(loss)
    x = _check_point("x", x)
    batch = _check_batch(batch)
    direction = _check_point("direction", direction, d=x.shape[0])
    h = check_real("perturbation", perturbation, positive=True)
    use_mp = _uses_mpmath(x, batch, direction, h)
    x, batch, direction, h = (_in_arithmetic(v, use_mp) for v in (x, batch, direction, h))
    batch = _read_only(batch)
    out = np.empty(batch.shape[0], dtype=object if use_mp else np.float64)
    for i in range(batch.shape[0]):
        out[i] = _central_difference(loss, x, batch[i], direction, h, use_mp, f"sample i={i} (0-based)",
                                     nonfinite == "return")
    return out


def two_point_estimate(loss, x, batch, directions, perturbation, direction_law: str = "unit_sphere") -> np.ndarray:
    """Two-point estimator (1/b) Σ_i (1/m) Σ_j c·(f(x+hu_ij; z_i) − f(x−hu_ij; z_i))/(2h)·u_ij.

    zo_o2nc Alg 1 (GRAD) line 2, generalised to m directions per sample; c = ``direction_scale``.

    - m = d, ``"unit_sphere"`` (c = d): exactly GRAD_{f,δ}(x, z_{1:b}) = (1/(2δb)) Σ_{i,j} (f(x+δu_ij)
      − f(x−δu_ij)) u_ij.
    - m = 1, ``"unit_sphere"``: the inner estimator g_t^k of zo_o2nc Alg 6.
    - m = 1, ``"scaled_sphere"`` or ``"gaussian"`` (c = 1): the mean of dpzero eq. (2), g_λ(x; ξ_i) =
      a_i·u_i; with one shared direction (all u_i1 equal) it is dpzero Alg 1's (1/n) Σ_i g_i.

    Args:
        loss: per-sample loss f(x; z).
        x: the query point x (w_t^k in Alg 3/4), shape (d,); not mutated.
        batch: z_1..z_b, shape (b, p).
        directions: u_ij, shape (b, m, d), used as given (drawn by the caller, e.g.
            ``rng.sample_sphere(gen, (b, m), d)``, so neighbouring batches can share them).
        perturbation: h > 0; δ in zo_o2nc, λ in dpzero.
        direction_law: the law the directions were drawn from, fixing c (see ``direction_scale``).

    Returns:
        shape (d,): float64, or an object array of ``mpf`` if any operand is mpmath.
    """
    _check_loss(loss)
    x = _check_point("x", x)
    batch = _check_batch(batch)
    b, d = batch.shape[0], x.shape[0]
    directions = _check_directions(directions, b, d)
    m = directions.shape[1]
    h = check_real("perturbation", perturbation, positive=True)
    scale = direction_scale(direction_law, d)
    use_mp = _uses_mpmath(x, batch, directions, h)
    x, batch, directions, h = (_in_arithmetic(v, use_mp) for v in (x, batch, directions, h))
    batch = _read_only(batch)

    total = _zeros(d, use_mp)
    for i in range(b):
        sample_sum = _zeros(d, use_mp)
        for j in range(m):
            u = directions[i, j]
            where = f"sample i={i}, direction j={j} (0-based)"
            fd = _central_difference(loss, x, batch[i], u, h, use_mp, where)
            sample_sum = sample_sum + (scale * fd) * u
        total = total + sample_sum / m
    return total / b


def one_point_estimate(loss, x, batch, directions, smoothing_radius) -> np.ndarray:
    """One-point estimator (1/b) Σ_i (1/m) Σ_j (d/δ) f(x+δu_ij; z_i) u_ij, u_ij on the unit sphere.

    zo_o2nc Lemma 2.2(iv): ∇ĥ_δ(x) = E_{u~U_S}[(d/δ) h(x+δu) u]; averaged over the batch it is unbiased
    for (1/b) Σ_i ∇f̂_δ(x, z_i).

    Args:
        loss: per-sample loss f(x; z).
        x: shape (d,); not mutated.
        batch: z_1..z_b, shape (b, p).
        directions: u_ij, shape (b, m, d) (unit sphere for unbiasedness; used as given).
        smoothing_radius: δ > 0 in zo_o2nc.

    Returns:
        shape (d,): float64, or an object array of ``mpf`` if any operand is mpmath.
    """
    _check_loss(loss)
    x = _check_point("x", x)
    batch = _check_batch(batch)
    b, d = batch.shape[0], x.shape[0]
    directions = _check_directions(directions, b, d)
    m = directions.shape[1]
    delta = check_real("smoothing_radius", smoothing_radius, positive=True)
    scale = direction_scale("unit_sphere", d)
    use_mp = _uses_mpmath(x, batch, directions, delta)
    x, batch, directions, delta = (_in_arithmetic(v, use_mp) for v in (x, batch, directions, delta))
    batch = _read_only(batch)

    total = _zeros(d, use_mp)
    for i in range(b):
        sample_sum = _zeros(d, use_mp)
        for j in range(m):
            u = directions[i, j]
            where = f"sample i={i}, direction j={j} (0-based), point x + smoothing_radius·u"
            value = _evaluate_loss(loss, x + delta * u, batch[i], use_mp, where)
            sample_sum = sample_sum + (scale * value / delta) * u
        total = total + sample_sum / m
    return total / b


def diff_estimate(loss, x, y, batch, directions, smoothing_radius) -> np.ndarray:
    """DIFF: (1/b) Σ_i (1/m) Σ_j (d/δ)(f(x+δu_ij; z_i) − f(y+δu_ij; z_i)) u_ij, the same u_ij at x and y.

    zo_o2nc Alg 2 line 2 (m = d there): an unbiased estimate of ∇F̂_δ(x) − ∇F̂_δ(y) (Lemma 3.2) whose
    terms have norm ≤ dL‖x−y‖/δ for unit directions, because the direction is shared (coupling).

    Args:
        loss: per-sample loss f(x; z).
        x: the new point (w_t^k in Alg 4), shape (d,); not mutated.
        y: the previous point (w_{t−1}^k), shape (d,); not mutated.
        batch: z_1..z_b, shape (b, p).
        directions: u_ij, shape (b, m, d), unit sphere in the paper; used as given.
        smoothing_radius: δ > 0 in zo_o2nc.

    Returns:
        shape (d,): float64, or an object array of ``mpf`` if any operand is mpmath.
    """
    _check_loss(loss)
    x = _check_point("x", x)
    y = _check_point("y", y, d=x.shape[0])
    batch = _check_batch(batch)
    b, d = batch.shape[0], x.shape[0]
    directions = _check_directions(directions, b, d)
    m = directions.shape[1]
    delta = check_real("smoothing_radius", smoothing_radius, positive=True)
    scale = direction_scale("unit_sphere", d)
    use_mp = _uses_mpmath(x, y, batch, directions, delta)
    x, y, batch, directions, delta = (_in_arithmetic(v, use_mp) for v in (x, y, batch, directions, delta))
    batch = _read_only(batch)

    total = _zeros(d, use_mp)
    for i in range(b):
        sample_sum = _zeros(d, use_mp)
        for j in range(m):
            u = directions[i, j]
            where = f"sample i={i}, direction j={j} (0-based)"
            step = delta * u
            f_x = _evaluate_loss(loss, x + step, batch[i], use_mp, f"{where}, point x + smoothing_radius·u")
            f_y = _evaluate_loss(loss, y + step, batch[i], use_mp, f"{where}, point y + smoothing_radius·u")
            sample_sum = sample_sum + (scale * (f_x - f_y) / delta) * u
        total = total + sample_sum / m
    return total / b


def first_order_estimate(gradient, x, batch, perturbations) -> np.ndarray:
    """First-order estimator (1/b) Σ_i (1/m) Σ_j ∇f(x + y_ij; z_i) of the smoothed gradient.

    nsnc_improved Algorithm 5 (App. C): the reset branch is m = 1 with one y_i per sample, lines 9-11 use m
    perturbations per sample at z_t and m others at z_{t−1}; the multi-pass variant uses the same estimator.
    With y_ij ~ Unif(𝔹_α) it is unbiased for (1/b) Σ_i ∇f_α(x; z_i), f_α(x) = E_{y~Unif(𝔹_α)} f(x + y) (Fact 2.3);
    eq. (17)'s x + αy with y ~ Unif(𝕊^{d−1}) is biased (erratum nsnc_improved.E8). For L-Lipschitz f the
    estimate has norm ≤ L (an average of gradients of norm ≤ L).

    Args:
        gradient: per-sample gradient ∇f(x; z), called as ``gradient(point, z)`` with point of shape (d,) and
            one data row z of shape (p,) (a read-only view); returns shape (d,). At a kink any element of the
            Clarke subdifferential will do (the kinks have probability 0 under the ball law).
        x: the query point (z_t in Algorithm 5), shape (d,); not mutated (x + y_ij are new arrays).
        batch: z_1..z_b, shape (b, p).
        perturbations: y_ij, shape (b, m, d), used exactly as given (already scaled: Algorithm 5 draws them
            from the ball of radius α, e.g. ``rng.sample_ball(gen, (b, m), d, alpha)``, so neighbouring batches
            can share them).

    Returns:
        shape (d,): float64, or an object array of ``mpf`` if any operand is mpmath.
    """
    _check_gradient(gradient)
    x = _check_point("x", x)
    batch = _check_batch(batch)
    b, d = batch.shape[0], x.shape[0]
    perturbations = _check_directions(perturbations, b, d, "perturbations")
    m = perturbations.shape[1]
    use_mp = _uses_mpmath(x, batch, perturbations)
    x, batch, perturbations = (_in_arithmetic(v, use_mp) for v in (x, batch, perturbations))
    batch = _read_only(batch)

    total = _zeros(d, use_mp)
    for i in range(b):
        sample_sum = _zeros(d, use_mp)
        for j in range(m):
            where = f"sample i={i}, perturbation j={j} (0-based), point x + y"
            sample_sum = sample_sum + _evaluate_gradient(gradient, x + perturbations[i, j], batch[i], d, use_mp, where)
        total = total + sample_sum / m
    return total / b
