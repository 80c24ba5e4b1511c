"""User code named on the command line (``module:attr`` and ``path/file.py:attr``, ``reference.loading``) and
the command line under bad input: every failure is one ``dpref: error:`` line on stderr and exit status 2, never a
traceback (unloadable user code, an unreachable Dask scheduler, an audit budget too large for memory)."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

from dpref import cli
from reference.loading import LoadError, load_object

ROOT = Path(__file__).resolve().parents[1]

SCENARIO_FILE = """
from empirical_dp.scenarios import gaussian_scenario

MINE = gaussian_scenario(1.0, 4.0, 2, 1e-5, name="my_file_gaussian")
"""


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_error_line(err: str, *needles: str):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("dpref: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, err)


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the loader adds the current directory
    yield tmp_path
    for name in ("my_scenarios", "broken_mod"):
        sys.modules.pop(name, None)


def test_scenario_from_a_file_in_the_current_directory(capsys, in_tmp):
    (in_tmp / "my_file.py").write_text(SCENARIO_FILE)
    code, out, err = run(capsys, "audit", "run", "my_file.py:MINE", "--trials", "20000", "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    assert record["kind"] == "external" and record["scenario"] == "my_file_gaussian"


def test_scenario_from_a_module_in_the_current_directory(capsys, in_tmp):
    (in_tmp / "my_scenarios.py").write_text(SCENARIO_FILE)
    code, out, err = run(capsys, "audit", "run", "my_scenarios:MINE", "--trials", "20000", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["scenario"] == "my_file_gaussian"


def test_module_raising_on_import_is_one_line(capsys, in_tmp):
    (in_tmp / "broken_mod.py").write_text("raise RuntimeError('boom at import\\nsecond line')\n")
    code, out, err = run(capsys, "audit", "run", "broken_mod:X", "--trials", "1000")
    assert code == 2 and out == ""
    assert_one_error_line(err, "broken_mod:X", "RuntimeError", "boom at import")


def test_file_raising_on_import_is_one_line(capsys, in_tmp):
    (in_tmp / "broken_file.py").write_text("import no_such_module_xyz\n")
    code, out, err = run(capsys, "audit", "run", "broken_file.py:X", "--trials", "1000")
    assert code == 2 and out == ""
    assert_one_error_line(err, "broken_file.py:X", "no_such_module_xyz")


@pytest.mark.parametrize("spec, needle", [
    ("my_file.py:NOPE", "no attribute 'NOPE'"),
    ("missing_file.py:MINE", "no such file"),
    ("my_file.py:gaussian_scenario", "must name a Scenario"),
])
def test_bad_scenario_specs_are_one_line(capsys, in_tmp, spec, needle):
    (in_tmp / "my_file.py").write_text(SCENARIO_FILE)
    code, out, err = run(capsys, "audit", "run", spec, "--trials", "1000")
    assert code == 2 and out == ""
    assert_one_error_line(err, spec, needle)


def test_unreachable_dask_scheduler_fails_fast(capsys):
    start = time.perf_counter()
    code, out, err = run(capsys, "audit", "run", "gaussian", "--trials", "1000", "--executor", "dask://localhost:1",
                         "--no-progress")
    assert time.perf_counter() - start < 15
    assert code == 2 and out == ""
    assert_one_error_line(err, "cannot reach the Dask scheduler at dask://localhost:1")


def test_huge_trials_are_refused_before_allocating(capsys):
    code, out, err = run(capsys, "audit", "run", "gaussian", "--trials", "100000000000")
    assert code == 2 and out == ""
    assert_one_error_line(err, "--trials", "memory")


def test_file_subject_for_claims_list(capsys, in_tmp):
    shutil.copy(ROOT / "examples" / "my_zo_estimator.py", in_tmp / "my_estimator.py")
    code, out, err = run(capsys, "claims", "list", "--subject", "my_estimator.py:two_point_estimate",
                         "--format", "json")
    assert code == 0, err
    assert json.loads(out)  # the claims that need only two_point_estimate


def test_broken_subject_is_one_line(capsys, in_tmp):
    (in_tmp / "broken_mod.py").write_text("raise RuntimeError('boom')\n")
    code, out, err = run(capsys, "claims", "list", "--subject", "broken_mod:f")
    assert code == 2 and out == ""
    assert_one_error_line(err, "broken_mod:f", "RuntimeError: boom")


def test_loader_errors_are_value_errors(in_tmp):
    (in_tmp / "my_file.py").write_text(SCENARIO_FILE)
    assert load_object("my_file.py:MINE").name == "my_file_gaussian"
    assert load_object("my_file.py:MINE") is load_object("my_file.py:MINE")  # loaded once per file version
    for spec in ("nocolon", "my_file.py:", ":attr", "my_file.py:MINE.nope"):
        with pytest.raises(LoadError):
            load_object(spec)
    assert issubclass(LoadError, ValueError)
