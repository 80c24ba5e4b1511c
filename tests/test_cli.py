"""The dpref command line: list, run (formats, report, soak, external subjects), check."""

import json
from pathlib import Path

import pytest

from dpref import cli
from proofs_checks.claim import FAIL, Claim, Evidence, Mutant
from proofs_checks.catalogue import generated_documents
from proofs_checks.registry import load_claims

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = str(ROOT / "examples" / "my_zo_estimator.py")


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_claims_list_json(capsys):
    code, out, _ = run(capsys, "claims", "list", "--format", "json")
    assert code == 0
    claims = json.loads(out)
    assert len(claims) >= 25
    for c in claims:
        assert {"id", "paper", "location", "kind", "statement", "mutants"} <= set(c)
        assert c["mutants"], c["id"]


def test_claims_run_json_fields(capsys):
    code, out, err = run(capsys, "claims", "run", "--id", "zo_o2nc.sec1_5.sphere_norm", "--format", "json", "--no-progress")
    assert code == 0, err
    rows = json.loads(out)
    assert {r["subject"] for r in rows} == {"reference", "fast"}
    for r in rows:
        assert {"id", "subject", "verdict", "statistic", "bound", "p_value", "seed", "seconds", "mde", "relative_mde",
                "mde_target", "power"} <= set(r)
        # fast borrows the reference sampler: its run vouches for nothing of its own
        assert r["verdict"] == {"reference": "pass", "fast": "borrowed"}[r["subject"]]


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_claims_run_formats(capsys, fmt):
    code, out, _ = run(capsys, "claims", "run", "--id", "zo_o2nc.sec1_5.sphere_norm", "--format", fmt, "--no-progress")
    assert code == 0 and "zo_o2nc.sec1_5.sphere_norm" in out


def test_report_directory(capsys, tmp_path):
    code, _, _ = run(capsys, "claims", "run", "--id", "zo_o2nc.sec1_5.sphere_norm", "--report", str(tmp_path), "--no-progress")
    assert code == 0
    for name in ("results.csv", "results.json", "results.md", "manifest.json"):
        assert (tmp_path / name).is_file()
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["budget"] == "quick" and "numpy" in manifest["versions"]


def test_soak(capsys):
    code, out, _ = run(capsys, "claims", "run", "--id", "dpzero.sec2_4.gaussian_moments", "--subject", "fast",
                       "--soak", "3", "--format", "json", "--no-progress")
    assert code == 0
    row = json.loads(out)[0]
    assert row["runs"] == 3 and row["false_alarms"] == 0


def test_external_subject_passes_and_buggy_one_fails(capsys):
    code, out, _ = run(capsys, "claims", "list", "--subject", f"{EXAMPLE}:two_point_estimate", "--format", "json")
    applicable = json.loads(out)
    assert code == 0 and len(applicable) >= 3
    code, out, err = run(capsys, "claims", "run", "--subject", f"{EXAMPLE}:two_point_estimate", "--format", "json", "--no-progress")
    assert code == 0, err
    assert all(r["verdict"] in ("pass", "erratum-confirmed") for r in json.loads(out))
    code, out, _ = run(capsys, "claims", "run", "--subject", f"{EXAMPLE}:buggy_two_point_estimate", "--format", "json", "--no-progress")
    assert code == 1
    assert any(r["verdict"] == "fail" for r in json.loads(out))


@pytest.mark.parametrize("argv, message", [
    (["claims", "run", "--subject", "nope"], "module:attr"),
    (["claims", "run", "--subject", "math:pi"], "not a Subject"),
])
def test_usage_errors_exit_2(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err


def test_check_exits_nonzero_on_a_violation(capsys, monkeypatch):
    planted = Claim(id="zo_o2nc.test.planted_failure", paper="zo_o2nc", location="-", statement="-",
                    kind="deterministic", requires=("sample_sphere",),
                    check=lambda subject, ctx: Evidence(FAIL, detail="planted"),
                    mutants=(Mutant("noop", "-", lambda s: s),))
    monkeypatch.setattr(cli, "load_claims", lambda: [planted])
    # the claims decide this exit; the quick audits (minutes) are exercised by tests/test_audit_cli.py
    monkeypatch.setattr(cli, "_check_audits", lambda *args, **kwargs: 0)
    code, _, err = run(capsys, "check", "--no-progress")
    assert code == 1 and "planted" in err


def test_check_exits_nonzero_on_an_unexpected_audit_verdict(capsys, monkeypatch):
    """``dpref check``'s audit part on stand-in records (the real quick audits run in tests/test_audit_cli.py):
    a planted bug reported consistent fails the check and is named."""
    from dpref import audit

    def record(name, kind, verdict, expected):
        row = {column: None for column in audit.QUICK_COLUMNS}
        row.update(name=name, kind=kind, verdict=verdict, expected=expected, ok=verdict == expected,
                   missed=kind == "planted" and verdict != expected, note="", trials=10, seconds=0.0)
        return row

    monkeypatch.setattr(audit, "quick_audits", lambda **kwargs: [
        record("gaussian", "scenario", "consistent", "consistent"),
        record("noise_halved", "planted", "consistent", "violation")])
    assert cli._check_audits("table", None, "dpref check", 120, False) == 1
    captured = capsys.readouterr()
    assert "gaussian" in captured.out
    assert "2 audits, 1 as expected" in captured.err
    assert "audit noise_halved (planted): verdict consistent, expected violation" in captured.err


def test_generated_docs_are_current():
    for relative, content in generated_documents().items():
        path = ROOT / relative
        assert path.is_file(), f"{relative} is missing: run `make docs`"
        assert path.read_text() == content, f"{relative} is stale: run `make docs`"


def test_claim_ids_are_unique_and_stable_format():
    ids = [c.id for c in load_claims()]
    assert len(ids) == len(set(ids))
