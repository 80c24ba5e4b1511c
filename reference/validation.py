"""Input validation shared by every public function.

Every check names the parameter and the rule it broke, so a user who passes ``smoothing_radius=nan``
reads ``smoothing_radius must be a finite real number, got nan`` rather than a NaN three calls later.
Type errors raise ``TypeError``; values out of range raise ``ValueError``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import mpmath
import numpy as np

__all__ = [
    "check_real",
    "check_int",
    "check_array",
    "check_shape",
    "check_probability",
]


def _is_real_scalar(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, (numbers.Real, mpmath.mpf)) or (
        isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "fiu"
    )


def check_real(
    name: str,
    value: Any,
    *,
    positive: bool = False,
    nonnegative: bool = False,
    allow_inf: bool = False,
    upper: float | None = None,
):
    """Return ``value`` unchanged after checking it is a real scalar obeying the stated rules.

    mpmath numbers are returned as they are (so that precision is not lost); everything else comes
    back as a Python float.
    """
    if not _is_real_scalar(value):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    is_mp = isinstance(value, mpmath.mpf)
    as_float = float(value)
    if math.isnan(as_float) or (is_mp and mpmath.isnan(value)):
        raise ValueError(f"{name} must be a finite real number, got nan")
    if math.isinf(as_float) and not (is_mp and mpmath.isfinite(value)):
        if not allow_inf:
            raise ValueError(f"{name} must be a finite real number, got {as_float}")
    if positive and not value > 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    if nonnegative and not value >= 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    if upper is not None and not value <= upper:
        raise ValueError(f"{name} must be <= {upper}, got {value}")
    return value if is_mp else as_float


def check_probability(name: str, value: Any, *, open_left: bool = True, open_right: bool = True):
    """A probability-like parameter in (0, 1), with the ends allowed where stated."""
    value = check_real(name, value)
    lo_ok = value > 0 if open_left else value >= 0
    hi_ok = value < 1 if open_right else value <= 1
    if not (lo_ok and hi_ok):
        lo = "(" if open_left else "["
        hi = ")" if open_right else "]"
        raise ValueError(f"{name} must lie in {lo}0, 1{hi}, got {value}")
    return value


def check_int(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer parameter (bool is refused) with optional inclusive bounds."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_shape(name: str, value: Any) -> tuple[int, ...]:
    """A sample shape: an int or a tuple of non-negative ints."""
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool):
        value = (int(value),)
    if not isinstance(value, tuple):
        raise TypeError(f"{name} must be an int or a tuple of ints, got {type(value).__name__}")
    return tuple(check_int(f"{name}[{i}]", v, minimum=0) for i, v in enumerate(value))


def check_array(
    name: str,
    value: Any,
    *,
    ndim: int | None = None,
    shape: tuple[int | None, ...] | None = None,
    finite: bool = True,
) -> np.ndarray:
    """Coerce ``value`` to an array and check dimension, shape and finiteness.

    Object arrays and lists holding mpmath numbers keep mpmath (an object array); anything else becomes
    float64. ``shape`` may use
    ``None`` for an axis of any length.
    """
    if isinstance(value, np.ndarray) and value.dtype == object:
        arr = value
    elif isinstance(value, (list, tuple)) and any(isinstance(v, mpmath.mpf) for v in np.ravel(np.array(value, dtype=object))):
        arr = np.array(value, dtype=object)  # keep mpmath precision: never round a list of mpf to float64
    else:
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be an array of real numbers ({exc})") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if finite:
        if arr.dtype == object:
            ok = all(mpmath.isfinite(v) for v in arr.flat)
        else:
            ok = bool(np.all(np.isfinite(arr)))
        if not ok:
            raise ValueError(f"{name} must contain only finite values")
    return arr
