"""bgm21 Phased-SGD and Algorithm 6: the Gaussian-mechanism calibration σ = 2Δ√ln(1/δ)/ε.

Bassily, Guzmán, Menart — *Differentially Private Stochastic Optimization: New Results in Convex and
Non-Convex Settings* (NeurIPS 2021). Each noisy release of Phased-SGD, and of Algorithm 6, calibrates its
Gaussian noise by σ = 2Δ√ln(1/δ)/ε (``bgm21_gaussian_sigma``). That rule is not (ε, δ)-DP for every ε:
``bgm21_gaussian_certified_epsilon`` finds the largest ε at which the exact analytic Gaussian (Balle–Wang
2018) certifies one release, or k releases of the same record.

Scalars are mpmath numbers computed at the caller's working precision
(``reference.precision.working_precision``).
"""

from __future__ import annotations

import mpmath

from ..validation import check_int
from ._privacy_common import first_failing_epsilon, mp_delta, mp_positive

__all__ = ["bgm21_gaussian_sigma", "bgm21_gaussian_certified_epsilon"]


def bgm21_gaussian_sigma(sensitivity, epsilon, delta):
    """bgm21's Gaussian-mechanism calibration σ = 2Δ√ln(1/δ)/ε (Phased-SGD; Algorithm 6).

    One release gives μ = Δ/σ = ε/(2√ln(1/δ)); the analytic Gaussian (Balle–Wang) certifies
    (ε, δ) only up to ``bgm21_gaussian_certified_epsilon(δ)`` (≈ 36.1 at δ = 1e-5).
    """
    delta_s = mp_positive("sensitivity", sensitivity)
    eps = mp_positive("epsilon", epsilon)
    delta = mp_delta("delta", delta)
    return 2 * delta_s * mpmath.sqrt(mpmath.log(1 / delta)) / eps


def bgm21_gaussian_certified_epsilon(delta, releases=1):
    """Largest ε (first failure, scanned then bisected) at which ``releases`` bgm21-calibrated Gaussian
    releases of the same record are (ε, δ)-DP by the analytic Gaussian (Phased-SGD; Algorithm 6).

    Each release has μ_i = ε/(2√ln(1/δ)), so k releases compose to μ = √k·ε/(2√ln(1/δ)).
    Reference values: k = 1 (Phased-SGD, Alg 6 at t = 0): 11.9 (δ = 0.1), 18.4 (1e-2), 24.5 (1e-3),
    36.1 (1e-5), 53.0 (1e-8). k = 2 (Alg 6, t ≥ 1, σ̂ with η_{r,t−1}): 5.13, 6.25, 6.98, 7.97, 8.95,
    9.8 (δ = 1e-12).
    """
    delta = mp_delta("delta", delta)
    releases = check_int("releases", releases, minimum=1)
    scale = mpmath.sqrt(releases) / (2 * mpmath.sqrt(mpmath.log(1 / delta)))
    return first_failing_epsilon(lambda eps: scale * eps, delta, smallest=0.01, largest=1e4)
