"""NaN and inf from a subject are failures: a guard that watches every value a subject returns during a check.

A check compares numbers; a NaN compares false with everything, so ``ratio > worst`` silently skips it and a
subject that returns NaN can look perfect. The runner therefore runs every check on a guarded copy of the
subject (:func:`guarded`), which scans each returned value — floats, mpmath numbers, NumPy arrays (numeric or of
mpmath numbers), and the fields of tuples, lists, dicts and dataclasses — and records the first non-finite one
with the protocol and call that produced it. A claim lists in ``Claim.nonfinite_ok`` the protocols whose
non-finite outputs it provokes on purpose (a NaN-handling path under test).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable

import mpmath
import numpy as np

from .protocols import Subject

__all__ = ["first_nonfinite", "Watch", "guarded"]

#: How deep the scan follows containers (a result object holding a ledger holding arrays is depth 3).
MAX_DEPTH = 4
#: Object arrays larger than this are scanned by their first elements only (mpmath arrays are small).
MAX_OBJECT_ELEMENTS = 100_000


def _scalar_nonfinite(value) -> bool:
    if isinstance(value, (bool, int, np.integer)):
        return False
    if isinstance(value, (float, np.floating, complex, np.complexfloating)):
        return not np.isfinite(value)
    if isinstance(value, (mpmath.mpf, mpmath.mpc)):
        return not mpmath.isfinite(value)
    return False


def first_nonfinite(value, depth: int = 0) -> str | None:
    """Where the first NaN or inf in ``value`` is (``"[3, 1]"``, ``".releases[7]"``, ``""`` for the value
    itself), or None if every number in it is finite."""
    if _scalar_nonfinite(value):
        return f" = {value}"
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            bad = ~np.isfinite(value)
            if bad.any():
                index = tuple(int(i) for i in np.argwhere(bad)[0])
                return f"{list(index)} = {value[index]}"
            return None
        if value.dtype.kind == "O":
            flat = value.reshape(-1)[:MAX_OBJECT_ELEMENTS]
            for i, element in enumerate(flat):
                if _scalar_nonfinite(element):
                    index = np.unravel_index(i, value.shape) if value.ndim else ()
                    return f"{[int(j) for j in index]} = {element}"
        return None
    if depth >= MAX_DEPTH:
        return None
    if isinstance(value, (list, tuple)):
        for i, element in enumerate(value):
            where = first_nonfinite(element, depth + 1)
            if where is not None:
                return f"[{i}]{where}"
        return None
    if isinstance(value, dict):
        for key, element in value.items():
            where = first_nonfinite(element, depth + 1)
            if where is not None:
                return f"[{key!r}]{where}"
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            where = first_nonfinite(getattr(value, field.name, None), depth + 1)
            if where is not None:
                return f".{field.name}{where}"
    return None


class Watch:
    """The record of a guarded subject: the first non-finite output, with its protocol and call number."""

    def __init__(self):
        self.calls: dict[str, int] = {}
        self.first: str | None = None

    def observe(self, protocol: str, value) -> None:
        self.calls[protocol] = self.calls.get(protocol, 0) + 1
        if self.first is None:
            where = first_nonfinite(value)
            if where is not None:
                self.first = f"{protocol} (call {self.calls[protocol]}) returned a non-finite value: result{where}"


def _watched(protocol: str, function, watch: Watch):
    @functools.wraps(function)
    def call(*args, **kwargs):
        value = function(*args, **kwargs)
        watch.observe(protocol, value)
        return value

    return call


def guarded(subject: Subject, allowed: Iterable[str] = ()) -> tuple[Subject, Watch]:
    """A copy of ``subject`` (same name, reference flag and borrowed list) whose protocols, except ``allowed``,
    report their outputs to the returned :class:`Watch`."""
    watch = Watch()
    allowed = set(allowed)
    implementations = {name: getattr(subject, name) if name in allowed else _watched(name, getattr(subject, name), watch)
                       for name in subject.protocols}
    return Subject(subject.name, implementations, is_reference=subject.is_reference, borrowed=subject.borrowed), watch
