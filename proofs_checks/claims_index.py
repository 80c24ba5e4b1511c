"""A generated index of the claim registry, so that ``dpref claims list`` answers without importing every claim.

Loading the registry imports every claim module, and with them SciPy, statsmodels and the reference code: about
1.5 s before the first line is printed. Listing needs only each claim's metadata, so ``make docs``
(``python -m proofs_checks.catalogue``) also writes ``proofs_checks/claims_index.json``: the listing records of
every claim and a fingerprint of the files they come from (every module under ``proofs_checks/claims/``, the paper
registry and the claim model). ``load_index`` returns the records only while the fingerprint still matches the
files on disk; after any edit (a new claim, a new paper folder) it returns None and the caller loads the
registry, so a stale index can make a listing slower, never wrong. A test keeps the shipped index fresh.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

__all__ = ["INDEX_PATH", "fingerprint", "index_json", "load_index", "listing_records"]

_PACKAGE = Path(__file__).resolve().parent
INDEX_PATH = _PACKAGE / "claims_index.json"


def _sources() -> list[Path]:
    files = sorted((_PACKAGE / "claims").rglob("*.py"))
    return files + [_PACKAGE / "papers.py", _PACKAGE / "claim.py"]


def fingerprint() -> str:
    """SHA-256 over the relative paths and contents of the files claim metadata comes from."""
    digest = hashlib.sha256()
    for path in _sources():
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def listing_records(claims: Iterable) -> list[dict]:
    """What ``dpref claims list`` shows of each claim (JSON-ready)."""
    return [
        {
            "id": c.id,
            "paper": c.paper,
            "location": c.location,
            "kind": c.kind,
            "erratum": c.erratum,
            "statement": c.statement,
            "requires": list(c.requires),
            "mutants": [{"name": m.name, "description": m.description} for m in c.mutants],
            "mde_target": None if c.mde_target is None else {"quick": c.mde_target.quick, "full": c.mde_target.full},
            "power_note": c.power_note,
        }
        for c in claims
    ]


def index_json() -> str:
    """The index file's content for the registry as it is now (loads every claim)."""
    from .registry import load_claims

    return json.dumps({"fingerprint": fingerprint(), "claims": listing_records(load_claims())}, indent=1,
                      ensure_ascii=False) + "\n"


def load_index() -> list[dict] | None:
    """The indexed records, or None when the index is missing, unreadable or stale."""
    try:
        data = json.loads(INDEX_PATH.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("fingerprint") != fingerprint():
        return None
    return data.get("claims")
