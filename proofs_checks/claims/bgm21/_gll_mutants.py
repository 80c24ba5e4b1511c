"""Mutants of Algorithm 3's oracle shared by the bgm21 §3 claims (private to the folder): a bisection whose bracket is
scaled, written here so that the mutant changes one thing of the rebuilt algorithm (bgm21 Lemma 4, Algorithm 3)."""

from __future__ import annotations

import math

import numpy as np

from proofs_checks.authoring import substitute

__all__ = ["bracket_mutant"]


def _bisection_oracle(w, X, y, loss, beta, alpha, feature_bound, scale):
    """Algorithm 3 with the bracket [u − scale·L0/β, u + scale·L0/β] and K = ⌈log₂(L0R/α)⌉ steps."""
    w, X, y = np.asarray(w, dtype=np.float64), np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ratio = loss.lipschitz * feature_bound / alpha
    K = 0 if ratio <= 1.0 else math.ceil(math.log2(ratio))
    u = X @ w
    lo, hi = u - scale * loss.lipschitz / beta, u + scale * loss.lipschitz / beta
    for _ in range(K):
        m = 0.5 * (lo + hi)
        g = np.asarray(loss.subgradient(m, y), dtype=np.float64) + beta * (m - u)
        lo, hi = np.where(g < 0.0, m, lo), np.where(g > 0.0, m, hi)
        same = g == 0.0
        lo, hi = np.where(same, m, lo), np.where(same, m, hi)
    v = 0.5 * (lo + hi)
    return (beta * (u - v))[:, None] * X


def bracket_mutant(name: str, description: str, scale: float):
    """``moreau_glm_gradient`` replaced by Algorithm 3 bisecting on a bracket ``scale`` times the right one."""
    return substitute(name, description, "moreau_glm_gradient",
                      lambda call: _bisection_oracle(call.w, call.X, call.y, call.loss, call.beta, call.alpha,
                                                     call.feature_bound, scale))
