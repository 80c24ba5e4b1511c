"""spider_sosp §3, Assumption 3.1 and Definition 1.2 (Liu–Talwar): stochastic loss families f(x; z), z ~ P, with
every constant of the assumption stated and the population F_P(x) = E_z f(x; z) in closed form.

Liu & Talwar find second-order stationary points of the POPULATION loss F_P from one pass over i.i.d. records, under
Assumption 3.1: almost surely every f(·; z) is G-Lipschitz (‖∇f‖ ≤ G), M-smooth (∇f is M-Lipschitz) and
ρ-Hessian-Lipschitz, and the public start x_0 has F_P(x_0) − inf F_P ≤ B. The paper has no experiments; these are
dpref's test problems for its Algorithm 2, chosen so that every quantity a test needs is exact:

* ``CosineFamily``: f(x; z) = Σ_j c_j s_j cos(x_j − z_j), z ~ N(0, τ² I_d). A strict saddle at x = 0 whenever the
  signs s_j are mixed, global minima at x_j ∈ {0, π}; the saddle-escape problem. τ = 0 makes every record the same
  (exact gradients: the deterministic variant). ``reference.objectives.CosineSaddle`` is the finite-sum version of
  the same function (a stored data set); this one is a law to sample from.
* ``QuadraticFamily``: f(x; z) = ½ xᵀAx − ⟨z, x⟩ with A symmetric positive definite and z uniform on the sphere of
  radius r: a strongly convex sanity problem whose gradient differences are noiseless (O2 of Algorithm 3 is exact).

Every family has ``sample(rng, n)`` (the records, one generator call), per-record ``loss``, ``gradient``,
``hessian`` and ``gradients`` (a batch, one record at a time), and the population ``population_loss``,
``population_gradient``, ``population_hessian``, ``population_infimum`` and ``loss_gap(x0)`` (B).

Arithmetic: float64 (these families have no cancellation-prone step; the stationarity measures of
``reference.stationarity`` are float64 too). mpmath inputs are refused with a TypeError.
"""

from __future__ import annotations

import math

import numpy as np

from .rng import sample_sphere
from .validation import check_array, check_int, check_real

__all__ = ["LossFamily", "CosineFamily", "QuadraticFamily"]


def _generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _float_vector(name: str, value, length: int) -> np.ndarray:
    """A finite float64 vector of the given length (mpmath refused: this module computes in float64)."""
    arr = check_array(name, value, shape=(length,))
    if arr.dtype == object:
        raise TypeError(f"{name} must be float64 (this module computes in float64); convert mpmath values with "
                        "reference.precision.to_float")
    return np.array(arr, dtype=np.float64)


def _read_only(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=np.float64, copy=True)
    arr.flags.writeable = False
    return arr


