"""Ground truth for the bgm21 §3 claims (GLL smoothing, Algorithm 3, Phased-SGD), computed here, independently of the
subject: closed-form Moreau envelopes of the absolute, hinge and Huber losses (derived from the definition
ℓ_β(u) = min_v ℓ(v) + (β/2)(v − u)²), the prox of the logistic loss by Brent's root finder on the optimality condition
ℓ′(v) + β(v − u) = 0, dual norms, float64 slacks, and a random convex max-of-affine loss for the bisection claim.

Private to the folder (the module name starts with ``_``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize
from scipy.special import expit

from reference.gll import GLL, AbsoluteLoss, HingeLoss, HuberLoss, LogisticLoss

__all__ = [
    "UNIT",
    "float_slack",
    "dual_norm_rows",
    "envelope_truth",
    "envelope_gradient_truth",
    "MaxAffineLoss",
    "random_max_affine",
    "steps_exact",
    "loss_family",
]

#: The unit roundoff of float64.
UNIT = 2.0**-53

#: Roundings allowed in one computed quantity: an envelope or a gradient is a few dozen float64 operations on numbers
#: no larger than the magnitudes passed to ``float_slack`` (Higham's γ_n with n = 64 is 64u to first order).
ROUNDINGS = 64


def float_slack(*magnitudes) -> np.ndarray:
    """64·u·Σ|magnitudes|: the absolute float64 error of a quantity computed in ≤ 64 roundings of these terms."""
    total = 0.0
    for m in magnitudes:
        total = total + np.abs(np.asarray(m, dtype=np.float64))
    return ROUNDINGS * UNIT * total


def dual_norm_rows(X, q) -> np.ndarray:
    """‖x_i‖_q for each row (q = 2 or ∞ here): the dual norms of the ℓ_2 and ℓ_1 settings."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    return np.max(np.abs(X), axis=1) if math.isinf(q) else np.sqrt(np.sum(X * X, axis=1))


def _huber(r, delta):
    a = np.abs(r)
    return np.where(a <= delta, r * r / (2.0 * delta), a - delta / 2.0)


