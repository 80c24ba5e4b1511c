"""docs/writing-claims.md teaches with a real, registered claim: its code block is the module, byte for byte."""

from __future__ import annotations

import re
from pathlib import Path

from proofs_checks.registry import load_claims

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = "proofs_checks/claims/nsnc_improved/sensitivity.py"


def _blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_the_walkthrough_shows_the_module_in_full():
    doc = (ROOT / "docs" / "writing-claims.md").read_text(encoding="utf-8")
    module = (ROOT / EXAMPLE).read_text(encoding="utf-8")
    assert f"`{EXAMPLE}`" in doc
    assert module in _blocks(doc), f"the walkthrough's code block differs from {EXAMPLE}"


def test_the_example_is_registered_in_a_folder_of_its_own_paper():
    claims = {c.id: c for c in load_claims(["proofs_checks.claims.nsnc_improved.sensitivity"])}
    assert list(claims) == ["nsnc_improved.eq5.worst_case_sensitivity"]
    assert "nsnc_improved.eq5.worst_case_sensitivity" in {c.id for c in load_claims()}
    claim = claims["nsnc_improved.eq5.worst_case_sensitivity"]
    assert claim.paper == "nsnc_improved" and claim.erratum and len(claim.mutants) >= 2
