"""Test problems shared by the nsnc_improved estimator claims (private to the folder): ridge sums and linear
losses, as per-sample functions that both subjects can call, with their exact smoothed gradients.

* :class:`Ridges` — f(x; z_i) = L·φ(<a_i, x> − c_i) with unit a_i and φ one of the ridge profiles of
  ``reference.smoothing`` ("abs" |r|, "capped" min(|r|, τ), "wshape" ||r| − τ|). ``gradient(points, rows)`` is
  ∇f: called by the reference with one point (d,) and one row (d + 1,), by the fast twin with stacked points
  (..., d) against rows (..., d + 1) that broadcast; ``loss`` likewise. Ground truth: the ball-smoothed gradient
  ∇f_α(x; z_i) = L·a_i·E[φ'(r_i + α v_1)], v ~ Unif(unit ball) (``reference.objectives.RidgeSum``, exact), and the
  mean of the sphere-perturbed gradient E[∇f(x + α u; z_i)] = L·a_i·E[φ'(r_i + α u_1)], u ~ Unif(𝕊^{d−1}), from
  the kink expansion φ' = Σ_j w_j sign(· − b_j) and the sphere marginal CDF (``reference.smoothing``).
* :func:`linear_loss` — f(x; z) = <z, x>, in both calling conventions.
"""

from __future__ import annotations

import numpy as np

from reference.objectives import RidgeSum
from reference.smoothing import sphere_marginal_cdf

__all__ = ["Ridges", "linear_loss"]

#: φ' = Σ_j w_j sign(r − b_j): the weights and kinks of each profile (τ the cap or well position).
KINKS = {
    "abs": lambda tau: ((1.0, 0.0),),
    "capped": lambda tau: ((-0.5, -tau), (1.0, 0.0), (-0.5, tau)),
    "wshape": lambda tau: ((1.0, -tau), (-1.0, 0.0), (1.0, tau)),
}


def linear_loss(points, rows):
    """<z, x> for points (..., d) and rows (..., d) that broadcast (one point and one row for the reference)."""
    return np.sum(np.asarray(points) * np.asarray(rows), axis=-1)


class Ridges:
    """b ridges L·φ(<a_i, x> − c_i) whose residuals at ``x`` are ``residuals`` (c_i = <a_i, x> − r_i), a_i ∝ rows."""

    def __init__(self, rows, x, residuals, *, lipschitz: float = 1.0, profile: str = "abs", tau: float = 1.0):
        rows = np.asarray(rows, dtype=np.float64)
        self.directions = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        self.x = np.asarray(x, dtype=np.float64)
        offsets = self.directions @ self.x - np.asarray(residuals, dtype=np.float64)
        self.lipschitz, self.profile, self.tau = float(lipschitz), profile, float(tau)
        self.d = self.directions.shape[1]
        self.data = np.column_stack([self.directions, offsets])
        self._kinks = KINKS[profile](self.tau)

    def _slope(self, residual):
        return sum(w * np.sign(residual - b) for w, b in self._kinks)

    def gradient(self, points, rows):
        """∇f(x; z) = L·φ'(<a, x> − c)·a (at a kink the midpoint of the one-sided slopes)."""
        points, rows = np.asarray(points), np.asarray(rows)
        a = rows[..., : self.d]
        residual = np.sum(points * a, axis=-1) - rows[..., self.d]
        return self.lipschitz * np.asarray(self._slope(residual))[..., None] * a

    def loss(self, points, rows):
        points, rows = np.asarray(points), np.asarray(rows)
        residual = np.sum(points * rows[..., : self.d], axis=-1) - rows[..., self.d]
        absolute = np.abs(residual)
        value = {"abs": absolute, "capped": np.minimum(absolute, self.tau),
                 "wshape": np.abs(absolute - self.tau)}[self.profile]
        return self.lipschitz * value

    def ridge_sum(self) -> RidgeSum:
        return RidgeSum(self.directions, self.data[:, self.d], lipschitz=self.lipschitz, profile=self.profile,
                        tau=self.tau)

    def smoothed_gradient(self, radius: float) -> np.ndarray:
        """(1/b) Σ_i ∇f_α(x; z_i) with f_α(x) = E_{y~Unif(𝔹_α)} f(x + y) (exact), α = ``radius``."""
        return np.mean(self.ridge_sum().smoothed_gradient(self.x, self.data, radius), axis=0)

    def sphere_mean_gradient(self, radius: float) -> np.ndarray:
        """(1/b) Σ_i E[∇f(x + α u; z_i)], u ~ Unif(𝕊^{d−1}) (exact; d ≥ 2): what eq. (17) estimates."""
        residual = self.directions @ self.x - self.data[:, self.d]
        slope = np.zeros_like(residual)
        for w, b in self._kinks:
            # E sign(m + α u_1) = P(u_1 > −m/α) − P(u_1 < −m/α) = 1 − 2 F_S(−m/α) (no atom: d ≥ 2)
            slope = slope + w * (1.0 - 2.0 * sphere_marginal_cdf(-(residual - b) / radius, self.d))
        return np.mean(self.lipschitz * slope[:, None] * self.directions, axis=0)
