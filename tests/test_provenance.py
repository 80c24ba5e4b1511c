"""Provenance: shipped text cites the papers, the errata registry and our own docs, never development notes.

Every file shipped with dpref — the packages ``reference``, ``proofs_checks``, ``empirical_dp`` and ``dpref``,
plus ``docs/``, ``README.md``, ``examples/`` and ``benchmarks/`` (tests excepted) — is scanned line by line for
pointers into the development notes: spec sections ("spec §4"), the notes' folder ("specs/", "../shared"), the
design note and the library survey ("DESIGN.md", "anchors.md"), issue numbers, section or test-case references
into a paper's notes ("dpzero.md §5.2", "dpzero.md T23", "spec T28") and the notes' problem labels ("(spec P2)").
A failure names file:line. Cite a paper location ("dpzero Alg 2 line 6", "zo_o2nc Lemma 3.1"), a qualified
erratum id (``dpzero.E13``), another paper by authors and year, or a page of docs/ instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SHIPPED = ("reference", "proofs_checks", "empirical_dp", "dpref", "docs", "README.md", "examples", "benchmarks")

PAPER_KEYS = "dpzero|zo_o2nc|nsnc_improved|spider_sosp|bgm21"

#: (pattern, what it points at)
DENY = (
    (re.compile(r"spec §"), "a spec section"),
    (re.compile(r"specs/"), "the development notes' folder"),
    (re.compile(r"DESIGN\.md"), "the design note"),
    (re.compile(r"anchors\.md"), "the library survey note"),
    (re.compile(r"\.\./shared"), "the shared development folder"),
    (re.compile(r"[Ii]ssue [0-9]"), "an issue number"),
    (re.compile(rf"({PAPER_KEYS})\.md( ?§| T[0-9])"), "a section or test case of a paper's notes"),
    (re.compile(r"\b[Ss]pec T[0-9]"), "a test case of the notes"),
    (re.compile(r"\(spec P[0-9]\)"), "a problem label of the notes"),
)

SKIP_DIRS = {"__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache"}


def _shipped_files():
    for name in SHIPPED:
        path = ROOT / name
        if path.is_file():
            yield path
        elif path.is_dir():
            for file in sorted(path.rglob("*")):
                if file.is_file() and not SKIP_DIRS.intersection(file.relative_to(ROOT).parts):
                    yield file


def _text(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data:
        return None  # binary (images)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def violations(text: str) -> list[tuple[int, str, str]]:
    """(line number, what the line points at, the line) for every denied pattern in ``text``."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for pattern, what in DENY:
            if pattern.search(line):
                found.append((number, what, line.strip()))
    return found


def test_shipped_files_exist():
    files = list(_shipped_files())
    assert any(f.suffix == ".py" for f in files) and any(f.suffix == ".md" for f in files)
    assert (ROOT / "README.md") in files


def test_no_development_note_references_in_shipped_text():
    problems = []
    for path in _shipped_files():
        text = _text(path)
        if text is None:
            continue
        for number, what, line in violations(text):
            problems.append(f"{path.relative_to(ROOT)}:{number}: {what}: {line[:160]}")
    assert not problems, "shipped text cites development notes:\n" + "\n".join(problems)


@pytest.mark.parametrize("line", [
    "see spec §4 for the proof",
    "the notes in ../shared/specs/dpzero.md",
    "(DESIGN.md, Precision)",
    "anchors.md §10 item 7",
    "as asked in issue 3",
    "Issue 4, done when",
    "dpzero.md §5.2",
    "dpzero.md T23",
    "zo_o2nc.md§1.5",
    "grid of spec T6",
    "an Assumption-3.5 problem (spec P2)",
])
def test_deny_list_catches(line):
    assert violations(line)


@pytest.mark.parametrize("line", [
    "dpzero Alg 2 line 5",
    "zo_o2nc Lemma 3.1; zo_o2nc.E15",
    "Dong, Roth, Su 2022 (JRSS-B), arXiv 1905.02383",
    "docs/accounting.md and docs/papers/dpzero.md",
    "subject spec 'module:attr'",
])
def test_deny_list_allows(line):
    assert not violations(line)