def _logistic_prox(u, y, L0, beta):
    """Root of β(v − u) − L0·y·σ(−yv) = 0 (the logistic prox), by brentq on [u − L0/β, u + L0/β] per entry."""
    out = np.empty_like(u)
    for k, (uk, yk) in enumerate(zip(u.ravel(), y.ravel())):
        h = lambda v: beta * (v - uk) - L0 * yk * expit(-yk * v)  # noqa: E731 - increasing in v
        lo, hi = uk - L0 / beta, uk + L0 / beta
        if h(lo) >= 0.0:
            out.flat[k] = lo
        elif h(hi) <= 0.0:
            out.flat[k] = hi
        else:
            out.flat[k] = optimize.brentq(h, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    return out


def prox_truth(loss: GLL, u, y, beta):
    """prox_{ℓ/β}(u), derived case by case from the optimality condition 0 ∈ ∂ℓ(v) + β(v − u)."""
    u, y = np.broadcast_arrays(np.asarray(u, dtype=np.float64), np.asarray(y, dtype=np.float64))
    L0, t = loss.lipschitz, loss.lipschitz / beta
    if isinstance(loss, AbsoluteLoss):  # soft thresholding of u − y at L0/β
        r = u - y
        return np.where(r > t, u - t, np.where(r < -t, u + t, y))
    if isinstance(loss, HingeLoss):  # in s = yu: stay (s ≥ 1), stop at the kink, or move by L0/β
        s = y * u
        return y * np.where(s >= 1.0, s, np.where(s >= 1.0 - t, 1.0, s + t))
    if isinstance(loss, HuberLoss):  # quadratic zone: v − y = (u − y)·δ/(δ + L0/β); linear zone: move by L0/β
        r, d = u - y, loss.delta
        inside = np.abs(r) <= d + t
        return np.where(inside, y + r * d / (d + t), u - np.sign(r) * t)
    if isinstance(loss, LogisticLoss):
        return _logistic_prox(u, y, L0, beta)
    raise TypeError(f"no ground truth for {type(loss).__name__}")


def _value(loss: GLL, v, y):
    L0 = loss.lipschitz
    if isinstance(loss, AbsoluteLoss):
        return L0 * np.abs(v - y)
    if isinstance(loss, HingeLoss):
        return L0 * np.maximum(0.0, 1.0 - y * v)
    if isinstance(loss, HuberLoss):
        return L0 * _huber(v - y, loss.delta)
    if isinstance(loss, LogisticLoss):
        return L0 * np.logaddexp(0.0, -y * v)
    raise TypeError(f"no ground truth for {type(loss).__name__}")


def loss_value(loss: GLL, u, y):
    """ℓ^{(y)}(u) from the loss's defining formula (not the subject)."""
    u, y = np.broadcast_arrays(np.asarray(u, dtype=np.float64), np.asarray(y, dtype=np.float64))
    return _value(loss, u, y)


def envelope_truth(loss: GLL, u, y, beta):
    """ℓ_β(u) = ℓ(p) + (β/2)(p − u)² at the exact prox p."""
    u, y = np.broadcast_arrays(np.asarray(u, dtype=np.float64), np.asarray(y, dtype=np.float64))
    p = prox_truth(loss, u, y, beta)
    return _value(loss, p, y) + 0.5 * beta * (p - u) ** 2


def envelope_gradient_truth(loss: GLL, u, y, beta):
    """ℓ_β′(u) = β(u − prox_{ℓ/β}(u)) (the envelope's derivative, Moreau 1965)."""
    u, y = np.broadcast_arrays(np.asarray(u, dtype=np.float64), np.asarray(y, dtype=np.float64))
    return beta * (u - prox_truth(loss, u, y, beta))


def loss_family(L0: float):
    """The four GLLs of reference.gll at Lipschitz constant L0 (test problems)."""
    return (AbsoluteLoss(L0), HingeLoss(L0), HuberLoss(delta=0.5, lipschitz=L0), LogisticLoss(L0))


class MaxAffineLoss(GLL):
    """ℓ^{(y)}(v) = max_k a_k(v − y) + b_k with slopes a_k ∈ [−L0, L0]: a random convex L0-Lipschitz GLL (no closed form
    used by the subject), its subgradient the slope of the first active piece."""

    name = "max_affine"

    def __init__(self, slopes, intercepts, lipschitz):
        super().__init__(lipschitz)
        self.slopes = np.asarray(slopes, dtype=np.float64)
        self.intercepts = np.asarray(intercepts, dtype=np.float64)

    def _pieces(self, u, y):
        return self.slopes * (np.asarray(u)[..., None] - np.asarray(y)[..., None]) + self.intercepts

    def _value(self, u, y):
        return np.max(self._pieces(u, y), axis=-1)

    def _subgradient(self, u, y):
        return self.slopes[np.argmax(self._pieces(u, y), axis=-1)]


def random_max_affine(gen, L0: float) -> MaxAffineLoss:
    """2–6 pieces with slopes uniform in [−L0, L0] (the extremes included, so L0 is attained) and random intercepts."""
    k = int(gen.integers(2, 7))
    slopes = np.concatenate([[-L0, L0], gen.uniform(-L0, L0, k - 2)])
    return MaxAffineLoss(slopes, gen.normal(0.0, L0, k), L0)


def steps_exact(L0: float, R: float, alpha: float) -> int:
    """⌈log₂(L0R/α)⌉, 0 when α ≥ L0R, with exact rational arithmetic (floats are dyadic rationals)."""
    from fractions import Fraction

    ratio = Fraction(L0) * Fraction(R) / Fraction(alpha)
    if ratio <= 1:
        return 0
    k = 0
    while Fraction(2) ** k < ratio:
        k += 1
    return k
