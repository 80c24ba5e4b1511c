"""Subjects: the implementations a claim is run against (docs/conformance.md).

* ``reference`` — the readable oracle in ``reference/``.
* ``fast`` — the vectorized twins in ``reference/fast/``; where a protocol has no twin (closed forms
  that are already float64 SciPy calls, the samplers whose float64 path is already vectorized) the
  fast subject uses the reference function, and says so in ``Subject.borrowed``.
* a library adapter name (``dp_accounting.rdp``, ``opacus.prv``, ...; ``proofs_checks.adapters``).
* ``module:attr`` or ``path/file.py:attr`` — anything importable: a :class:`Subject`, a module (its attributes named like
  protocols are taken), or a callable, matched to a protocol by its ``__dpref_protocol__`` attribute
  or else by its own name. See ``docs/conformance.md`` for a worked example.

``Subject`` and ``SubjectError`` are defined in ``proofs_checks.protocols`` (the adapters build subjects too, and
this module resolves names to adapters) and re-exported here.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from pathlib import Path
from collections.abc import Callable, Iterable, Mapping

from .adapters import adapter_names, resolve
from .folders import declared_modules
from .protocols import PROTOCOLS, Subject, SubjectError

__all__ = ["Subject", "reference_subject", "fast_subject", "resolve_subject", "SubjectError"]

#: Where the reference and fast subjects find functions named like protocols (declared by the claim folders).
REFERENCE_MODULES = declared_modules("reference")
FAST_MODULES = declared_modules("fast")


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
