"""zo_o2nc Alg 1, Alg 2, Alg 6 and Lemma 2.2(iv); dpzero eq. (2); nsnc_improved Algorithm 5: vectorized float64
twins of ``reference.estimators``.

Same names, signatures and semantics as the reference; the differences are:

* The loss is called ONCE per estimate, vectorized: ``loss(X, Z)`` with points X of shape (..., d) and
  data Z of shape (..., p) whose leading axes broadcast, returning shape (...). The ± (or x/y) points
  are stacked on a new leading axis of length 2, and the batch is passed as ``batch[:, None, :]`` of
  shape (b, 1, p) against points of shape (2, ..., b, m, d), so the loss must return shape
  (2, ..., b, m) exactly (checked). ``first_order_estimate`` calls ``gradient(X, Z)`` once the same way,
  with the points x + y of shape (..., b, m, d) against ``batch[:, None, :]``, and the gradient must return
  shape (..., b, m, d) exactly (checked).
* ``directions`` (``perturbations``) may carry leading replicate axes: shape (..., b, m, d) gives an estimate
  of shape (..., d), one per replicate, each equal to the reference on that slice. For
  ``finite_difference`` and ``per_sample_finite_differences`` the single ``direction`` may likewise be
  (..., d), giving shape (...) and (..., b).
* Everything is float64; mpmath inputs are rounded to float64 first.
* As in the reference, points are new arrays and the data reach the loss as read-only views, so
  the inputs are never mutated.

The randomness contract is the reference's: these functions draw nothing, so given the same direction
arrays they agree with the reference draw for draw up to float64 rounding (validated by backend
claims and tests/test_estimators.py). A non-finite loss value (gradient entry) raises ``ValueError`` naming
the sample, direction (perturbation) and replicate.
"""

from __future__ import annotations

import numpy as np

from ..estimators import (
    DIRECTION_LAWS,
    NONFINITE_MODES,
    _check_batch,
    _check_gradient,
    _check_loss,
    _check_point,
    _read_only,
    direction_scale,
)
from ..precision import to_float
from ..validation import check_array, check_real

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


# ---------------------------------------------------------------------------------------------------
# Validation (float64 versions of the reference checks)


def _float_array(arr: np.ndarray) -> np.ndarray:
    return to_float(arr) if arr.dtype == object else arr


def _check_direction(direction, d: int) -> np.ndarray:
    """A single direction u of shape (..., d)."""
    arr = _float_array(check_array("direction", direction))
    if arr.ndim < 1 or arr.shape[-1] != d:
        raise ValueError(f"direction must have shape (..., {d}) to match x, got {arr.shape}")
    return arr


def _check_directions(directions, b: int, d: int, name: str = "directions") -> np.ndarray:
    """Directions u_ij (or perturbations y_ij: ``name``) of shape (..., b, m, d) with m ≥ 1; norms deliberately
    not checked."""
    arr = _float_array(check_array(name, directions))
    if arr.ndim < 3 or arr.shape[-3] != b or arr.shape[-1] != d:
        raise ValueError(
            f"{name} must have shape (..., b, m, d) = (..., {b}, m, {d}) to match batch and x, got {arr.shape}"
        )
    if arr.shape[-2] == 0:
        raise ValueError(f"{name} must have at least one entry per sample (m >= 1), got shape {arr.shape}")
    return arr


def _positive(name: str, value) -> float:
    return float(check_real(name, value, positive=True))


def _evaluate_losses(loss, points: np.ndarray, data: np.ndarray, expected: tuple, describe,
                     allow_nonfinite: bool = False) -> np.ndarray:
    """One vectorized call loss(points, data), checked to have shape ``expected`` and (unless allowed) finite values."""
    values = np.asarray(loss(points, data))
    if values.dtype == object:
        values = to_float(values)
    if values.shape != expected:
        raise ValueError(
            f"loss must return shape {expected} for points of shape {points.shape} and data of shape "
            f"{data.shape} (leading axes broadcast), got {values.shape}"
        )
    if values.dtype.kind not in "fiu":
        raise TypeError(f"loss must return real numbers, got dtype {values.dtype}")
    values = values.astype(np.float64, copy=False)
    bad = ~np.isfinite(values)
    if np.any(bad) and not allow_nonfinite:
        index = tuple(int(k) for k in np.argwhere(bad)[0])
        raise ValueError(f"loss returned a non-finite value ({values[index]}) at {describe(index)}")
    return values


def _describe_grid(first_axis: tuple[str, str]):
    """Describe an index (s, *replicate, i, j) of a (2, ..., b, m) loss grid."""

    def describe(index: tuple) -> str:
        s, replicate, i, j = index[0], index[1:-2], index[-2], index[-1]
        text = f"sample i={i}, direction j={j} (0-based)"
        if replicate:
            text += f", replicate {replicate}"
        return f"{text}, point {first_axis[s]}"

    return describe


