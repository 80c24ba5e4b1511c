"""The claim registry: every claim module lists its claims in ``CLAIMS``; nothing registers at import.

``load_claims()`` gathers them in a fixed order, refusing duplicate ids; ``select`` filters by paper,
kind and id (exact or prefix, so ``--id zo_o2nc.lemma3_1`` picks the whole lemma).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from .claim import KINDS, PAPERS, Claim

__all__ = ["CLAIM_MODULES", "load_claims", "select"]

CLAIM_MODULES = (
    "proofs_checks.claims.samplers",
    "proofs_checks.claims.mechanisms",
    "proofs_checks.claims.tree",
    "proofs_checks.claims.smoothing",
    "proofs_checks.claims.estimators",
    "proofs_checks.claims.backend",
    "proofs_checks.claims.accounting",
    "proofs_checks.claims.accounting_errata",
    "proofs_checks.claims.audit_bounds",
    "proofs_checks.claims.dpzero_lemmas",
    "proofs_checks.claims.dpzero_algorithms",
    "proofs_checks.claims.dpzero_privacy",
    "proofs_checks.claims.dpzero_backend",
    "proofs_checks.claims.dpzero_rate",
)


def load_claims(modules: Iterable[str] = CLAIM_MODULES) -> list[Claim]:
    claims: list[Claim] = []
    seen: dict[str, str] = {}
    for module_name in modules:
        module = importlib.import_module(module_name)
        for claim in module.CLAIMS:
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
