"""The test problem of the bgm21 Frank–Wolfe and weakly convex claims (private to the folder): a smooth non-convex
generalized linear loss on a finite pool of records, whose population is the uniform law on the pool.

f(w, (x, y)) = 1 − tanh(y⟨x, w⟩), y ∈ {−1, +1} (a sigmoid-shaped loss: 1 − tanh(s) = 2·sigmoid(−2s)). With
s = y⟨x, w⟩, ∇f(w, z) = −y·sech²(s)·x and ∇²f(w, z) = 2·tanh(s)·sech²(s)·x xᵀ. Since sech² ≤ 1 and
max_s |2 tanh(s) sech²(s)| = 4/(3√3) (at tanh² s = 1/3), in the ℓ_p setting (dual exponent q):

* L0 = max_i ‖x_i‖_q (‖∇f‖_* ≤ L0),
* L1 = (4/(3√3))·max_i ‖x_i‖_q² (‖∇f(w) − ∇f(w′)‖_* ≤ L1‖w − w′‖_p, since |⟨x, u⟩| ≤ ‖x‖_q‖u‖_p),

and every f(·, z) is L1-weakly convex w.r.t. ‖·‖_p (Corollary 25). Flipping the label negates the gradient at every
w (sech² is even), the record pair the sensitivity claims use.

The population 𝒟 is uniform over the K pool records, so F_𝒟, ∇F_𝒟, Cov ∇f(w, z) and the Frank–Wolfe gap are exact
finite sums (no sampling error in the ground truth); data sets S ~ 𝒟ⁿ are drawn with replacement from the pool.

A data row is [x_1, …, x_d, y] followed by any extra columns (the single-pass claim appends a record id), which the
gradient ignores.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

__all__ = ["CURVATURE", "Pool", "make_pool", "l1_ball_vertices", "lp_norm"]

#: max_s |d²/ds² tanh(s)| = max |2 tanh(s) sech²(s)| = 4/(3√3), attained at tanh² s = 1/3.
CURVATURE = 4.0 / (3.0 * math.sqrt(3.0))


def lp_norm(x, p: float) -> float:
    """‖x‖_p (p = inf allowed), computed directly (ground truth independent of reference.geometry)."""
    x = np.abs(np.asarray(x, dtype=np.float64))
    if math.isinf(p):
        return float(np.max(x))
    return float(np.sum(x**p) ** (1.0 / p))


def l1_ball_vertices(d: int, radius: float = 1.0) -> np.ndarray:
    """The 2d vertices ±radius·e_i of the ℓ_1 ball, rows ordered (+e_0, −e_0, +e_1, …)."""
    out = np.zeros((2 * d, d))
    for i in range(d):
        out[2 * i, i], out[2 * i + 1, i] = radius, -radius
    return out


@dataclasses.dataclass(frozen=True)
class Pool:
    """K records (x_i, y_i) with x_i ∈ R^d; the population is uniform over them."""

    X: np.ndarray
    y: np.ndarray

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def K(self) -> int:
        return self.X.shape[0]

    @property
    def rows(self) -> np.ndarray:
        """(K, d + 1): the records as data rows [x, y]."""
        return np.hstack([self.X, self.y[:, None]])

    def lipschitz(self, p: float) -> float:
        """L0 = max_i ‖x_i‖_q, q the dual exponent of p."""
        q = math.inf if p == 1.0 else (1.0 if math.isinf(p) else p / (p - 1.0))
        return max(lp_norm(x, q) for x in self.X)

    def smoothness(self, p: float) -> float:
        """L1 = (4/(3√3))·max_i ‖x_i‖_q² (also the weak-convexity constant, Corollary 25)."""
        return CURVATURE * self.lipschitz(p) ** 2

    def gradient(self, w, z) -> np.ndarray:
        """∇f(w, z) = −y·sech²(y⟨x, w⟩)·x for a data row z = [x, y, extra...]."""
        d = self.d
        x, y = np.asarray(z[:d], dtype=np.float64), float(z[d])
        s = y * float(np.dot(x, w))
        return -y * (1.0 - math.tanh(s) ** 2) * x

    def losses(self, w) -> np.ndarray:
        return 1.0 - np.tanh(self.y * (self.X @ np.asarray(w, dtype=np.float64)))

    def value(self, w) -> float:
        """F_𝒟(w), exact (mean over the pool)."""
        return float(np.mean(self.losses(w)))

    def record_gradients(self, w) -> np.ndarray:
        """(K, d): ∇f(w, z_i) for every pool record."""
        s = self.y * (self.X @ np.asarray(w, dtype=np.float64))
        return (-self.y * (1.0 - np.tanh(s) ** 2))[:, None] * self.X

    def population_gradient(self, w) -> np.ndarray:
        """∇F_𝒟(w), exact."""
        return self.record_gradients(w).mean(axis=0)

    def sample_rows(self, gen: np.random.Generator, n: int) -> np.ndarray:
        """n data rows drawn i.i.d. from 𝒟 (uniform over the pool, with replacement)."""
        return self.rows[gen.integers(self.K, size=n)]


def make_pool(d: int, K: int, seed: int, scale: float = 1.0) -> Pool:
    """A fixed pool, deterministic in ``seed``: x_i = scale·u_i·g_i/‖g_i‖_∞ with g_i ~ N(0, I_d) and u_i ~ U[0.5, 1]
    (so ‖x_i‖_∞ ≤ scale), labels y_i = sign⟨θ, x_i⟩ for a fixed θ = linspace(1, −0.5, d), so that ∇F_𝒟 is far from 0
    near the origin."""
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((K, d))
    X *= scale * gen.uniform(0.5, 1.0, size=(K, 1)) / np.max(np.abs(X), axis=1, keepdims=True)
    theta = np.linspace(1.0, -0.5, d)
    y = np.where(X @ theta >= 0.0, 1.0, -1.0)
    return Pool(X=X, y=y)
