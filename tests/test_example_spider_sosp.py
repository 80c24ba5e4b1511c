"""Smoke test of examples/spider_sosp_study.py in --quick mode (54 short runs, in this process: about 10 s)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("matplotlib")

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "spider_sosp_study.py"


def _load_study():
    spec = importlib.util.spec_from_file_location("spider_sosp_study", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    study = _load_study()
    out = tmp_path_factory.mktemp("spider_sosp_study")
    assert study.main(["--quick", "--workers", "1", "--quiet", "--out", str(out)]) == 0
    return study, out


def test_quick_mode_writes_every_file(quick_run):
    _, out = quick_run
    names = {p.name for p in out.iterdir() if not p.name.startswith(".")}
    assert names == {f"spider_sosp_{stem}_quick.{ext}" for stem, ext in (
        ("escape", "png"), ("samples", "png"), ("study", "csv"), ("study_runs", "csv"), ("escape_traces", "csv"),
        ("batches", "csv"), ("study_meta", "csv"))}
    meta = dict(pd.read_csv(out / "spider_sosp_study_meta_quick.csv").itertuples(index=False))
    assert float(meta["wall_seconds"]) > 0 and meta["backend"] in ("fast", "reference")


def test_quick_runs_are_consistent(quick_run):
    study, out = quick_run
    runs = pd.read_csv(out / "spider_sosp_study_runs_quick.csv")
    replicates = study.QUICK_REPLICATES
    expected = replicates * (len(study.TAUS) * len(study.EPSILONS) * 2 + len(study.EPSILONS) * len(study.QUICK_SAMPLES))
    assert len(runs) == expected
    # one pass over disjoint batches: never more records than n, and the run halts only for lack of data
    assert (runs["records_used"] <= runs["n"]).all() and (runs["halt_reason"] == "data").all()
    finite = runs["epsilon"].apply(math.isfinite)
    assert (runs.loc[finite, "noise_std"] > 0).all() and (runs.loc[~finite, "noise_std"] == 0).all()
    # the best iterate's level is the minimum over the iterates, the last iterate is one of them
    assert (runs["best_level"] <= runs["last_level"] + 1e-15).all()

    escape = runs[runs["part"] == "escape"]
    exact = escape[(escape["tau"] == 0.0) & (escape["epsilon"] == math.inf)]
    stuck = exact[~exact["perturb"]]
    # COS-det without noise and without perturbation: the exact saddle is a fixed point (level φ² = 1, gap B = 2)
    assert (stuck["best_level"] == 1.0).all() and (stuck["last_gap"] == 2.0).all() and (~stuck["escaped"]).all()
    # the perturbation of line 11 is what moves it
    assert exact[exact["perturb"]]["escaped"].all()


def test_output_directory_is_not_overwritten_silently(quick_run):
    study, out = quick_run
    with pytest.raises(SystemExit) as excinfo:
        study.main(["--quick", "--workers", "1", "--quiet", "--out", str(out)])
    assert excinfo.value.code == 2
