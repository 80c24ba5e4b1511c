"""Smoke test of examples/bgm21_study.py in --quick mode (every part of the study, 2 replicates, in this process)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "bgm21_study.py"


def _load_study():
    spec = importlib.util.spec_from_file_location("bgm21_study", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    study = _load_study()
    out = tmp_path_factory.mktemp("bgm21_study")
    assert study.main(["--quick", "--workers", "1", "--quiet", "--out", str(out)]) == 0
    return study, out


def test_quick_mode_writes_every_file(quick_run):
    _, out = quick_run
    names = {p.name for p in out.iterdir() if not p.name.startswith(".")}
    assert names == {f"bgm21_{stem}_quick.{ext}" for stem, ext in (
        ("convex", "png"), ("nonconvex", "png"), ("study", "csv"), ("study_runs", "csv"), ("study_slopes", "csv"),
        ("study_meta", "csv"))}
    meta = dict(pd.read_csv(out / "bgm21_study_meta_quick.csv").itertuples(index=False))
    assert float(meta["wall_seconds"]) > 0 and meta["sfw_backend"] in ("fast", "reference")
    for figure in ("convex", "nonconvex"):
        assert (out / f"bgm21_{figure}_quick.png").stat().st_size > 10_000


def test_quick_runs_cover_every_cell_with_finite_values(quick_run):
    study, out = quick_run
    runs = pd.read_csv(out / "bgm21_study_runs_quick.csv", keep_default_na=False, na_values=[""])
    expected = study.QUICK_REPLICATES * sum(len(values) * len(options) for (_, (values, options)) in
                                            study.GRIDS.values())
    assert len(runs) == expected
    assert set(runs["part"]) == set(study.PARTS)
    for column in ("part", "n", "d", "epsilon", "replicate", "measure_mean", "measure_output", "measure_start",
                   "rate", "certified_epsilon", "candidates", "backend", "seconds"):
        assert column in runs.columns, column
    values = runs[["measure_mean", "measure_output", "measure_start", "rate", "certified_epsilon"]].to_numpy(float)
    assert np.all(np.isfinite(values))
    # the measures are nonnegative (excess risks, Frank-Wolfe gaps, prox distances) and the rate is positive
    assert (runs[["measure_mean", "measure_output", "measure_start"]] >= 0).all().all() and (runs["rate"] > 0).all()
    # single-output algorithms have one candidate; the mean over candidates is then the output's measure
    single = runs[runs["part"].isin(["thm5", "thm6"])]
    assert (single["candidates"] == 1).all() and (single["measure_mean"] == single["measure_output"]).all()
    # every run with a default noise scale certifies at most its target; the printed TTZ15 scale does not (bgm21.E28)
    default = runs[runs["scale"] != "ttz15"]
    assert (default["certified_epsilon"] <= default["epsilon"] * (1 + 1e-12)).all()
    ttz = runs[runs["scale"] == "ttz15"]
    assert len(ttz) and (ttz["certified_epsilon"] > ttz["epsilon"]).all()


def test_quick_summary_and_slopes(quick_run):
    study, out = quick_run
    table = pd.read_csv(out / "bgm21_study_quick.csv", keep_default_na=False, na_values=[""])
    assert (table["replicates"] == study.QUICK_REPLICATES).all()
    assert np.all(np.isfinite(table[["measure_mean_mean", "measure_mean_se", "rate"]].to_numpy(float)))
    slopes = pd.read_csv(out / "bgm21_study_slopes_quick.csv", keep_default_na=False, na_values=[""])
    assert len(slopes) == sum(len(options) for (_, (_, options)) in study.GRIDS.values())
    assert np.all(np.isfinite(slopes[["slope", "slope_se", "rate_slope"]].to_numpy(float)))
    # the rate's own fitted slope in n is negative for every theorem but Theorem 6's (fitted against ln J: positive)
    in_n = slopes[slopes["part"] != "thm6"]
    assert (in_n["rate_slope"] < 0).all() and (slopes[slopes["part"] == "thm6"]["rate_slope"] > 0).all()


def test_output_directory_is_not_overwritten_silently(quick_run):
    study, out = quick_run
    with pytest.raises(SystemExit) as excinfo:
        study.main(["--quick", "--workers", "1", "--quiet", "--out", str(out)])
    assert excinfo.value.code == 2
