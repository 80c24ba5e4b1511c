"""Shared by the accounting claim modules (accounting.py, accounting_backend.py): the default RDP orders, the
tolerances, and the exact Gaussian-DP profile as ground truth."""

from __future__ import annotations

import math

import mpmath
import numpy as np

from reference.accounting import gaussian as exact_gaussian
from reference.precision import working_precision

#: dp_accounting's (and our) default RDP orders, as the floats dp_accounting builds.
DEFAULT_ORDERS = np.array([1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024],
                          dtype=np.float64)

#: digits of the mpmath ground truths computed in the checks
TRUTH_DPS = 30

#: float64 identities (a product or sum of a few rounded terms): relative tolerance
IDENTITY_RTOL = 1e-12
#: agreement with an mpmath ground truth
EXACT_RTOL = 1e-10
#: relative slack on a δ recomputed from a float64 ε (ε carries ~1e-16 relative; dδ/dε·ε/δ ≲ 1e5 on the grids)
PRIVACY_SLACK = 1e-9
#: the profile grids keep δ ≥ this (a float64 subject cannot return smaller values to full precision)
SMALLEST_DELTA = 1e-300


def array(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).reshape(-1)


def entrywise_relative(got, want) -> float:
    """max_i |got_i − want_i| / |want_i| (inf on shape mismatch or non-finite output)."""
    got, want = array(got), array(want)
    if got.shape != want.shape or not np.all(np.isfinite(got)):
        return math.inf
    scale = np.abs(want)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(scale > 0, np.abs(got - want) / scale, np.abs(got - want))
    return float(np.max(rel)) if rel.size else 0.0


def exact_delta(epsilon, mu):
    """Ground truth: the exact μ-GDP profile δ_μ(ε) (Balle–Wang Thm 8) in mpmath (reference.accounting.gaussian)."""
    with working_precision(TRUTH_DPS):
        return exact_gaussian.gaussian_delta(mpmath.mpf(float(epsilon)), mpmath.mpf(float(mu)))


def exact_epsilon(delta, mu) -> float:
    """The ε at which the exact μ-GDP profile equals δ (for reports)."""
    with working_precision(TRUTH_DPS):
        return float(exact_gaussian.gaussian_epsilon(mpmath.mpf(float(delta)), mpmath.mpf(float(mu))))