class LossFamily:
    """A law P of records z and a loss f(x; z) satisfying Assumption 3.1 of spider_sosp.

    Attributes: name; d (dimension of x); data_width (p, the length of a record z); lipschitz (G),
    smoothness (M), hessian_lipschitz (ρ): the almost-sure constants of Assumption 3.1, justified in each
    subclass docstring.

    Subclasses implement ``_sample``, ``_loss``, ``_gradient``, ``_hessian`` (one point x of shape (d,), one record z
    of shape (p,)) and the population closed forms ``_population_*``; the public methods check their inputs.
    """

    name: str = "loss_family"
    d: int
    data_width: int
    lipschitz: float
    smoothness: float
    hessian_lipschitz: float

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, d={self.d})"

    # -- records -----------------------------------------------------------------------------------------

    def sample(self, rng, n) -> np.ndarray:
        """n i.i.d. records z_1..z_n ~ P as an (n, p) float64 array (the draw schedule is in the subclass doc)."""
        rng = _generator(rng)
        n = check_int("n", n, minimum=0)
        return self._sample(rng, n)

    def _point(self, x) -> np.ndarray:
        return _float_vector("x", x, self.d)

    def _record(self, z) -> np.ndarray:
        return _float_vector("z", z, self.data_width)

    def loss(self, x, z) -> float:
        """f(x; z) for one point x (d,) and one record z (p,)."""
        return float(self._loss(self._point(x), self._record(z)))

    def gradient(self, x, z) -> np.ndarray:
        """∇f(x; z), shape (d,): the per-record gradient the oracles of Algorithm 3 average."""
        return self._gradient(self._point(x), self._record(z))

    def hessian(self, x, z) -> np.ndarray:
        """∇²f(x; z), shape (d, d), symmetric."""
        return self._hessian(self._point(x), self._record(z))

    def gradients(self, x, batch) -> np.ndarray:
        """The per-record gradients ∇f(x; z_i) of a batch (m, p) as an (m, d) array, one record at a time."""
        x = self._point(x)
        batch = check_array("batch", batch, ndim=2)
        if batch.dtype == object:
            raise TypeError("batch must be float64 (this module computes in float64)")
        if batch.shape[1] != self.data_width:
            raise ValueError(f"batch must have shape (m, {self.data_width}) (one record per row), got {batch.shape}")
        out = np.empty((batch.shape[0], self.d))
        for i in range(batch.shape[0]):
            out[i] = self._gradient(x, batch[i])
        return out

    # -- population ----------------------------------------------------------------------------------------

    def population_loss(self, x) -> float:
        """F_P(x) = E_z f(x; z), exact."""
        return float(self._population_loss(self._point(x)))

    def population_gradient(self, x) -> np.ndarray:
        """∇F_P(x), exact."""
        return self._population_gradient(self._point(x))

    def population_hessian(self, x) -> np.ndarray:
        """∇²F_P(x), exact, symmetric (d, d)."""
        return self._population_hessian(self._point(x))

    def population_infimum(self) -> float:
        """inf_x F_P(x), exact (attained)."""
        return float(self._population_infimum())

    def loss_gap(self, x0) -> float:
        """B of Assumption 3.1 at the start x0: F_P(x0) − inf F_P (≥ 0)."""
        return max(0.0, self.population_loss(x0) - self.population_infimum())


# ---------------------------------------------------------------------------------------------------
# The cosine family


