"""Load user code named ``package.module:attr`` or ``path/to/file.py:attr`` (the one loader of dpref).

Used for ``--subject`` (``proofs_checks.subjects``) and for ``dpref audit run NAME`` / external scenarios
(``empirical_dp.executors``). The spec is split at its LAST colon; the part before it is

* a path ending in ``.py``: the file is loaded by path (relative paths from the current directory), once per
  (path, modification time) — a process-pool worker that resolves the same spec many times loads it once;
* otherwise a dotted module name, imported with the current directory on ``sys.path`` (like ``python -m``), so
  ``mine:est`` finds ``./mine.py``.

The part after it is an attribute path, possibly dotted (``module:obj.attr``).

Every failure — a malformed spec, a missing file, any exception raised while importing the user's module, a
missing attribute — is a :class:`LoadError` (a ``ValueError``) whose message is one line naming the spec and the
cause, so a command line can print it as ``dpref: error: ...`` without a traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from pathlib import Path

__all__ = ["LoadError", "split_spec", "load_module", "load_object", "one_line"]


class LoadError(ValueError):
    """User code named by a spec cannot be loaded; the message is one line naming the spec and the cause."""


#: File modules already loaded: (resolved path, mtime_ns) -> module.
_FILE_MODULES: dict[tuple[str, int], types.ModuleType] = {}


def one_line(exc: BaseException) -> str:
    """``"Type: message"`` of ``exc`` with all whitespace (newlines included) collapsed to single spaces."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def split_spec(spec: str, what: str = "object") -> tuple[str, str]:
    """(module or file, attribute path) of ``spec``; :class:`LoadError` unless it looks like ``module:attr``."""
    if not isinstance(spec, str):
        raise LoadError(f"{what} must be named 'module:attr' or 'path/file.py:attr', got {type(spec).__name__}")
    module_name, colon, attr_path = spec.rpartition(":")
    if not colon or not module_name or not attr_path:
        raise LoadError(f"{what} must look like 'module:attr' or 'path/file.py:attr', got {spec!r}")
    return module_name, attr_path


def load_module(module_name: str, spec: str | None = None, what: str = "object") -> types.ModuleType:
    """Import ``module_name`` (current directory searched), or load it from a file when it ends in ``.py``."""
    spec = module_name if spec is None else spec
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise LoadError(f"no such file {module_name!r} for {what} {spec!r}")
        resolved = path.resolve()
        key = (str(resolved), resolved.stat().st_mtime_ns)
        if key in _FILE_MODULES:
            return _FILE_MODULES[key]
        try:
            module_spec = importlib.util.spec_from_file_location(path.stem, resolved)
            if module_spec is None or module_spec.loader is None:
                raise ImportError(f"cannot make a module of {str(resolved)!r}")
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:  # an error in the user's file: say which spec and why
            raise LoadError(f"cannot import {module_name!r} for {what} {spec!r}: {one_line(exc)}") from None
        _FILE_MODULES[key] = module
        return module
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # an import error in user code: say which spec and why
        raise LoadError(f"cannot import {module_name!r} for {what} {spec!r}: {one_line(exc)}") from None


def load_object(spec: str, what: str = "object"):
    """The object ``spec`` (``module:attr`` or ``path/file.py:attr``, attr possibly dotted) names.

    what: how the object is called in messages ("subject", "scenario", ...). Raises :class:`LoadError`.
    """
    module_name, attr_path = split_spec(spec, what)
    obj = load_module(module_name, spec, what)
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise LoadError(f"module {module_name!r} has no attribute {attr_path!r} ({what} {spec!r})") from None
        except Exception as exc:  # a property or module __getattr__ of the user's that raises
            raise LoadError(f"cannot get {attr_path!r} from {module_name!r} for {what} {spec!r}: "
                            f"{one_line(exc)}") from None
    return obj
