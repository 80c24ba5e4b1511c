"""The claim registry: claims are discovered from the folders of ``proofs_checks/claims/``.

Layout (docs/writing-claims.md, proofs_checks/folders.py): one folder per paper, named by its key in the
paper registry (proofs_checks/papers.py), plus ``foundations/`` for the building blocks every paper shares
(direction samplers, clipping and the Gaussian mechanism, the tree mechanism, accounting, audit bounds). Every
module-level :class:`~proofs_checks.claim.Claim` of a public module (name not starting with ``_``) is a
registered claim; modules starting with ``_`` hold helpers shared inside their folder. Adding a paper is
adding its registry record and its folder; nothing here changes.

``load_claims()`` gathers them in a fixed order (foundations, then the papers in registry order; modules
by name; claims in definition order), refusing duplicate ids, claims filed under another paper's folder,
unknown folders and public modules without a claim. ``select`` filters by paper, kind and id (exact or
prefix, so ``--id zo_o2nc.lemma3_1`` picks the whole lemma).
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Iterable

from .claim import KINDS, PAPERS, Claim
from .folders import CLAIMS_PACKAGE, FOUNDATIONS, claim_folders

__all__ = ["CLAIMS_PACKAGE", "FOUNDATIONS", "claim_folders", "claim_modules", "load_claims", "select", "nearest_ids"]

def claim_modules(package: str = CLAIMS_PACKAGE) -> list[str]:
    """Every public claim module, folder by folder, by name."""
    modules = []
    for folder in claim_folders(package):
        folder_package = importlib.import_module(f"{package}.{folder}")
        names = sorted(info.name for info in pkgutil.iter_modules(folder_package.__path__)
                       if not info.ispkg and not info.name.startswith("_"))
        modules.extend(f"{package}.{folder}.{name}" for name in names)
    return modules


def _claims_of(module_name: str) -> list[Claim]:
    module = importlib.import_module(module_name)
    claims = [value for value in vars(module).values() if isinstance(value, Claim)]
    if not claims:
        raise ValueError(f"claim module {module_name} defines no claim (helpers belong in a module named _*.py)")
    folder = module_name.split(".")[-2]
    for claim in claims:
        if folder != FOUNDATIONS and claim.paper != folder:
            raise ValueError(f"claim {claim.id} (paper {claim.paper!r}) is filed in the folder of {folder!r}")
    return claims


def load_claims(modules: Iterable[str] | None = None) -> list[Claim]:
    claims: list[Claim] = []
    seen: dict[str, str] = {}
    for module_name in claim_modules() if modules is None else modules:
        for claim in _claims_of(module_name):
            if claim.id in seen:
                raise ValueError(f"duplicate claim id {claim.id!r} in {module_name} and {seen[claim.id]}")
            seen[claim.id] = module_name
            claims.append(claim)
    return claims


def select(
    claims: Iterable[Claim],
    *,
    papers: Iterable[str] = (),
    kinds: Iterable[str] = (),
    ids: Iterable[str] = (),
) -> list[Claim]:
    for name, value in (("papers", papers), ("kinds", kinds), ("ids", ids)):
        if isinstance(value, str):  # a bare string would select by its characters, i.e. nothing
            raise TypeError(f"{name} must be a list of strings, got the string {value!r}; write [{value!r}]")
    papers, kinds, ids = list(papers), list(kinds), list(ids)
    for p in papers:
        if p not in PAPERS:
            raise ValueError(f"--paper must be one of {PAPERS}, got {p!r}")
    for k in kinds:
        if k not in KINDS:
            raise ValueError(f"--kind must be one of {KINDS}, got {k!r}")
    out = []
    for claim in claims:
        if papers and claim.paper not in papers:
            continue
        if kinds and claim.kind not in kinds:
            continue
        if ids and not any(claim.id == i or claim.id.startswith(i + ".") for i in ids):
            continue
        out.append(claim)
    return out


def nearest_ids(claims: Iterable[Claim], wanted: str, count: int = 3) -> list[str]:
    """The claim ids or id prefixes (``zo_o2nc.lemma3_1``) closest to ``wanted``, for "did you mean" hints."""
    names = set()
    for claim in claims:
        parts = claim.id.split(".")
        names.update(".".join(parts[:k]) for k in range(1, len(parts) + 1))
    return difflib.get_close_matches(wanted, sorted(names), n=count, cutoff=0.5)
