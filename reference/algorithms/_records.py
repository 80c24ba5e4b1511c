"""Per-record helpers shared by the zeroth-order oracles of zo_o2nc (Algorithms 4, 6) and nsnc_improved
(Algorithms 3–5): the loss value as a real number, finiteness in either arithmetic, zero vectors, read-only rows;
and, for bgm21's float64 algorithms (Algorithms 1, 2 and 6), the records and vectors they accept."""

from __future__ import annotations

import math
import numbers

import mpmath
import numpy as np

from ..validation import check_array

__all__ = ["real_value", "is_finite", "zeros", "read_only", "float64_vector", "float64_records"]


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


def float64_vector(name: str, value, length: int) -> np.ndarray:
    """``value`` as a float64 vector of shape (length,); mpmath (object) arrays are refused, naming ``name``."""
    arr = check_array(name, value, ndim=1)
    if arr.dtype == object:
        raise TypeError(f"{name} must be float64 (this module computes in float64); convert mpmath values with "
                        "reference.precision.to_float")
    if arr.shape[0] != length:
        raise ValueError(f"{name} must have shape ({length},), got {arr.shape}")
    return np.array(arr, dtype=np.float64)


def float64_records(data) -> np.ndarray:
    """The records as a read-only float64 array (n, p), n ≥ 1; mpmath (object) arrays are refused."""
    arr = check_array("data", data, ndim=2)
    if arr.dtype == object:
        raise TypeError("data must be float64 (this module computes in float64)")
    if arr.shape[0] < 1:
        raise ValueError("data must have at least one row (n >= 1)")
    out = np.array(arr, dtype=np.float64)
    out.flags.writeable = False
    return out
