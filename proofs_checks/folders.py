"""The claim folders: one per paper of the paper registry, plus ``foundations``.

``proofs_checks/claims/<folder>/`` holds a paper's claims (``foundations/`` the building blocks the papers
share). A folder's ``__init__.py`` is data only and declares what the folder adds to the subjects:

* ``PROTOCOLS``: name -> (call signature, semantics) of every protocol its claims call that no other folder
  declares;
* ``REFERENCE_MODULES`` / ``FAST_MODULES`` (optional): the modules in which the reference and fast subjects
  find functions named like protocols.

Adding a paper is adding its record to proofs_checks/papers.py and its folder; no central list changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from .papers import PAPERS_BY_KEY

__all__ = ["CLAIMS_PACKAGE", "FOUNDATIONS", "claim_folders", "declared_protocols", "declared_modules"]

CLAIMS_PACKAGE = "proofs_checks.claims"
#: The folder of paper-independent building blocks; every other folder is a paper key.
FOUNDATIONS = "foundations"
PAPERS = tuple(PAPERS_BY_KEY)


def claim_folders(package: str = CLAIMS_PACKAGE) -> list[str]:
    """The claim folders in registry order: foundations first, then each paper that has one."""
    root = Path(importlib.import_module(package).__file__).parent
    present = {info.name for info in pkgutil.iter_modules([str(root)]) if info.ispkg}
    unknown = present - {FOUNDATIONS, *PAPERS}
    if unknown:
        raise ValueError(f"claim folders {sorted(unknown)} are neither {FOUNDATIONS!r} nor a paper key of the "
                         f"paper registry {PAPERS}")
    return [folder for folder in (FOUNDATIONS, *PAPERS) if folder in present]


def _folder_packages(package: str):
    for folder in claim_folders(package):
        yield folder, importlib.import_module(f"{package}.{folder}")


def declared_protocols(package: str = CLAIMS_PACKAGE) -> dict[str, tuple[str, str]]:
    """Every folder's ``PROTOCOLS``, merged; a protocol declared by two folders is refused."""
    protocols: dict[str, tuple[str, str]] = {}
    owner: dict[str, str] = {}
    for folder, module in _folder_packages(package):
        for name, (signature, semantics) in getattr(module, "PROTOCOLS", {}).items():
            if name in owner:
                raise ValueError(f"protocol {name!r} is declared by the folders {owner[name]!r} and {folder!r}")
            owner[name] = folder
            protocols[name] = (signature, semantics)
    return protocols


def declared_optional_protocols(package: str = CLAIMS_PACKAGE) -> dict[str, str]:
    """Every folder's ``OPTIONAL_PROTOCOLS``: protocol -> the module that implements it behind an optional extra
    (neither the reference nor the fast subject has it; e.g. dpzero's ``dpzero_module``, the torch backend)."""
    optional: dict[str, str] = {}
    for _, module in _folder_packages(package):
        optional.update(getattr(module, "OPTIONAL_PROTOCOLS", {}))
    return optional


def declared_modules(kind: str, package: str = CLAIMS_PACKAGE) -> tuple[str, ...]:
    """Every folder's ``REFERENCE_MODULES`` (kind ``"reference"``) or ``FAST_MODULES`` (kind ``"fast"``)."""
    if kind not in ("reference", "fast"):
        raise ValueError(f"kind must be 'reference' or 'fast', got {kind!r}")
    attribute = "REFERENCE_MODULES" if kind == "reference" else "FAST_MODULES"
    return tuple(name for _, module in _folder_packages(package) for name in getattr(module, attribute, ()))
