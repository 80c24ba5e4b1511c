"""Subjects: the implementations a claim is run against (docs/conformance.md).

* ``reference`` — the readable oracle in ``reference/``.
* ``fast`` — the vectorized twins in ``reference/fast/``, and the float64 path of the closed forms that
  ``reference.smoothing`` computes in two arithmetics (the reference subject runs their mpmath path:
  ``proofs_checks.adapters.closed_forms``); where a protocol has no twin (the samplers, which are the
  randomness contract itself; the papers' closed-form σ rules) the fast subject uses the reference
  function, and says so in ``Subject.borrowed``.
* a library adapter name (``dp_accounting.rdp``, ``opacus.prv``, ...; ``proofs_checks.adapters``).
* ``module:attr`` or ``path/file.py:attr`` — anything importable: a :class:`Subject`, a module (its attributes named like
  protocols are taken), or a callable, matched to a protocol by its ``__dpref_protocol__`` attribute
  or else by its own name. See ``docs/conformance.md`` for a worked example.

``Subject`` and ``SubjectError`` are defined in ``proofs_checks.protocols`` (the adapters build subjects too, and
this module resolves names to adapters) and re-exported here.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable, Iterable, Mapping

from reference.loading import LoadError, load_object

from .adapters import adapter_names, resolve
from .folders import declared_modules
from .protocols import PROTOCOLS, Subject, SubjectError

__all__ = ["Subject", "reference_subject", "fast_subject", "resolve_subject", "SubjectError"]

#: Where the reference and fast subjects find functions named like protocols (declared by the claim folders).
REFERENCE_MODULES = declared_modules("reference")
FAST_MODULES = declared_modules("fast")


def _collect(modules: Iterable[str], *, defined_under: str | None = None) -> dict[str, Callable]:
    """The protocol-named attributes of ``modules``; with ``defined_under`` only those defined in a module of that
    package (a fast module that imports a reference function does not make it a twin: the fast subject borrows it)."""
    found: dict[str, Callable] = {}
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in PROTOCOLS:
            if hasattr(module, name):
                obj = getattr(module, name)
                origin = getattr(obj, "__module__", None) or ""
                if defined_under is None or origin == defined_under or origin.startswith(defined_under + "."):
                    found[name] = obj
    return found


def reference_subject() -> Subject:
    from .adapters import closed_forms  # the smoothing closed forms on their mpmath path
    from .adapters.audit_bounds import implementations as audit_implementations  # empirical_dp's bounds
    from .adapters.dpref import reference_implementations  # the accounting protocols (mpmath, as floats)

    return Subject("reference", {**_collect(REFERENCE_MODULES), **reference_implementations(),
                                 **closed_forms.reference_implementations(), **audit_implementations()},
                   is_reference=True)


def fast_subject() -> Subject:
    from .adapters import closed_forms  # the smoothing closed forms on their float64 path
    from .adapters.audit_bounds import implementations as audit_implementations  # one float64 version: borrowed
    from .adapters.dpref import fast_implementations, reference_implementations

    reference = {**_collect(REFERENCE_MODULES), **reference_implementations(), **audit_implementations()}
    fast = {**_collect(FAST_MODULES, defined_under="reference.fast"), **fast_implementations(),
            **closed_forms.fast_implementations()}
    borrowed = [name for name in reference if name not in fast]
    return Subject("fast", {**reference, **fast}, borrowed=borrowed)


def _load(spec: str):
    """The object ``spec`` names (``reference.loading``: module or ``.py`` file, current directory searched);
    every failure is a :class:`SubjectError` with one line naming the subject and the cause."""
    try:
        return load_object(spec, "subject")
    except LoadError as exc:
        raise SubjectError(str(exc)) from None


def resolve_subject(spec) -> Subject:
    """The subject ``spec`` names or is; raises :class:`SubjectError` with the reason.

    spec: ``"reference"``, ``"fast"``, a library adapter name, ``"module:attr"`` / ``"path/file.py:attr"``, or the
    object itself — a :class:`Subject`, a module, a mapping from protocol names to callables, or a callable (its
    protocol from ``__dpref_protocol__`` or its name). Anything else is a ``TypeError``.
    """
    if not isinstance(spec, str):
        if isinstance(spec, (Subject, types.ModuleType, Mapping)) or callable(spec):
            return _as_subject(spec, getattr(spec, "__name__", None) or getattr(spec, "name", None) or repr(spec))
        raise TypeError(f"subject must be a name (str), a Subject, a module, a mapping or a callable, "
                        f"got {type(spec).__name__}")
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
    return _as_subject(_load(spec), spec)


def _as_subject(obj, name: str) -> Subject:
    """A Subject from a Subject, a module (attributes named like protocols), a mapping or a callable."""
    if isinstance(obj, Subject):
        return obj
    if isinstance(obj, types.ModuleType):
        impls = {protocol: getattr(obj, protocol) for protocol in PROTOCOLS if hasattr(obj, protocol)}
        if not impls:
            raise SubjectError(f"module {name!r} defines none of the protocols {sorted(PROTOCOLS)}")
        return Subject(name, impls)
    if isinstance(obj, Mapping):
        return Subject(name, dict(obj))  # Subject refuses unknown protocol names
    if callable(obj):
        protocol = getattr(obj, "__dpref_protocol__", None) or getattr(obj, "__name__", None)
        if protocol not in PROTOCOLS:
            raise SubjectError(
                f"callable {name!r} does not say which protocol it implements: set its "
                f"__dpref_protocol__ to one of {sorted(PROTOCOLS)} or name it like one"
            )
        return Subject(name, {protocol: obj})
    raise SubjectError(f"{name!r} is a {type(obj).__name__}, not a Subject, module, mapping or callable")
