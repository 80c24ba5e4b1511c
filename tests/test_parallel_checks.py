"""Checks spread over worker processes give the rows a serial run gives (``run_claims(workers=)``,
``quick_audits(workers=)``, ``--workers``)."""

from __future__ import annotations

import json

import pytest

from dpref import audit as audit_cli
from dpref import cli
from empirical_dp import planted, registry
from proofs_checks.registry import load_claims, select
from proofs_checks.runner import run_claims
from proofs_checks.subjects import fast_subject

SAME = ["id", "subject", "verdict", "statistic", "bound", "p_value", "p_adjusted", "seed", "relative_mde", "detail"]


def _rows(frame):
    return frame[SAME].astype(object).where(frame[SAME].notna(), None).to_dict("records")


def test_workers_give_the_serial_rows_in_the_serial_order():
    claims = select(load_claims(), ids=["dpzero.lemma2_2", "zo_o2nc.alg5", "zo_o2nc.sec1_5.sphere_norm"])
    serial = run_claims(claims, ["reference", "fast"], progress=False)
    parallel = run_claims(claims, ["reference", "fast"], progress=False, workers=2)
    assert len(serial) >= 6
    assert _rows(parallel) == _rows(serial)


def test_a_subject_that_cannot_be_rebuilt_by_name_runs_in_this_process():
    claim = select(load_claims(), ids=["zo_o2nc.alg5.prefix_identity"])[0]
    mutant = claim.mutants[0].apply(fast_subject())  # "fast[...]": no worker can rebuild it
    frame = run_claims([claim, claim], [mutant], progress=False, workers=2)
    assert list(frame["verdict"]) == ["fail", "fail"]


@pytest.mark.parametrize("workers", [0, -1, 1.5, True])
def test_bad_workers_are_refused(workers):
    with pytest.raises(ValueError, match="workers"):
        run_claims(select(load_claims(), ids=["zo_o2nc.alg5.prefix_identity"]), ["reference"], workers=workers)
    with pytest.raises(ValueError, match="workers"):
        audit_cli.quick_audits(workers=workers, progress=False)


def test_quick_audits_in_workers_match_the_serial_records(monkeypatch):
    chosen = {name: planted.PLANTED[name] for name in ("noise_from_direction_seed", "zo_o2nc-published-public-seed-noise")}
    monkeypatch.setattr(planted, "PLANTED", chosen)  # forked workers see the patched registries
    monkeypatch.setattr(registry, "SCENARIOS", {"gaussian": registry.SCENARIOS["gaussian"]})
    serial = audit_cli.quick_audits(progress=False)
    parallel = audit_cli.quick_audits(progress=False, workers=2)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in serial]
    assert [{k: v for k, v in r.items() if k != "seconds"} for r in parallel] == strip
    assert [r["name"] for r in parallel] == ["gaussian", *chosen]


def test_cli_workers_option(capsys):
    argv = ["claims", "run", "--id", "zo_o2nc.alg5", "--format", "json", "-q"]
    assert cli.main([*argv, "--workers", "2"]) == 0
    parallel = json.loads(capsys.readouterr().out)
    assert cli.main(argv) == 0
    serial = json.loads(capsys.readouterr().out)
    for rows in (parallel, serial):
        for row in rows:
            row.pop("seconds")
    assert parallel == serial
    for bad in ("0", "65"):
        assert cli.main([*argv, "--workers", bad]) == 2
        assert "--workers must lie in [1, 64]" in capsys.readouterr().err
    assert cli.main(["check", "--workers", "0"]) == 2
    assert 1 <= cli.default_workers() <= cli.MAX_DEFAULT_WORKERS
