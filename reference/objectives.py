"""dpzero §5 and App. B.1 (effective-rank quadratic); zo_o2nc §2 smoothing (ridge test functions S1/S2);
the cosine family COS for spider_sosp: test problems with data and exact (smoothed) gradients.

Every objective is a finite-sum problem F(x) = (1/n) Σ_i f(x; z_i) whose rows z_i are stored in
``data`` (shape (n, p)). Per-sample methods take a point x and a data row z:

* float64: x of shape (..., d) and z of shape (..., p) broadcast over their leading axes; the result
  has the broadcast leading shape (a Python float when that shape is ()), with a trailing (d,) for
  gradients. This is how the zeroth-order estimators call ``loss(points, batch)``.
* mpmath: when x, z or the smoothing radius is mpmath (object arrays of ``mpf``), everything is
  computed in mpmath at the working precision, one point at a time, and the result is an ``mpf``
  (or an object array of them). Float64 data are converted exactly.

Smoothing follows zo_o2nc §2: f̂_δ(x; z) = E_{v ~ U(unit ball)} f(x + δv; z), with
``smoothing_radius`` = δ. DPZero smooths over the ball of radius λ√d (Lemma C.2): pass
``smoothing_radius = λ·√d`` to get its f_λ. Smoothed values and gradients are exact closed forms
(reference.smoothing), not Monte Carlo estimates.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from . import smoothing
from .precision import dot, is_mp, norm, to_mp
from .rng import sample_sphere
from .validation import check_array, check_int, check_real

__all__ = [
    "Objective",
    "EffectiveRankQuadratic",
    "RidgeSum",
    "Linear",
    "CosineSaddle",
    "QUADRATIC_MODES",
]

#: Hessian spectra of the DPZero synthetic quadratic (§6.1): A = I, diag(1/√i), diag(1/i).
QUADRATIC_MODES = ("identity", "sqrt", "harmonic")

#: Tolerance on ‖a‖ = 1 for ridge directions (float64 normalisation is exact to a few ulp).
UNIT_NORM_TOLERANCE = 1e-12


def _check_generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _read_only(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=np.float64, copy=True)
    array.flags.writeable = False
    return array


def _as_array(name: str, value, **rules) -> np.ndarray:
    """check_array, but a list holding mpf values becomes an object array (never silently float64)."""
    if isinstance(value, (list, tuple)):
        value = np.asarray(value)
    return check_array(name, value, **rules)


class Objective:
    """A finite-sum test problem F(x) = (1/n) Σ_i f(x; z_i) with exact per-sample derivatives.

    Attributes:
        name: short identifier.
        d: dimension of x.
        data: float64 array (n, p), row i is the data point z_i (read-only).
        n, data_width: number of rows and p.
        lipschitz: L with every f(·; z) L-Lipschitz, or None when no global constant exists.
        smoothness: ℓ with every ∇f(·; z) ℓ-Lipschitz, or None for nonsmooth f.

    Subclasses implement the ``_*_float`` hooks (vectorized, broadcasting float64) and the ``_*_mp``
    hooks (one point x of shape (d,), one row z of shape (p,), object arrays of mpf).
    """

    name: str = "objective"
    lipschitz: float | None = None
    smoothness: float | None = None

    def __init__(self, d: int, data: np.ndarray):
        self.d = check_int("d", d, minimum=1)
        self.data = _read_only(data)
        self.n, self.data_width = self.data.shape

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, d={self.d}, n={self.n})"

    # -- input handling ------------------------------------------------------------------------------

    def _check_z(self, z: np.ndarray, use_mp: bool) -> None:
        """Extra per-row checks (e.g. unit ridge directions); none by default."""

    def _check_operands(self, x, z, smoothing_radius=None, with_radius=False):
        x = _as_array("x", x)
        z = _as_array("z", z)
        if x.ndim < 1 or x.shape[-1] != self.d:
            raise ValueError(f"x must have shape (..., {self.d}) (last axis = d), got {x.shape}")
        if z.ndim < 1 or z.shape[-1] != self.data_width:
            raise ValueError(f"z must have shape (..., {self.data_width}) (one data row), got {z.shape}")
        try:
            lead = np.broadcast_shapes(x.shape[:-1], z.shape[:-1])
        except ValueError:
            raise ValueError(
                f"x and z leading shapes do not broadcast: x {x.shape[:-1]} vs z {z.shape[:-1]}"
            ) from None
        use_mp = is_mp(x) or is_mp(z) or isinstance(smoothing_radius, mpmath.mpf)
        if with_radius:
            smoothing_radius = check_real("smoothing_radius", smoothing_radius, positive=True)
            smoothing_radius = mpmath.mpf(smoothing_radius) if use_mp else float(smoothing_radius)
        if use_mp:
            x, z = to_mp(x), to_mp(z)
        self._check_z(z, use_mp)
        return x, z, smoothing_radius, lead, use_mp

    def _evaluate(self, fn_float, fn_mp, x, z, trailing: tuple, smoothing_radius=None, with_radius=False):
        x, z, delta, lead, use_mp = self._check_operands(x, z, smoothing_radius, with_radius)
        extra = (delta,) if with_radius else ()
        if not use_mp:
            out = np.asarray(fn_float(x, z, *extra), dtype=np.float64)
            out = np.broadcast_to(out, lead + trailing).copy()
            return float(out) if out.shape == () else out
        xb = np.broadcast_to(x, lead + (self.d,))
        zb = np.broadcast_to(z, lead + (self.data_width,))
        if not lead:
            return fn_mp(xb, zb, *extra)
        out = np.empty(lead + trailing, dtype=object)
        for idx in np.ndindex(lead):
            out[idx] = fn_mp(xb[idx], zb[idx], *extra)
        return out

    def _check_point(self, x):
        x = _as_array("x", x, shape=(self.d,))
        return to_mp(x) if is_mp(x) else x

    # -- per-sample interface --------------------------------------------------------------------------

    def loss(self, x, z):
        """f(x; z); x (..., d), z (..., p) broadcast -> (...)."""
        return self._evaluate(self._loss_float, self._loss_mp, x, z, ())

    __call__ = loss

    def gradient(self, x, z):
        """∇_x f(x; z) (a Clarke subgradient at kinks for nonsmooth f) -> (..., d)."""
        return self._evaluate(self._gradient_float, self._gradient_mp, x, z, (self.d,))

    def smoothed_loss(self, x, z, smoothing_radius):
        """f̂_δ(x; z) = E_{v~U(ball)} f(x + δv; z), exact. smoothing_radius: δ (zo_o2nc), λ√d (dpzero)."""
        return self._evaluate(
            self._smoothed_loss_float, self._smoothed_loss_mp, x, z, (), smoothing_radius, with_radius=True
        )

    def smoothed_gradient(self, x, z, smoothing_radius):
        """∇f̂_δ(x; z), exact. smoothing_radius: δ (zo_o2nc), λ√d (dpzero)."""
        return self._evaluate(
            self._smoothed_gradient_float,
            self._smoothed_gradient_mp,
            x,
            z,
            (self.d,),
            smoothing_radius,
            with_radius=True,
        )

    # -- empirical averages over the rows of data ---------------------------------------------------

    def _average_scalar(self, method, x, *extra):
        x = self._check_point(x)
        if is_mp(x):
            return mpmath.fsum(method(x, z, *extra) for z in self.data) / self.n
        return float(np.mean(method(x, self.data, *extra)))

    def _average_vector(self, method, x, *extra):
        x = self._check_point(x)
        if is_mp(x):
            rows = [method(x, z, *extra) for z in self.data]
            return np.array([mpmath.fsum(row[j] for row in rows) / self.n for j in range(self.d)], dtype=object)
        return np.mean(method(x, self.data, *extra), axis=0)

    def empirical_loss(self, x):
        """F(x) = (1/n) Σ_i f(x; z_i), x of shape (d,)."""
        return self._average_scalar(self.loss, x)

    def empirical_gradient(self, x):
        """∇F(x) = (1/n) Σ_i ∇f(x; z_i), x of shape (d,)."""
        return self._average_vector(self.gradient, x)

    def empirical_smoothed_loss(self, x, smoothing_radius):
        """F̂_δ(x) = (1/n) Σ_i f̂_δ(x; z_i) (zo_o2nc §2: F̂_δ = E_z f̂_δ(·, z))."""
        return self._average_scalar(self.smoothed_loss, x, smoothing_radius)

    def empirical_smoothed_gradient(self, x, smoothing_radius):
        """∇F̂_δ(x) = (1/n) Σ_i ∇f̂_δ(x; z_i)."""
        return self._average_vector(self.smoothed_gradient, x, smoothing_radius)

    # -- hooks -------------------------------------------------------------------------------------------

    def _loss_float(self, x, z):
        raise NotImplementedError

    def _loss_mp(self, x, z):
        raise NotImplementedError

    def _gradient_float(self, x, z):
        raise NotImplementedError

    def _gradient_mp(self, x, z):
        raise NotImplementedError

    def _smoothed_loss_float(self, x, z, delta):
        raise NotImplementedError

    def _smoothed_loss_mp(self, x, z, delta):
        raise NotImplementedError

    def _smoothed_gradient_float(self, x, z, delta):
        raise NotImplementedError

    def _smoothed_gradient_mp(self, x, z, delta):
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------------
# dpzero §5, App. B.1


class EffectiveRankQuadratic(Objective):
    """dpzero App. B.1: f(x; z) = ½ (x − z)^T A (x − z), A diagonal with ‖A‖₂ = 1.

    Modes (the Hessian spectrum): "identity" A = I (effective rank r = d); "sqrt" A = diag(1/√i)
    (r = Σ i^{−1/2} ≈ 2√d); "harmonic" A = diag(1/i) (r = H_d ≈ ln d + 0.577). i = 1..d.
    Data: z_i i.i.d. N(1, 1) per coordinate, drawn as ``rng.standard_normal((n, d)) + 1`` (one call).

    ℓ = 1 (per sample); not globally Lipschitz (``lipschitz`` is None; erratum dpzero.E10). For a
    quadratic the ball smoothing only shifts the value: ∇f̂_δ = ∇f and
    f̂_δ = f + δ² Tr(A)/(2(d+2)) (E[v v^T] = I/(d+2) for v ~ U(unit ball)).

    Args:
        d: dimension ≥ 1.
        n: number of data points ≥ 1.
        mode: one of QUADRATIC_MODES.
        rng: numpy Generator for the data.
    """

    smoothness = 1.0
    lipschitz = None

    def __init__(self, d: int, n: int, mode: str, rng: np.random.Generator):
        d = check_int("d", d, minimum=1)
        n = check_int("n", n, minimum=1)
        mode = self._check_mode(mode)
        data = _check_generator(rng).standard_normal((n, d)) + 1.0
        self._setup(data, mode)

    @classmethod
    def from_data(cls, data, mode: str) -> "EffectiveRankQuadratic":
        """The same objective with explicit data rows z_i (array (n, d), n ≥ 1)."""
        data = check_array("data", data, ndim=2)
        if data.dtype == object:
            raise TypeError("data must be float64 (mpmath is chosen by the point x, not by the data)")
        if data.shape[0] < 1 or data.shape[1] < 1:
            raise ValueError(f"data must have at least one row and one column, got shape {data.shape}")
        mode = cls._check_mode(mode)
        obj = cls.__new__(cls)
        obj._setup(data, mode)
        return obj

    @staticmethod
    def _check_mode(mode: str) -> str:
        if mode not in QUADRATIC_MODES:
            raise ValueError(f"mode must be one of {QUADRATIC_MODES}, got {mode!r}")
        return mode

    def _setup(self, data: np.ndarray, mode: str) -> None:
        super().__init__(data.shape[1], data)
        self.mode = mode
        self.name = f"effective_rank_quadratic[{mode}]"
        self.hessian_diagonal = _read_only(self._diagonal(use_mp=False))
        #: r = Tr(A)/‖A‖₂ (dpzero Assumption 3.5, §6.1); ‖A‖₂ = 1.
        self.effective_rank = math.fsum(self.hessian_diagonal)

    def _diagonal(self, use_mp: bool) -> np.ndarray:
        """The diagonal of A, in mpmath computed at the working precision (1/√i is not a float)."""
        index = range(1, self.d + 1)
        if use_mp:
            if self.mode == "identity":
                entries = [mpmath.mpf(1) for _ in index]
            elif self.mode == "sqrt":
                entries = [1 / mpmath.sqrt(i) for i in index]
            else:
                entries = [mpmath.mpf(1) / i for i in index]
            return np.array(entries, dtype=object)
        i = np.arange(1, self.d + 1, dtype=np.float64)
        if self.mode == "identity":
            return np.ones(self.d)
        return 1.0 / np.sqrt(i) if self.mode == "sqrt" else 1.0 / i

    def _smoothing_shift(self, delta, use_mp: bool):
        """δ² Tr(A) / (2(d+2)) = ½ δ² E[v^T A v]."""
        if use_mp:
            return delta**2 * mpmath.fsum(self._diagonal(True)) / (2 * (self.d + 2))
        return delta**2 * self.effective_rank / (2 * (self.d + 2))

    def _loss_float(self, x, z):
        return 0.5 * np.sum(self.hessian_diagonal * (x - z) ** 2, axis=-1)

    def _loss_mp(self, x, z):
        a = self._diagonal(True)
        return mpmath.fsum(a[i] * (x[i] - z[i]) ** 2 for i in range(self.d)) / 2

    def _gradient_float(self, x, z):
        return self.hessian_diagonal * (x - z)

    def _gradient_mp(self, x, z):
        a = self._diagonal(True)
        return np.array([a[i] * (x[i] - z[i]) for i in range(self.d)], dtype=object)

    def _smoothed_loss_float(self, x, z, delta):
        return self._loss_float(x, z) + self._smoothing_shift(delta, False)

    def _smoothed_loss_mp(self, x, z, delta):
        return self._loss_mp(x, z) + self._smoothing_shift(delta, True)

    def _smoothed_gradient_float(self, x, z, delta):
        return self._gradient_float(x, z)

    def _smoothed_gradient_mp(self, x, z, delta):
        return self._gradient_mp(x, z)

    def minimizer(self, *, arithmetic: str = "float64"):
        """argmin F = mean of the data rows (A ≻ 0); exact fsum-based mean in mpmath."""
        if arithmetic == "mpmath":
            return np.array(
                [mpmath.fsum(mpmath.mpf(v) for v in self.data[:, j]) / self.n for j in range(self.d)], dtype=object
            )
        if arithmetic != "float64":
            raise ValueError(f"arithmetic must be 'float64' or 'mpmath', got {arithmetic!r}")
        return self.data.mean(axis=0)


# ---------------------------------------------------------------------------------------------------
# zo_o2nc §2 (smoothing): ridge functions


class RidgeSum(Objective):
    """zo_o2nc §2 smoothing, ridge test functions (S1, S2): f(x; z) = L·φ(<a, x> − c), data row z = (a, c), ‖a‖ = 1.

    φ is "abs" |r|, "capped" min(|r|, τ) (S1, nonconvex) or "wshape" ||r| − τ| (S2, nonconvex); see
    reference.smoothing. Every f(·; z) is L-Lipschitz and nonsmooth (``smoothness`` is None).
    Exact smoothing: with r = <a, x> − c,
    ∇f̂_δ(x; z) = L·a·E[φ'(r + δ‖a‖v_1)] and f̂_δ(x; z) = L·E[φ(r + δ‖a‖v_1)] (‖a‖ = 1 up to rounding;
    using the stored ‖a‖ makes the mpmath values exact for the float64 data as given).
    At kinks ``gradient`` returns L·a times the midpoint of the one-sided slopes (a Clarke subgradient).

    Args:
        directions: (n, d) array of unit vectors a_i (‖a_i‖ = 1 within 1e−12).
        offsets: (n,) array of c_i.
        lipschitz: L > 0.
        profile: one of reference.smoothing.RIDGE_PROFILES.
        tau: τ > 0 (cap / well position; unused by "abs").
    """

    smoothness = None

    def __init__(self, directions, offsets, lipschitz=1.0, profile: str = "abs", tau=1.0):
        directions = check_array("directions", directions, ndim=2)
        if directions.dtype == object:
            directions = np.array([float(v) for v in directions.flat]).reshape(directions.shape)
        if directions.shape[0] < 1 or directions.shape[1] < 1:
            raise ValueError(f"directions must have shape (n, d) with n, d >= 1, got {directions.shape}")
        offsets = check_array("offsets", offsets, shape=(directions.shape[0],))
        if offsets.dtype == object:
            offsets = np.array([float(v) for v in offsets], dtype=np.float64)
        lengths = np.linalg.norm(directions, axis=1)
        bad = np.flatnonzero(np.abs(lengths - 1.0) > UNIT_NORM_TOLERANCE)
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"directions must have unit rows (|‖a_i‖ − 1| <= {UNIT_NORM_TOLERANCE}); row {i} has norm {lengths[i]!r}"
            )
        self.lipschitz = float(check_real("lipschitz", lipschitz, positive=True))
        if profile not in smoothing.RIDGE_PROFILES:
            raise ValueError(f"profile must be one of {smoothing.RIDGE_PROFILES}, got {profile!r}")
        self.profile = profile
        self.tau = float(check_real("tau", tau, positive=True))
        d = directions.shape[1]
        super().__init__(d, np.column_stack([directions, offsets]))
        self.name = f"ridge_sum[{profile}]"

    @classmethod
    def random(
        cls,
        d: int,
        n: int,
        rng: np.random.Generator,
        lipschitz=1.0,
        profile: str = "abs",
        tau=1.0,
        offset_scale=1.0,
    ) -> "RidgeSum":
        """Random instance: a_i ~ U(sphere) via ``sample_sphere(rng, n, d)``, then c_i ~ N(0, offset_scale²)
        via ``rng.normal(0, offset_scale, n)`` (in that order). The zo_o2nc experiments use c ~ N(0, 2²), τ = 1."""
        d = check_int("d", d, minimum=1)
        n = check_int("n", n, minimum=1)
        offset_scale = check_real("offset_scale", offset_scale, nonnegative=True)
        _check_generator(rng)
        directions = sample_sphere(rng, n, d)
        offsets = rng.normal(0.0, float(offset_scale), size=n)
        return cls(directions, offsets, lipschitz=lipschitz, profile=profile, tau=tau)

    @property
    def directions(self) -> np.ndarray:
        return self.data[:, : self.d]

    @property
    def offsets(self) -> np.ndarray:
        return self.data[:, self.d]

    def _check_z(self, z, use_mp):
        # The Lipschitz constant (and the privacy sensitivity built on it) assumes ‖a‖ = 1.
        a = z[..., : self.d]
        lengths = norm(a) if use_mp else np.linalg.norm(a, axis=-1)
        lengths = np.asarray(lengths, dtype=object if use_mp else np.float64)
        for length in lengths.flat:
            if not abs(length - 1) <= UNIT_NORM_TOLERANCE:
                raise ValueError(
                    f"z must hold a unit direction a in its first d={self.d} entries "
                    f"(|‖a‖ − 1| <= {UNIT_NORM_TOLERANCE}), got ‖a‖ = {length}"
                )

    def _residual_float(self, x, z):
        return np.sum(x * z[..., : self.d], axis=-1) - z[..., self.d]

    def _residual_mp(self, x, z):
        return dot(x, z[: self.d]) - z[self.d]

    def _loss_float(self, x, z):
        return self.lipschitz * smoothing.ridge_profile(self._residual_float(x, z), self.profile, self.tau)

    def _loss_mp(self, x, z):
        r = self._residual_mp(x, z)
        return mpmath.mpf(self.lipschitz) * smoothing.ridge_profile(r, self.profile, self.tau)

    def _gradient_float(self, x, z):
        slope = smoothing.ridge_profile_slope(self._residual_float(x, z), self.profile, self.tau)
        return self.lipschitz * np.asarray(slope)[..., None] * z[..., : self.d]

    def _gradient_mp(self, x, z):
        slope = smoothing.ridge_profile_slope(self._residual_mp(x, z), self.profile, self.tau)
        scale = mpmath.mpf(self.lipschitz) * slope
        return np.array([scale * a_j for a_j in z[: self.d]], dtype=object)

    def _smoothed_loss_float(self, x, z, delta):
        radius = delta * np.linalg.norm(z[..., : self.d], axis=-1)
        value = smoothing._smoothed_value_kernel(self._residual_float(x, z), radius, self.d, self.profile, self.tau, False)
        return self.lipschitz * value

    def _smoothed_loss_mp(self, x, z, delta):
        radius = delta * norm(z[: self.d])
        tau = mpmath.mpf(self.tau)
        value = smoothing._smoothed_value_kernel(self._residual_mp(x, z), radius, self.d, self.profile, tau, True)
        return mpmath.mpf(self.lipschitz) * value

    def _smoothed_gradient_float(self, x, z, delta):
        radius = delta * np.linalg.norm(z[..., : self.d], axis=-1)
        slope = smoothing._smoothed_slope_kernel(self._residual_float(x, z), radius, self.d, self.profile, self.tau, False)
        return self.lipschitz * np.asarray(slope)[..., None] * z[..., : self.d]

    def _smoothed_gradient_mp(self, x, z, delta):
        radius = delta * norm(z[: self.d])
        tau = mpmath.mpf(self.tau)
        slope = smoothing._smoothed_slope_kernel(self._residual_mp(x, z), radius, self.d, self.profile, tau, True)
        scale = mpmath.mpf(self.lipschitz) * slope
        return np.array([scale * a_j for a_j in z[: self.d]], dtype=object)


class Linear(Objective):
    """f(x; z) = <a_z, x> with data row z = a_z (the exact-variance case of the zo_o2nc estimator claims).

    L = max_i ‖a_i‖ over the data (a row z passed by hand is ‖z‖-Lipschitz); ℓ = 0. The gradient is a_z
    everywhere, and smoothing changes nothing: f̂_δ = f, ∇f̂_δ = a_z exactly.

    Args:
        vectors: (n, d) array of the a_i.
    """

    smoothness = 0.0

    def __init__(self, vectors):
        vectors = check_array("vectors", vectors, ndim=2)
        if vectors.dtype == object:
            vectors = np.array([float(v) for v in vectors.flat]).reshape(vectors.shape)
        if vectors.shape[0] < 1 or vectors.shape[1] < 1:
            raise ValueError(f"vectors must have shape (n, d) with n, d >= 1, got {vectors.shape}")
        super().__init__(vectors.shape[1], vectors)
        self.lipschitz = float(np.max(np.linalg.norm(self.data, axis=1)))
        self.name = "linear"

    def _loss_float(self, x, z):
        return np.sum(x * z, axis=-1)

    def _loss_mp(self, x, z):
        return dot(x, z)

    def _gradient_float(self, x, z):
        return np.broadcast_to(z, np.broadcast_shapes(x.shape, z.shape))

    def _gradient_mp(self, x, z):
        return np.array(list(z), dtype=object)

    def _smoothed_loss_float(self, x, z, delta):
        return self._loss_float(x, z)

    def _smoothed_loss_mp(self, x, z, delta):
        return self._loss_mp(x, z)

    def _smoothed_gradient_float(self, x, z, delta):
        return self._gradient_float(x, z)

    def _smoothed_gradient_mp(self, x, z, delta):
        return self._gradient_mp(x, z)


# ---------------------------------------------------------------------------------------------------
# COS, the cosine family for spider_sosp


class CosineSaddle(Objective):
    """COS, the cosine family for spider_sosp: f(x; z) = Σ_j c_j s_j cos(x_j − z_j), z ~ N(0, τ² I_d).

    Per sample: ∂_j f = −c_j s_j sin(x_j − z_j), ∇²f = diag(−c_j s_j cos(x_j − z_j)).
    Constants (a.s.): G = ``lipschitz`` = ‖c‖₂, M = ``smoothness`` = ρ = ``hessian_lipschitz`` = max_j c_j.
    Population (φ = e^{−τ²/2}): F(x) = φ Σ c_j s_j cos x_j, ∇F_j = −φ c_j s_j sin x_j,
    ∇²F = diag(−φ c_j s_j cos x_j), inf F = −φ Σ c_j, attained at x_j = π (s_j = +1), 0 (s_j = −1).
    x = 0 is a stationary point of every f(·; 0) and of F; a strict saddle when s has mixed signs.
    τ = 0 is COS-det (all data rows zero).

    Smoothing: e_j is a unit vector, so E cos(w + δ v_j) = cos(w)·ψ_d(δ) with ψ_d = ball_characteristic:
    ∂_j f̂_δ = −c_j s_j sin(x_j − z_j) ψ_d(δ) and f̂_δ = ψ_d(δ) f.

    Args:
        c: (d,) array of c_j > 0.
        s: (d,) array of signs s_j ∈ {+1, −1}.
        tau: τ ≥ 0, the data spread.
        n: number of data points ≥ 1.
        rng: numpy Generator; data = τ·rng.standard_normal((n, d)) (one call). May be None only when
            τ = 0 (then no draw is made and the data are zero).
    """

    def __init__(self, c, s, tau, n: int, rng: np.random.Generator | None):
        c = check_array("c", c, ndim=1)
        if c.dtype == object:
            c = np.array([float(v) for v in c], dtype=np.float64)
        if c.size < 1:
            raise ValueError("c must have at least one entry (dimension d >= 1)")
        if not np.all(c > 0):
            raise ValueError(f"c must have entries c_j > 0, got {c}")
        s = check_array("s", s, shape=(c.size,))
        s = np.array([float(v) for v in s.flat], dtype=np.float64)
        if not np.all((s == 1.0) | (s == -1.0)):
            raise ValueError(f"s must have entries in {{+1, -1}}, got {s}")
        tau = float(check_real("tau", tau, nonnegative=True))
        n = check_int("n", n, minimum=1)
        d = c.size
        if rng is None:
            if tau != 0:
                raise ValueError("rng must be a numpy.random.Generator when tau > 0 (it draws the data)")
            data = np.zeros((n, d))
        else:
            data = tau * _check_generator(rng).standard_normal((n, d)) + 0.0  # + 0.0 turns −0.0 into 0.0
        super().__init__(d, data)
        self.c = _read_only(c)
        self.s = _read_only(s)
        self.tau = tau
        self.lipschitz = float(np.linalg.norm(c))
        self.smoothness = float(np.max(c))
        self.hessian_lipschitz = float(np.max(c))
        self.name = "cosine_saddle" if tau > 0 else "cosine_saddle_det"

    # -- per sample --------------------------------------------------------------------------------------

    def _weights_mp(self):
        return [mpmath.mpf(self.c[j]) * mpmath.mpf(self.s[j]) for j in range(self.d)]

    def _loss_float(self, x, z):
        return np.sum(self.c * self.s * np.cos(x - z), axis=-1)

    def _loss_mp(self, x, z):
        w = self._weights_mp()
        return mpmath.fsum(w[j] * mpmath.cos(x[j] - z[j]) for j in range(self.d))

    def _gradient_float(self, x, z):
        return -self.c * self.s * np.sin(x - z)

    def _gradient_mp(self, x, z):
        w = self._weights_mp()
        return np.array([-w[j] * mpmath.sin(x[j] - z[j]) for j in range(self.d)], dtype=object)

    def _hessian_float(self, x, z):
        diagonal = -self.c * self.s * np.cos(x - z)
        return diagonal[..., :, None] * np.eye(self.d)

    def _hessian_mp(self, x, z):
        w = self._weights_mp()
        out = np.empty((self.d, self.d), dtype=object)
        out.fill(mpmath.mpf(0))
        for j in range(self.d):
            out[j, j] = -w[j] * mpmath.cos(x[j] - z[j])
        return out

    def hessian(self, x, z):
        """∇²f(x; z) = diag(−c_j s_j cos(x_j − z_j)) -> (..., d, d)."""
        return self._evaluate(self._hessian_float, self._hessian_mp, x, z, (self.d, self.d))

    def _characteristic(self, delta, use_mp: bool):
        return smoothing.ball_characteristic(delta, self.d, arithmetic="mpmath" if use_mp else "float64")

    def _smoothed_loss_float(self, x, z, delta):
        return self._characteristic(delta, False) * self._loss_float(x, z)

    def _smoothed_loss_mp(self, x, z, delta):
        return self._characteristic(delta, True) * self._loss_mp(x, z)

    def _smoothed_gradient_float(self, x, z, delta):
        return self._characteristic(delta, False) * self._gradient_float(x, z)

    def _smoothed_gradient_mp(self, x, z, delta):
        psi = self._characteristic(delta, True)
        return np.array([psi * g for g in self._gradient_mp(x, z)], dtype=object)

    # -- population -------------------------------------------------------------------

    def _phi(self, use_mp: bool):
        """φ = E cos(z_j) = e^{−τ²/2}."""
        if use_mp:
            return mpmath.exp(-mpmath.mpf(self.tau) ** 2 / 2)
        return math.exp(-self.tau**2 / 2)

    def population_loss(self, x):
        """F(x) = φ Σ_j c_j s_j cos x_j, x of shape (d,)."""
        x = self._check_point(x)
        if is_mp(x):
            return self._phi(True) * self._loss_mp(x, to_mp(np.zeros(self.d)))
        return self._phi(False) * float(self._loss_float(x, np.zeros(self.d)))

    def population_gradient(self, x):
        """∇F(x)_j = −φ c_j s_j sin x_j."""
        x = self._check_point(x)
        if is_mp(x):
            phi = self._phi(True)
            return np.array([phi * g for g in self._gradient_mp(x, to_mp(np.zeros(self.d)))], dtype=object)
        return self._phi(False) * self._gradient_float(x, np.zeros(self.d))

    def population_hessian(self, x):
        """∇²F(x) = diag(−φ c_j s_j cos x_j)."""
        x = self._check_point(x)
        if is_mp(x):
            phi = self._phi(True)
            hess = self._hessian_mp(x, to_mp(np.zeros(self.d)))
            return np.array([[phi * h for h in row] for row in hess], dtype=object)
        return self._phi(False) * self._hessian_float(x, np.zeros(self.d))

    def population_infimum(self, *, arithmetic: str = "float64"):
        """inf F = −φ Σ_j c_j."""
        if arithmetic == "mpmath":
            return -self._phi(True) * mpmath.fsum(mpmath.mpf(v) for v in self.c)
        if arithmetic != "float64":
            raise ValueError(f"arithmetic must be 'float64' or 'mpmath', got {arithmetic!r}")
        return -self._phi(False) * math.fsum(self.c)

    def population_minimizer(self) -> np.ndarray:
        """A global minimiser of F: x_j = π where s_j = +1, 0 where s_j = −1 (float64)."""
        return np.where(self.s > 0, np.pi, 0.0)

    def saddle_point(self) -> np.ndarray:
        """x = 0: ∇F(0) = 0 exactly; λ_min(∇²F(0)) = −φ max_{j: s_j=+1} c_j (a strict saddle for mixed s)."""
        return np.zeros(self.d)
