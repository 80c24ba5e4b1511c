"""bgm21 §2 "Normed Spaces", §4.1–4.2, §5: the feasible sets of the Frank–Wolfe and mirror-descent algorithms.

Bassily, Guzmán, Menart (NeurIPS 2021) work in ℓ_p^d = (R^d, ‖·‖_p), 1 ≤ p ≤ ∞, whose dual is ℓ_q^d with
1/p + 1/q = 1 (§2, "Normed Spaces": ‖y‖_* = max_{‖x‖≤1} ⟨y, x⟩). The feasible set W is closed and convex
with ‖·‖-diameter D: a polytope Conv(V) with J vertices for the polyhedral / ℓ_1 algorithms (Theorem 6,
§4.1 Algorithm 1), and an ℓ_p ball B_{‖·‖_p}(c, λ) for the ℓ_p algorithms (§4.2, §5 Algorithm 2).

* ``dual_exponent(p)``: q = p/(p − 1), with q = ∞ at p = 1 and q = 1 at p = ∞.
* ``lp_norm(x, p)``, ``dual_norm(g, p) = lp_norm(g, dual_exponent(p))``. Computed on |x|/max|x| and rescaled,
  so neither overflow nor underflow of |x_i|^p can spoil the result.
* ``Polytope(vertices)``: the linear minimization oracle lmo(g) = (V_j*, j*), j* = argmin_j ⟨V_j, g⟩ with the
  lowest index on ties (the rule of the report-noisy-min step of Algorithm 1 at zero noise), and
  ``diameter(p)`` = max_{i,j} ‖V_i − V_j‖_p.
* ``LpBall(p, radius, center)``: B_{‖·‖_p}(c, λ). ``lmo`` in closed form (g = 0 returns c):

  - p = 1: c − λ·sign(g_i*)·e_i*, i* = lowest index of max |g_i|;
  - 1 < p < ∞: c − λ·sign(g) ⊙ |g|^{q−1} / ‖g‖_q^{q−1}, so that ⟨v − c, g⟩ = −λ‖g‖_q (Hölder's equality case);
  - p = ∞: c − λ·sign(g) (a zero g_i gives v_i = c_i).

  ``vertices()`` (p = 1 only): the 2d vertices c ± λe_i, ``diameter(norm_p)`` = 2λ in ℓ_p and
  2λ·d^{max(0, 1/r − 1/p)} in ℓ_r, ``project(w)`` the Euclidean projection, ``contains(w, tol)``.
* ``fw_gap(gradient, w, lmo)`` = ⟨g, w⟩ − ⟨g, lmo(g)⟩ = max_{v∈W} ⟨g, w − v⟩ ≥ 0, the stationarity gap (1)
  of §2 at the gradient g.

This module computes in float64 only: mpmath inputs are refused with ``TypeError`` (convert them with
``reference.precision.to_float``). Every public input is validated; errors name the parameter and the rule.
"""

from __future__ import annotations

import math
import numbers
from typing import Callable

import mpmath
import numpy as np
from scipy import optimize

from .validation import check_array, check_real

__all__ = [
    "dual_exponent",
    "lp_norm",
    "dual_norm",
    "Polytope",
    "LpBall",
    "fw_gap",
    "PROJECTION_RTOL",
]

#: Unit roundoff of float64, u = 2^-53.
_U = 2.0**-53

#: Relative tolerance of the nested root finds of ``LpBall.project`` for 1 < p < ∞, p ≠ 2 (see there).
PROJECTION_RTOL = 4.0 * np.finfo(np.float64).eps

_FLOAT64_ONLY = "(this module computes in float64); convert mpmath values with reference.precision.to_float"


# ---------------------------------------------------------------------------------------------------
# Input helpers (private)


def _float(name: str, value, **rules) -> float:
    """A float64 scalar obeying ``check_real``'s rules; mpmath refused."""
    if isinstance(value, mpmath.mpf):
        raise TypeError(f"{name} must be float64 {_FLOAT64_ONLY}")
    return float(check_real(name, value, **rules))


def _exponent(name: str, p) -> float:
    """A norm exponent p ∈ [1, ∞] (∞ allowed: ℓ_∞)."""
    p = _float(name, p, allow_inf=True)
    if not p >= 1.0:
        raise ValueError(f"{name} must be >= 1 (ℓ_p is a norm only for 1 <= p <= inf), got {p}")
    return p


