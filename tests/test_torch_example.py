"""Smoke test of examples/dpzero_torch_finetune.py (dpzero Algorithm 2 on a small transformer through the torch
backend): the example's main with tiny settings in this process, its two files, and its refusals."""

from __future__ import annotations

import csv
import importlib.util
import math
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("matplotlib")

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "dpzero_torch_finetune.py"
# full batch: its plan is exact Gaussian-DP composition (milliseconds), where the Poisson RDP calibration takes ~20 s
TINY = ["--steps", "4", "--pretrain-steps", "3", "--eval-every", "2", "--batching", "full", "--private-records", "256",
        "--quiet"]


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("dpzero_torch_finetune", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tiny_run(example, tmp_path_factory):
    out = tmp_path_factory.mktemp("torch_example")
    assert example.main(["--out", str(out), *TINY]) == 0
    return out


def test_tiny_run_writes_the_plot_and_the_curves(example, tiny_run):
    names = {p.name for p in tiny_run.iterdir() if not p.name.startswith(".")}
    assert names == set(example.FILES)
    assert (tiny_run / "dpzero_torch_finetune.png").stat().st_size > 10_000
    with open(tiny_run / "dpzero_torch_finetune.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    steps = {method: [int(r["step"]) for r in rows if r["method"] == method] for method in ("DPZero", "MeZO")}
    assert steps == {"DPZero": [0, 2, 4], "MeZO": [0, 2, 4]}  # t = 0, every --eval-every steps, and T
    assert all(0.0 <= float(r["public_test_accuracy"]) <= 1.0 for r in rows)
    # both fine-tunings start from the same pre-trained model, whose accuracy is the no-fine-tuning line
    start = {r["method"]: float(r["public_test_accuracy"]) for r in rows if r["step"] == "0"}
    assert start["DPZero"] == start["MeZO"] == start["no fine-tuning"]
    spent = {float(r["epsilon"]) for r in rows if r["method"] == "DPZero"}
    assert len(spent) == 1 and 0 < spent.pop() <= 2.0 * (1 + 1e-12)  # the plan certifies at most the target
    assert {r["epsilon"] for r in rows if r["method"] == "MeZO"} == {"inf"}


def test_the_trace_reads_only_the_public_test_set(example, monkeypatch):
    """The curve's values are accuracies on the set the trace was given, at t = 0, every k steps and at T."""
    seen = []
    monkeypatch.setattr(example, "accuracy", lambda model, data: seen.append(data) or 0.5)
    trace = example.PublicTrace(("public tokens", "public labels"), every=3, steps=7)
    values = [trace(None) for _ in range(8)]  # the backend's calls: t = 0, then after each of the 7 steps
    assert [t for t, _ in trace.records] == [0, 3, 6, 7]
    assert seen == [("public tokens", "public labels")] * 4 and values.count(0.5) == 4


def _refused(example, capsys, argv):
    with pytest.raises(SystemExit) as excinfo:
        example.main(argv)
    out, err = capsys.readouterr()
    assert excinfo.value.code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpzero_torch_finetune.py: error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_an_existing_output_file_is_refused_without_overwrite(example, tiny_run, capsys):
    line = _refused(example, capsys, ["--out", str(tiny_run), *TINY])
    assert "dpzero_torch_finetune.png and dpzero_torch_finetune.csv already exist" in line and "--overwrite" in line


def test_one_existing_output_file_is_enough_to_refuse(example, tmp_path, capsys):
    (tmp_path / "dpzero_torch_finetune.csv").write_text("kept")
    line = _refused(example, capsys, ["--out", str(tmp_path), *TINY])
    assert "dpzero_torch_finetune.csv already exists" in line
    assert (tmp_path / "dpzero_torch_finetune.csv").read_text() == "kept"


@pytest.mark.parametrize("argv, names", [
    (["--steps", "0"], "--steps"),
    (["--steps", "ten"], "--steps"),
    (["--epsilon", "0"], "--epsilon"),
    (["--epsilon", "nan"], "--epsilon"),
    (["--eval-every", "50", "--steps", "10"], "--eval-every"),
    (["--private-records", "10"], "--private-records"),
    (["--batching", "shuffle"], "--batching"),
    (["--threads", "0"], "--threads"),
    (["--no-such-option"], "unrecognized arguments"),
])
def test_bad_arguments_are_refused_in_one_line(example, tmp_path, capsys, argv, names):
    line = _refused(example, capsys, ["--out", str(tmp_path / "new"), *argv])
    assert names in line
    assert not (tmp_path / "new").exists()  # refused before anything is created


def test_missing_out_and_a_file_as_out_are_refused(example, tmp_path, capsys):
    assert "--out" in _refused(example, capsys, ["--steps", "3"])
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert "--out" in _refused(example, capsys, ["--out", str(blocker / "sub"), *TINY])


def test_generated_reviews_follow_the_documented_rule(example):
    """k+ ≠ k−; the label is [k+ > k−] but for the flipped fraction; target-domain reviews carry the
    boilerplate."""
    import numpy as np

    rng = np.random.default_rng(0)
    n = 2000
    tokens, labels = example.make_reviews(n, rng, boilerplate=example.BOILERPLATE)
    tokens = tokens.numpy()
    k_pos = np.isin(tokens, example.POSITIVE).sum(axis=1)
    k_neg = np.isin(tokens, example.NEGATIVE).sum(axis=1) - example.BOILERPLATE
    assert tokens.shape == (n, example.LENGTH) and (tokens >= 8).all() and (tokens < example.VOCAB).all()
    assert (k_pos != k_neg).all() and (k_pos <= 5).all() and (k_neg >= 0).all() and (k_neg <= 5).all()
    flipped = float(np.mean(labels.numpy() != (k_pos > k_neg)))
    # binomial(n, LABEL_NOISE): a 6-standard-error band (two-sided probability below 1e-8 of failing by chance)
    se = math.sqrt(example.LABEL_NOISE * (1 - example.LABEL_NOISE) / n)
    assert abs(flipped - example.LABEL_NOISE) < 6 * se
