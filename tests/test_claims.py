"""Every claim holds on reference and fast; every mutant of every claim is rejected on both.

This is the suite's own guarantee that no check is vacuous: a claim whose mutant passes is a defect. A
statistical claim (one whose check reports a p-value) states its power (``mde_target``, enforced by the runner,
or a ``power_note``). Near-miss mutants that only the full budget can see are listed by their module in
``FULL_BUDGET_MUTANTS`` ("claim.id:mutant") and run at the full budget here.
"""

import importlib

import pytest

from proofs_checks.claim import BORROWED, ERRATUM, FAIL, PASS
from proofs_checks.folders import declared_optional_protocols
from proofs_checks.registry import claim_modules, load_claims
from proofs_checks.runner import run_claim
from proofs_checks.subjects import fast_subject, reference_subject

CLAIMS = load_claims()
SUBJECTS = {"reference": reference_subject(), "fast": fast_subject()}
try:  # the torch backend (optional extra "torch"): every claim and mutant that applies to it runs on it too
    import torch  # noqa: F401
except ImportError:
    TORCH_SUBJECT = None
else:
    from proofs_checks.subjects import resolve_subject
    TORCH_SUBJECT = SUBJECTS["torch"] = resolve_subject("reference.torch_backend.vector:SUBJECT")
#: Protocols only an optional backend implements (a claim on them applies to neither reference nor fast).
TORCH_PROTOCOLS = set(declared_optional_protocols())
#: Claim kinds run here on the torch subject. Its Monte Carlo claims (the same code path as dpzero.backend.dpzero,
#: one torch run per replicate: minutes) run with ``dpref claims run --paper dpzero --subject
#: reference.torch_backend.vector:SUBJECT`` (docs/papers/dpzero.md), not in CI.
TORCH_KINDS = {"backend", "privacy"}


def _skip_reason(claim, subject_name):
    if not claim.applies_to(SUBJECTS[subject_name]):
        return f"{claim.id} does not apply to {subject_name}"
    if subject_name == "torch" and claim.kind not in TORCH_KINDS:
        return f"{claim.id} ({claim.kind}) runs on torch outside CI"
    return None
FULL_BUDGET_MUTANTS = {entry for module in claim_modules()
                       for entry in getattr(importlib.import_module(module), "FULL_BUDGET_MUTANTS", ())}


def _expected(claim, subject):
    if claim.erratum:
        return ERRATUM
    return BORROWED if subject.borrowed and set(claim.requires) <= set(subject.borrowed) else PASS


@pytest.mark.parametrize("subject_name", sorted(SUBJECTS))
@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_claim_holds(claim, subject_name):
    subject = SUBJECTS[subject_name]
    if reason := _skip_reason(claim, subject_name):
        pytest.skip(reason)
    row = run_claim(claim, subject, "quick")
    assert row["verdict"] == _expected(claim, subject), row["detail"]
    if row["p_value"] is not None:
        assert claim.mde_target is not None or claim.power_note, f"{claim.id} is statistical but states no power"


MUTANT_CASES = [(c, m) for c in CLAIMS for m in c.mutants if f"{c.id}:{m.name}" not in FULL_BUDGET_MUTANTS]
FULL_CASES = [(c, m) for c in CLAIMS for m in c.mutants if f"{c.id}:{m.name}" in FULL_BUDGET_MUTANTS]


@pytest.mark.parametrize("subject_name", sorted(SUBJECTS))
@pytest.mark.parametrize("claim, mutant", MUTANT_CASES, ids=[f"{c.id}-{m.name}" for c, m in MUTANT_CASES])
def test_mutant_rejected(claim, mutant, subject_name):
    subject = SUBJECTS[subject_name]
    if reason := _skip_reason(claim, subject_name):
        pytest.skip(reason)
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
        assert claim.applies_to(SUBJECTS["fast"]) or set(claim.requires) <= TORCH_PROTOCOLS, claim.id
        if TORCH_SUBJECT is not None and set(claim.requires) <= TORCH_PROTOCOLS:
            assert claim.applies_to(TORCH_SUBJECT), claim.id


def test_full_budget_mutants_name_real_mutants():
    known = {f"{c.id}:{m.name}" for c in CLAIMS for m in c.mutants}
    assert FULL_BUDGET_MUTANTS <= known, sorted(FULL_BUDGET_MUTANTS - known)


@pytest.mark.parametrize("claim, mutant", FULL_CASES, ids=[f"{c.id}-{m.name}" for c, m in FULL_CASES])
def test_near_miss_mutant_rejected_at_full_budget(claim, mutant):
    """On fast only: the full budget on the reference takes minutes per claim; the reference's own
    full-budget runs are in the calibration and power tables (docs/power.md)."""
    row = run_claim(claim, mutant.apply(SUBJECTS["fast"]), "full")
    assert row["verdict"] == FAIL, f"mutant {mutant.name} not rejected at full: {row['verdict']} {row['detail']}"
