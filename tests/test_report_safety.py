"""Output directories under bad input: checked before any computation, refused with one line and exit 2 (no
traceback), non-empty ones only with --overwrite; manifests carry a schema version; JSON numbers are numbers."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from dpref import cli, conform
from dpref import run as run_command
from reference import reporting
from reference.reporting import MANIFEST_SCHEMA_VERSION, prepare_output_dir, render, to_records

CHEAP = ["--id", "zo_o2nc.sec1_5.sphere_norm", "--no-progress"]
SMALL_RUN = ["dpzero", "--d", "4", "--n", "20", "--steps", "3", "--no-progress"]


def _boom(*args, **kwargs):
    raise AssertionError("computation started before the output directory was checked")


@pytest.fixture
def no_compute(monkeypatch):
    """Every computation the commands could start fails the test."""
    monkeypatch.setattr(cli, "run_claims", _boom)
    monkeypatch.setattr(cli, "soak", _boom)
    monkeypatch.setattr(cli.audit, "quick_audits", _boom)
    monkeypatch.setattr(conform, "conform_accountants", _boom)
    monkeypatch.setattr(run_command, "run_algorithm", _boom)


def _refused(capsys, argv, fragment):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(("dpref: error:", "dpref run: error:")), err
    assert "Traceback" not in err and fragment in err, err
    return lines[0]


def _commands(target):
    return {
        "claims run": ["claims", "run", *CHEAP, "--report", target],
        "check": ["check", "--no-progress", "--report", target],
        "conform": ["conform", "accountants", "--grid", "small", "--no-progress", "--report", target],
        "run": ["run", *SMALL_RUN, "--output", target],
    }


@pytest.mark.parametrize("command", ["claims run", "check", "conform", "run"])
def test_path_under_a_regular_file_is_refused_before_computing(capsys, tmp_path, no_compute, command):
    afile = tmp_path / "afile"
    afile.write_text("x")
    target = str(afile / "sub")
    line = _refused(capsys, _commands(target)[command], "cannot create the directory")
    assert target in line and ("--output" if command == "run" else "--report") in line
    assert afile.read_text() == "x"


@pytest.mark.parametrize("command", ["claims run", "run"])
def test_a_regular_file_as_the_directory_is_refused(capsys, tmp_path, no_compute, command):
    afile = tmp_path / "afile"
    afile.write_text("x")
    _refused(capsys, _commands(str(afile))[command], "not a directory")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root ignores permissions")
@pytest.mark.parametrize("command", ["claims run", "check", "conform", "run"])
def test_unwritable_directory_is_refused_before_computing(capsys, tmp_path, no_compute, command):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        _refused(capsys, _commands(str(locked))[command], "not writable")
        _refused(capsys, _commands(str(locked / "new"))[command], "cannot create the directory")
    finally:
        locked.chmod(0o700)


@pytest.mark.parametrize("command", ["claims run", "check", "conform", "run"])
def test_non_empty_directory_needs_overwrite(capsys, tmp_path, no_compute, command):
    (tmp_path / "old.txt").write_text("old")
    _refused(capsys, _commands(str(tmp_path))[command], "--overwrite")
    assert [p.name for p in tmp_path.iterdir()] == ["old.txt"]  # nothing probed left behind


def test_overwrite_writes_into_a_non_empty_directory(capsys, tmp_path):
    (tmp_path / "results.csv").write_text("stale")
    assert cli.main(["claims", "run", *CHEAP, "--report", str(tmp_path)]) == 2
    capsys.readouterr()
    assert (tmp_path / "results.csv").read_text() == "stale"
    assert cli.main(["claims", "run", *CHEAP, "--report", str(tmp_path), "--overwrite"]) == 0
    capsys.readouterr()
    assert (tmp_path / "results.csv").read_text() != "stale"
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert "--overwrite" in manifest["command"]


def test_run_output_overwrite(capsys, tmp_path):
    (tmp_path / "old.txt").write_text("old")
    assert cli.main(["run", *SMALL_RUN, "--output", str(tmp_path), "--format", "json", "--overwrite"]) == 0
    capsys.readouterr()
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["schema_version"] == 1
    assert {"python", "os"} <= set(manifest["platform"]) and "numpy" in manifest["versions"]
    assert manifest["seeds"]["seed"] == [0]


def test_claims_report_manifest_and_json_numbers(capsys, tmp_path):
    report = tmp_path / "new" / "nested"
    code = cli.main(["claims", "run", *CHEAP, "--report", str(report), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    manifest = json.loads((report / "manifest.json").read_text())
    assert manifest["schema_version"] == MANIFEST_SCHEMA_VERSION == 1
    assert manifest["command"].startswith("dpref claims run") and manifest["budget"] == "quick"
    assert manifest["platform"]["python"] and manifest["platform"]["os"]
    assert {"numpy", "scipy", "pandas", "dpref"} <= set(manifest["versions"])
    assert sorted(manifest["files"]) == ["manifest.json", "results.csv", "results.json", "results.md"]
    assert manifest["seeds"]["column"] == "seed" and all(isinstance(s, int) for s in manifest["seeds"]["distinct"])
    for records in (json.loads(out), json.loads((report / "results.json").read_text())):
        for record in records:
            assert isinstance(record["statistic"], float) and isinstance(record["bound"], float)
            assert isinstance(record["seed"], int) and isinstance(record["seconds"], float)
            assert record["p_value"] is None and record["mde"] is None


def test_to_records_numbers_and_missing_values():
    import decimal

    import mpmath

    frame = pd.DataFrame({
        "int": [1, 2],
        "float": [1.5, np.nan],
        "mixed": pd.Series([np.int64(3), np.float32(0.5)], dtype=object),
        "high": [mpmath.mpf("0.25"), decimal.Decimal("2.5")],
        "missing": [None, pd.NaT],
        "inf": [np.inf, -np.inf],
        "text": ["a", None],
    })
    records = to_records(frame)
    assert records[0] == {"int": 1, "float": 1.5, "mixed": 3, "high": 0.25, "missing": None, "inf": "inf",
                          "text": "a"}
    assert records[1] == {"int": 2, "float": None, "mixed": 0.5, "high": 2.5, "missing": None, "inf": "-inf",
                          "text": None}
    assert isinstance(records[0]["mixed"], int) and isinstance(records[1]["high"], float)
    assert json.loads(render(frame, "json")) == records


def test_prepare_output_dir_api(tmp_path):
    made = prepare_output_dir(tmp_path / "a" / "b", overwrite=False, option="--out")
    assert made.is_dir() and list(made.iterdir()) == []
    (made / "x").write_text("x")
    with pytest.raises(ValueError, match=r"^--out .*not empty"):
        prepare_output_dir(made, overwrite=False, option="--out")
    assert prepare_output_dir(made, overwrite=True) == made
    assert "prepare_output_dir" in reporting.__all__


@pytest.mark.parametrize("command", ["claims run", "check", "conform", "run"])
def test_failed_write_probe_is_refused_before_computing(capsys, tmp_path, no_compute, monkeypatch, command):
    """The unwritable case also where permissions cannot be tested (root): the probe file cannot be created."""

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(reporting.tempfile, "NamedTemporaryFile", denied)
    line = _refused(capsys, _commands(str(tmp_path / "out"))[command], "not writable")
    assert "Permission denied" in line


def test_audit_run_probes_its_report_directory_first(tmp_path, capsys, monkeypatch):
    from dpref import audit as audit_command

    blocker = tmp_path / "afile"
    blocker.write_text("x")
    monkeypatch.setattr(audit_command, "_runner", lambda *a, **k: pytest.fail("computed before probing --report"))
    code = cli.main(["audit", "run", "gaussian", "--trials", "1000", "--report", str(blocker / "sub")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("dpref: error: --report") and "Traceback" not in err
    full = tmp_path / "full"
    full.mkdir()
    (full / "old.json").write_text("{}")
    assert cli.main(["audit", "run", "gaussian", "--trials", "1000", "--report", str(full)]) == 2
    assert "pass --overwrite" in capsys.readouterr().err
