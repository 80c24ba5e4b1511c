"""Per-record helpers shared by the zeroth-order oracles of zo_o2nc (Algorithms 4, 6) and nsnc_improved
(Algorithms 3–5): the loss value as a real number, finiteness in either arithmetic, zero vectors, read-only rows."""

from __future__ import annotations

import math
import numbers

import mpmath
import numpy as np

__all__ = ["real_value", "is_finite", "zeros", "read_only"]


def real_value(value, use_mp: bool, where: str, what: str = "loss"):
    """``value`` (what a loss returned) as a float or mpf; a non-finite value is returned as it is (the caller
    replaces it). Refuses arrays of another shape and non-real types, naming ``where``."""
    if isinstance(value, np.ndarray):
        if value.shape != ():
            raise ValueError(f"{what} must return a scalar, got an array of shape {value.shape} at {where}")
        value = value[()]
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, mpmath.mpf)):
        raise TypeError(f"{what} must return a real number, got {type(value).__name__} at {where}")
    return mpmath.mpf(value) if use_mp else float(value)


def is_finite(value) -> bool:
    return bool(mpmath.isfinite(value)) if isinstance(value, mpmath.mpf) else math.isfinite(value)


def zeros(d: int, use_mp: bool) -> np.ndarray:
    if use_mp:
        out = np.empty(d, dtype=object)
        out.fill(mpmath.mpf(0))
        return out
    return np.zeros(d)


def read_only(arr: np.ndarray) -> np.ndarray:
    view = arr.view()
    view.flags.writeable = False
    return view
