"""Adapters: other people's accountants as claim subjects (docs/accounting.md, Conformance).

Each module turns one library into :class:`~proofs_checks.protocols.Subject` objects that provide the
accounting protocols of :mod:`proofs_checks.protocols` (``rdp_poisson_gaussian``,
``epsilon_from_rdp``, ``epsilon_poisson_gaussian``, ``gaussian_delta``,
``noise_multiplier_poisson_gaussian``) through the library's documented public API:

=====================  ==========================================================================
subject                what it is
=====================  ==========================================================================
dp_accounting.rdp      ``dp_accounting.rdp.RdpAccountant`` (default orders = ours) and ``compute_epsilon``
dp_accounting.pld      ``dp_accounting.pld.PLDAccountant`` (pessimistic, connect-the-dots, 1e-4 grid)
opacus.rdp             ``opacus.accountants.RDPAccountant`` (orders 1.1..10.9, 12..63)
opacus.prv             ``opacus.accountants.PRVAccountant`` (returns eps_upper, eps_error 0.01)
opacus.gdp             ``opacus.accountants.GaussianAccountant`` (CLT approximation, Poisson)
prv_accountant         ``prv_accountant.PRVAccountant`` (Gopi et al.; eps_upper, eps_error 0.01)
autodp                 ``autodp.mechanism_zoo.NoisySGD_Mechanism`` (RDP, continuous-order conversion)
=====================  ==========================================================================

A library that is not installed (or fails to import) makes its module's ``subjects()`` raise
:class:`AdapterUnavailable` with the reason; nothing else fails because of it.

Besides the library adapters: ``dpref`` (our own accounting as protocol implementations), ``audit_bounds``
(empirical_dp's bounds as a subject: the one module of ``proofs_checks`` that may import ``empirical_dp``) and
``conformance`` (the harness behind ``dpref conform accountants`` that runs the adapters side by side).
"""

from __future__ import annotations

import importlib
from importlib import metadata
from types import ModuleType

from ..protocols import Subject, SubjectError

__all__ = [
    "AdapterUnavailable",
    "LIBRARIES",
    "SUBJECT_NAMES",
    "adapter_names",
    "adapter_subjects",
    "library_version",
    "require",
    "resolve",
]

#: Adapter modules, in report order.
LIBRARIES: tuple[str, ...] = ("dp_accounting", "opacus", "prv_accountant", "autodp")

#: Subject names each adapter module provides (known without importing the library).
SUBJECT_NAMES: dict[str, tuple[str, ...]] = {
    "dp_accounting": ("dp_accounting.rdp", "dp_accounting.pld"),
    "opacus": ("opacus.rdp", "opacus.prv", "opacus.gdp"),
    "prv_accountant": ("prv_accountant",),
    "autodp": ("autodp",),
}

#: PyPI distribution name of each library (for versions and install hints).
DISTRIBUTIONS: dict[str, str] = {
    "dp_accounting": "dp-accounting",
    "opacus": "opacus",
    "prv_accountant": "prv-accountant",
    "autodp": "autodp",
}


class AdapterUnavailable(RuntimeError):
    """The library behind an adapter cannot be used here; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def require(module_name: str, library: str) -> ModuleType:
    """Import ``module_name`` or raise :class:`AdapterUnavailable` naming ``library`` and the cause."""
    try:
        return importlib.import_module(module_name)
    except Exception as exc:  # ImportError, or a broken install failing at import time
        hint = "pip install 'dpref[compare]'" if library in DISTRIBUTIONS else "install it"
        raise AdapterUnavailable(
            f"{library} not installed or not importable ({type(exc).__name__}: {exc}); {hint}"
        ) from None


def library_version(library: str) -> str:
    """Installed version of ``library`` (its PyPI distribution), or ``"not installed"``."""
    try:
        return metadata.version(DISTRIBUTIONS.get(library, library))
    except metadata.PackageNotFoundError:
        return "not installed"


def adapter_names() -> tuple[str, ...]:
    """All adapter subject names, whether or not their library is installed."""
    return tuple(name for library in LIBRARIES for name in SUBJECT_NAMES[library])


def _adapter_module(library: str) -> ModuleType:
    if library not in LIBRARIES:
        raise SubjectError(f"unknown adapter library {library!r}; known: {list(LIBRARIES)}")
    return importlib.import_module(f"{__name__}.{library}")


def _library_of(name: str) -> str:
    for library, names in SUBJECT_NAMES.items():
        if name in names:
            return library
    raise SubjectError(f"unknown adapter subject {name!r}; known: {list(adapter_names())}")


def adapter_subjects(libraries=None) -> tuple[dict[str, Subject], dict[str, str]]:
    """Every adapter subject whose library is usable, and the reason for each one that is not.

    ``libraries`` restricts to some libraries (``"opacus"``) or subject names (``"opacus.prv"``).
    Returns ``(subjects, unavailable)``: ``subjects`` maps subject name to :class:`Subject`;
    ``unavailable`` maps each subject name that could not be built to the reason.
    """
    wanted = _expand(libraries)
    subjects: dict[str, Subject] = {}
    unavailable: dict[str, str] = {}
    for library in LIBRARIES:
        names = [n for n in SUBJECT_NAMES[library] if n in wanted]
        if not names:
            continue
        try:
            built = _adapter_module(library).subjects()
        except AdapterUnavailable as exc:
            unavailable.update({n: exc.reason for n in names})
            continue
        for name in names:
            subjects[name] = built[name]
    return subjects, unavailable


def _expand(libraries) -> list[str]:
    """Subject names selected by a list of library or subject names (None: all)."""
    if libraries is None:
        return list(adapter_names())
    if isinstance(libraries, str):
        libraries = [libraries]
    names: list[str] = []
    for item in libraries:
        if item in SUBJECT_NAMES:
            names.extend(SUBJECT_NAMES[item])
        elif item in adapter_names():
            names.append(item)
        else:
            raise SubjectError(
                f"unknown library or adapter {item!r}; known: {list(dict.fromkeys(LIBRARIES + adapter_names()))}"
            )
    return list(dict.fromkeys(names))


def resolve(name: str) -> Subject:
    """The adapter subject ``name`` (e.g. ``"opacus.prv"``); :class:`SubjectError` with the reason if unusable."""
    library = _library_of(name)
    try:
        return _adapter_module(library).subjects()[name]
    except AdapterUnavailable as exc:
        raise SubjectError(f"adapter {name!r} is unavailable: {exc.reason}") from None
