"""Every claim holds on reference and fast; every mutant of every claim is rejected on both.

This is the suite's own guarantee that no check is vacuous: a claim whose mutant passes is a defect.
"""

import pytest

from proofs_checks.claim import ERRATUM, FAIL, PASS
from proofs_checks.registry import load_claims
from proofs_checks.runner import run_claim
from proofs_checks.subjects import fast_subject, reference_subject

CLAIMS = load_claims()
SUBJECTS = {"reference": reference_subject(), "fast": fast_subject()}


def _expected(claim):
    return ERRATUM if claim.erratum else PASS


@pytest.mark.parametrize("subject_name", sorted(SUBJECTS))
@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_claim_holds(claim, subject_name):
    subject = SUBJECTS[subject_name]
    if not claim.applies_to(subject):
        pytest.skip(f"{claim.id} does not apply to {subject_name}")
    row = run_claim(claim, subject, "quick")
    assert row["verdict"] == _expected(claim), row["detail"]


MUTANT_CASES = [(c, m) for c in CLAIMS for m in c.mutants]


@pytest.mark.parametrize("subject_name", sorted(SUBJECTS))
@pytest.mark.parametrize("claim, mutant", MUTANT_CASES, ids=[f"{c.id}-{m.name}" for c, m in MUTANT_CASES])
def test_mutant_rejected(claim, mutant, subject_name):
    subject = SUBJECTS[subject_name]
    if not claim.applies_to(subject):
        pytest.skip(f"{claim.id} does not apply to {subject_name}")
    row = run_claim(claim, mutant.apply(subject), "quick")
    assert row["verdict"] == FAIL, f"mutant {mutant.name} not rejected: {row['verdict']} {row['detail']}"


def test_at_least_25_claims_each_with_a_mutant():
    assert len(CLAIMS) >= 25
    assert all(c.mutants for c in CLAIMS)


def test_some_claim_is_an_erratum():
    assert any(c.erratum for c in CLAIMS)


def test_every_claim_applies_to_reference_or_is_a_backend_claim():
    for claim in CLAIMS:
        assert claim.applies_to(SUBJECTS["reference"]) or claim.kind == "backend", claim.id
        assert claim.applies_to(SUBJECTS["fast"]), claim.id