class CosineFamily(LossFamily):
    """f(x; z) = Σ_j c_j s_j cos(x_j − z_j), z ~ N(0, τ² I_d): the saddle-escape problem for spider_sosp Algorithm 2.

    Args:
        c: (d,) weights c_j > 0.
        s: (d,) signs s_j ∈ {+1, −1}.
        tau: τ ≥ 0, the spread of the records (τ = 0: every record is 0 and every gradient is exact).

    Per record: ∂_j f = −c_j s_j sin(x_j − z_j), ∇²f = diag(−c_j s_j cos(x_j − z_j)).

    Constants of Assumption 3.1, almost surely (for every z):

    * G = ‖c‖₂: |∂_j f| = c_j |sin(x_j − z_j)| ≤ c_j, so ‖∇f‖ ≤ ‖c‖₂, with equality where every x_j − z_j = π/2.
    * M = max_j c_j: ∇²f is diagonal with |entries| c_j |cos(x_j − z_j)| ≤ c_j, so ‖∇²f‖ ≤ max_j c_j and ∇f is
      M-Lipschitz (mean-value theorem); equality at x = z.
    * ρ = max_j c_j: ‖∇²f(x) − ∇²f(y)‖ = max_j c_j |cos(x_j − z_j) − cos(y_j − z_j)| ≤ max_j c_j |x_j − y_j|
      ≤ max_j c_j ‖x − y‖ since |cos a − cos b| ≤ |a − b|; sharp as y → x along e_j where sin(x_j − z_j) = ±1.

    Population, with φ = E cos z_j = e^{−τ²/2} (and E sin z_j = 0):
    F(x) = φ Σ_j c_j s_j cos x_j, ∇F_j = −φ c_j s_j sin x_j, ∇²F = diag(−φ c_j s_j cos x_j),
    inf F = −φ Σ_j c_j, attained at x_j = π where s_j = +1 and x_j = 0 where s_j = −1. x = 0 is a critical point of F
    (and of every f(·; 0)); λ_min(∇²F(0)) = −φ max_{j: s_j = +1} c_j, a strict saddle when s has mixed signs.

    Oracle variances, exact (``gradient_variance``, ``difference_variance``), with e = e^{−2τ²}:
    Var ∂_j f(x; z) = c_j² [(1 − e cos 2x_j)/2 − φ² sin² x_j] and
    Var(∂_j f(x; z) − ∂_j f(y; z)) = c_j² [(1 − e cos 2x_j)/2 + (1 − e cos 2y_j)/2 − cos(x_j − y_j)
    + e cos(x_j + y_j) − φ² (sin x_j − sin y_j)²]
    (from E sin²(x − z) = (1 − e cos 2x)/2 and E sin(x − z) sin(y − z) = (cos(x − y) − e cos(x + y))/2).

    Draw schedule of ``sample(rng, n)``: one call ``rng.standard_normal((n, d))``, scaled by τ (also when τ = 0, so
    the generator advances the same way for every τ).
    """

    def __init__(self, c, s, tau):
        c = check_array("c", c, ndim=1)
        if c.dtype == object:
            raise TypeError("c must be float64 (this module computes in float64)")
        if c.size < 1:
            raise ValueError("c must have at least one entry (dimension d >= 1)")
        if not np.all(c > 0):
            raise ValueError(f"c must have entries c_j > 0, got {c}")
        s = check_array("s", s, shape=(c.size,))
        if s.dtype == object:
            raise TypeError("s must be float64 (this module computes in float64)")
        if not np.all((s == 1.0) | (s == -1.0)):
            raise ValueError(f"s must have entries in {{+1, -1}}, got {s}")
        self.tau = float(check_real("tau", tau, nonnegative=True))
        self.c = _read_only(c)
        self.s = _read_only(s)
        self.d = self.data_width = int(c.size)
        self.lipschitz = float(np.linalg.norm(self.c))
        self.smoothness = float(np.max(self.c))
        self.hessian_lipschitz = float(np.max(self.c))
        self.phi = math.exp(-self.tau**2 / 2)  # φ = E cos z_j
        self.name = "cosine" if self.tau > 0 else "cosine_det"

    def _sample(self, rng, n):
        return self.tau * rng.standard_normal((n, self.d)) + 0.0  # + 0.0 turns −0.0 into 0.0

    def _loss(self, x, z):
        return np.sum(self.c * self.s * np.cos(x - z))

    def _gradient(self, x, z):
        return -self.c * self.s * np.sin(x - z)

    def _hessian(self, x, z):
        return np.diag(-self.c * self.s * np.cos(x - z))

    def _population_loss(self, x):
        return self.phi * np.sum(self.c * self.s * np.cos(x))

    def _population_gradient(self, x):
        return -self.phi * self.c * self.s * np.sin(x)

    def _population_hessian(self, x):
        return np.diag(-self.phi * self.c * self.s * np.cos(x))

    def _population_infimum(self):
        return -self.phi * math.fsum(self.c)

    def population_minimizer(self) -> np.ndarray:
        """A global minimiser of F: x_j = π where s_j = +1, 0 where s_j = −1."""
        return np.where(self.s > 0, np.pi, 0.0)

    def saddle_point(self) -> np.ndarray:
        """x = 0: ∇F(0) = 0 exactly (and ∇f(0; 0) = 0 for the deterministic records of τ = 0)."""
        return np.zeros(self.d)

    def saddle_curvature(self) -> float:
        """λ_min(∇²F(0)) = −φ max_{j: s_j = +1} c_j (or φ min_j c_j > 0 when every s_j = −1: then 0 is a minimum)."""
        return float(np.min(-self.phi * self.c * self.s))

    def gradient_variance(self, x) -> np.ndarray:
        """(Var ∂_j f(x; z))_j, exact; E‖O1(x) − ∇F(x)‖² = Σ_j (this)_j / b for a batch of b fresh records."""
        x = self._point(x)
        e = math.exp(-2 * self.tau**2)
        return self.c**2 * ((1 - e * np.cos(2 * x)) / 2 - self.phi**2 * np.sin(x) ** 2)

    def difference_variance(self, x, y) -> np.ndarray:
        """(Var(∂_j f(x; z) − ∂_j f(y; z)))_j, exact; E‖O2 − (∇F(x) − ∇F(y))‖² = Σ_j (this)_j / b_t."""
        x = self._point(x)
        y = _float_vector("y", y, self.d)
        e = math.exp(-2 * self.tau**2)
        second_moment = ((1 - e * np.cos(2 * x)) / 2 + (1 - e * np.cos(2 * y)) / 2 - np.cos(x - y)
                         + e * np.cos(x + y))
        return self.c**2 * (second_moment - self.phi**2 * (np.sin(x) - np.sin(y)) ** 2)


# ---------------------------------------------------------------------------------------------------
# The quadratic family


