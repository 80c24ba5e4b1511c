"""Subject protocols: the functions a claim may call on an implementation under test.

A subject is a set of named implementations. ``reference`` and ``fast`` provide all of them; a user's
implementation provides whichever it has, and the claims that need only those run on it. Each entry
gives the call signature and the semantics the claims rely on; the reference module that defines the
semantics is named so that a reader can open it next to the paper.

Arrays are NumPy float64 unless stated; ``loss(x, z)`` is the per-sample loss f(x; z). The reference
calls it on one point x of shape (d,) and one data row z of shape (p,); the fast backend calls it once
with stacked points (..., d) and rows (..., p) that broadcast. The objectives in
``reference.objectives`` support both, and the claims only pass such losses.

The protocols are declared by the claim folders that use them (``PROTOCOLS`` in
``proofs_checks/claims/<folder>/__init__.py``, gathered by proofs_checks/folders.py).

``Subject`` is such a set of named implementations (checked against ``PROTOCOLS``); the ways to obtain one
(``reference``, ``fast``, a library adapter, ``module:attr``) are in ``proofs_checks.subjects``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .folders import declared_protocols

__all__ = ["PROTOCOLS", "protocol_names", "Subject", "SubjectError"]

#: Every protocol, gathered from the claim folders' declarations (proofs_checks/folders.py).
PROTOCOLS: dict[str, tuple[str, str]] = declared_protocols()


def protocol_names() -> tuple[str, ...]:
    return tuple(PROTOCOLS)


class SubjectError(ValueError):
    """A subject specification that cannot be resolved, with the reason."""


class Subject:
    """A named set of implementations, one per protocol name (a key of ``PROTOCOLS``)."""

    def __init__(
        self,
        name: str,
        implementations: Mapping[str, Callable] | None = None,
        *,
        is_reference: bool = False,
        borrowed: Iterable[str] = (),
        **more: Callable,
    ):
        impls = dict(implementations or {}, **more)
        unknown = sorted(set(impls) - set(PROTOCOLS))
        if unknown:
            raise SubjectError(f"unknown protocol name(s) {unknown}; known: {sorted(PROTOCOLS)}")
        for key, fn in impls.items():
            if not callable(fn):
                raise SubjectError(f"implementation of {key!r} must be callable, got {type(fn).__name__}")
        self.name = name
        self._impls = impls
        self.is_reference = is_reference
        self.borrowed = tuple(sorted(borrowed))

    def __repr__(self) -> str:
        return f"Subject({self.name!r}, protocols={sorted(self._impls)})"

    def __getattr__(self, item: str):
        impls = self.__dict__.get("_impls", {})
        if item in impls:
            return impls[item]
        raise AttributeError(f"subject {self.__dict__.get('name', '?')!r} does not provide {item!r}")

    @property
    def protocols(self) -> tuple[str, ...]:
        return tuple(sorted(self._impls))

    def provides(self, names: Iterable[str]) -> bool:
        return all(n in self._impls for n in names)

    def replace(self, label: str = "mutant", **implementations: Callable) -> "Subject":
        """A copy with some implementations swapped (how mutants are built). Never the reference."""
        for key in implementations:
            if key not in self._impls:
                raise SubjectError(f"cannot replace {key!r}: subject {self.name!r} does not provide it")
        # a replaced implementation is no longer the reference's code
        borrowed = [name for name in self.borrowed if name not in implementations]
        return Subject(f"{self.name}[{label}]", {**self._impls, **implementations}, borrowed=borrowed)
