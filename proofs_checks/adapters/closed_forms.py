"""The smoothing closed forms of ``reference.smoothing`` (zo_o2nc §2, Lemma 2.2, Lemmas A.1–A.2) as claim subjects:
the reference subject runs their mpmath path, the fast subject their float64 path.

``reference.smoothing`` computes every closed form in two arithmetics (its module docstring): mpmath at the caller's
working precision, and float64 (SciPy's regularized incomplete beta, gamma constants rounded from 30 digits). The
two paths are separate code (mpmath.betainc on mpf against scipy.special.betainc on float64 arrays), so the claims
of proofs_checks/claims/zo_o2nc/smoothing.py test each: the reference at PRECISION digits, each value rounded to
float64 once, and the float64 path as the fast backend's own (the design's precision policy: closed forms in
mpmath, a float64 fast path that must agree within a documented tolerance — here the claims' 1e-12 against their
own quadratures).

Protocols: ``smoothed_ridge_slope``, ``smoothed_ridge_value``, ``smoothed_abs_at_zero``,
``symmetric_difference_fraction``, ``gamma_ratio``, ``smoothness_constant``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

import numpy as np

from reference import smoothing
from reference.precision import to_float, working_precision

from .dpref import PRECISION

__all__ = ["NAMES", "reference_implementations", "fast_implementations"]

#: The protocols of reference.smoothing that the claims call.
NAMES = ("smoothed_ridge_slope", "smoothed_ridge_value", "smoothed_abs_at_zero", "symmetric_difference_fraction",
         "gamma_ratio", "smoothness_constant")


def _floats(value):
    """A float for a scalar, a float64 array otherwise."""
    out = to_float(value)
    return float(out) if np.ndim(out) == 0 else np.asarray(out, dtype=np.float64)


def _in(arithmetic: str, name: str) -> Callable:
    function = getattr(smoothing, name)

    @functools.wraps(function)
    def call(*args, **kwargs):
        if arithmetic == "mpmath":
            with working_precision(PRECISION):
                return _floats(function(*args, arithmetic="mpmath", **kwargs))
        return _floats(function(*args, arithmetic="float64", **kwargs))

    # the protocol's signature: the arithmetic is this wrapper's to choose, so a mutant that rebinds arguments
    # cannot pass it twice
    signature = inspect.signature(function)
    call.__signature__ = signature.replace(
        parameters=[p for p in signature.parameters.values() if p.name != "arithmetic"])
    call.__dpref_code__ = f"reference.smoothing.{name}(..., arithmetic={arithmetic!r})"
    return call


def reference_implementations() -> dict[str, Callable]:
    """The closed forms in mpmath at PRECISION digits, rounded to float64."""
    return {name: _in("mpmath", name) for name in NAMES}


def fast_implementations() -> dict[str, Callable]:
    """The closed forms on their float64 path."""
    return {name: _in("float64", name) for name in NAMES}
