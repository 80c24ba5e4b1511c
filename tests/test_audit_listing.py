"""``dpref audit list``: it reads the static ``empirical_dp.catalogue`` (fast: no scenario built, no SciPy), which
must agree with the scenarios as built; its table fits 120 columns (``--wide``: in full)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from dpref import cli
from empirical_dp import planted
from empirical_dp.catalogue import CATALOGUE, KINDS
from empirical_dp.registry import SCENARIOS, missing_packages

ROOT = Path(__file__).resolve().parents[1]


def _built():
    """(name, kind, Scenario) of every built-in scenario and planted bug whose optional packages are installed,
    built (seconds: calibrations)."""
    yield from ((name, "scenario", SCENARIOS[name]) for name in SCENARIOS if not missing_packages(name))
    yield from ((name, "planted bug", factory()) for name, (factory, _, _) in planted.PLANTED.items()
                if not missing_packages(name))


def _same(listed, computed) -> bool:
    if listed is None or computed is None:
        return listed is computed
    if math.isinf(computed):
        return listed == computed
    return listed == pytest.approx(computed, rel=1e-9, abs=0)


def test_catalogue_agrees_with_the_built_scenarios():
    """Same targets in the same order, same claim, tight ε and description (floats to a relative 1e-9: the
    calibrated values may differ in the last bits between platforms)."""
    built = list(_built())
    listed = [e for e in CATALOGUE if not missing_packages(e.name)]
    assert [(e.name, e.kind) for e in listed] == [(name, kind) for name, kind, _ in built]
    for entry, (name, _, scenario) in zip(listed, built):
        assert entry.claim_type == scenario.claim_type, name
        assert entry.description == scenario.description, name
        for field in ("claimed_epsilon", "claimed_mu", "tight_epsilon"):
            assert _same(getattr(entry, field), getattr(scenario, field)), (name, field)
    assert {e.kind for e in CATALOGUE} == set(KINDS)


def test_list_builds_no_scenario_and_imports_no_audit_library():
    """``dpref audit list`` answers from the catalogue: the registry, the scenario modules and SciPy's audit
    dependencies of ours are not imported (whatever the rest of the command line imports)."""
    code = ("import sys; from dpref.cli import main; rc = main(['audit', 'list']); "
            "print(sorted(m for m in sys.modules if m.startswith('empirical_dp.') and m != 'empirical_dp.catalogue'))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_list_json_is_the_catalogue(capsys):
    assert cli.main(["audit", "list", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [entry._asdict() for entry in CATALOGUE]


def test_list_table_fits_120_columns_and_wide_shows_everything(capsys):
    assert cli.main(["audit", "list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 120
    assert lines[0].split() == ["name", "kind", "claim", "eps", "mu", "tight_eps", "description"]
    for entry in CATALOGUE:  # names are never shortened; long descriptions are, ending in "…"
        assert any(line.startswith(entry.name + " ") for line in lines), entry.name
    assert "…" in out and "n/a" in out
    assert cli.main(["audit", "list", "--wide"]) == 0
    wide = capsys.readouterr().out
    assert max(len(line) for line in wide.splitlines()) > 120 and "…" not in wide
    for entry in CATALOGUE:
        assert entry.description in wide
