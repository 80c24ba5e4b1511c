"""Hostile inputs to every ``dpref audit`` sub-command: each is refused with exit status 2 and ONE line on stderr,
``dpref: error: ...``, naming the option (or NAME), before anything is computed — no traceback, no progress,
nothing on stdout."""

from __future__ import annotations

import pytest

from dpref import cli


def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``dpref.cli.main(argv)``; argparse refusals exit through SystemExit."""
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_refused(code, out, err, *names):
    assert code == 2, (code, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpref") and ": error: " in lines[0], err
    assert "Traceback" not in err
    for name in names:
        assert name in lines[0], (name, lines[0])


@pytest.mark.parametrize("argv, names", [
    # audit list
    (("list", "--format", "nosuch"), ("--format", "nosuch")),
    (("list", "--trials", "5"), ("unrecognized arguments", "--trials")),
    (("list", "extra"), ("unrecognized arguments", "extra")),
    # audit itself
    ((), ("list", "run")),
    (("nosuch",), ("invalid choice", "nosuch")),
    # audit run: --trials
    (("run", "gaussian", "--trials", "0"), ("--trials", ">= 2", "got 0")),
    (("run", "gaussian", "--trials", "-5"), ("--trials", "got -5")),
    (("run", "gaussian", "--trials", "1"), ("--trials",)),
    (("run", "gaussian", "--trials", "abc"), ("--trials", "must be a whole number (e.g. 10000 or 1e4), got 'abc'")),
    (("run", "gaussian", "--trials", "2.5"), ("--trials", "got '2.5'")),
    (("run", "gaussian", "--trials", "nan"), ("--trials", "got 'nan'")),
    (("run", "gaussian", "--trials", "1e30"), ("--trials", "memory")),
    (("run", "gaussian", "--trials", "1e400"), ("--trials", "below 1e31")),
    (("run", "gaussian", "--trials", ""), ("--trials",)),
    # --shards, --workers, --executor
    (("run", "gaussian", "--shards", "0"), ("--shards", ">= 1")),
    (("run", "gaussian", "--shards", "-3"), ("--shards",)),
    (("run", "gaussian", "--shards", "x"), ("--shards", "must be a whole number")),
    (("run", "gaussian", "--trials", "100", "--shards", "1000"), ("--shards", "counted trials")),
    (("run", "gaussian", "--shards", "1e9"), ("--shards", "counted trials")),
    (("run", "gaussian", "--executor", "local", "--workers", "0"), ("--workers", ">= 1")),
    (("run", "gaussian", "--workers", "0"), ("--workers",)),
    (("run", "gaussian", "--workers", "2"), ("--workers", "--executor local")),
    (("run", "gaussian", "--executor", "nosuch"), ("--executor", "nosuch")),
    (("run", "gaussian", "--executor", "dask://host:0"), ("--executor",)),
    (("run", "gaussian", "--executor", "Serial"), ("--executor",)),
    (("run", "noise_halved", "--executor", "local"), ("--executor local", "noise_halved")),
    # --seed, --confidence, --level (no such option), formats and strategies
    (("run", "gaussian", "--seed", "-1"), ("--seed", ">= 0")),
    (("run", "gaussian", "--seed", "one"), ("--seed", "must be a whole number")),
    (("run", "gaussian", "--confidence", "2"), ("--confidence",)),
    (("run", "gaussian", "--confidence", "0.3"), ("--confidence",)),
    (("run", "gaussian", "--confidence", "nan"), ("--confidence",)),
    (("run", "gaussian", "--confidence", "x"), ("--confidence",)),
    (("run", "gaussian", "--level", "2"), ("unrecognized arguments", "--level")),
    (("run", "gaussian", "--format", "xml"), ("--format",)),
    (("run", "gaussian", "--threshold-strategy", "best"), ("--threshold-strategy",)),
    # NAME
    (("run",), ("NAME",)),
    (("run", "nosuch"), ("NAME", "nosuch")),
    (("run", ""), ("NAME",)),
    (("run", "no_such_module_xyz:thing"), ("NAME", "no_such_module_xyz")),
    (("run", "empirical_dp.registry:SCENARIOS"), ("NAME", "must name a Scenario")),
    (("run", "empirical_dp.registry:NOPE"), ("NAME", "no attribute")),
])
def test_refused_in_one_line(capsys, argv, names):
    assert_refused(*run(capsys, "audit", *argv), *names)


@pytest.fixture
def user_files(tmp_path, monkeypatch):
    """A directory with user scenario files that raise (on import, on the first output, later, or are no
    Scenario), made the current directory."""
    (tmp_path / "raises_on_import.py").write_text('raise RuntimeError("boom at import")\n')
    (tmp_path / "raising_scenarios.py").write_text('''
import numpy as np
from empirical_dp.scenarios import Scenario

def _raise(rng, trials, which):
    raise RuntimeError("boom in sample")

def _later(rng, trials, which):
    if trials > 1:
        raise RuntimeError("boom later")
    return rng.standard_normal((trials, 1)) + which

def _bad_score(outputs):
    raise ZeroDivisionError("boom in the score")

RAISES = Scenario(name="raises", description="sample raises", sample=_raise, claimed_epsilon=1.0, delta=1e-5,
                  log_likelihood_ratio=lambda o: o[:, 0])
LATER = Scenario(name="later", description="raises after one output", sample=_later, claimed_epsilon=1.0,
                 delta=1e-5, log_likelihood_ratio=lambda o: o[:, 0])
BAD_SCORE = Scenario(name="bad_score", description="score raises", sample=_later, claimed_epsilon=1.0, delta=1e-5,
                     log_likelihood_ratio=_bad_score)
NO_SCORE = Scenario(name="no_score", description="no attack", sample=_later, claimed_epsilon=1.0, delta=1e-5)
NOT_A_SCENARIO = 3
''')
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("name, names", [
    ("raises_on_import.py:S", ("NAME", "raises_on_import.py", "RuntimeError: boom at import")),
    ("raises_on_import:S", ("NAME", "RuntimeError: boom at import")),
    ("raising_scenarios.py:RAISES", ("NAME", "RuntimeError: boom in sample")),
    ("raising_scenarios.py:BAD_SCORE", ("NAME", "ZeroDivisionError: boom in the score")),
    ("raising_scenarios.py:NO_SCORE", ("NAME", "log_likelihood_ratio")),
    ("raising_scenarios.py:NOT_A_SCENARIO", ("NAME", "must name a Scenario")),
    ("raising_scenarios.py:MISSING", ("NAME", "no attribute")),
    ("missing_file.py:S", ("NAME", "no such file")),
])
def test_user_scenario_that_raises_is_refused_in_one_line(capsys, user_files, name, names):
    assert_refused(*run(capsys, "audit", "run", name, "--trials", "1000"), *names)


@pytest.mark.parametrize("extra", [(), ("--shards", "2")])
def test_user_scenario_that_raises_during_the_audit_ends_in_one_error_line(capsys, user_files, extra):
    """A failure after the first output (when the audit has started): still exit 2, no traceback, the error as the
    last stderr line (quietly: the only one)."""
    code, out, err = run(capsys, "audit", "run", "raising_scenarios.py:LATER", "--trials", "1000", "--quiet", *extra)
    assert_refused(code, out, err, "NAME", "RuntimeError: boom later")
    code, out, err = run(capsys, "audit", "run", "raising_scenarios.py:LATER", "--trials", "1000", *extra)
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.splitlines()[-1].startswith("dpref: error: NAME ") and "boom later" in err.splitlines()[-1]


def test_unusable_report_directory_is_refused_before_computing(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert_refused(*run(capsys, "audit", "run", "gaussian", "--report", str(blocker / "sub")), "--report")


def test_integer_options_take_exponent_notation(capsys):
    code, out, err = run(capsys, "audit", "run", "gaussian", "--trials", "2e4", "--seed", "1e3", "--shards", "2",
                         "--quiet", "--format", "json")
    assert code == 0 and err == ""
    assert '"trials": 20000' in out and '"seed": 1000' in out
