"""Replicated results of the fast twins: one replicate out of the arrays of R (``select_replicate`` of
``reference.fast.zo_o2nc`` and ``reference.fast.nsnc_improved``).

A replicated result is the single-run dataclass with a leading axis R on every array; replicate r is obtained
field by field, so the twins need not repeat their results' field lists.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["replicate_of"]


def replicate_of(result, r: int, single_type):
    """The ``single_type`` dataclass of replicate r of ``result`` (the same fields with a leading axis R): every array
    field indexed at r (a 0-d entry becomes a Python number, others are copied), a field with its own
    ``replicate(r)`` (a replicated ledger or diagnostics) reduced by it, None kept, anything else kept as is."""
    values = {}
    for field in dataclasses.fields(single_type):
        value = getattr(result, field.name)
        if value is None:
            values[field.name] = None
        elif callable(getattr(value, "replicate", None)):
            values[field.name] = value.replicate(r)
        elif isinstance(value, np.ndarray):
            entry = value[r]
            values[field.name] = entry.item() if np.ndim(entry) == 0 else entry.copy()
        else:
            values[field.name] = value
    return single_type(**values)
