"""Every hostile input found by trying the README's commands as a new user, driven through the command line and the
Python API: each gives a one-line error with its documented exit status (2: bad usage, 1: a check failed), or a
correct answer. Detailed tests of each behaviour live beside the code (test_report_safety, test_user_code,
test_run_cli, test_account_cli, test_audit_cli); this file keeps the whole list in one place."""

from __future__ import annotations

import sys
import time

import pytest

from dpref import cli

CHEAP = ["--id", "zo_o2nc.sec1_5.sphere_norm", "-q"]
SMALL_RUN = ["dpzero", "--d", "4", "--n", "20", "--steps", "3", "-q"]


def _one_line(capsys, argv, status, *fragments):
    start = time.perf_counter()
    code = cli.main(argv)
    seconds = time.perf_counter() - start
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == status, (code, err)
    assert len(lines) == 1 and lines[0].startswith("dpref"), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0], seconds


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the loader adds the current directory
    yield tmp_path
    sys.modules.pop("mymod", None)


def _file_under_a_file(tmp_path):
    (tmp_path / "afile").write_text("x")
    return str(tmp_path / "afile" / "sub")


@pytest.mark.parametrize("argv", [
    ["claims", "run", *CHEAP, "--report"],
    ["audit", "run", "gaussian", "--trials", "1000", "-q", "--report"],
    ["conform", "accountants", "--grid", "small", "-q", "--report"],
    ["run", *SMALL_RUN, "--output"],
], ids=["claims run", "audit run", "conform", "run"])
def test_row_report_under_a_file(capsys, in_tmp, argv):
    _one_line(capsys, [*argv, _file_under_a_file(in_tmp)], 2, "afile")


def test_row_report_into_an_existing_report(capsys, in_tmp):
    assert cli.main(["claims", "run", *CHEAP, "--report", "r"]) == 0
    capsys.readouterr()
    _one_line(capsys, ["audit", "run", "gaussian", "--trials", "1000", "-q", "--report", "r"], 2, "--overwrite")


def test_row_scenario_module_raising_on_import(capsys, in_tmp):
    (in_tmp / "mymod.py").write_text("raise RuntimeError('broken on import')\n")
    _one_line(capsys, ["audit", "run", "mymod:X", "--trials", "1000"], 2, "broken on import")


def test_row_scenario_from_a_file(capsys, in_tmp):
    (in_tmp / "my_file.py").write_text("from empirical_dp.scenarios import gaussian_scenario\n"
                                       "scenario = gaussian_scenario(1.0, 4.0, 2, 1e-5, name='my_file_gaussian')\n")
    assert cli.main(["audit", "run", "my_file.py:scenario", "--trials", "2000", "-q"]) == 0
    assert "consistent" in capsys.readouterr().out


def test_row_unreachable_dask(capsys):
    _, seconds = _one_line(capsys, ["audit", "run", "gaussian", "--trials", "1000", "--executor", "dask://localhost:1"],
                           2, "dask://localhost:1")
    assert seconds < 20


@pytest.mark.parametrize("argv, option", [
    (["run", "dpzero", "--d", "100000000", "-q"], "--d"),
    (["run", "dpzero", "--replicates", "100000000", "-q"], "--replicates"),
    (["audit", "run", "gaussian", "--trials", "100000000000"], "--trials"),
], ids=["run --d", "run --replicates", "audit --trials"])
def test_row_memory_refused_before_allocating(capsys, argv, option):
    _, seconds = _one_line(capsys, argv, 2, option)
    assert seconds < 5


def test_row_precision_cap(capsys):
    _, seconds = _one_line(capsys, ["account", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1",
                                    "--steps", "10", "--delta", "1e-5", "--precision", "100000"], 2, "--precision")
    assert seconds < 5


def test_row_soak_of_a_buggy_subject_exits_1(capsys):
    code = cli.main(["claims", "run", "--id", "zo_o2nc.lemma3_1.unbiased", "--subject",
                     "examples/my_zo_estimator.py:buggy_two_point_estimate", "--soak", "2", "-q"])
    capsys.readouterr()
    assert code == 1


def test_row_every_check_errored_exits_1(capsys, in_tmp):
    (in_tmp / "raising.py").write_text(
        "def two_point_estimate(*args, **kwargs):\n    raise RuntimeError('not implemented')\n")
    code = cli.main(["claims", "run", "--id", "zo_o2nc.lemma3_1", "--subject", "raising.py:two_point_estimate", "-q"])
    out, err = capsys.readouterr()
    assert code == 1 and "error" in out


def test_row_divergence_names_the_option(capsys):
    _one_line(capsys, ["run", "dpzero", "--problem", "quadratic", "--step-size", "1e300", "-q"], 2, "--step-size")


@pytest.mark.parametrize("argv, option", [
    (["account", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--steps", "10", "--delta", "-1e-5"],
     "--delta"),
    (["run", *SMALL_RUN, "--step-size", "-1e-3"], "--step-size"),
], ids=["account --delta", "run --step-size"])
def test_row_negative_scientific_values_reach_their_check(capsys, argv, option):
    line, _ = _one_line(capsys, argv, 2, option)
    assert "expected one argument" not in line


def test_row_empty_selection(capsys):
    _one_line(capsys, ["claims", "list", "--id", "nosuch"], 2, "nosuch")
    line, _ = _one_line(capsys, ["claims", "list", "--id", "zo_o2nc.lemma3"], 2, "nearest")
    assert "zo_o2nc.lemma3_1" in line


def test_row_python_api():
    import numpy as np

    from proofs_checks.registry import load_claims, select
    from proofs_checks.runner import run_claims
    from proofs_checks.subjects import resolve_subject
    from reference.runner import run_algorithm

    claims = select(load_claims(), ids=["zo_o2nc.sec1_5.sphere_norm"])
    frame = run_claims(claims, ["fast"], "quick", progress=False)  # names are resolved
    assert list(frame["verdict"]) == ["borrowed"]

    def two_point_estimate(loss, x, batch, directions, perturbation, direction_law="unit_sphere"):
        return np.zeros(np.shape(x))

    assert resolve_subject(two_point_estimate).two_point_estimate is two_point_estimate
    with pytest.raises(TypeError, match="subject must be"):
        resolve_subject(3)
    with pytest.raises(TypeError, match="claims"):
        run_claims("zo_o2nc", ["fast"])
    with pytest.raises(TypeError):
        select(load_claims(), ids="zo_o2nc")
    with pytest.raises(ValueError, match="replicates"):
        run_algorithm("dpzero", d=4, n=20, steps=3, replicates=0)
