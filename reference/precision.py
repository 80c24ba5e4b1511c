"""Precision policy (docs/design.md, Precision): mpmath working precision, log-space helpers, conversions.

The reference runs vector algorithms on small problems in mpmath so that finite-difference
cancellation and rounding can be measured against the float64 backend. Vectors are NumPy object
arrays of ``mpmath.mpf``; the helpers below accept either those or float64 arrays and keep the
arithmetic of their input (mpmath in, mpmath out; float64 in, float64 out).

Log-space helpers exist because privacy quantities (RDP curves, deltas near 1e-300) underflow in
float64 long before they are negligible.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

import mpmath
import numpy as np

__all__ = [
    "DEFAULT_DPS",
    "working_precision",
    "is_mp",
    "to_mp",
    "to_float",
    "log_add",
    "log_sub",
    "log1mexp",
    "log_erfc",
    "logsumexp",
    "norm",
    "dot",
    "clip_norm",
]

#: Default decimal digits for reference computations; ~166 bits, far beyond float64's 53.
DEFAULT_DPS = 50


@contextlib.contextmanager
def working_precision(dps: int = DEFAULT_DPS) -> Iterator[None]:
    """Run a block with ``dps`` decimal digits of mpmath precision, restoring the previous setting."""
    if isinstance(dps, bool) or not isinstance(dps, int) or dps < 15:
        raise ValueError(f"dps must be an integer >= 15 (float64 has ~15.9 digits), got {dps!r}")
    with mpmath.workdps(dps):
        yield


def is_mp(x) -> bool:
    """True for an mpmath scalar or an object array (the reference's mpmath vectors)."""
    if isinstance(x, np.ndarray):
        return x.dtype == object
    return isinstance(x, (mpmath.mpf, mpmath.mpc))


def to_mp(x) -> np.ndarray | mpmath.mpf:
    """Exact conversion of float64 values to mpmath (every float64 is an exact binary fraction)."""
    if isinstance(x, np.ndarray):
        out = np.empty(x.shape, dtype=object)
        flat_in = x.reshape(-1)
        flat_out = out.reshape(-1)
        for i, v in enumerate(flat_in):
            flat_out[i] = mpmath.mpf(v) if not isinstance(v, mpmath.mpf) else v
        return out
    return mpmath.mpf(x)


def to_float(x) -> np.ndarray | float:
    """Round mpmath values to the nearest float64; refuses values that overflow float64."""
    if isinstance(x, np.ndarray):
        out = np.array([float(v) for v in x.reshape(-1)], dtype=np.float64).reshape(x.shape)
        bad = ~np.isfinite(out) & np.array([mpmath.isfinite(v) for v in x.reshape(-1)]).reshape(x.shape)
        if np.any(bad):
            raise OverflowError("value out of float64 range in to_float")
        return out
    out = float(x)
    if not np.isfinite(out) and mpmath.isfinite(x):
        raise OverflowError(f"{x} is out of float64 range")
    return out


# ---------------------------------------------------------------------------------------------------
# Log-space arithmetic (mpmath; inputs may be -inf to mean log 0)


def log_add(a, b):
    """log(e^a + e^b), exact in mpmath; ``-inf`` stands for log 0."""
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    if a == -mpmath.inf:
        return b
    if b == -mpmath.inf:
        return a
    hi, lo = (a, b) if a >= b else (b, a)
    return hi + mpmath.log1p(mpmath.exp(lo - hi))


def log_sub(a, b):
    """log(e^a - e^b) for a >= b; raises rather than returning nan when a < b."""
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    if b == -mpmath.inf:
        return a
    if a < b:
        raise ValueError(f"log_sub needs a >= b (log of a negative number), got a={a}, b={b}")
    if a == b:
        return -mpmath.inf
    return a + log1mexp(b - a)


def log1mexp(x):
    """log(1 - e^x) for x <= 0, accurate near 0 and for very negative x (Mächler 2012)."""
    x = mpmath.mpf(x)
    if x > 0:
        raise ValueError(f"log1mexp needs x <= 0, got {x}")
    if x == 0:
        return -mpmath.inf
    if x > -mpmath.log(2):
        return mpmath.log(-mpmath.expm1(x))
    return mpmath.log1p(-mpmath.exp(x))


def log_erfc(x):
    """log(erfc(x)), finite for large x where erfc underflows any fixed exponent range.

    mpmath's erfc returns 0 or raises OverflowError (its exponent no longer fits a float, x ≳ 1e150) for huge
    x; there the asymptotic series erfc(x) = e^{−x²}/(x√π)·Σ_k (−1)^k (2k−1)!!/(2x²)^k is summed until its terms
    drop below the working precision (for such x, two terms already do).
    """
    x = mpmath.mpf(x)
    try:
        value = mpmath.erfc(x)
    except OverflowError:
        value = mpmath.mpf(0)
    if value != 0:
        return mpmath.log(value)
    if x <= 0:  # erfc(x) ≥ 1 for x ≤ 0: unreachable, kept so the asymptotic branch only sees x > 0
        raise ArithmeticError(f"erfc({x}) evaluated to 0")
    inverse_two_x2 = 1 / (2 * x * x)
    term, total, k = mpmath.mpf(1), mpmath.mpf(1), 1
    while abs(term) > mpmath.eps:
        term *= -(2 * k - 1) * inverse_two_x2
        total += term
        k += 1
    return -x * x - mpmath.log(x) - mpmath.log(mpmath.sqrt(mpmath.pi)) + mpmath.log(total)


def logsumexp(values: Iterable):
    """log(Σ e^{v_i}) in mpmath; an empty sum is log 0 = -inf."""
    vals = [mpmath.mpf(v) for v in values]
    if not vals:
        return -mpmath.inf
    hi = max(vals)
    if hi == -mpmath.inf:
        return hi
    return hi + mpmath.log(mpmath.fsum(mpmath.exp(v - hi) for v in vals))


# ---------------------------------------------------------------------------------------------------
# Small vector helpers that keep the arithmetic of their input


def norm(v, axis: int = -1):
    """Euclidean norm along ``axis``; mpmath vectors use ``fsum`` (correctly rounded sum of squares).

    float64 vectors are scaled by max|v| first, so the norm of entries near 1e200 or 1e-200 neither
    overflows nor underflows (‖v‖² would).
    """
    if is_mp(v):
        v = np.asarray(v, dtype=object)
        if v.ndim == 1:
            return mpmath.sqrt(mpmath.fsum(x * x for x in v))
        moved = np.moveaxis(v, axis, -1)
        out = np.empty(moved.shape[:-1], dtype=object)
        for idx in np.ndindex(out.shape):
            out[idx] = mpmath.sqrt(mpmath.fsum(x * x for x in moved[idx]))
        return out
    v = np.asarray(v, dtype=np.float64)
    largest = np.max(np.abs(v), axis=axis, keepdims=True) if v.size else np.zeros(())
    safe = np.where(largest > 0, largest, 1.0)
    out = np.squeeze(largest, axis=axis) * np.linalg.norm(v / safe, axis=axis)
    return float(out) if np.ndim(out) == 0 else out


def dot(u, v):
    """Inner product of two 1-D vectors; exact summation (``fsum``) when either is mpmath."""
    if is_mp(u) or is_mp(v):
        return mpmath.fsum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(u, v, strict=True))
    return float(np.dot(np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)))


def clip_norm(v, clip_threshold):
    """v · min(1, C/‖v‖) for a 1-D vector, with clip(0) = 0 (C = ``clip_threshold``, may be inf).

    float64: evaluated as w·(C/‖w‖) with w = v/max|v|, so no intermediate over- or underflows.
    """
    if is_mp(v):
        length = norm(v)
        if length <= clip_threshold:
            return v.copy() if isinstance(v, np.ndarray) else v
        return v * (clip_threshold / length)
    v = np.asarray(v, dtype=np.float64)
    largest = float(np.max(np.abs(v))) if v.size else 0.0
    if largest == 0.0:
        return v.copy()
    w = v / largest
    w_length = float(np.linalg.norm(w))  # in [1, sqrt(d)]
    if largest * w_length <= clip_threshold:  # an overflowing product is inf > C: clipped, correctly
        return v.copy()
    return w * (float(clip_threshold) / w_length)
