"""Mutants of the ``GradientOracles`` protocol shared by the spider_sosp claims (private to the folder).

``GradientOracles`` is a class: a mutant replaces it by a factory that builds the subject's own oracles and wraps
them, so that ``o1`` and ``o2`` can be changed one at a time while every other attribute (``remaining``,
``records_used``, the batches) is the subject's.
"""

from __future__ import annotations

import functools

from proofs_checks.authoring import mutant

__all__ = ["oracle_mutant"]


class _WrappedOracles:
    """The subject's oracles with ``o1`` and/or ``o2`` replaced by ``o1(inner, x, b)`` / ``o2(inner, x, y, b)``."""

    def __init__(self, inner, o1=None, o2=None):
        self._inner, self._o1, self._o2 = inner, o1, o2

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def o1(self, x, batch_size):
        return self._inner.o1(x, batch_size) if self._o1 is None else self._o1(self._inner, x, batch_size)

    def o2(self, x, x_previous, batch_size):
        if self._o2 is None:
            return self._inner.o2(x, x_previous, batch_size)
        return self._o2(self._inner, x, x_previous, batch_size)


def oracle_mutant(name: str, description: str, *, o1=None, o2=None):
    """A mutant of ``GradientOracles`` whose ``o1`` is ``o1(inner, x, b)`` and/or whose ``o2`` is
    ``o2(inner, x, x_previous, b)``, ``inner`` being the subject's own oracles over the same data and order."""

    def transform(original):
        @functools.wraps(original)
        def build(*args, **kwargs):
            return _WrappedOracles(original(*args, **kwargs), o1, o2)

        return build

    return mutant(name, description, "GradientOracles", transform)
