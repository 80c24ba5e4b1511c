"""bgm21 §3, Definition 2, Lemmas 3–4 — generalized linear losses (GLL), their Moreau envelopes, Algorithm 3's oracle.

Definition 2 (bgm21 §3): f(w, (x, y)) = ℓ^{(y)}(⟨x, w⟩) with ℓ^{(y)}: R → R L0-Lipschitz and max_x ‖x‖_* ≤ R. Here a
loss object is the family y ↦ ℓ^{(y)}, evaluated on a vector of margins u = ⟨x, w⟩ and labels y (one entry per record,
broadcast together). Every loss has ``value(u, y)``, ``subgradient(u, y)`` (one element of ∂ℓ^{(y)}(u), with
|·| ≤ L0), ``lipschitz`` (L0, the sup of |subgradient|, attained or approached), ``convex`` and ``smoothness``
(Lipschitz constant of the derivative; ``math.inf`` for the nonsmooth ones):

===================  ====================================  ==================  ============================
loss                 ℓ^{(y)}(u)                             labels              Moreau envelope
===================  ====================================  ==================  ============================
``AbsoluteLoss``     L0·|u − y|                             real                closed form (Huber)
``HingeLoss``        L0·max(0, 1 − yu)                      y ∈ {−1, +1}        closed form
``HuberLoss``        L0·h_δ(u − y)                          real                closed form (Huber, δ + L0/β)
``LogisticLoss``     L0·log(1 + e^{−yu})                    y ∈ {−1, +1}        none: bisection
===================  ====================================  ==================  ============================

with h_δ(r) = r²/(2δ) for |r| ≤ δ and |r| − δ/2 otherwise.

Moreau smoothing (bgm21 §3, Lemma 3; the construction of Appendix A.1 is missing from the paper and is **rebuilt**):
ℓ_β(u) = min_v ℓ(v) + (β/2)(v − u)², prox_{ℓ/β}(u) its minimiser, ℓ_β′(u) = β(u − prox_{ℓ/β}(u)). For convex L0-Lipschitz
ℓ: |u − prox| ≤ L0/β, |ℓ_β′| ≤ L0, ℓ_β′ is β-Lipschitz, and 0 ≤ ℓ − ℓ_β ≤ L0²/(2β) (these imply Lemma 3's printed
constants 2L0R and 2L0²/β).

Closed forms (derived; checked against bisection and ``scipy.optimize.minimize_scalar`` in the tests):

* absolute: prox = y + soft(u − y, L0/β); ℓ_β = L0·h_{L0/β}(u − y); ℓ_β′ = clip(β(u − y), −L0, L0).
* hinge, s = yu: prox = y·t with t = s (s ≥ 1), 1 (1 − L0/β ≤ s < 1), s + L0/β (s < 1 − L0/β);
  ℓ_β = 0, (β/2)(1 − s)², L0(1 − s) − L0²/(2β) on those pieces; ℓ_β′ = −y·clip(β(1 − s), 0, L0).
* Huber: the envelope of an envelope is an envelope (1/β′ = 1/β_0 + 1/β), and L0·h_δ is the envelope of L0|·| at
  β_0 = L0/δ, so ℓ_β = L0·h_{δ + L0/β}(u − y) and ℓ_β′ = L0·clip((u − y)/(δ + L0/β), −1, 1).

Algorithm 3 (Lemma 4's oracle 𝒪_{β,α,R}; **rebuilt** — Appendix A.1 is missing; the paper states only "the bisection
method" and the running time O(log(L0²R²/α²))): ``moreau_prox_bisection`` bisects the β-strongly convex
φ(v) = ℓ(v) + (β/2)(v − u)² on the bracket [u − L0/β, u + L0/β] (which always holds the prox), keeping the half where a
subgradient of φ changes sign (any subgradient works: strong convexity makes every subgradient negative left of the
prox and positive right of it). After K steps |v − prox| ≤ (L0/β)·2^{−K}; with K = ``bisection_steps(L0, R, α)`` =
⌈log₂(L0R/α)⌉ the oracle ``moreau_glm_gradient`` returns β(u − v)·x with error ≤ α for ‖x‖_* ≤ R, and its norm never
exceeds L0‖x‖_* (v stays in the bracket) — the bound the privacy analyses use.

Arithmetic: float64 throughout, vectorised over records (NumPy broadcasting of u and y). Inputs are validated (finite,
right labels, β > 0); a bracket that overflows float64 raises rather than returning a wrong number.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from .validation import check_array, check_int, check_real

__all__ = [
    "GLL",
    "AbsoluteLoss",
    "HingeLoss",
    "HuberLoss",
    "LogisticLoss",
    "bisection_steps",
    "moreau_prox_bisection",
    "moreau_prox",
    "moreau_envelope",
    "moreau_gradient",
    "moreau_glm_gradient",
    "DEFAULT_BISECTION_STEPS",
]

#: Steps used when a generic envelope/gradient is asked without an accuracy: the bracket (width 2L0/β) shrinks by
#: 2^−100, far below float64 resolution; once the midpoint rounds to an end the remaining steps change nothing.
DEFAULT_BISECTION_STEPS = 100

METHODS = ("auto", "closed_form", "bisection")


def _real_values(name: str, value) -> np.ndarray:
    if isinstance(value, np.ndarray) and value.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {value.dtype}")
    if isinstance(value, (bool, str, bytes)):
        raise TypeError(f"{name} must be a real number or array, got {type(value).__name__} {value!r}")
    arr = check_array(name, value)
    if arr.dtype == object:
        arr = arr.astype(np.float64)
    return arr


def _broadcast(u, y) -> tuple[np.ndarray, np.ndarray]:
    u = _real_values("u", u)
    y = _real_values("y", y)
    try:
        u, y = np.broadcast_arrays(u, y)
    except ValueError:
        raise ValueError(f"u and y must broadcast together, got shapes {u.shape} and {y.shape}") from None
    return u.astype(np.float64), y.astype(np.float64)


def _out(arr: np.ndarray):
    return arr[()] if arr.ndim == 0 else arr


class GLL:
    """The scalar losses ℓ^{(y)} of a generalized linear loss (bgm21 Definition 2). Subclasses set the attributes."""

    name: str = "gll"
    #: True when labels must be ±1 (classification losses).
    binary_labels: bool = False

    def __init__(self, lipschitz=1.0):
        #: L0: every subgradient has |·| ≤ L0 (Definition 2).
        self.lipschitz = float(check_real("lipschitz", lipschitz, positive=True))
        self.convex = True
        #: Lipschitz constant of ℓ′ (math.inf for the nonsmooth losses).
        self.smoothness = math.inf

    def __repr__(self) -> str:
        return f"{type(self).__name__}(lipschitz={self.lipschitz})"

    def _labels(self, y: np.ndarray) -> None:
        if self.binary_labels and not np.all((y == 1.0) | (y == -1.0)):
            raise ValueError(f"y must be -1 or +1 for {type(self).__name__}")

    def _prepare(self, u, y):
        u, y = _broadcast(u, y)
        self._labels(y)
        return u, y

    # subclasses implement _value, _subgradient and, where a closed form exists, _prox/_envelope/_envelope_gradient
    has_closed_form = False

    def value(self, u, y):
        """ℓ^{(y)}(u), elementwise."""
        u, y = self._prepare(u, y)
        return _out(self._value(u, y))

    def subgradient(self, u, y):
        """One element of ∂ℓ^{(y)}(u) (the derivative where it exists), elementwise; |·| ≤ L0."""
        u, y = self._prepare(u, y)
        return _out(self._subgradient(u, y))


class AbsoluteLoss(GLL):
    """ℓ^{(y)}(u) = L0·|u − y| (least absolute deviation); subgradient L0·sign(u − y), 0 at the kink."""

    name = "absolute"
    has_closed_form = True

    def _value(self, u, y):
        return self.lipschitz * np.abs(u - y)

    def _subgradient(self, u, y):
        return self.lipschitz * np.sign(u - y)

    def _prox(self, u, y, beta):
        r = u - y
        t = self.lipschitz / beta
        return y + np.sign(r) * np.maximum(np.abs(r) - t, 0.0)

    def _envelope(self, u, y, beta):
        return self.lipschitz * _huber(u - y, self.lipschitz / beta)

    def _envelope_gradient(self, u, y, beta):
        return np.clip(beta * (u - y), -self.lipschitz, self.lipschitz)


class HingeLoss(GLL):
    """ℓ^{(y)}(u) = L0·max(0, 1 − yu), y ∈ {±1}; subgradient −L0·y for yu < 1, 0 for yu ≥ 1 (0 at the kink)."""

    name = "hinge"
    binary_labels = True
    has_closed_form = True

    def _value(self, u, y):
        return self.lipschitz * np.maximum(0.0, 1.0 - y * u)

    def _subgradient(self, u, y):
        return np.where(y * u < 1.0, -self.lipschitz * y, 0.0)

    def _prox(self, u, y, beta):
        s = y * u
        t = np.where(s >= 1.0, s, np.where(s >= 1.0 - self.lipschitz / beta, 1.0, s + self.lipschitz / beta))
        return y * t

    def _envelope(self, u, y, beta):
        s = y * u
        L0 = self.lipschitz
        return np.where(
            s >= 1.0,
            0.0,
            np.where(s >= 1.0 - L0 / beta, 0.5 * beta * (1.0 - s) ** 2, L0 * (1.0 - s) - L0**2 / (2.0 * beta)),
        )

    def _envelope_gradient(self, u, y, beta):
        return -y * np.clip(beta * (1.0 - y * u), 0.0, self.lipschitz)


class HuberLoss(GLL):
    """ℓ^{(y)}(u) = L0·h_δ(u − y), h_δ(r) = r²/(2δ) (|r| ≤ δ), |r| − δ/2 (|r| > δ); smooth, ℓ′ is (L0/δ)-Lipschitz."""

    name = "huber"
    has_closed_form = True

    def __init__(self, delta=1.0, lipschitz=1.0):
        super().__init__(lipschitz)
        self.delta = float(check_real("delta", delta, positive=True))
        self.smoothness = self.lipschitz / self.delta

    def __repr__(self) -> str:
        return f"HuberLoss(delta={self.delta}, lipschitz={self.lipschitz})"

    def _value(self, u, y):
        return self.lipschitz * _huber(u - y, self.delta)

    def _subgradient(self, u, y):
        return self.lipschitz * np.clip((u - y) / self.delta, -1.0, 1.0)

    def _envelope_gradient(self, u, y, beta):
        return self.lipschitz * np.clip((u - y) / (self.delta + self.lipschitz / beta), -1.0, 1.0)

    def _prox(self, u, y, beta):
        return u - self._envelope_gradient(u, y, beta) / beta

    def _envelope(self, u, y, beta):
        return self.lipschitz * _huber(u - y, self.delta + self.lipschitz / beta)


class LogisticLoss(GLL):
    """ℓ^{(y)}(u) = L0·log(1 + e^{−yu}), y ∈ {±1}; ℓ′ = −L0·y·σ(−yu), |ℓ′| < L0, ℓ′ is (L0/4)-Lipschitz.

    No closed-form Moreau envelope: ``moreau_*`` use bisection.
    """

    name = "logistic"
    binary_labels = True

    def __init__(self, lipschitz=1.0):
        super().__init__(lipschitz)
        self.smoothness = self.lipschitz / 4.0

    def _value(self, u, y):
        return self.lipschitz * np.logaddexp(0.0, -y * u)

    def _subgradient(self, u, y):
        return -self.lipschitz * y * expit(-y * u)


def _huber(r, delta):
    a = np.abs(r)
    return np.where(a <= delta, r * r / (2.0 * delta), a - delta / 2.0)


# ---------------------------------------------------------------------------------------------------
# Moreau envelope


def _check_loss(loss) -> GLL:
    if not isinstance(loss, GLL):
        raise TypeError(f"loss must be a reference.gll.GLL, got {type(loss).__name__}")
    if not loss.convex:
        raise ValueError(f"loss {loss!r} is not convex; the Moreau bisection needs a convex ℓ")
    return loss


def _check_beta(beta) -> float:
    return float(check_real("beta", beta, positive=True))


def bisection_steps(lipschitz, feature_bound, alpha) -> int:
    """K = max(0, ⌈log₂(L0·R/α)⌉): the bisection steps for which Algorithm 3 is α-accurate (Lemma 4; rebuilt).

    Computed so that L0·R·2^{−K} ≤ α exactly in float64 (the float log₂ is corrected by one step either way).
    """
    L0 = float(check_real("lipschitz", lipschitz, positive=True))
    R = float(check_real("feature_bound", feature_bound, positive=True))
    a = float(check_real("alpha", alpha, positive=True))
    ratio = L0 * R / a
    if not math.isfinite(ratio):
        raise ValueError(f"lipschitz*feature_bound/alpha overflowed float64 ({L0}*{R}/{a})")
    if ratio <= 1.0:
        return 0
    K = max(0, math.ceil(math.log2(ratio)))
    while math.ldexp(ratio, -K) > 1.0:
        K += 1
    while K > 0 and math.ldexp(ratio, -(K - 1)) <= 1.0:
        K -= 1
    return K


def moreau_prox_bisection(u, y, loss: GLL, beta, steps: int) -> np.ndarray:
    """Algorithm 3's bisection (rebuilt): prox_{ℓ/β}(u) to within (L0/β)·2^{−steps}, vectorised over records.

    Bracket [u − L0/β, u + L0/β]; each step evaluates one subgradient g of φ(v) = ℓ(v) + (β/2)(v − u)² at the midpoint
    m and keeps [lo, m] if g > 0, [m, hi] if g < 0, [m, m] if g = 0. Returns the final midpoint.
    """
    loss = _check_loss(loss)
    beta = _check_beta(beta)
    steps = check_int("steps", steps, minimum=0)
    u, y = loss._prepare(u, y)
    radius = loss.lipschitz / beta
    with np.errstate(over="ignore", invalid="ignore"):
        lo, hi = u - radius, u + radius
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("the bisection bracket u ± L0/beta overflowed float64; rescale u or increase beta")
    for _ in range(steps):
        m = 0.5 * (lo + hi)
        g = loss._subgradient(m, y) + beta * (m - u)
        lo = np.where(g < 0.0, m, np.where(g > 0.0, lo, m))
        hi = np.where(g > 0.0, m, np.where(g < 0.0, hi, m))
    return _out(0.5 * (lo + hi))


def _method(loss: GLL, method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "closed_form" and not loss.has_closed_form:
        raise ValueError(f"{type(loss).__name__} has no closed-form Moreau envelope; use method='bisection'")
    if method == "auto":
        return "closed_form" if loss.has_closed_form else "bisection"
    return method


def moreau_prox(u, y, loss: GLL, beta, *, method: str = "auto", steps: int = DEFAULT_BISECTION_STEPS):
    """prox_{ℓ/β}(u) = argmin_v ℓ(v) + (β/2)(v − u)²: closed form where known, else bisection (``steps``)."""
    loss = _check_loss(loss)
    beta = _check_beta(beta)
    if _method(loss, method) == "bisection":
        return moreau_prox_bisection(u, y, loss, beta, steps)
    u, y = loss._prepare(u, y)
    return _out(loss._prox(u, y, beta))


def moreau_envelope(u, y, loss: GLL, beta, *, method: str = "auto", steps: int = DEFAULT_BISECTION_STEPS):
    """ℓ_β(u) = min_v ℓ(v) + (β/2)(v − u)² (Lemma 3): closed form where known, else ℓ(v) + (β/2)(v − u)² at the
    bisection prox v (error ≤ 2L0·|v − prox| ≤ 2L0²/β·2^{−steps})."""
    loss = _check_loss(loss)
    beta = _check_beta(beta)
    if _method(loss, method) == "closed_form":
        u, y = loss._prepare(u, y)
        return _out(loss._envelope(u, y, beta))
    u, y = loss._prepare(u, y)
    v = np.asarray(moreau_prox_bisection(u, y, loss, beta, steps))
    return _out(loss._value(v, y) + 0.5 * beta * (v - u) ** 2)


def moreau_gradient(u, y, loss: GLL, beta, *, method: str = "auto", steps: int = DEFAULT_BISECTION_STEPS):
    """ℓ_β′(u) = β(u − prox_{ℓ/β}(u)): closed form where known, else from the bisection prox (error ≤ L0·2^{−steps})."""
    loss = _check_loss(loss)
    beta = _check_beta(beta)
    if _method(loss, method) == "closed_form":
        u, y = loss._prepare(u, y)
        return _out(loss._envelope_gradient(u, y, beta))
    u, y = loss._prepare(u, y)
    v = np.asarray(moreau_prox_bisection(u, y, loss, beta, steps))
    return _out(beta * (u - v))


def moreau_glm_gradient(w, X, y, loss: GLL, beta, alpha, feature_bound) -> np.ndarray:
    """Algorithm 3, the oracle 𝒪_{β,α,R} of Lemma 4 (rebuilt): per-record rows β(u_i − v_i)·x_i, u_i = ⟨w, x_i⟩.

    v_i is the bisection prox after K = ``bisection_steps(L0, R, α)`` steps, so each row is within α of
    ∇f_β(w, (x_i, y_i)) = ℓ_β′(u_i)·x_i in any dual norm with ‖x_i‖_* ≤ R (``feature_bound``), and its dual norm is at
    most L0‖x_i‖_*. Returns an (m, d) array for X of shape (m, d), w of shape (d,), y of shape (m,).
    """
    loss = _check_loss(loss)
    beta = _check_beta(beta)
    w = _real_values("w", w)
    X = _real_values("X", X)
    if w.ndim != 1:
        raise ValueError(f"w must have 1 dimension(s), got shape {w.shape}")
    if X.ndim != 2 or X.shape[1] != w.shape[0]:
        raise ValueError(f"X must have shape (m, {w.shape[0]}), got {X.shape}")
    y = _real_values("y", y)
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
    K = bisection_steps(loss.lipschitz, feature_bound, alpha)
    with np.errstate(over="ignore", invalid="ignore"):
        u = X @ w
    if not np.all(np.isfinite(u)):
        raise ValueError("the margins X @ w overflowed float64")
    v = np.asarray(moreau_prox_bisection(u, y, loss, beta, K))
    return (beta * (u - v))[:, None] * X