def _float_array(name: str, value, ndim: int) -> np.ndarray:
    """A finite float64 array of the given dimension; mpmath, bool, complex and text refused."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be an array of real numbers, got {type(value).__name__}")
    try:
        raw = value if isinstance(value, np.ndarray) else np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers ({exc})") from None
    if raw.dtype == object:
        for entry in raw.flat:
            if isinstance(entry, mpmath.mpf):
                raise TypeError(f"{name} must be float64 {_FLOAT64_ONLY}")
            if isinstance(entry, bool) or not isinstance(entry, numbers.Real):
                raise TypeError(f"{name} entries must be real numbers, got {type(entry).__name__}")
    elif raw.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {raw.dtype}")
    arr = check_array(name, np.asarray(raw, dtype=np.float64), ndim=ndim)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    return np.array(arr, dtype=np.float64)


def _float_vector(name: str, value, length: int | None = None) -> np.ndarray:
    arr = _float_array(name, value, 1)
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have shape ({length},), got {arr.shape}")
    return arr


def _finite_result(name: str, arr: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} overflows float64 (entries too large for this set's scale)")
    return arr


# ---------------------------------------------------------------------------------------------------
# Norms (bgm21 §2, "Normed Spaces")


def dual_exponent(p) -> float:
    """The dual exponent q of p: 1/p + 1/q = 1, i.e. q = p/(p − 1); q = ∞ at p = 1 and q = 1 at p = ∞."""
    p = _exponent("p", p)
    if p == 1.0:
        return math.inf
    if math.isinf(p):
        return 1.0
    return p / (p - 1.0)


def _lp_norm(x: np.ndarray, p: float) -> float:
    a = np.abs(x)
    top = float(np.max(a))
    if top == 0.0:
        return 0.0
    if math.isinf(p):
        return top
    if p == 1.0:
        return _finite_norm(float(_quiet(lambda: np.sum(a))))
    scaled = a / top  # entries in [0, 1]: |x_i/top|^p neither overflows nor loses the largest term
    return _finite_norm(top * float(np.sum(scaled**p)) ** (1.0 / p))


def _quiet(compute):
    """Evaluate ``compute()`` with float overflow warnings off: the caller checks finiteness and raises."""
    with np.errstate(over="ignore", invalid="ignore"):
        return compute()


def _finite_norm(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("the norm overflows float64 (entries too large)")
    return value


def lp_norm(x, p) -> float:
    """‖x‖_p = (Σ|x_i|^p)^{1/p} for 1 ≤ p < ∞, max|x_i| for p = ∞, of a non-empty finite vector x."""
    p = _exponent("p", p)
    return _lp_norm(_float_vector("x", x), p)


def dual_norm(g, p) -> float:
    """‖g‖_* of ℓ_p^d, which is ‖g‖_q with q = dual_exponent(p) (bgm21 §2)."""
    q = dual_exponent(p)
    return _lp_norm(_float_vector("g", g), q)


# ---------------------------------------------------------------------------------------------------
# Polytope W = Conv(V) (bgm21 Theorem 6, §4.1)


class Polytope:
    """W = Conv(V) for a vertex array V of shape (J, d), J ≥ 1 (bgm21 Theorem 6, §4.1 Algorithm 1).

    Vertices are stored as given (a read-only float64 copy); redundant points are allowed, they only cost
    oracle time. ``J`` and ``d`` are the vertex count and the dimension.
    """

    def __init__(self, vertices):
        arr = _float_array("vertices", vertices, 2)
        arr.setflags(write=False)
        self.vertices = arr
        self.J, self.d = arr.shape

    def __repr__(self) -> str:
        return f"Polytope(J={self.J}, d={self.d})"

    def lmo(self, g) -> tuple[np.ndarray, int]:
        """(V_j*, j*) with j* = argmin_j ⟨V_j, g⟩, the lowest index among tied scores.

        Scores are computed one vertex at a time with ``np.dot`` (float64); ties are ties of those computed
        scores. The vertex is returned as a fresh writable copy.
        """
        g = _float_vector("g", g, self.d)
        best_j, best_score = 0, None
        for j in range(self.J):  # the paper's argmin over the J vertices, in index order
            score = float(np.dot(self.vertices[j], g))
            if not math.isfinite(score):
                raise ValueError(f"the score <V_{j}, g> overflows float64")
            if best_score is None or score < best_score:  # strict: the lowest index wins a tie
                best_j, best_score = j, score
        return np.array(self.vertices[best_j]), best_j

    def diameter(self, p) -> float:
        """max_{i<j} ‖V_i − V_j‖_p, the ℓ_p-diameter D of W (attained at a pair of vertices); 0 when J = 1."""
        p = _exponent("p", p)
        best = 0.0
        for i in range(self.J):
            for j in range(i + 1, self.J):
                diff = _finite_result("a vertex difference", _quiet(lambda: self.vertices[i] - self.vertices[j]))
                best = max(best, _lp_norm(diff, p))
        return best


# ---------------------------------------------------------------------------------------------------
# ℓ_p ball B_p(c, λ) (bgm21 §4.1 ℓ_1 setting, §4.2, §5)


class LpBall:
    """B_{‖·‖_p}(c, λ) = {w : ‖w − c‖_p ≤ λ}, 1 ≤ p ≤ ∞ (bgm21 §2 ball notation; the ℓ_p feasible sets).

    ``p`` is the norm exponent (``math.inf`` for ℓ_∞), ``radius`` λ > 0, ``center`` c a non-empty finite
    vector whose length fixes the dimension ``d``. ``q`` is the dual exponent.
    """

    def __init__(self, p, radius, center):
        self.p = _exponent("p", p)
        self.radius = _float("radius", radius, positive=True)
        c = _float_vector("center", center)
        c.setflags(write=False)
        self.center = c
        self.d = c.shape[0]
        self.q = dual_exponent(self.p)

    def __repr__(self) -> str:
        return f"LpBall(p={self.p}, radius={self.radius}, d={self.d})"

    def _point(self, name: str, w) -> np.ndarray:
        return _float_vector(name, w, self.d)

    # --- linear minimization oracle --------------------------------------------------------------

    def lmo(self, g) -> np.ndarray:
        """v ∈ argmin_{‖v−c‖_p ≤ λ} ⟨v, g⟩ in closed form; g = 0 returns c.

        p = 1: c − λ·sign(g_i*)·e_i* with i* the lowest index of max|g_i|. 1 < p < ∞:
        c − λ·sign(g) ⊙ (|g|/‖g‖_q)^{q−1}, computed on |g|/max|g| so no power overflows. p = ∞:
        c − λ·sign(g). In every case ⟨v − c, g⟩ = −λ‖g‖_q up to rounding.
        """
        g = self._point("g", g)
        v = np.array(self.center)
        a = np.abs(g)
        top = float(np.max(a))
        if top == 0.0:
            return v
        lam = self.radius
        if self.p == 1.0:
            i = int(np.argmax(a))  # lowest index on ties
            v[i] -= lam * np.sign(g[i])
        elif math.isinf(self.p):
            v -= lam * np.sign(g)
        else:
            scaled = a / top
            ratio = scaled / _lp_norm(scaled, self.q)  # |g_i|/‖g‖_q ∈ [0, 1]
            v -= lam * np.sign(g) * ratio ** (self.q - 1.0)
        return _finite_result("lmo(g)", v)

    # --- vertices and diameter --------------------------------------------------------------------

    def vertices(self) -> np.ndarray:
        """The 2d vertices of the ℓ_1 ball (p = 1 only), row 2i = c + λe_i and row 2i + 1 = c − λe_i.

        With this order ``Polytope(ball.vertices()).lmo(g)`` picks the same vertex as ``ball.lmo(g)``
        whenever the scores are computed exactly (both break ties by the lowest coordinate i).
        """
        if self.p != 1.0:
            raise ValueError(f"vertices() is defined for the ℓ_1 ball only (a polytope), got p = {self.p}")
        out = np.empty((2 * self.d, self.d))
        for i in range(self.d):
            out[2 * i] = self.center
            out[2 * i, i] += self.radius
            out[2 * i + 1] = self.center
            out[2 * i + 1, i] -= self.radius
        return _finite_result("vertices()", out)

    def diameter(self, norm_p=None) -> float:
        """The diameter D of the ball: 2λ in its own norm (norm_p None or p).

        In another norm ℓ_r (norm_p = r): 2λ·sup_{‖x‖_p≤1} ‖x‖_r = 2λ·d^{max(0, 1/r − 1/p)}.
        """
        if norm_p is None:
            return 2.0 * self.radius
        r = _exponent("norm_p", norm_p)
        exponent = max(0.0, 1.0 / r - 1.0 / self.p)  # 1/∞ = 0 in float arithmetic
        return _finite_norm(2.0 * self.radius * float(self.d) ** exponent)

    # --- membership and projection ----------------------------------------------------------------

    def contains(self, w, tol=0.0) -> bool:
        """‖w − c‖_p ≤ λ + tol (tol ≥ 0 absolute).

        Projections land on the sphere only up to rounding (‖P(w) − c‖_p ≤ λ(1 + 8(d + 2)u), u = 2^-53), so
        pass a tol of that size to test them.
        """
        w = self._point("w", w)
        tol = _float("tol", tol, nonnegative=True)
        diff = _finite_result("w − center", _quiet(lambda: w - self.center))
        return _lp_norm(diff, self.p) <= self.radius + tol

    def project(self, w) -> np.ndarray:
        """The Euclidean projection P(w) = argmin_{‖x−c‖_p ≤ λ} ‖x − w‖_2. Points inside are returned unchanged.

        * p = 2: c + (w − c)·λ/‖w − c‖_2.
        * p = ∞: clipping each coordinate to [c_i − λ, c_i + λ].
        * p = 1: the sort-based projection onto the ℓ_1 ball (Duchi, Shalev-Shwartz, Singer, Chandra, ICML
          2008, Fig. 1): with y = w − c and u = |y| sorted decreasingly, ρ = max{j : u_j > (Σ_{i≤j} u_i − λ)/j},
          θ = (Σ_{i≤ρ} u_i − λ)/ρ, P(w) = c + sign(y) ⊙ max(|y| − θ, 0).
        * other p (1 < p < ∞): the KKT conditions of min ½‖x − y‖² s.t. Σ|x_i|^p ≤ λ^p give x_i = sign(y_i)·λ·t_i
          with t_i ≥ 0 solving t_i + μ·p·t_i^{p−1} = |y_i|/λ for one multiplier μ > 0 fixed by Σ t_i^p = 1.
          Both are 1-D root finds with ``scipy.optimize.brentq`` (bisection-safeguarded): per coordinate on
          t ∈ [0, min(|y_i|/λ, 1)], and on μ ∈ (0, max_i(|y_i|/λ)·d^{(p−1)/p}/p], each to relative tolerance
          ``PROJECTION_RTOL`` = 4·eps (plus an absolute 1e-300). The result is finally rescaled radially onto
          the sphere ‖x − c‖_p = λ, which changes it by a relative amount of the order of that tolerance.
        """
        w = self._point("w", w)
        y = _finite_result("w − center", _quiet(lambda: w - self.center))
        lam = self.radius
        if _lp_norm(y, self.p) <= lam:
            return w
        if self.p == 2.0:
            x = y * (lam / _lp_norm(y, 2.0))
        elif math.isinf(self.p):
            x = np.clip(y, -lam, lam)
        elif self.p == 1.0:
            x = _project_l1(y, lam)
        else:
            x = _project_lp(y, lam, self.p)
        return _finite_result("project(w)", self.center + x)


def _project_l1(y: np.ndarray, lam: float) -> np.ndarray:
    """Euclidean projection of y (with ‖y‖_1 > λ) onto the ℓ_1 ball of radius λ at 0 (Duchi et al. 2008)."""
    a = np.abs(y)
    u = np.sort(a)[::-1]
    css = np.cumsum(u)
    rho, theta = 0, 0.0
    for j in range(1, u.shape[0] + 1):  # ρ = the largest j with u_j > (Σ_{i≤j} u_i − λ)/j
        if u[j - 1] > (css[j - 1] - lam) / j:
            rho = j
    theta = (css[rho - 1] - lam) / rho
    return np.sign(y) * np.maximum(a - theta, 0.0)


def _project_lp(y: np.ndarray, lam: float, p: float) -> np.ndarray:
    """Euclidean projection of y (with ‖y‖_p > λ) onto the ℓ_p ball of radius λ at 0, 1 < p < ∞, p ≠ 2."""
    b = _quiet(lambda: np.abs(y) / lam)  # the problem in units of λ: project b onto the unit ℓ_p ball, b ≥ 0
    if not np.all(np.isfinite(b)):
        raise ValueError("w − center is too large relative to radius (|w_i − c_i|/radius overflows float64)")
    d = b.shape[0]

    def coordinate(bi: float, mu: float) -> float:
        """t ≥ 0 with t + μ p t^{p−1} = b_i, or +inf when that t exceeds 1 (then Σ t^p > 1 already)."""
        if bi == 0.0:
            return 0.0
        hi = min(bi, 1.0)
        h = lambda t: t + mu * p * t ** (p - 1.0) - bi  # noqa: E731 - increasing in t on [0, ∞)
        if h(hi) < 0.0:
            return math.inf
        if h(hi) == 0.0:
            return hi
        return optimize.brentq(h, 0.0, hi, xtol=1e-300, rtol=PROJECTION_RTOL, maxiter=2000)

    def excess(mu: float) -> float:
        """Σ t_i(μ)^p − 1, decreasing in μ; +1 stands in for the region where some t_i > 1."""
        ts = [coordinate(float(bi), mu) for bi in b]
        if any(math.isinf(t) for t in ts):
            return 1.0
        return float(sum(t**p for t in ts)) - 1.0

    # At μ_hi every t_i ≤ d^{-1/p} (since μ_hi·p·(d^{-1/p})^{p−1} ≥ b_i), so Σ t^p ≤ 1.
    mu_hi = float(np.max(b)) * float(d) ** ((p - 1.0) / p) / p
    if not math.isfinite(mu_hi):
        raise ValueError("w − center is too large relative to radius for the ℓ_p projection")
    if excess(0.0) <= 0.0:  # y is on the sphere up to rounding (‖b‖_p > 1 only in the last bits)
        mu = 0.0
    elif excess(mu_hi) >= 0.0:  # only when the bound is attained with equality
        mu = mu_hi
    else:
        mu = optimize.brentq(excess, 0.0, mu_hi, xtol=1e-300, rtol=PROJECTION_RTOL, maxiter=2000)
    t = np.array([coordinate(float(bi), mu) for bi in b])
    if not np.all(np.isfinite(t)):  # μ landed a hair below the root: nudge it up to the bracket's side
        t = np.array([coordinate(float(bi), mu * (1.0 + PROJECTION_RTOL)) for bi in b])
    norm = _lp_norm(t, p)
    if norm > 0.0:
        t = t / norm  # radial correction onto the sphere Σ t^p = 1
    return np.sign(y) * lam * t


# ---------------------------------------------------------------------------------------------------
# Frank–Wolfe gap (bgm21 §2 eq. (1))


def fw_gap(gradient, w, lmo) -> float:
    """Gap(w) = ⟨g, w⟩ − ⟨g, lmo(g)⟩ = max_{v∈W} ⟨g, w − v⟩ (bgm21 §2 eq. (1) with g = ∇F(w)).

    ``lmo`` is a set with an ``lmo`` method (``Polytope``, ``LpBall``) or a callable g ↦ v or g ↦ (v, index).
    Computed as ⟨g, w − v⟩, so it is exactly 0 when w is the oracle's vertex. The gap of a point of W is
    ≥ 0; a computed value below zero by at most the rounding bound 4(d + 2)·u·Σ|g_i|(|w_i| + |v_i|)
    (u = 2^-53) is returned as 0.0, and a more negative one raises ``ValueError`` (w is outside W or the
    oracle does not minimize).
    """
    g = _float_vector("gradient", gradient)
    d = g.shape[0]
    w = _float_vector("w", w, d)
    oracle: Callable = lmo.lmo if hasattr(lmo, "lmo") and callable(lmo.lmo) else lmo
    if not callable(oracle):
        raise TypeError(f"lmo must be callable or have an lmo method, got {type(lmo).__name__}")
    out = oracle(g)
    if isinstance(out, tuple):
        if len(out) != 2:
            raise ValueError(f"lmo must return a vertex or a (vertex, index) pair, got a tuple of length {len(out)}")
        out = out[0]
    v = _float_vector("lmo(gradient)", out, d)
    diff = _finite_result("w − lmo(gradient)", _quiet(lambda: w - v))
    gap = float(np.dot(g, diff))
    if not math.isfinite(gap):
        raise ValueError("fw_gap overflows float64")
    bound = 4.0 * (d + 2) * _U * float(np.sum(np.abs(g) * (np.abs(w) + np.abs(v))))
    if gap < 0.0:
        if gap >= -bound:
            return 0.0
        raise ValueError(
            f"fw_gap is {gap!r} < 0 beyond rounding ({bound:.3g}): w is not in the set, or lmo does not "
            "return a minimizer of <g, v> over it"
        )
    return gap
