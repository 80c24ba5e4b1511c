"""dpzero.seed_trick.public_streams_reveal_no_noise: publishing everything public reveals nothing about the noise
under the default secret randomness. The claim holds on reference and fast; every mutant is rejected on both,
also by the regeneration tests alone (with the repeated-run check switched off); the claim is registered and
listed."""

import json
import math

import numpy as np
import pytest

from dpref import cli
from proofs_checks.claim import FAIL, PASS
from proofs_checks.authoring import deterministic, substitute
from proofs_checks.claims.dpzero import privacy
from proofs_checks.registry import claim_modules, load_claims, select
from proofs_checks.runner import run_claim
from proofs_checks.subjects import fast_subject, reference_subject
from reference.algorithms.dpzero import direction_for_step
from reference.rng import Streams

CLAIM_ID = "dpzero.seed_trick.public_streams_reveal_no_noise"
CLAIM = privacy.PUBLIC_STREAMS_REVEAL_NO_NOISE
SUBJECTS = {"reference": reference_subject(), "fast": fast_subject()}
MUTANTS = [m.name for m in CLAIM.mutants]


def test_registered_and_listed(capsys):
    assert CLAIM.id == CLAIM_ID
    assert "proofs_checks.claims.dpzero.privacy" in claim_modules()
    claims = load_claims()
    assert [c.id for c in select(claims, ids=["dpzero.seed_trick"])] == [CLAIM_ID]
    assert CLAIM.kind == "privacy" and CLAIM.paper == "dpzero"
    assert set(MUTANTS) == {"old_default", "overlapping_replicate_seeds", "noise_key_under_public_seed",
                            "partly_public_noise"}
    assert cli.main(["claims", "list", "--id", "dpzero.seed_trick", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in listed] == [CLAIM_ID]
    assert len(listed[0]["mutants"]) == len(MUTANTS)


@pytest.mark.parametrize("subject_name", sorted(SUBJECTS))
def test_claim_holds(subject_name):
    """Needs the algorithms' default noise_seed=None -> fresh operating-system entropy."""
    row = run_claim(CLAIM, SUBJECTS[subject_name], "quick")
    assert row["verdict"] == PASS, row["detail"]
    assert row["seconds"] < 15.0  # ~1.5 s alone; generous for a loaded machine
    assert "detects" in row["power"]
    if subject_name == "fast":  # the replicated calls ran (a refused seed array would skip them silently)
        assert "2 replicated calls of R = 4" in row["detail"], row["detail"]


@pytest.mark.parametrize("subject_name", sorted(SUBJECTS))
@pytest.mark.parametrize("mutant_name", MUTANTS)
def test_mutant_rejected(mutant_name, subject_name):
    bad = next(m for m in CLAIM.mutants if m.name == mutant_name).apply(SUBJECTS[subject_name])
    row = run_claim(CLAIM, bad, "quick")
    assert row["verdict"] == FAIL, f"{mutant_name} not rejected: {row['verdict']} {row['detail']}"


@pytest.mark.parametrize("subject_name", sorted(SUBJECTS))
@pytest.mark.parametrize("mutant_name", MUTANTS)
def test_mutant_rejected_by_the_regeneration_tests(monkeypatch, mutant_name, subject_name):
    """Without the repeated-run check (which catches the deterministic mutants at once), the exact-match and
    correlation tests reject every mutant with an overwhelming p-value."""
    monkeypatch.setattr(privacy, "_differs_everywhere", lambda a, b, label: deterministic(True, detail="off"))
    bad = next(m for m in CLAIM.mutants if m.name == mutant_name).apply(SUBJECTS[subject_name])
    row = run_claim(CLAIM, bad, "quick")
    assert row["verdict"] == FAIL and row["p_value"] is not None and row["p_value"] < 1e-30, row["detail"]
    expected = "correlation" if mutant_name == "partly_public_noise" else "exact regeneration: at most 500 of 500"
    assert expected in row["detail"]


def test_replicate_only_overlap_is_rejected_on_fast(monkeypatch):
    """A subject right for single runs whose replicated calls use the public seed P + r + 1 as replicate r's
    secret (seed arithmetic) is caught by the replicated calls alone: by the repeated call, and without that
    check by the regeneration tests."""
    overlap = privacy._with_noise(privacy._next_seed_noise)
    bad = substitute("replicates_only", "overlap in replicated calls only", "dpzero",
                     lambda call: overlap(call) if np.ndim(call.seed) else call.original()).apply(SUBJECTS["fast"])
    row = run_claim(CLAIM, bad, "quick")
    assert row["verdict"] == FAIL and row["detail"].startswith("two replicated default calls"), row["detail"]
    monkeypatch.setattr(privacy, "_differs_everywhere", lambda a, b, label: deterministic(True, detail="off"))
    row = run_claim(CLAIM, bad, "quick")
    assert row["verdict"] == FAIL and row["p_value"] < 1e-30, row["detail"]
    assert "exact regeneration: at most 500 of 500 steps" in row["detail"] and "under noise" in row["detail"]


def test_mutant_noise_is_what_it_says():
    """old_default: ŝ_t − m_t = σ·z_t of the public seed's ('dpzero', 'noise') stream; partly_public_noise:
    the residual is N(0, σ²) with correlation ≈ 0.44 with that stream; iterates follow the swapped releases."""
    rows = np.random.default_rng(1).uniform(-1.0, 1.0, size=(privacy.N_RECORDS, privacy.DIM))
    seed, steps = 2**41 + 17, 3000
    means = privacy._clipped_means(rows, seed, steps, direction_for_step)
    public = Streams(seed).generator("dpzero", "noise").standard_normal(steps)
    settings = privacy._run_settings(steps)
    for name in ("old_default", "partly_public_noise"):
        dpzero = next(m for m in CLAIM.mutants if m.name == name).apply(SUBJECTS["reference"]).dpzero
        result = dpzero(privacy._linear_loss, rows, np.zeros(privacy.DIM), seed=seed, record_trajectory=True,
                        **settings)
        sigma = result.ledger.plan.noise_std
        z = (np.asarray(result.releases) - means) / sigma
        if name == "old_default":
            assert np.max(np.abs(z - public)) < 1e-12
        else:
            assert abs(np.corrcoef(z, public)[0, 1] - math.sqrt(0.19)) < 0.1
            assert abs(np.std(z) - 1.0) < 0.1
        path = np.asarray(result.trajectory)
        u = np.array([direction_for_step(seed, t, privacy.DIM) for t in range(steps)])
        by_hand = -np.cumsum(settings["step_size"] * np.asarray(result.releases)[:, None] * u, axis=0)
        assert np.max(np.abs(path[1:] - by_hand)) < 1e-12
        assert np.array_equal(result.output, path[result.output_index])


def test_exact_match_bound():
    """One chance match in a run is not evidence; two are; a whole regenerated run gives p = 0."""
    steps, pairs, level = 500, 2000, 1e-6 / 3
    assert privacy._exact_match_test(0, pairs, steps, level).p_value == 1.0
    one = privacy._exact_match_test(1, pairs, steps, level)
    assert 1e-4 < one.p_value < 1e-2
    assert privacy._exact_match_test(2, pairs, steps, level).p_value < 1e-9
    assert privacy._exact_match_test(steps, pairs, steps, level).p_value == 0.0
    assert one.mde == 2 / steps


def test_candidates_cover_the_public_rules():
    res = privacy._Residual(own=2**50, index=1, call_seeds=(2**50 - 1, 2**50, 2**50 + 1),
                            published=(("ledger.steps", 500), ("ledger.seed[2]", 2**50 + 1), ("output_index[1]", 7)),
                            noise=np.zeros(500))
    seeds = privacy._candidates(res)
    assert seeds[2**50][0] == "P" and set(privacy.PRIMARY) <= seeds[2**50][1]
    assert all(2**50 + k in seeds for k in range(-64, 65)) and 2**50 + 10_000 in seeds
    assert set(privacy.PRIMARY) <= seeds[2**50 + 1][1]  # a public seed of the call: every key
    assert set(privacy.PRIMARY) <= seeds[500][1] and set(privacy.PRIMARY) <= seeds[7][1]  # ledger integers
    assert len([s for s in seeds if s >= 2**64]) >= privacy.SPAWNED_CHILDREN  # SeedSequence(P).spawn children
