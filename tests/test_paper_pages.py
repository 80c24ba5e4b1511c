"""Hand-written paper pages (docs/papers/src/*.md) cite only code and claims that exist.

Every backticked dotted name under one of our packages must import (module, then attribute chain), every
backticked claim id must be registered, and every image the page links must be on disk. The generated part
of the page is kept current by tests/test_cli.py::test_generated_docs_are_current.
"""

import importlib
import re
from pathlib import Path

import pytest

from proofs_checks.catalogue import HANDWRITTEN_DIR
from proofs_checks.claim import PAPERS
from proofs_checks.registry import load_claims

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / HANDWRITTEN_DIR).glob("*.md"))
PACKAGES = ("reference", "proofs_checks", "empirical_dp", "dpref")
CODE = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`")
# Case-insensitive, so that a mis-cased id is reported rather than silently ignored.
CLAIM_ID = re.compile(r"^(" + "|".join(PAPERS) + r")\.[a-z0-9_]+\.[a-z0-9_]+$", re.IGNORECASE)
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")


def resolve(dotted: str):
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def test_there_are_pages():
    assert PAGES, f"no hand-written pages under {HANDWRITTEN_DIR}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_citations_resolve(page):
    text = page.read_text()
    ids = {c.id for c in load_claims()}
    names = [m.group(1) for m in CODE.finditer(text)]
    cited_code = [n for n in names if n.split(".")[0] in PACKAGES and "." in n]
    cited_claims = [n for n in names if CLAIM_ID.match(n) and n.split(".")[0] not in PACKAGES]
    assert cited_code and cited_claims, f"{page.name} cites no code or no claims"
    for name in cited_code:
        resolve(name)  # raises if the page names code that does not exist
    missing = [n for n in cited_claims if n not in ids]
    assert not missing, f"{page.name} cites unregistered claims: {missing}"
    for target in IMAGE.findall(text):
        assert (ROOT / "docs" / "papers" / target).resolve().is_file(), f"{page.name} links missing image {target}"
