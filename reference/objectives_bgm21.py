"""bgm21 §3 (Theorems 5 and 6), §4 (Theorems 8 and 11) and §5 (Theorem 16): synthetic problems whose POPULATION
quantities are exact, with the accuracy measure of each theorem.

Bassily, Guzmán, Menart, *Differentially Private Stochastic Optimization: New Results in Convex and Non-Convex
Settings* (NeurIPS 2021). The paper has no experiments; every theorem bounds an expectation over the law 𝒟 of the
records, so a test of it needs F_𝒟 (and ∇F_𝒟, its Frank–Wolfe gap or its proximal map) exactly, not on the private
sample. These are dpref's problems for that purpose:

* ``AbsSphereProblem`` (Theorem 5, Phased-SGD, ℓ_2): the absolute-loss GLL ℓ^{(y)}(u) = L0|u − y| (Definition 2),
  x uniform on the ℓ_2 sphere of radius R_x in R^d, y = ⟨x, w0⟩ + ξ, ξ ~ N(0, s²), W the ℓ_2 ball of radius λ with
  ‖w0‖_2 = λ/2. With g(a) = E|a − ξ| = a(2Φ(a/s) − 1) + 2sφ(a/s), F(w) = L0·E_c[g(R_x‖w − w0‖_2·c)], c the cosine of a
  uniform direction (density ∝ (1 − c²)^{(d−3)/2} on [−1, 1]): one 1-D integral (``sphere_cosine_mean``:
  ``scipy.integrate.quad``, QUADPACK, absolute tolerance 1e-13·L0(s + R_x‖w − w0‖); the tests find it within
  1e-12 of an mpmath quadrature in the angle for 2 ≤ d ≤ 5000; d = 1 has c = ±1 and no integral). g is even, convex and smallest at 0, so by Jensen F(w) ≥ L0·g(0): F* = L0·s·√(2/π), attained at w0 ∈ W.
  Measure: the excess population risk F(w) − F*.
* ``AbsCubeProblem`` (Theorem 6, Algorithm 5, ℓ_1): the same loss with x uniform on {±R_x}^d and W the ℓ_1 ball of
  radius λ (a ``Polytope`` of its J = 2d vertices), ‖w0‖_1 = λ/2. F(w) = L0·2^{−d} Σ_σ g(R_x⟨σ, w − w0⟩) by exact
  enumeration of the sign vectors (g is even: half of them suffice) for d ≤ ``CUBE_EXACT_MAX_D`` = 14; a larger d is
  refused unless a common-random-numbers estimate is asked for (``crn_samples``: that many sign vectors from the fixed
  public stream ("bgm21", "abs_cube", "crn", d) under ``CRN_SEED``, the same for every w; reported with its standard
  error). F* = L0·s·√(2/π) at w0 (Jensen again). Measure: the excess population risk.
* ``SigmoidPoolProblem`` (Theorems 8 and 11, Algorithms 1 and 6): the smooth nonconvex GLL
  f(w, (x, y)) = φ(y⟨x, w⟩), φ(t) = 1 − tanh t, on a finite public pool of M points (x_i, y_i), y_i = ±1; 𝒟 is uniform
  over the pool, so F, ∇F and Gap_F(w) = max_{v∈W} ⟨∇F(w), w − v⟩ (eq. (1)) are exact sums over the pool. |φ′| ≤ 1 and
  |φ″| ≤ 4/(3√3) (at tanh² t = 1/3) give, in the dual norm q of the setting (q = ∞ in the ℓ_1 setting),
  L0 = max_i ‖x_i‖_q and L1 = (4/(3√3))·max_i ‖x_i‖_q². W: the ℓ_1 ball as a ``Polytope`` (Algorithm 1) or an ℓ_p ball
  (Algorithm 6). Records: n pool indices drawn uniformly with replacement (S ~ 𝒟^n). Measure: the Frank–Wolfe gap.
* ``WeaklyConvexSigmoidProblem`` (Theorem 16, Algorithm 2 at p = 2): the ℓ_2 sigmoid problem read as ρ-weakly convex
  with ρ = L1 (every L1-smooth function is L1-weakly convex, Corollary 25). Measure: proximal near-stationarity
  ‖prox^β_F(w) − w‖_2 (Definition 15), prox^β_F(w) = argmin_{v∈W} F(v) + (β/2)‖v − w‖²_2 (eq. (3)), computed by projected
  gradient descent on the (β − ρ)-strongly convex, (L1 + β)-smooth subproblem with step 1/(L1 + β): each step
  contracts the distance to the minimiser by q = 1 − (β − ρ)/(L1 + β), so ‖v_{k+1} − v*‖ ≤ q‖v_k − v_{k+1}‖/(1 − q),
  and the solver stops once that bound is below ``tol`` (default 1e-10·max(1, D)): the returned distance is exact to
  ``tol`` plus float64 rounding.

Every problem draws its n records from a generator the caller passes (``sample(n, rng)``: the records are the private
input), gives what the algorithms take (the GLL, the gradient callable ``gradient(w, z)``, W, the public start), the
constants (``L0``, ``L1``, ``R_x``, ``D``, ``J``), its measure ``accuracy(w)`` and ``mean_accuracy(candidates)``: the
mean of the measure over every output candidate of a run, which is its exact expectation over the uniformly drawn
output (Algorithm 1 line 15, Algorithm 2 line 5); algorithms with a single output have one candidate.

The population parameters (w0, the pool) are drawn from the PUBLIC seed of the problem (``seed``; streams
("bgm21", PROBLEM, ...)): they define the published problem, not the private data.

Arithmetic: float64 (scipy for Φ, φ and the quadrature); the tests check every exact quantity against an independent
computation (mpmath quadrature in another parametrisation, brute force, finite differences, Monte Carlo).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import integrate, special

from .geometry import LpBall, Polytope, dual_exponent, fw_gap
from .gll import AbsoluteLoss
from .rng import SEED_BOUND, Streams, sample_sphere
from .validation import check_array, check_int, check_real

__all__ = [
    "KEY",
    "CUBE_EXACT_MAX_D",
    "CRN_SEED",
    "SIGMOID_CURVATURE",
    "SIGMOID_GEOMETRIES",
    "abs_deviation",
    "sphere_cosine_mean",
    "AbsSphereProblem",
    "abs_sphere_problem",
    "AbsCubeProblem",
    "abs_cube_problem",
    "SigmoidPoolProblem",
    "sigmoid_pool_problem",
    "ProxPoint",
    "WeaklyConvexSigmoidProblem",
    "weakly_convex_sigmoid_problem",
]

KEY = "bgm21"
#: The largest d for which ``AbsCubeProblem`` enumerates the 2^d sign vectors (2^13 after the symmetry).
CUBE_EXACT_MAX_D = 14
#: The public seed of the common-random-numbers sign vectors of ``AbsCubeProblem`` (a fixed constant: the estimate is
#: the same function of w at every call).
CRN_SEED = 20210601
#: max_t |φ″(t)| for φ(t) = 1 − tanh t: 4/(3√3), attained where tanh² t = 1/3.
SIGMOID_CURVATURE = 4.0 / (3.0 * math.sqrt(3.0))
#: W of the sigmoid problem: the ℓ_1 ball as a polytope (Algorithm 1) or an ℓ_p ball (Algorithm 6, Algorithm 2).
SIGMOID_GEOMETRIES = ("polytope", "lp_ball")
#: Absolute tolerance of the sphere quadrature, relative to L0(s + R_x‖w − w0‖).
_QUAD_TOL = 1e-13
#: Up to this d the sphere quadrature uses QUADPACK's algebraic weight (``sphere_cosine_mean``).
_QAWS_MAX_D = 50


# ---------------------------------------------------------------------------------------------------
# Input helpers


def _generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _vector(name: str, value, d: int) -> np.ndarray:
    arr = check_array(name, value, shape=(d,))
    if arr.dtype == object:
        raise TypeError(f"{name} must be float64 (this module computes in float64)")
    return np.array(arr, dtype=np.float64)


def _candidates(value, d: int) -> np.ndarray:
    arr = check_array("candidates", value, ndim=2)
    if arr.dtype == object:
        raise TypeError("candidates must be float64 (this module computes in float64)")
    if arr.shape[0] < 1 or arr.shape[1] != d:
        raise ValueError(f"candidates must have shape (k, {d}) with k >= 1, got {arr.shape}")
    return np.array(arr, dtype=np.float64)


def _positive(name: str, value) -> float:
    return float(check_real(name, value, positive=True))


def _seed(value) -> int:
    return check_int("seed", value, minimum=0, maximum=SEED_BOUND - 1)


def _read_only(arr) -> np.ndarray:
    out = np.array(arr, dtype=np.float64, copy=True)
    out.flags.writeable = False
    return out


# ---------------------------------------------------------------------------------------------------
# The scalar pieces


def abs_deviation(a, noise_std) -> np.ndarray:
    """g(a) = E|a − ξ|, ξ ~ N(0, s²): a(2Φ(a/s) − 1) + 2sφ(a/s) = a·erf(a/(s√2)) + s√(2/π)·exp(−a²/(2s²)).

    Even and convex in a, smallest at a = 0 (g(0) = s√(2/π)), and g(a) − |a| → 0 as |a| → ∞."""
    s = _positive("noise_std", noise_std)
    a = np.asarray(a, dtype=np.float64)
    z = a / s
    return a * special.erf(z / math.sqrt(2.0)) + s * math.sqrt(2.0 / math.pi) * np.exp(-0.5 * z * z)


def sphere_cosine_mean(function, d: int, *, epsabs: float = 1e-13, epsrel: float = 1e-12) -> tuple[float, float]:
    """E h(c) for an even h and c = ⟨u, e_1⟩, u uniform on the unit sphere of R^d (density
    (1 − c²)^{(d−3)/2}/B(1/2, (d−1)/2) on [−1, 1]). d = 1: h(1). 2 ≤ d ≤ ``_QAWS_MAX_D``: ``scipy.integrate.quad``
    with the algebraic weight on [−1, 1] (QUADPACK QAWS, which integrates the endpoint singularity of d = 2 exactly).
    Larger d (the density concentrates at |c| ~ 1/√d, where QAWS loses accuracy): 2∫_0^1 h(c)·density(c) dc by
    adaptive Gauss–Kronrod with break points at c = k/√d, the density in log space. Returns (value, QUADPACK's
    absolute error estimate)."""
    d = check_int("d", d, minimum=1)
    if d == 1:
        return float(function(1.0)), 0.0
    a = 0.5 * (d - 3)
    if d <= _QAWS_MAX_D:
        value, error = integrate.quad(lambda c: float(function(c)), -1.0, 1.0, weight="alg", wvar=(a, a),
                                      epsabs=epsabs, epsrel=epsrel, limit=200)
        norm = special.beta(0.5, 0.5 * (d - 1))
        return value / norm, error / norm
    log_norm = special.betaln(0.5, 0.5 * (d - 1))
    points = [k / math.sqrt(d) for k in range(1, 16) if k / math.sqrt(d) < 1.0]
    value, error = integrate.quad(lambda c: 2.0 * float(function(c)) * math.exp(a * math.log1p(-c * c) - log_norm),
                                  0.0, 1.0, points=points, epsabs=epsabs, epsrel=epsrel, limit=400)
    return value, error


# ---------------------------------------------------------------------------------------------------
# Theorem 5: the absolute loss on the sphere


class _ExcessRisk:
    """The measure of Theorems 5 and 6 for the absolute-loss problems: F from ``population_risk_with_error`` (exact,
    or quadrature / a common-random-numbers estimate), F* = F(w0) = L0·s·√(2/π) (the per-x median argument: w0
    minimises E|⟨x, w − w0⟩ − ξ| for symmetric ξ), and the excess risk F(w) − F*."""

    def population_risk(self, w) -> float:
        """F(w) = L0·E g(R_x⟨x, w − w0⟩), g(a) = E|a − ξ| (module doc)."""
        return self.population_risk_with_error(w)[0]

    @property
    def optimal_risk(self) -> float:
        """F* = F(w0) = L0·s·√(2/π)."""
        return self.L0 * self.noise_std * math.sqrt(2.0 / math.pi)

    def accuracy(self, w) -> float:
        """The excess population risk F(w) − F* (clipped at 0 against quadrature rounding; an estimate with a
        common-random-numbers population)."""
        return max(0.0, self.population_risk(w) - self.optimal_risk)

    def mean_accuracy(self, candidates) -> float:
        """The mean excess risk over the output candidates (the exact expectation over a uniform output)."""
        arr = _candidates(candidates, self.d)
        return float(np.mean([self.accuracy(w) for w in arr]))


@dataclasses.dataclass(frozen=True)
class AbsSphereProblem(_ExcessRisk):
    """Theorem 5's problem (module doc): ℓ^{(y)}(u) = L0|u − y|, x uniform on the sphere of radius R_x, y = ⟨x, w0⟩ + ξ.

    d; R_x: ‖x‖_2 = R_x (Definition 2's bound, attained); noise_std: s; L0; radius: λ (W = B_2(0, λ), D = 2λ);
    w0: the minimiser (‖w0‖_2 = λ/2). ``start``: the public start of Phased-SGD, the centre 0.
    """

    d: int
    R_x: float
    noise_std: float
    L0: float
    radius: float
    w0: np.ndarray
    name: str = "abs-sphere"
    measure: str = "excess population risk F(w) - F*"

    @property
    def D(self) -> float:
        """The ℓ_2-diameter of W, 2λ."""
        return 2.0 * self.radius

    @property
    def loss(self) -> AbsoluteLoss:
        return AbsoluteLoss(self.L0)

    @property
    def W(self) -> LpBall:
        return LpBall(2.0, self.radius, np.zeros(self.d))

    @property
    def start(self) -> np.ndarray:
        return np.zeros(self.d)

    def sample(self, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
        """n records (X (n, d), y (n,)): one ``sample_sphere(rng, n, d, R_x)`` call, then ``standard_normal(n)``."""
        n = check_int("n", n, minimum=1)
        rng = _generator(rng)
        X = sample_sphere(rng, n, self.d, self.R_x)
        y = X @ self.w0 + self.noise_std * rng.standard_normal(n)
        return X, y

    def population_risk_with_error(self, w) -> tuple[float, float]:
        """(F(w), the quadrature's absolute error estimate)."""
        w = _vector("w", w, self.d)
        r = self.R_x * float(np.linalg.norm(w - self.w0))
        if r == 0.0:
            return self.optimal_risk, 0.0
        s = self.noise_std
        tol = _QUAD_TOL * (s + r)
        value, error = sphere_cosine_mean(lambda c: abs_deviation(r * c, s), self.d, epsabs=tol)
        return self.L0 * value, self.L0 * error


def abs_sphere_problem(d, *, R_x=1.0, noise_std=0.5, L0=1.0, radius=1.0, seed=0) -> AbsSphereProblem:
    """Theorem 5's problem with w0 uniform on the sphere of radius λ/2, drawn from the PUBLIC ``seed`` (stream
    ("bgm21", "abs_sphere", "w0"))."""
    d = check_int("d", d, minimum=1)
    R_x, s, L0, lam = (_positive(k, v) for k, v in (("R_x", R_x), ("noise_std", noise_std), ("L0", L0),
                                                     ("radius", radius)))
    rng = Streams(_seed(seed)).generator(KEY, "abs_sphere", "w0")
    w0 = sample_sphere(rng, (), d, 0.5 * lam)
    return AbsSphereProblem(d=d, R_x=R_x, noise_std=s, L0=L0, radius=lam, w0=_read_only(w0))


# ---------------------------------------------------------------------------------------------------
# Theorem 6: the absolute loss on the cube


def _half_signs(d: int) -> np.ndarray:
    """The 2^{d−1} sign vectors σ ∈ {±1}^d with σ_0 = +1 (the other half is −σ: g is even)."""
    codes = np.arange(2 ** (d - 1), dtype=np.int64)[:, None]
    bits = (codes >> np.arange(d - 1, dtype=np.int64)) & 1
    return np.hstack([np.ones((codes.shape[0], 1)), 1.0 - 2.0 * bits])


@dataclasses.dataclass(frozen=True)
class AbsCubeProblem(_ExcessRisk):
    """Theorem 6's problem (module doc): ℓ^{(y)}(u) = L0|u − y|, x uniform on {±R_x}^d, y = ⟨x, w0⟩ + ξ, W the ℓ_1 ball
    of radius λ as the ``Polytope`` of its 2d vertices (J = 2d, ℓ_1-diameter D = 2λ, C1 = max ‖v‖_1 = λ).

    crn_samples: None (exact enumeration, d ≤ ``CUBE_EXACT_MAX_D``) or the number of fixed sign vectors of the
    common-random-numbers estimate (any d). ``start``: Algorithm 5's θ_1 = V_0 (the polytope's first vertex).
    """

    d: int
    R_x: float
    noise_std: float
    L0: float
    radius: float
    w0: np.ndarray
    crn_samples: int | None = None
    name: str = "abs-cube"
    measure: str = "excess population risk F(w) - F*"

    def __post_init__(self):
        if self.crn_samples is None and self.d > CUBE_EXACT_MAX_D:
            raise ValueError(f"d = {self.d} is too large for the exact enumeration of the 2^d sign vectors (d <= "
                             f"{CUBE_EXACT_MAX_D}); pass crn_samples for a fixed common-random-numbers estimate")

    @property
    def exact(self) -> bool:
        return self.crn_samples is None

    @property
    def D(self) -> float:
        return 2.0 * self.radius

    @property
    def J(self) -> int:
        return 2 * self.d

    @property
    def C1(self) -> float:
        """max_{v∈V} ‖v‖_1 = λ."""
        return self.radius

    @property
    def loss(self) -> AbsoluteLoss:
        return AbsoluteLoss(self.L0)

    @property
    def W(self) -> Polytope:
        return Polytope(LpBall(1.0, self.radius, np.zeros(self.d)).vertices())

    @property
    def start(self) -> np.ndarray:
        return np.array(self.W.vertices[0])

    def sample(self, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
        """n records: X = R_x·(1 − 2·``integers(2, size=(n, d))``), then ``standard_normal(n)`` for ξ."""
        n = check_int("n", n, minimum=1)
        rng = _generator(rng)
        X = self.R_x * (1.0 - 2.0 * rng.integers(2, size=(n, self.d)))
        y = X @ self.w0 + self.noise_std * rng.standard_normal(n)
        return X, y

    def _margins_mean(self, v: np.ndarray) -> tuple[float, float]:
        s = self.noise_std
        if self.exact:
            values = abs_deviation(self.R_x * (_half_signs(self.d) @ v), s)
            return float(np.mean(values)), 0.0
        rng = Streams(CRN_SEED).generator(KEY, "abs_cube", "crn", self.d)
        total, total_sq, left, chunk = 0.0, 0.0, self.crn_samples, 8192
        while left > 0:  # the same draws for every v: common random numbers
            k = min(chunk, left)
            signs = 1.0 - 2.0 * rng.integers(2, size=(k, self.d))
            values = abs_deviation(self.R_x * (signs @ v), s)
            total += float(np.sum(values))
            total_sq += float(np.sum(values * values))
            left -= k
        m = self.crn_samples
        mean = total / m
        var = max(0.0, total_sq / m - mean * mean) * m / max(1, m - 1)
        return mean, math.sqrt(var / m)

    def population_risk_with_error(self, w) -> tuple[float, float]:
        """(F(w), 0) exactly, or (the common-random-numbers estimate, its standard error)."""
        w = _vector("w", w, self.d)
        mean, se = self._margins_mean(w - self.w0)
        return self.L0 * mean, self.L0 * se


def abs_cube_problem(d, *, R_x=1.0, noise_std=0.5, L0=1.0, radius=1.0, seed=0, crn_samples=None) -> AbsCubeProblem:
    """Theorem 6's problem with w0 = (λ/2)·u/‖u‖_1, u a standard Gaussian vector drawn from the PUBLIC ``seed``
    (stream ("bgm21", "abs_cube", "w0")), so ‖w0‖_1 = λ/2. crn_samples: None (exact, d ≤ 14) or ≥ 2 sign vectors."""
    d = check_int("d", d, minimum=1)
    R_x, s, L0, lam = (_positive(k, v) for k, v in (("R_x", R_x), ("noise_std", noise_std), ("L0", L0),
                                                     ("radius", radius)))
    crn = None if crn_samples is None else check_int("crn_samples", crn_samples, minimum=2)
    u = Streams(_seed(seed)).generator(KEY, "abs_cube", "w0").standard_normal(d)
    w0 = 0.5 * lam * u / float(np.sum(np.abs(u)))
    return AbsCubeProblem(d=d, R_x=R_x, noise_std=s, L0=L0, radius=lam, w0=_read_only(w0), crn_samples=crn)


# ---------------------------------------------------------------------------------------------------
# Theorems 8 and 11: the sigmoid loss on a public pool


@dataclasses.dataclass(frozen=True)
class SigmoidPoolProblem:
    """Theorems 8/11's problem (module doc): f(w, (x, y)) = 1 − tanh(y⟨x, w⟩), 𝒟 uniform over the pool.

    pool_x (M, d), pool_y (M,) ∈ {±1}: the public pool. geometry: "polytope" (W = the ℓ_1 ball of radius λ as the
    ``Polytope`` of its 2d vertices; the ℓ_1 setting of Algorithm 1) or "lp_ball" (W = B_p(0, λ), 1 < p ≤ 2; Algorithm
    6). A record z is the row (x, y) of length d + 1. ``start``: vertex 0 (polytope) or the centre 0 (ball).
    """

    pool_x: np.ndarray
    pool_y: np.ndarray
    geometry: str
    p: float
    radius: float
    name: str = "sigmoid"
    measure: str = "Frank-Wolfe gap max_v <grad F(w), w - v>"

    @property
    def d(self) -> int:
        return int(self.pool_x.shape[1])

    @property
    def M(self) -> int:
        return int(self.pool_x.shape[0])

    @property
    def q(self) -> float:
        """The dual exponent of the setting's norm (∞ for ℓ_1)."""
        return dual_exponent(self.p)

    @property
    def R_x(self) -> float:
        """max_i ‖x_i‖_q (Definition 2's bound in the dual norm)."""
        return float(np.max(np.linalg.norm(self.pool_x, ord=self.q, axis=1)))

    @property
    def L0(self) -> float:
        """‖∇f‖_* = |φ′|·‖x‖_q ≤ max_i ‖x_i‖_q."""
        return self.R_x

    @property
    def L1(self) -> float:
        """‖∇f(w) − ∇f(v)‖_* ≤ max|φ″|·‖x‖_q·|⟨x, w − v⟩| ≤ (4/(3√3))·max_i ‖x_i‖_q²·‖w − v‖_p."""
        return SIGMOID_CURVATURE * self.R_x**2

    @property
    def W(self):
        ball = LpBall(self.p, self.radius, np.zeros(self.d))
        return Polytope(ball.vertices()) if self.geometry == "polytope" else ball

    @property
    def D(self) -> float:
        """The ‖·‖_p-diameter of W, 2λ."""
        return 2.0 * self.radius

    @property
    def J(self) -> int | None:
        """The vertex count 2d of the polytope (None for a ball)."""
        return 2 * self.d if self.geometry == "polytope" else None

    @property
    def start(self) -> np.ndarray:
        W = self.W
        return np.array(W.vertices[0]) if self.geometry == "polytope" else np.zeros(self.d)

    @property
    def records(self) -> np.ndarray:
        """The pool as records, (M, d + 1): [x_i, y_i]."""
        return np.hstack([self.pool_x, self.pool_y[:, None]])

    def sample(self, n: int, rng) -> np.ndarray:
        """n records (n, d + 1): pool rows at ``integers(M, size=n)`` (uniform, with replacement: S ~ 𝒟^n)."""
        n = check_int("n", n, minimum=1)
        idx = _generator(rng).integers(self.M, size=n)
        return self.records[idx]

    def gradient(self, w, z) -> np.ndarray:
        """∇f(w, z) = φ′(y⟨x, w⟩)·y·x = −sech²(y⟨x, w⟩)·y·x for one record z = (x, y) (the signature of
        Algorithms 1, 6 and 2). The margin is Σ_k x_k w_k by ``np.sum`` and tanh is ``math.tanh``, as in
        ``gradients``, so both give the same bits (NumPy's vectorised tanh may differ from its scalar one in the last
        bit, which would send the fast twin back to one record at a time)."""
        x, y = z[:-1], z[-1]
        s = math.tanh(float(y * np.sum(x * w)))
        return -(1.0 - s * s) * y * x  # s·s, not s**2: NumPy's array power may round differently

    def gradients(self, w, rows) -> np.ndarray:
        """The gradients of a batch of records, (m, d + 1) -> (m, d): ``gradient`` row by row, vectorised (the batch
        protocol of ``reference.fast.bgm21_sfw``)."""
        x, y = rows[:, :-1], rows[:, -1]
        t = y * np.sum(x * w, axis=1)
        s = np.fromiter((math.tanh(v) for v in t.tolist()), dtype=np.float64, count=t.size)
        return (-(1.0 - s * s) * y)[:, None] * x

    def loss(self, w, z) -> float:
        """f(w, z) = 1 − tanh(y⟨x, w⟩)."""
        x, y = z[:-1], z[-1]
        return float(1.0 - np.tanh(y * np.sum(x * w)))

    def population_risk(self, w) -> float:
        """F(w) = (1/M) Σ_i (1 − tanh(y_i⟨x_i, w⟩))."""
        w = _vector("w", w, self.d)
        return float(np.mean(1.0 - np.tanh(self.pool_y * (self.pool_x @ w))))

    def population_gradient(self, w) -> np.ndarray:
        """∇F(w) = −(1/M) Σ_i sech²(y_i⟨x_i, w⟩)·y_i·x_i."""
        w = _vector("w", w, self.d)
        t = self.pool_y * (self.pool_x @ w)
        weights = -(1.0 - np.tanh(t) ** 2) * self.pool_y
        return weights @ self.pool_x / self.M

    def accuracy(self, w) -> float:
        """Gap_F(w) = ⟨∇F(w), w − lmo(∇F(w))⟩ (eq. (1); ``reference.geometry.fw_gap``)."""
        return fw_gap(self.population_gradient(w), _vector("w", w, self.d), self.W)

    def mean_accuracy(self, candidates) -> float:
        """The mean gap over the candidates (the exact E over Algorithm 1/6's uniform output, line 15)."""
        arr = _candidates(candidates, self.d)
        W = self.W
        return float(np.mean([fw_gap(self.population_gradient(w), w, W) for w in arr]))


def _sigmoid_pool(d: int, M: int, label_noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    streams = Streams(seed)
    x = streams.generator(KEY, "sigmoid", "pool_x", d).uniform(-1.0, 1.0, size=(M, d))
    direction = streams.generator(KEY, "sigmoid", "direction", d).standard_normal(d)
    y = np.where(x @ direction >= 0.0, 1.0, -1.0)
    flips = streams.generator(KEY, "sigmoid", "flips", d).random(M) < label_noise
    return x, np.where(flips, -y, y)


def sigmoid_pool_problem(d, *, pool_size=4096, geometry="polytope", p=1.0, radius=1.0, label_noise=0.1,
                         seed=0) -> SigmoidPoolProblem:
    """The sigmoid problem on a public pool of M = ``pool_size`` points drawn from the PUBLIC ``seed``: x_i uniform
    in [−1, 1]^d (stream ("bgm21", "sigmoid", "pool_x", d)), y_i = sign⟨x_i, θ⟩ for a Gaussian direction θ
    (("bgm21", "sigmoid", "direction", d)), each flipped with probability ``label_noise`` (("bgm21", "sigmoid",
    "flips", d)). geometry "polytope" needs p = 1; "lp_ball" needs 1 < p ≤ 2."""
    d = check_int("d", d, minimum=1)
    M = check_int("pool_size", pool_size, minimum=1, maximum=2**20)
    if geometry not in SIGMOID_GEOMETRIES:
        raise ValueError(f"geometry must be one of {SIGMOID_GEOMETRIES}, got {geometry!r}")
    p = float(check_real("p", p))
    if geometry == "polytope" and p != 1.0:
        raise ValueError(f"geometry 'polytope' is the ℓ_1 ball: p must be 1, got {p}")
    if geometry == "lp_ball" and not 1.0 < p <= 2.0:
        raise ValueError(f"geometry 'lp_ball' needs 1 < p <= 2 (Algorithm 6's setting), got {p}")
    lam = _positive("radius", radius)
    noise = float(check_real("label_noise", label_noise, nonnegative=True))
    if noise > 0.5:
        raise ValueError(f"label_noise must lie in [0, 0.5], got {noise}")
    x, y = _sigmoid_pool(d, M, noise, _seed(seed))
    return SigmoidPoolProblem(pool_x=_read_only(x), pool_y=_read_only(y), geometry=geometry, p=p, radius=lam)


# ---------------------------------------------------------------------------------------------------
# Theorem 16: the sigmoid problem as a weakly convex one


@dataclasses.dataclass(frozen=True)
class ProxPoint:
    """prox^β_F(w) (``point``), ‖prox − w‖_2 (``distance``), the certified bound ``error_bound`` on
    ‖point − prox^β_F(w)‖_2, the solver's ``iterations`` and contraction factor ``rate``."""

    point: np.ndarray
    distance: float
    error_bound: float
    iterations: int
    rate: float


@dataclasses.dataclass(frozen=True)
class WeaklyConvexSigmoidProblem:
    """Theorem 16's problem (module doc): ``base`` is an ℓ_2 ``SigmoidPoolProblem`` (geometry "lp_ball", p = 2);
    ρ = L1 (Corollary 25); the measure is ‖prox^β_F(w) − w‖_2 at β (Algorithm 2 at p = 2 uses β = 2ρ).
    Everything else (sample, gradient, W, L0, L1, D) is the base problem's."""

    base: SigmoidPoolProblem
    beta: float
    tol: float
    name: str = "sigmoid-wc"
    measure: str = "proximal near-stationarity |prox_F^beta(w) - w|_2"

    def __post_init__(self):
        if self.base.geometry != "lp_ball" or self.base.p != 2.0:
            raise ValueError("the weakly convex problem is the ℓ_2 ball setting (Algorithm 2 at p = 2)")
        if not self.beta > self.rho:
            raise ValueError(f"beta = {self.beta} must exceed rho = {self.rho} (the prox subproblem is then "
                             "(beta - rho)-strongly convex, Proposition 13)")

    def __getattr__(self, name):  # the base problem's data, constants and population
        if name.startswith("_") or name in ("base", "beta", "tol"):
            raise AttributeError(name)
        return getattr(self.base, name)

    @property
    def rho(self) -> float:
        """ρ = L1: every L1-smooth f is L1-weakly convex (Corollary 25)."""
        return self.base.L1

    def prox(self, w) -> ProxPoint:
        """prox^β_F(w) = argmin_{v∈W} F(v) + (β/2)‖v − w‖²_2 by projected gradient descent from v_0 = Π_W(w), step
        1/(L1 + β), until q‖v_k − v_{k+1}‖/(1 − q) ≤ tol (module doc)."""
        base = self.base
        w = _vector("w", w, base.d)
        W = base.W
        smooth = base.L1 + self.beta
        rate = 1.0 - (self.beta - self.rho) / smooth
        v = W.project(w)
        for k in range(1, 100_000):
            nxt = W.project(v - (base.population_gradient(v) + self.beta * (v - w)) / smooth)
            step = float(np.linalg.norm(nxt - v))
            v = nxt
            bound = rate * step / (1.0 - rate)
            if bound <= self.tol:
                return ProxPoint(point=v, distance=float(np.linalg.norm(v - w)), error_bound=bound, iterations=k,
                                 rate=rate)
        raise ArithmeticError(f"the prox solver did not reach tol = {self.tol} (rate {rate})")  # pragma: no cover

    def accuracy(self, w) -> float:
        """‖prox^β_F(w) − w‖_2 (Definition 15's quantity, before its normalisation by max{1, βD})."""
        return self.prox(w).distance

    def mean_accuracy(self, candidates) -> float:
        """The mean over the candidates w_1..w_R (the exact E over Algorithm 2's uniform output, line 5)."""
        arr = _candidates(candidates, self.base.d)
        return float(np.mean([self.accuracy(w) for w in arr]))

    def normalised(self, value: float) -> float:
        """max{1, βD}·value: the ϑ for which ``value`` meets eq. (5) with equality."""
        return max(1.0, self.beta * self.base.D) * float(value)


def weakly_convex_sigmoid_problem(d, *, pool_size=4096, radius=1.0, label_noise=0.1, seed=0, beta=None,
                                  tol=None) -> WeaklyConvexSigmoidProblem:
    """Theorem 16's problem: the ℓ_2 sigmoid pool problem with ρ = L1, β = 2ρ by default (Algorithm 2 at p = 2:
    κ = 1, ν = 1), tol = 1e-10·max(1, D) by default."""
    base = sigmoid_pool_problem(d, pool_size=pool_size, geometry="lp_ball", p=2.0, radius=radius,
                                label_noise=label_noise, seed=seed)
    beta = 2.0 * base.L1 if beta is None else _positive("beta", beta)
    tol = 1e-10 * max(1.0, base.D) if tol is None else _positive("tol", tol)
    return WeaklyConvexSigmoidProblem(base=base, beta=beta, tol=tol)
