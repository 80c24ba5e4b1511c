"""Synthetic problems for DPZero's theory: two finite sums that satisfy Assumption 3.5 of
Zhang et al. 2024 (DPZero) exactly, unlike the quadratic of §5 and App. B.1 (erratum E10: not Lipschitz).

* (P1) ``PseudoHuber``: f(x; z) = √(‖A^{1/2}(x − z)‖² + s²), A diagonal with ‖A‖₂ = 1;
  L = √‖A‖₂ = 1, ℓ = ‖A‖₂/s, H = A/s, r = Tr(A)/‖A‖₂ = Tr(A).
* (P2) ``SubspaceLogistic``: f(x; (c, b)) = log(1 + exp(−b·<Uc, x>)), U ∈ R^{d×k} with orthonormal
  columns, ‖c‖ <= 1, b = ±1; L = 1, ℓ = 1/4, H = (1/(4n)) Σ a_i a_i^T with a_i = U c_i, r <= k.

Both follow reference.objectives.Objective: float64 points x (..., d) and rows z (..., p) broadcast
over leading axes; mpmath (object arrays of mpf) one point at a time at the working precision.
Neither has a closed-form ball-smoothed loss: the smoothed hooks raise NotImplementedError saying so
(estimate f_λ by Monte Carlo over v ~ U(ball) instead).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from scipy.special import expit

from .objectives import QUADRATIC_MODES, Objective
from .precision import is_mp, to_mp
from .rng import sample_ball, sample_sphere
from .validation import check_array, check_int, check_real

__all__ = ["PseudoHuber", "SubspaceLogistic", "FEATURE_LAWS"]

#: How SubspaceLogistic draws its coefficients c_i: uniform in the unit k-ball or on the unit sphere.
FEATURE_LAWS = ("ball", "sphere")

#: Tolerance on U^T U = I and on ‖c_i‖ <= 1 (float64 rounding of QR and of the samplers).
UNIT_TOLERANCE = 1e-12


def _check_generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _read_only(array) -> np.ndarray:
    array = np.array(array, dtype=np.float64, copy=True)
    array.flags.writeable = False
    return array


def _float_array(name: str, value, **rules) -> np.ndarray:
    """check_array, refusing mpmath input: data are float64 (mpmath is chosen by the point x)."""
    array = check_array(name, value, **rules)
    if array.dtype == object:
        raise TypeError(f"{name} must be float64 (mpmath is chosen by the point x, not by the data)")
    return array


def _check_arithmetic(arithmetic: str) -> bool:
    if arithmetic not in ("float64", "mpmath"):
        raise ValueError(f"arithmetic must be 'float64' or 'mpmath', got {arithmetic!r}")
    return arithmetic == "mpmath"


def _mp_matrix(array: np.ndarray) -> np.ndarray:
    return to_mp(np.asarray(array, dtype=np.float64))


def _no_smoothing(objective) -> None:
    raise NotImplementedError(
        f"{type(objective).__name__} has no closed-form ball-smoothed loss or gradient; estimate "
        "f_λ(x) = E_v f(x + λ√d·v) by Monte Carlo over v ~ U(unit ball) (reference.rng.sample_ball)"
    )


# ---------------------------------------------------------------------------------------------------
# (P2) logistic regression with features in a k-dimensional subspace


class SubspaceLogistic(Objective):
    """(P2), subspace logistic regression: f(x; z) = log(1 + exp(−b·<U c, x>)), data row z = (c_1..c_k, b).

    U ∈ R^{d×k} has orthonormal columns (``basis``), ‖c‖ <= 1 and b ∈ {−1, +1}, so a = Uc has
    ‖a‖ <= 1 and with m = <c, U^T x> (the margin before the label):

        ∇f = −b·σ(−b m)·U c,   ∇²f = σ(m)(1 − σ(m))·a a^T ⪯ a a^T/4,

    hence L = ``lipschitz`` = 1, ℓ = ``smoothness`` = 1/4, and Assumption 3.5(b) holds with
    H = ``hessian_bound()`` = (1/(4n)) Σ a_i a_i^T and r = ``effective_rank`` = Tr(H)/‖H‖₂ <= k.
    Evaluation never forms a_i: U^T x (O(dk) per point) then <c, U^T x> (O(k) per row); float64 losses
    use log1p-exp in the stable form np.logaddexp(0, −bm). F_S^* >= 0, so F_S(x₀) bounds the gap
    F_S(x₀) − F_S^* of the theorems from above.

    Random instance, draw schedule (all from ``rng``, in this order):
      1. ``rng.standard_normal((d, k))`` = G; U = Q of np.linalg.qr(G) with column j multiplied by
         sign(R_jj) (+1 when R_jj = 0), so U is a deterministic function of G.
      2. c_1..c_n: ``sample_ball(rng, n, k)`` (uniform in the unit k-ball; one standard_normal((n, k))
         then one random(n)) for features="ball", or ``sample_sphere(rng, n, k)`` (uniform on the unit
         sphere, ‖c_i‖ = 1; one standard_normal((n, k))) for features="sphere".
      3. the planted direction w: ``sample_sphere(rng, (), k)`` (one standard_normal(k)).
      4. label flips: ``rng.random(n) < label_flip``.
      b_i = +1 if <c_i, w> >= 0 else −1, negated where flipped. (Redraws of an all-zero Gaussian row,
      probability ~2^-1074, follow reference.rng.)

    Args:
        d: dimension >= 1.
        n: number of rows >= 1.
        k: subspace dimension, 1 <= k <= d.
        rng: numpy Generator.
        features: "ball" (default) or "sphere".
        label_flip: probability in [0, 1/2] of flipping each planted label (default 0.1; with flips the
            data are non-separable once n ≫ k, so F_S^* is attained).
    """

    lipschitz = 1.0
    smoothness = 0.25

    def __init__(self, d: int, n: int, k: int, rng: np.random.Generator, *, features: str = "ball",
                 label_flip=0.1):
        d = check_int("d", d, minimum=1)
        n = check_int("n", n, minimum=1)
        k = check_int("k", k, minimum=1, maximum=d)
        if features not in FEATURE_LAWS:
            raise ValueError(f"features must be one of {FEATURE_LAWS}, got {features!r}")
        label_flip = float(check_real("label_flip", label_flip, nonnegative=True, upper=0.5))
        rng = _check_generator(rng)
        q, r = np.linalg.qr(rng.standard_normal((d, k)))
        basis = q * np.where(np.diag(r) < 0, -1.0, 1.0)
        sampler = sample_ball if features == "ball" else sample_sphere
        coefficients = sampler(rng, n, k)
        planted = sample_sphere(rng, (), k)
        flips = rng.random(n) < label_flip
        labels = np.where(coefficients @ planted >= 0, 1.0, -1.0)
        labels = np.where(flips, -labels, labels)
        self._setup(basis, coefficients, labels)
        self.features = features
        self.label_flip = label_flip

    @classmethod
    def from_parts(cls, basis, coefficients, labels) -> "SubspaceLogistic":
        """The objective with explicit U (d, k) with U^T U = I (within 1e−12), c (n, k) with ‖c_i‖ <= 1
        (within 1e−12), b (n,) in {−1, +1}; at least one c_i must be nonzero (H ≠ 0)."""
        basis = _float_array("basis", basis, ndim=2)
        d, k = basis.shape
        if not 1 <= k <= d:
            raise ValueError(f"basis must have shape (d, k) with 1 <= k <= d, got {basis.shape}")
        defect = float(np.max(np.abs(basis.T @ basis - np.eye(k))))
        if defect > UNIT_TOLERANCE:
            raise ValueError(f"basis must have orthonormal columns (max |U^T U - I| <= {UNIT_TOLERANCE}), got {defect!r}")
        coefficients = _float_array("coefficients", coefficients, ndim=2)
        if coefficients.shape[0] < 1 or coefficients.shape[1] != k:
            raise ValueError(f"coefficients must have shape (n, k) = (n, {k}) with n >= 1, got {coefficients.shape}")
        n = coefficients.shape[0]
        labels = _float_array("labels", labels, shape=(n,))
        obj = cls.__new__(cls)
        obj._setup(basis, coefficients, labels)
        obj.features = None
        obj.label_flip = None
        return obj

    def _setup(self, basis, coefficients, labels) -> None:
        lengths = np.linalg.norm(coefficients, axis=1)
        if np.any(lengths > 1 + UNIT_TOLERANCE):
            i = int(np.argmax(lengths))
            raise ValueError(f"coefficients must have rows with ‖c_i‖ <= 1; row {i} has norm {lengths[i]!r}")
        if not np.any(lengths > 0):
            raise ValueError("coefficients must have a nonzero row (otherwise H = 0 and r is undefined)")
        if not np.all((labels == 1.0) | (labels == -1.0)):
            raise ValueError("labels must have entries in {-1, +1}")
        d, k = basis.shape
        super().__init__(d, np.column_stack([coefficients, labels]))
        self.k = k
        self.basis = _read_only(basis)
        self._basis_mp = None
        self.name = f"subspace_logistic[k={k}]"
        # H = U M U^T with M = (1/(4n)) Σ c_i c_i^T; U^T U = I so Tr(H) = Tr(M), ‖H‖₂ = ‖M‖₂ (k×k work).
        small = self.coefficients.T @ self.coefficients / (4 * self.n)
        #: r = Tr(H)/‖H‖₂ (dpzero Assumption 3.5), at most k.
        self.effective_rank = float(np.trace(small)) / float(np.linalg.eigvalsh(small)[-1])

    @property
    def coefficients(self) -> np.ndarray:
        """c_i, shape (n, k)."""
        return self.data[:, : self.k]

    @property
    def labels(self) -> np.ndarray:
        """b_i ∈ {−1, +1}, shape (n,)."""
        return self.data[:, self.k]

    def _basis(self, use_mp: bool) -> np.ndarray:
        if not use_mp:
            return self.basis
        if self._basis_mp is None:  # float64 -> mpf is exact at any precision, so one cache suffices
            self._basis_mp = _mp_matrix(self.basis)
        return self._basis_mp

    # -- per-sample checks and hooks ---------------------------------------------------------------------

    def _check_z(self, z, use_mp):
        # L = 1 and ℓ = 1/4 rely on ‖c‖ <= 1 and b = ±1.
        c, b = z[..., : self.k], z[..., self.k]
        if use_mp:
            lengths = [mpmath.sqrt(mpmath.fsum(v * v for v in row)) for row in c.reshape(-1, self.k)]
            labels_ok = all(v == 1 or v == -1 for v in b.flat)
        else:
            lengths = np.linalg.norm(c, axis=-1).reshape(-1)
            labels_ok = bool(np.all((b == 1.0) | (b == -1.0)))
        if not labels_ok:
            raise ValueError(f"z must hold a label b in {{-1, +1}} in its last entry (index {self.k})")
        for length in lengths:
            if not length <= 1 + UNIT_TOLERANCE:
                raise ValueError(f"z must hold coefficients c with ‖c‖ <= 1 in its first k={self.k} entries, got {length}")

    def _projection_mp(self, x) -> list:
        """U^T x (k numbers), exact sums."""
        u = self._basis(True)
        return [mpmath.fsum(u[j, i] * x[j] for j in range(self.d)) for i in range(self.k)]

    def _feature_mp(self, c) -> list:
        """a = U c (d numbers)."""
        u = self._basis(True)
        return [mpmath.fsum(u[j, i] * c[i] for i in range(self.k)) for j in range(self.d)]

    def _margin_float(self, x, z):
        """m = <c, U^T x>, broadcast over the leading axes of x and z."""
        return np.sum(z[..., : self.k] * (x @ self.basis), axis=-1)

    def _margin_mp(self, x, z):
        projection = self._projection_mp(x)
        return mpmath.fsum(z[i] * projection[i] for i in range(self.k))

    def _loss_float(self, x, z):
        return np.logaddexp(0.0, -z[..., self.k] * self._margin_float(x, z))

    def _loss_mp(self, x, z):
        return mpmath.log1p(mpmath.exp(-z[self.k] * self._margin_mp(x, z)))

    def _gradient_float(self, x, z):
        b = z[..., self.k]
        weight = -b * expit(-b * self._margin_float(x, z))
        return weight[..., None] * (z[..., : self.k] @ self.basis.T)

    def _gradient_mp(self, x, z):
        b = z[self.k]
        weight = -b / (1 + mpmath.exp(b * self._margin_mp(x, z)))  # −b·σ(−bm)
        return np.array([weight * a_j for a_j in self._feature_mp(z[: self.k])], dtype=object)

    def _hessian_float(self, x, z):
        s = expit(self._margin_float(x, z))
        a = z[..., : self.k] @ self.basis.T
        return (s * (1 - s))[..., None, None] * a[..., :, None] * a[..., None, :]

    def _hessian_mp(self, x, z):
        s = 1 / (1 + mpmath.exp(-self._margin_mp(x, z)))
        weight = s * (1 - s)
        a = self._feature_mp(z[: self.k])
        return np.array([[weight * a_i * a_j for a_j in a] for a_i in a], dtype=object)

    def hessian(self, x, z):
        """∇²f(x; z) = σ(m)(1 − σ(m))·a a^T with a = Uc, m = <c, U^T x> -> (..., d, d)."""
        return self._evaluate(self._hessian_float, self._hessian_mp, x, z, (self.d, self.d))

    def _smoothed_loss_float(self, x, z, delta):
        _no_smoothing(self)

    _smoothed_loss_mp = _smoothed_gradient_float = _smoothed_gradient_mp = _smoothed_loss_float

    # -- empirical averages in O(dk + nk) --------------------------------------------------------------

    def _weights(self, x, kind: str):
        """Per-row scalars w_i (loss, gradient or Hessian weight) from the margins, U^T x formed once."""
        if is_mp(x):
            projection = self._projection_mp(x)
            rows = to_mp(self.data)
            out = []
            for row in rows:
                m = mpmath.fsum(row[i] * projection[i] for i in range(self.k))
                b = row[self.k]
                if kind == "loss":
                    out.append(mpmath.log1p(mpmath.exp(-b * m)))
                elif kind == "gradient":
                    out.append(-b / (1 + mpmath.exp(b * m)))
                else:
                    s = 1 / (1 + mpmath.exp(-m))
                    out.append(s * (1 - s))
            return out
        m = self.coefficients @ (self.basis.T @ x)
        b = self.labels
        if kind == "loss":
            return np.logaddexp(0.0, -b * m)
        if kind == "gradient":
            return -b * expit(-b * m)
        s = expit(m)
        return s * (1 - s)

    def empirical_loss(self, x):
        """F(x) = (1/n) Σ_i log(1 + exp(−b_i m_i)), with U^T x formed once."""
        x = self._check_point(x)
        if is_mp(x):
            return mpmath.fsum(self._weights(x, "loss")) / self.n
        return float(np.mean(self._weights(x, "loss")))

    def empirical_gradient(self, x):
        """∇F(x) = U·((1/n) Σ_i w_i c_i) with w_i = −b_i σ(−b_i m_i): O(dk + nk), never n·d·k."""
        x = self._check_point(x)
        weights = self._weights(x, "gradient")
        if is_mp(x):
            c = to_mp(self.coefficients)
            mixed = [mpmath.fsum(weights[i] * c[i, j] for i in range(self.n)) / self.n for j in range(self.k)]
            return np.array(self._feature_mp(mixed), dtype=object)
        return self.basis @ (self.coefficients.T @ weights) / self.n

    def empirical_hessian(self, x):
        """∇²F(x) = U·((1/n) Σ_i σ(m_i)(1 − σ(m_i)) c_i c_i^T)·U^T (d×d)."""
        x = self._check_point(x)
        weights = self._weights(x, "hessian")
        if is_mp(x):
            return self._lift_mp(weights, self.n)
        small = (self.coefficients.T * weights) @ self.coefficients / self.n
        return self.basis @ small @ self.basis.T

    def hessian_bound(self, *, arithmetic: str = "float64"):
        """H = (1/(4n)) Σ_i a_i a_i^T = U·((1/(4n)) Σ_i c_i c_i^T)·U^T (d×d): −H ⪯ ∇²F ⪯ H everywhere."""
        if _check_arithmetic(arithmetic):
            return self._lift_mp([mpmath.mpf(1)] * self.n, 4 * self.n)
        small = self.coefficients.T @ self.coefficients / (4 * self.n)
        return self.basis @ small @ self.basis.T

    def _lift_mp(self, weights, divisor) -> np.ndarray:
        """U·((1/divisor) Σ_i w_i c_i c_i^T)·U^T in mpmath (exact sums)."""
        c = to_mp(self.coefficients)
        u = self._basis(True)
        small = [[mpmath.fsum(weights[i] * c[i, p] * c[i, q] for i in range(self.n)) / divisor for q in range(self.k)]
                 for p in range(self.k)]
        left = [[mpmath.fsum(u[j, p] * small[p][q] for p in range(self.k)) for q in range(self.k)] for j in range(self.d)]
        return np.array(
            [[mpmath.fsum(left[i][q] * u[j, q] for q in range(self.k)) for j in range(self.d)] for i in range(self.d)],
            dtype=object,
        )


# ---------------------------------------------------------------------------------------------------
# (P1) pseudo-Huber / smoothed geometric median


def _mode_diagonal(mode: str, d: int, use_mp: bool) -> np.ndarray:
    """diag(A) of the §6.1 modes, i = 1..d: 1, 1/√i, 1/i (mpmath at the working precision)."""
    if use_mp:
        if mode == "identity":
            entries = [mpmath.mpf(1) for _ in range(d)]
        elif mode == "sqrt":
            entries = [1 / mpmath.sqrt(i) for i in range(1, d + 1)]
        else:
            entries = [mpmath.mpf(1) / i for i in range(1, d + 1)]
        return np.array(entries, dtype=object)
    i = np.arange(1, d + 1, dtype=np.float64)
    if mode == "identity":
        return np.ones(d)
    return 1.0 / np.sqrt(i) if mode == "sqrt" else 1.0 / i


class PseudoHuber(Objective):
    """(P1), pseudo-Huber: f(x; z) = √(‖A^{1/2}(x − z)‖² + s²), A diagonal with ‖A‖₂ = 1.

    A follows the modes of the App. B.1 quadratic ("identity" A = I, "sqrt" diag(1/√i), "harmonic"
    diag(1/i)); s = ``smoothing_scale`` > 0 (the pseudo-Huber width — NOT the ball-smoothing radius).
    With δ = x − z:

        ∇f = Aδ/f,   ∇²f = A/f − (Aδ)(Aδ)^T/f³,   0 ⪯ ∇²f ⪯ A/f ⪯ A/s,

    so L = ``lipschitz`` = √‖A‖₂ = 1, ℓ = ``smoothness`` = ‖A‖₂/s = 1/s, Assumption 3.5(b) holds with
    H = ``hessian_bound()`` = A/s, and r = ``effective_rank`` = Tr(A)/‖A‖₂ = Tr(A). F is convex with
    F^* finite (attained: F is coercive).

    Data: z_i i.i.d. N(1, 1) per coordinate, drawn as ``rng.standard_normal((n, d)) + 1`` (one call) —
    the same draws as EffectiveRankQuadratic(d, n, mode, rng).

    Args:
        d: dimension >= 1.
        n: number of rows >= 1.
        mode: one of QUADRATIC_MODES.
        smoothing_scale: s > 0.
        rng: numpy Generator for the data.
    """

    lipschitz = 1.0

    def __init__(self, d: int, n: int, mode: str, smoothing_scale, rng: np.random.Generator):
        d = check_int("d", d, minimum=1)
        n = check_int("n", n, minimum=1)
        mode = self._check_mode(mode)
        smoothing_scale = float(check_real("smoothing_scale", smoothing_scale, positive=True))
        data = _check_generator(rng).standard_normal((n, d)) + 1.0
        self._setup(data, mode, smoothing_scale)

    @classmethod
    def from_data(cls, data, mode: str, smoothing_scale) -> "PseudoHuber":
        """The same objective with explicit rows z_i (float64 array (n, d), n, d >= 1)."""
        data = _float_array("data", data, ndim=2)
        if data.shape[0] < 1 or data.shape[1] < 1:
            raise ValueError(f"data must have at least one row and one column, got shape {data.shape}")
        mode = cls._check_mode(mode)
        smoothing_scale = float(check_real("smoothing_scale", smoothing_scale, positive=True))
        obj = cls.__new__(cls)
        obj._setup(data, mode, smoothing_scale)
        return obj

    @staticmethod
    def _check_mode(mode: str) -> str:
        if mode not in QUADRATIC_MODES:
            raise ValueError(f"mode must be one of {QUADRATIC_MODES}, got {mode!r}")
        return mode

    def _setup(self, data, mode: str, smoothing_scale: float) -> None:
        super().__init__(data.shape[1], data)
        self.mode = mode
        self.smoothing_scale = smoothing_scale
        self.smoothness = 1.0 / smoothing_scale
        self.name = f"pseudo_huber[{mode}]"
        self.hessian_diagonal = _read_only(_mode_diagonal(mode, self.d, use_mp=False))
        #: r = Tr(A)/‖A‖₂ = Tr(A) (‖A‖₂ = A_11 = 1).
        self.effective_rank = math.fsum(self.hessian_diagonal)

    def _value_float(self, x, z):
        return np.sqrt(np.sum(self.hessian_diagonal * (x - z) ** 2, axis=-1) + self.smoothing_scale**2)

    def _value_mp(self, x, z, a):
        s = mpmath.mpf(self.smoothing_scale)
        return mpmath.sqrt(mpmath.fsum(a[j] * (x[j] - z[j]) ** 2 for j in range(self.d)) + s * s)

    def _loss_float(self, x, z):
        return self._value_float(x, z)

    def _loss_mp(self, x, z):
        return self._value_mp(x, z, _mode_diagonal(self.mode, self.d, True))

    def _gradient_float(self, x, z):
        return self.hessian_diagonal * (x - z) / self._value_float(x, z)[..., None]

    def _gradient_mp(self, x, z):
        a = _mode_diagonal(self.mode, self.d, True)
        f = self._value_mp(x, z, a)
        return np.array([a[j] * (x[j] - z[j]) / f for j in range(self.d)], dtype=object)

    def _hessian_float(self, x, z):
        f = self._value_float(x, z)[..., None, None]
        scaled = self.hessian_diagonal * (x - z)
        return np.diag(self.hessian_diagonal) / f - scaled[..., :, None] * scaled[..., None, :] / f**3

    def _hessian_mp(self, x, z):
        a = _mode_diagonal(self.mode, self.d, True)
        f = self._value_mp(x, z, a)
        scaled = [a[j] * (x[j] - z[j]) for j in range(self.d)]
        return np.array(
            [[(a[i] / f if i == j else 0) - scaled[i] * scaled[j] / f**3 for j in range(self.d)] for i in range(self.d)],
            dtype=object,
        )

    def hessian(self, x, z):
        """∇²f(x; z) = A/f − (A(x−z))(A(x−z))^T/f³ -> (..., d, d)."""
        return self._evaluate(self._hessian_float, self._hessian_mp, x, z, (self.d, self.d))

    def empirical_hessian(self, x):
        """∇²F(x) = (1/n) Σ_i ∇²f(x; z_i) (d×d)."""
        x = self._check_point(x)
        if is_mp(x):
            blocks = [self._hessian_mp(x, z) for z in to_mp(self.data)]
            return np.array(
                [[mpmath.fsum(h[i, j] for h in blocks) / self.n for j in range(self.d)] for i in range(self.d)],
                dtype=object,
            )
        return np.mean(self._hessian_float(x, self.data), axis=0)

    def hessian_bound(self, *, arithmetic: str = "float64"):
        """H = A/s (d×d): −H ⪯ 0 ⪯ ∇²F ⪯ H everywhere (Assumption 3.5(b))."""
        if _check_arithmetic(arithmetic):
            a = _mode_diagonal(self.mode, self.d, True)
            s = mpmath.mpf(self.smoothing_scale)
            return np.array([[a[i] / s if i == j else mpmath.mpf(0) for j in range(self.d)] for i in range(self.d)],
                            dtype=object)
        return np.diag(self.hessian_diagonal) / self.smoothing_scale

    def _smoothed_loss_float(self, x, z, delta):
        _no_smoothing(self)

    _smoothed_loss_mp = _smoothed_gradient_float = _smoothed_gradient_mp = _smoothed_loss_float
