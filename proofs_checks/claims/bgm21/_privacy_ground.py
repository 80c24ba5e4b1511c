"""Ground truth shared by the bgm21 privacy claims (private to the folder): exact privacy profiles computed here in
mpmath from closed forms, the settings-side sensitivity bounds of Algorithms 1 and 6 (rebuilt, bgm21.E1), and the
small test problems the privacy checks run the subject's algorithms on.

* ``gaussian_profile(ε, μ)``: δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle–Wang 2018 Thm 8), written with
  ``mpmath.erfc`` at 50 digits (no cancellation at the sizes used here: both terms are computed to 50 digits and
  the difference is at least 1e-20 of them in every check).
* ``pure_routes(ε0, k, δ)``: the closed-form certificates of k ε0-DP steps — basic kε0, bgm21 Lemma 1
  ε0√(2k ln(1/δ)) + kε0(e^{ε0} − 1) and zCDP ρ + 2√(ρ ln(1/δ)), ρ = kε0²/2 (Bun–Steinke Props 1.3, 1.4) — and
  ``pure_certifies(ε0, k, ε, δ)``: whether some route certifies (ε, δ), the exact one of Kairouz–Oh–Viswanath
  included (``reference.algorithms.bgm21_accounting.kov_exact_delta``, one evaluation at ε).
* ``rnm_two_candidate_probability(gap, s)``: P(the worse of two candidates wins) = ½e^{−g/s}(1 + g/(2s)) for iid
  Lap(s) noise and a score gap g ≥ 0 (the survival function of the difference of two Laplace variables).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from reference.algorithms.bgm21_accounting import kov_exact_delta
from reference.geometry import Polytope

DPS = 50


def gaussian_profile(epsilon, mu):
    """δ_μ(ε) of one μ-GDP release (Balle–Wang 2018 Thm 8), mpmath at ``DPS`` digits."""
    with mpmath.workdps(DPS):
        eps, mu = mpmath.mpf(epsilon), mpmath.mpf(mu)
        return +(mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2))


def pure_routes(eps0, k: int, delta) -> dict:
    """Closed-form certificates (basic, Lemma 1, zCDP) of k adaptive ε0-DP steps at δ (mpmath)."""
    with mpmath.workdps(DPS):
        eps0, delta = mpmath.mpf(eps0), mpmath.mpf(delta)
        L = mpmath.log(1 / delta)
        rho = k * eps0**2 / 2
        return {"basic": k * eps0, "lemma1": eps0 * mpmath.sqrt(2 * k * L) + k * eps0 * mpmath.expm1(eps0),
                "zcdp": rho + 2 * mpmath.sqrt(rho * L)}


def pure_certifies(eps0, k: int, epsilon, delta) -> bool:
    """Some valid route certifies k ε0-DP steps at (ε, δ): a closed form ≤ ε, or the exact KOV δ(ε) ≤ δ."""
    if min(pure_routes(eps0, k, delta).values()) <= epsilon:
        return True
    with mpmath.workdps(DPS):
        return bool(kov_exact_delta(mpmath.mpf(eps0), k, mpmath.mpf(epsilon)) <= mpmath.mpf(delta))


def rnm_two_candidate_probability(gap, scale):
    """P(argmin of (c, c + gap) + iid Lap(scale) noise is the second candidate), gap ≥ 0 (mpmath)."""
    with mpmath.workdps(DPS):
        x = mpmath.mpf(gap) / mpmath.mpf(scale)
        return +(mpmath.exp(-x) * (1 + x / 2) / 2)


# --- settings-side sensitivity bounds (rebuilt privacy proofs of Theorems 7 and 10) ------------------------------

def batch_size(b: int, t: int) -> int:
    """m_t = ⌈b/(t+1)⌉ (Algorithm 1 lines 4, 9)."""
    return -(-b // (t + 1))


def eta(t: int) -> float:
    """η_{r,t} = 1/√(t+1) (Theorems 7–11)."""
    return 1.0 / math.sqrt(t + 1)


def alg1_estimator_sensitivity(t: int, b: int, L0: float, L1: float, D: float) -> float:
    """G_t: G_0 = 2L0/b; G_t = (2/m_t)[(1 − η_t)η_{t−1}L1D + η_tL0] (a record of B_r^t against ∇_r^t, dual norm)."""
    if t == 0:
        return 2.0 * L0 / b
    return (2.0 / batch_size(b, t)) * ((1.0 - eta(t)) * eta(t - 1) * L1 * D + eta(t) * L0)


def printed_lap_scale(r: int, b: int, eps: float, delta: float, L0: float, L1: float, D: float) -> float:
    """s_r = 2D(L0 + L1D)·2^r·√log(1/δ)/(bε) (Algorithm 1 line 3)."""
    return 2.0 * D * (L0 + L1 * D) * 2.0**r * math.sqrt(math.log(1.0 / delta)) / (b * eps)


# --- test problems ---------------------------------------------------------------------------------------------

def scaled_simplex(d: int, diameter: float) -> Polytope:
    """Conv{(D/2)e_i}: ℓ1-diameter D."""
    return Polytope(0.5 * diameter * np.eye(d))


def linear_gradient(L0: float):
    """∇f(w, z) = L0·z for records with ‖z‖_∞ ≤ 1: L0-Lipschitz in ℓ1 (dual ℓ∞) and 0-smooth, for every L1 ≥ 0."""

    def gradient(w, z):
        return L0 * np.asarray(z, dtype=np.float64)

    return gradient


def bounded_records(gen: np.random.Generator, n: int, d: int) -> np.ndarray:
    """n records uniform in [−1, 1]^d (‖z‖_∞ ≤ 1, hence ‖z‖_q ≤ d^{1/q} for every q)."""
    return gen.uniform(-1.0, 1.0, (n, d))
