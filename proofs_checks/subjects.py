"""Subjects: the implementations a claim is run against (DESIGN.md, proofs_checks/).

* ``reference`` — the readable oracle in ``reference/``.
* ``fast`` — the vectorized twins in ``reference/fast/``; where a protocol has no twin (closed forms
  that are already float64 SciPy calls, the samplers whose float64 path is already vectorized) the
  fast subject uses the reference function, and says so in ``Subject.borrowed``.
* a library adapter name (``dp_accounting.rdp``, ``opacus.prv``, ...; ``proofs_checks.adapters``).
* ``module:attr`` or ``path/file.py:attr`` — anything importable: a :class:`Subject`, a module (its attributes named like
  protocols are taken), or a callable, matched to a protocol by its ``__dpref_protocol__`` attribute
  or else by its own name. See ``docs/conformance.md`` for a worked example.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from pathlib import Path
from collections.abc import Callable, Iterable, Mapping

from .protocols import PROTOCOLS

__all__ = ["Subject", "reference_subject", "fast_subject", "resolve_subject", "SubjectError"]

REFERENCE_MODULES = (
    "reference.rng",
    "reference.mechanisms",
    "reference.smoothing",
    "reference.estimators",
    "reference.algorithms.dpzero",
    "reference.algorithms.dpzero_theory",
)
FAST_MODULES = ("reference.fast.mechanisms", "reference.fast.estimators", "reference.fast.dpzero")


class SubjectError(ValueError):
    """A subject specification that cannot be resolved, with the reason."""


class Subject:
    """A named set of implementations, one per protocol name (see ``proofs_checks.protocols``)."""

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
        return Subject(f"{self.name}[{label}]", {**self._impls, **implementations}, borrowed=self.borrowed)


def _collect(modules: Iterable[str]) -> dict[str, Callable]:
    found: dict[str, Callable] = {}
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in PROTOCOLS:
            if hasattr(module, name):
                found[name] = getattr(module, name)
    return found


def reference_subject() -> Subject:
    from .adapters.audit_bounds import implementations as audit_implementations  # empirical_dp's bounds
    from .adapters.dpref import reference_implementations  # the accounting protocols (mpmath, as floats)

    return Subject("reference", {**_collect(REFERENCE_MODULES), **reference_implementations(),
                                 **audit_implementations()}, is_reference=True)


def fast_subject() -> Subject:
    from .adapters.audit_bounds import implementations as audit_implementations  # one float64 version: borrowed
    from .adapters.dpref import fast_implementations, reference_implementations

    reference = {**_collect(REFERENCE_MODULES), **reference_implementations(), **audit_implementations()}
    fast = {**_collect(FAST_MODULES), **fast_implementations()}
    borrowed = [name for name in reference if name not in fast]
    return Subject("fast", {**reference, **fast}, borrowed=borrowed)


def _import(module_name: str, spec: str):
    """Import ``module_name``, or load it from a file when it ends in ``.py``.

    Like ``python -m``, the current directory is searched, so ``dpref claims run --subject mine:est``
    finds ``./mine.py``.
    """
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise SubjectError(f"no such file {module_name!r} for subject {spec!r}")
            module_spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
            return module
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(module_name)
    except SubjectError:
        raise
    except Exception as exc:  # an import error in user code: say which subject and why
        raise SubjectError(f"cannot import {module_name!r} for subject {spec!r}: {type(exc).__name__}: {exc}") from None


def resolve_subject(spec: str) -> Subject:
    """``reference``, ``fast`` or ``module:attr``; raises :class:`SubjectError` with the reason."""
    if spec == "reference":
        return reference_subject()
    if spec == "fast":
        return fast_subject()
    if ":" not in spec:
        from .adapters import adapter_names, resolve  # libraries load only when asked for

        if spec in adapter_names():
            return resolve(spec)
        raise SubjectError(
            f"subject must be 'reference', 'fast', a library adapter ({', '.join(adapter_names())}) "
            f"or 'module:attr', got {spec!r}"
        )
    module_name, _, attr_path = spec.rpartition(":")
    if not module_name or not attr_path:
        raise SubjectError(f"subject must look like 'module:attr' or 'path/file.py:attr', got {spec!r}")
    obj = _import(module_name, spec)
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            raise SubjectError(f"module {module_name!r} has no attribute {attr_path!r}")
        obj = getattr(obj, part)
    if isinstance(obj, Subject):
        return obj
    if isinstance(obj, types.ModuleType):
        impls = {name: getattr(obj, name) for name in PROTOCOLS if hasattr(obj, name)}
        if not impls:
            raise SubjectError(f"module {spec!r} defines none of the protocols {sorted(PROTOCOLS)}")
        return Subject(spec, impls)
    if isinstance(obj, Mapping):
        return Subject(spec, obj)
    if callable(obj):
        protocol = getattr(obj, "__dpref_protocol__", None) or getattr(obj, "__name__", None)
        if protocol not in PROTOCOLS:
            raise SubjectError(
                f"callable {spec!r} does not say which protocol it implements: set its "
                f"__dpref_protocol__ to one of {sorted(PROTOCOLS)} or name it like one"
            )
        return Subject(spec, {protocol: obj})
    raise SubjectError(f"{spec!r} is a {type(obj).__name__}, not a Subject, module, mapping or callable")