def _stacked_points(u: np.ndarray, h: float, *rows: tuple[np.ndarray, int]) -> np.ndarray:
    """np.stack([base + h·u if sign > 0 else base − h·u for base, sign in rows]), bitwise, in fresh memory.

    Written into one preallocated array (the step h·u lives in the last slot until it is overwritten)
    because the temporaries of np.stack cost ~10x the arithmetic at benchmark sizes.
    """
    out = np.empty((len(rows), *np.broadcast_shapes(u.shape, rows[0][0].shape)))
    step = np.multiply(u, h, out=out[-1])
    for k, (base, sign) in enumerate(rows):
        (np.add if sign > 0 else np.subtract)(base, step, out=out[k])
    return out


def _direction_average(weights: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """(1/(bm)) Σ_{i,j} w_ij u_ij for weights (..., b, m) and directions (..., b, m, d) -> (..., d)."""
    *lead, b, m, d = directions.shape
    flat_w = weights.reshape(*lead, 1, b * m)
    flat_u = directions.reshape(*lead, b * m, d)
    return np.matmul(flat_w, flat_u)[..., 0, :] / (b * m)


# ---------------------------------------------------------------------------------------------------
# Public estimators


def finite_difference(loss, x, z, direction, perturbation):
    """Central difference (f(x+hu; z) − f(x−hu; z)) / (2h), vectorized over directions (..., d).

    dpzero Alg 2 line 4 / eq. (2); zo_o2nc Alg 1 line 2. Returns a float for direction of shape (d,), else an
    array of shape (...). perturbation: δ in zo_o2nc, λ in dpzero.
    """
    _check_loss(loss)
    x = _float_array(_check_point("x", x))
    z = _read_only(_float_array(check_array("z", z, ndim=1)))
    u = _check_direction(direction, x.shape[0])
    h = _positive("perturbation", perturbation)
    points = _stacked_points(u, h, (x, +1), (x, -1))
    lead = u.shape[:-1]

    def describe(index):
        where = "x + perturbation·u" if index[0] == 0 else "x − perturbation·u"
        return f"direction {index[1:]}, point {where}" if lead else f"point {where}"

    values = _evaluate_losses(loss, points, z, (2, *lead), describe)
    fd = (values[0] - values[1]) / (2 * h)
    return float(fd) if not lead else fd


def per_sample_finite_differences(loss, x, batch, direction, perturbation, *, nonfinite: str = "raise") -> np.ndarray:
    """DPZero's a_i = (f(x+λu; ξ_i) − f(x−λu; ξ_i)) / (2λ) for a shared u, vectorized over the batch.

    dpzero Alg 2 ("for i = 1..n"). direction: shape (d,) -> result (b,); shape (..., d) -> (..., b).
    nonfinite: "raise" or "return", as the reference's.
    """
    if nonfinite not in NONFINITE_MODES:
        raise ValueError(f"nonfinite must be one of {NONFINITE_MODES}, got {nonfinite!r}")
    _check_loss(loss)
    x = _float_array(_check_point("x", x))
    batch = _read_only(_float_array(_check_batch(batch)))
    u = _check_direction(direction, x.shape[0])
    h = _positive("perturbation", perturbation)
    b = batch.shape[0]
    points = _stacked_points(u, h, (x, +1), (x, -1))[..., None, :]  # (2, ..., 1, d) against batch (b, p)
    lead = u.shape[:-1]

    def describe(index):
        where = "x + perturbation·u" if index[0] == 0 else "x − perturbation·u"
        text = f"sample i={index[-1]} (0-based)"
        if lead:
            text += f", direction {index[1:-1]}"
        return f"{text}, point {where}"

    values = _evaluate_losses(loss, points, batch, (2, *lead, b), describe, nonfinite == "return")
    with np.errstate(invalid="ignore", over="ignore"):  # inf − inf is NaN by design in "return" mode
        return (values[0] - values[1]) / (2 * h)


def two_point_estimate(loss, x, batch, directions, perturbation, direction_law: str = "unit_sphere") -> np.ndarray:
    """zo_o2nc Alg 1 (GRAD) with m directions per sample, vectorized: (1/b)Σ_i(1/m)Σ_j c·fd_ij·u_ij.

    c = ``direction_scale(direction_law, d)``. directions: (..., b, m, d) -> result (..., d).
    m = d with ``"unit_sphere"`` is GRAD, m = 1 is Alg 6's inner estimator, and ``"scaled_sphere"`` /
    ``"gaussian"`` with m = 1 is dpzero eq. (2) averaged over the batch.
    """
    _check_loss(loss)
    x = _float_array(_check_point("x", x))
    batch = _read_only(_float_array(_check_batch(batch)))
    b, d = batch.shape[0], x.shape[0]
    u = _check_directions(directions, b, d)
    h = _positive("perturbation", perturbation)
    scale = direction_scale(direction_law, d)
    points = _stacked_points(u, h, (x, +1), (x, -1))  # (2, ..., b, m, d)
    describe = _describe_grid(("x + perturbation·u", "x − perturbation·u"))
    values = _evaluate_losses(loss, points, batch[:, None, :], points.shape[:-1], describe)
    fd = (values[0] - values[1]) / (2 * h)
    return scale * _direction_average(fd, u)


def one_point_estimate(loss, x, batch, directions, smoothing_radius) -> np.ndarray:
    """zo_o2nc Lemma 2.2(iv) one-point form (1/b)Σ_i(1/m)Σ_j (d/δ) f(x+δu_ij; z_i) u_ij, vectorized.

    directions: (..., b, m, d) -> result (..., d). smoothing_radius: δ in zo_o2nc.
    """
    _check_loss(loss)
    x = _float_array(_check_point("x", x))
    batch = _read_only(_float_array(_check_batch(batch)))
    b, d = batch.shape[0], x.shape[0]
    u = _check_directions(directions, b, d)
    delta = _positive("smoothing_radius", smoothing_radius)
    scale = direction_scale("unit_sphere", d)
    points = _stacked_points(u, delta, (x, +1))  # (1, ..., b, m, d): same grid layout as the two-point forms
    describe = _describe_grid(("x + smoothing_radius·u",))
    values = _evaluate_losses(loss, points, batch[:, None, :], points.shape[:-1], describe)[0]
    return (scale / delta) * _direction_average(values, u)


def diff_estimate(loss, x, y, batch, directions, smoothing_radius) -> np.ndarray:
    """zo_o2nc Alg 2 (DIFF), vectorized: (1/b)Σ_i(1/m)Σ_j (d/δ)(f(x+δu_ij; z_i) − f(y+δu_ij; z_i)) u_ij.

    The same u_ij at x and y. directions: (..., b, m, d) -> result (..., d). smoothing_radius: δ.
    """
    _check_loss(loss)
    x = _float_array(_check_point("x", x))
    y = _float_array(_check_point("y", y, d=x.shape[0]))
    batch = _read_only(_float_array(_check_batch(batch)))
    b, d = batch.shape[0], x.shape[0]
    u = _check_directions(directions, b, d)
    delta = _positive("smoothing_radius", smoothing_radius)
    scale = direction_scale("unit_sphere", d)
    points = _stacked_points(u, delta, (x, +1), (y, +1))  # (2, ..., b, m, d), the same step δ·u_ij
    describe = _describe_grid(("x + smoothing_radius·u", "y + smoothing_radius·u"))
    values = _evaluate_losses(loss, points, batch[:, None, :], points.shape[:-1], describe)
    return (scale / delta) * _direction_average(values[0] - values[1], u)


def first_order_estimate(gradient, x, batch, perturbations) -> np.ndarray:
    """nsnc_improved Algorithm 5, vectorized: (1/b)Σ_i(1/m)Σ_j ∇f(x + y_ij; z_i).

    One call ``gradient(points, batch[:, None, :])`` with points x + y of shape (..., b, m, d), which must return
    shape (..., b, m, d). perturbations: y_ij, (..., b, m, d), already scaled (ball of radius α) -> result (..., d).
    """
    _check_gradient(gradient)
    x = _float_array(_check_point("x", x))
    batch = _read_only(_float_array(_check_batch(batch)))
    b, d = batch.shape[0], x.shape[0]
    y = _check_directions(perturbations, b, d, "perturbations")
    points = np.add(x, y)  # fresh memory: x and the perturbations are never touched
    values = np.asarray(gradient(points, batch[:, None, :]))
    if values.dtype == object:
        values = to_float(values)
    if values.shape != points.shape:
        raise ValueError(
            f"gradient must return shape {points.shape} for points of shape {points.shape} and data of shape "
            f"{batch[:, None, :].shape} (leading axes broadcast), got {values.shape}"
        )
    if values.dtype.kind not in "fiu":
        raise TypeError(f"gradient must return real numbers, got dtype {values.dtype}")
    values = values.astype(np.float64, copy=False)
    bad = ~np.isfinite(values)
    if np.any(bad):
        index = tuple(int(k) for k in np.argwhere(bad)[0])
        replicate, i, j = index[:-3], index[-3], index[-2]
        where = f"sample i={i}, perturbation j={j} (0-based)" + (f", replicate {replicate}" if replicate else "")
        raise ValueError(f"gradient returned a non-finite value ({values[index]}) at {where}, point x + y")
    m = y.shape[-2]
    return np.sum(np.sum(values, axis=-2) / m, axis=-2) / b