class QuadraticFamily(LossFamily):
    """f(x; z) = ½ xᵀAx − ⟨z, x⟩, z uniform on the sphere of radius r: a strongly convex sanity problem.

    Args:
        hessian: A, (d, d) symmetric positive definite (exactly symmetric: A == Aᵀ entrywise).
        noise_radius: r ≥ 0, the norm of every record (E z = 0, ‖z‖ = r).
        domain_radius: R > 0, the radius of the ball ‖x‖ ≤ R on which ``lipschitz`` holds.

    Per record: ∇f = Ax − z, ∇²f = A. Population: F(x) = ½ xᵀAx, ∇F = Ax, ∇²F = A, inf F = 0 at x = 0 (A ≻ 0).

    Constants:

    * M = λ_max(A): ∇f(x) − ∇f(y) = A(x − y), so ∇f is λ_max(A)-Lipschitz (sharp along the top eigenvector).
    * ρ = 0 (``hessian_lipschitz``): the Hessian is constant; every ρ > 0 satisfies Assumption 3.1 (which asks ρ > 0).
    * G = λ_max(A)·R + r holds ONLY on the ball ‖x‖ ≤ R: ‖Ax − z‖ ≤ ‖A‖‖x‖ + ‖z‖. No quadratic is Lipschitz on all
      of R^d, so a run whose iterates leave the ball is outside Assumption 3.1 (its privacy, which needs ‖∇f‖ ≤ G,
      is not covered); use it for noiseless or sanity checks.
    * μ = λ_min(A) > 0 (``strong_convexity``).

    The gradient difference ∇f(x; z) − ∇f(y; z) = A(x − y) does not depend on z: O2 of Algorithm 3 is exact, and
    E‖∇f(x; z) − ∇F(x)‖² = r² (``gradient_variance`` spreads it as r²/d per coordinate, by symmetry of the sphere).

    Draw schedule of ``sample(rng, n)``: ``reference.rng.sample_sphere(rng, n, d, r)`` (one ``standard_normal((n, d))``
    call); r = 0 draws nothing and returns zeros.
    """

    def __init__(self, hessian, noise_radius, domain_radius):
        A = check_array("hessian", hessian, ndim=2)
        if A.dtype == object:
            raise TypeError("hessian must be float64 (this module computes in float64)")
        if A.shape[0] != A.shape[1] or A.shape[0] < 1:
            raise ValueError(f"hessian must be a square (d, d) matrix with d >= 1, got shape {A.shape}")
        if not np.array_equal(A, A.T):
            raise ValueError("hessian must be symmetric (A == A.T entrywise)")
        eigenvalues = np.linalg.eigvalsh(A)
        if not eigenvalues[0] > 0:
            raise ValueError(f"hessian must be positive definite (smallest eigenvalue > 0), got {eigenvalues[0]}")
        self.A = _read_only(A)
        self.noise_radius = float(check_real("noise_radius", noise_radius, nonnegative=True))
        self.domain_radius = float(check_real("domain_radius", domain_radius, positive=True))
        self.d = self.data_width = int(A.shape[0])
        self.smoothness = float(eigenvalues[-1])
        self.strong_convexity = float(eigenvalues[0])
        self.hessian_lipschitz = 0.0
        self.lipschitz = self.smoothness * self.domain_radius + self.noise_radius
        self.name = "quadratic"

    def _sample(self, rng, n):
        if self.noise_radius == 0:
            return np.zeros((n, self.d))
        return sample_sphere(rng, n, self.d, self.noise_radius)

    def _loss(self, x, z):
        return 0.5 * x @ self.A @ x - z @ x

    def _gradient(self, x, z):
        return self.A @ x - z

    def _hessian(self, x, z):
        return np.array(self.A)

    def _population_loss(self, x):
        return 0.5 * x @ self.A @ x

    def _population_gradient(self, x):
        return self.A @ x

    def _population_hessian(self, x):
        return np.array(self.A)

    def _population_infimum(self):
        return 0.0

    def population_minimizer(self) -> np.ndarray:
        return np.zeros(self.d)

    def gradient_variance(self, x) -> np.ndarray:
        """(Var ∂_j f(x; z))_j = r²/d each (z uniform on the sphere of radius r: E z_j² = r²/d)."""
        self._point(x)
        return np.full(self.d, self.noise_radius**2 / self.d)

    def difference_variance(self, x, y) -> np.ndarray:
        """Zero: ∇f(x; z) − ∇f(y; z) = A(x − y) for every z."""
        self._point(x)
        _float_vector("y", y, self.d)
        return np.zeros(self.d)
