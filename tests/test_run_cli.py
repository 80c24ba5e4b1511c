"""``dpref run`` (dpref/run.py): the problems, the traced metric, both backends, replicates, the files written
with --output, and usage errors (exit code 2, the message naming the option)."""

import json
import math

import mpmath
import numpy as np
import pandas as pd
import pytest

from dpref import cli
from dpref import run as run_module
from reference.algorithms import dpzero as reference_dpzero
from reference.objectives import EffectiveRankQuadratic
from reference.objectives_dpzero import SubspaceLogistic
from reference.rng import Streams

SMALL = ["--d", "8", "--n", "40", "--steps", "12", "--step-size", "0.05", "--clip", "3"]


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def lemma22_sigma(clip, n, steps, epsilon, delta):
    """σ = 4C√(2T log(e + ε/δ))/(nε) (dpzero Alg 1/2 line 5, Lemma 2.2 with Δ = 2C/n), in mpmath."""
    c, eps, dl = mpmath.mpf(clip), mpmath.mpf(epsilon), mpmath.mpf(delta)
    return float(4 * c * mpmath.sqrt(2 * steps * mpmath.log(mpmath.e + eps / dl)) / (n * eps))


# --- problems and the traced metric ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["identity", "sqrt", "harmonic"])
def test_quadratic_problem_and_gradient_norm(mode):
    objective = run_module.build_problem("quadratic", d=6, n=30, mode=mode, data_seed=3)
    expected = EffectiveRankQuadratic(6, 30, mode, Streams(3).generator("dpref run", "quadratic"))
    np.testing.assert_array_equal(objective.data, expected.data)
    metric = run_module.squared_gradient_norm(objective)
    points = np.random.default_rng(0).normal(size=(4, 6))
    for x in points:  # agrees with the objective's own ∇F
        assert metric(x) == pytest.approx(float(np.sum(objective.empirical_gradient(x) ** 2)), rel=1e-12)
    np.testing.assert_allclose(metric(points), [metric(x) for x in points], rtol=1e-15)


def test_subspace_logistic_problem_and_gradient_norm():
    objective = run_module.build_problem("subspace-logistic", d=7, n=25, k=2, data_seed=1)
    assert isinstance(objective, SubspaceLogistic) and objective.k == 2 and objective.effective_rank <= 2 + 1e-12
    metric = run_module.squared_gradient_norm(objective)
    points = np.random.default_rng(1).normal(size=(3, 7))
    for x in points:
        assert metric(x) == pytest.approx(float(np.sum(objective.empirical_gradient(x) ** 2)), rel=1e-12)
    np.testing.assert_allclose(metric(points), [metric(x) for x in points], rtol=1e-15)


# --- runs -------------------------------------------------------------------------------------------------


def test_dpzero_json_record(capsys):
    record = run_json(capsys, "run", "dpzero", *SMALL, "--epsilon", "2", "--delta", "1e-5", "--seed", "4")
    assert record["algorithm"] == "dpzero" and record["backend"] == "fast" and record["replicates"] == 1
    assert record["accountant"] == "lemma22" and record["relation"] == "replace_one"
    assert record["guarantee"] == "proven" and record["epsilon_claimed"] == 2.0
    assert record["sensitivity"] == pytest.approx(2 * 3 / 40, rel=1e-15)  # Δ = 2C/n
    assert record["noise_std"] == pytest.approx(lemma22_sigma(3, 40, 12, 2, 1e-5), rel=1e-14)
    assert record["epsilon_tight"] < 2.0  # Lemma 2.2 is conservative (dpzero.md §4)
    assert record["loss_evaluations"] == 2 * 40 * 12 and record["gradient_evaluations"] == 0
    objective = run_module.build_problem("quadratic", d=8, n=40, mode="harmonic")
    assert record["grad_norm_sq_initial"] == pytest.approx(float(np.sum(objective.empirical_gradient(np.zeros(8)) ** 2)))
    assert record["effective_rank"] == pytest.approx(sum(1 / i for i in range(1, 9)))  # H_8
    assert 0 <= record["output_index"][0] < 12
    assert record["grad_norm_sq_mean_se"] is None  # one run: no standard error


def test_reference_and_fast_backends_agree(capsys):
    args = ["run", "dpgd0", *SMALL, "--seed", "7", "--noise-seed", "11"]
    ref = run_json(capsys, *args, "--backend", "reference")
    fast = run_json(capsys, *args, "--backend", "fast")
    for key in ("grad_norm_sq_initial", "grad_norm_sq_mean", "grad_norm_sq_output", "grad_norm_sq_final",
                "clip_fraction", "noise_std"):
        assert fast[key] == pytest.approx(ref[key], rel=1e-10), key
    assert fast["output_index"] == ref["output_index"]


def test_run_matches_a_direct_call_of_the_reference():
    outcome = run_module.run_algorithm("dpzero", d=5, n=20, steps=8, step_size=0.1, clip=2.0, seed=3, noise_seed=9,
                                       backend="reference", mode="sqrt")
    objective = run_module.build_problem("quadratic", d=5, n=20, mode="sqrt")
    direct = reference_dpzero.dpzero(objective.loss, objective.data, np.zeros(5), steps=8, step_size=0.1,
                                     perturbation=1e-4, clip_threshold=2.0, epsilon=2.0, delta=1e-6, seed=3,
                                     noise_seed=9, record_trajectory=True)
    metric = run_module.squared_gradient_norm(objective)
    np.testing.assert_array_equal(outcome.traces[0], [metric(x) for x in direct.trajectory])
    assert outcome.result.output_index == direct.output_index


def test_dpgd_and_mezo(capsys):
    dpgd = run_json(capsys, "run", "dpgd", *SMALL)
    assert dpgd["algorithm"] == "dpgd" and dpgd["perturbation"] is None and dpgd["direction"] is None
    assert dpgd["gradient_evaluations"] == 40 * 12 and dpgd["loss_evaluations"] == 0
    mezo = run_json(capsys, "run", "mezo", "--d", "8", "--n", "40", "--steps", "12", "--step-size", "0.05")
    assert mezo["algorithm"] == "mezo" and mezo["guarantee"] == "not private" and mezo["noise_std"] is None
    assert mezo["clip"] == "inf" and mezo["clip_fraction"] == 0.0 and mezo["direction"] == "gaussian"


def test_gdp_exact_accountant(capsys):
    record = run_json(capsys, "run", "dpzero", *SMALL, "--accountant", "gdp_exact")
    assert record["accountant"] == "gdp_exact"
    assert record["epsilon_claimed"] == record["epsilon_tight"] <= 2.0
    assert record["epsilon_claimed"] == pytest.approx(2.0, rel=1e-6)
    assert record["noise_std"] < lemma22_sigma(3, 40, 12, 2, 1e-6)


def test_table_output(capsys):
    code, out, err = run(capsys, "run", "dpzero", *SMALL, "--problem", "subspace-logistic", "--k", "2", "--no-progress")
    assert code == 0, err
    for label in ("algorithm", "problem", "privacy", "epsilon", "|grad F(x_0)|^2", "E_tau |grad F|^2",
                  "|grad F(x_tau)|^2", "clip fraction", "subspace_logistic[k=2]"):
        assert label in out
    assert err == ""  # no progress bar when stderr is not a terminal


def test_output_files_with_replicates(capsys, tmp_path):
    record = run_json(capsys, "run", "dpzero", *SMALL, "--replicates", "3", "--seed", "5", "--noise-seed", "20",
                      "--output", str(tmp_path))
    assert record["output"] == str(tmp_path)
    trajectory = pd.read_csv(tmp_path / "trajectory.csv")
    assert list(trajectory.columns) == ["replicate", "t", "grad_norm_sq"]
    assert len(trajectory) == 3 * 13 and sorted(trajectory["replicate"].unique()) == [0, 1, 2]
    ledger = json.loads((tmp_path / "ledger.json").read_text())
    assert ledger["plan"]["noise_std"] == record["noise_std"] and ledger["plan"]["accountant"] == "lemma22"
    assert [r["seed"] for r in ledger["runs"]] == [5, 6, 7] and [r["noise_seed"] for r in ledger["runs"]] == [20, 21, 22]
    assert all(len(r["clip_counts"]) == 12 and r["batch_sizes"] == [40] * 12 for r in ledger["runs"])
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["command"].startswith("dpref run dpzero")
    assert manifest["seeds"]["seed"] == [5, 6, 7] and manifest["seeds"]["data_seed"] == 0
    assert {"numpy", "scipy", "mpmath", "dpref", "python"} <= set(manifest["versions"])
    assert manifest["settings"]["replicates"] == 3
    # replicate r is the single run with seed 5 + r, noise seed 20 + r
    single = run_json(capsys, "run", "dpzero", *SMALL, "--seed", "6", "--noise-seed", "21", "--backend", "reference")
    second = trajectory[trajectory["replicate"] == 1]["grad_norm_sq"].to_numpy()
    assert second[0] == pytest.approx(single["grad_norm_sq_initial"], rel=1e-12)
    assert second[-1] == pytest.approx(single["grad_norm_sq_final"], rel=1e-10)
    assert np.mean(second[:-1]) == pytest.approx(single["grad_norm_sq_mean"], rel=1e-10)
    means = trajectory[trajectory["t"] < 12].groupby("replicate")["grad_norm_sq"].mean()
    assert record["grad_norm_sq_mean"] == pytest.approx(means.mean(), rel=1e-12)
    assert record["grad_norm_sq_mean_se"] == pytest.approx(means.std(ddof=1) / math.sqrt(3), rel=1e-9)


def test_shuffle_batching(capsys):
    record = run_json(capsys, "run", "dpzero", *SMALL, "--batching", "shuffle", "--batch-size", "10")
    assert record["accountant"] == "gdp_participation" and record["relation"] == "replace_one"
    assert record["sensitivity"] == pytest.approx(2 * 3 / 10, rel=1e-15)  # 2C/B: the record keeps its batch
    assert record["loss_evaluations"] == 2 * 10 * 12  # B samples per step
    assert record["epsilon_claimed"] == pytest.approx(2.0, rel=1e-6) and record["epsilon_claimed"] <= 2.0


# --- usage errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["foo"], "ALGORITHM"),
        (["dpzero", "--d", "0"], "--d"),
        (["dpzero", "--n", "0"], "--n"),
        (["dpzero", "--steps", "0"], "--steps"),
        (["dpzero", "--step-size", "-1"], "--step-size"),
        (["dpzero", "--step-size", "nan"], "--step-size"),
        (["dpzero", "--perturbation", "0"], "--perturbation"),
        (["dpzero", "--clip", "inf"], "--clip"),
        (["dpzero", "--clip", "-2"], "--clip"),
        (["dpzero", "--epsilon", "0"], "--epsilon"),
        (["dpzero", "--delta", "1"], "--delta"),
        (["dpzero", "--seed", "-1"], "--seed"),
        (["dpzero", "--problem", "cubic"], "--problem"),
        (["dpzero", "--mode", "cubic"], "--mode"),
        (["dpzero", "--problem", "subspace-logistic", "--mode", "sqrt"], "--mode"),
        (["dpzero", "--k", "2"], "--k"),
        (["dpzero", "--problem", "subspace-logistic", "--d", "3", "--k", "5"], "--k"),
        (["dpzero", "--batching", "poisson"], "--batch-size"),
        (["dpzero", "--batch-size", "5"], "--batch-size"),
        (["dpzero", "--batching", "shuffle", "--batch-size", "5000"], "--batch-size"),
        (["dpzero", "--accountant", "rdp"], "--accountant"),
        (["dpzero", "--sampling-probability", "0.1"], "--sampling-probability"),
        (["dpzero", "--batching", "poisson", "--batch-size", "5", "--sampling-probability", "1.5"],
         "--sampling-probability"),
        (["dpzero", "--direction", "unit"], "--direction"),
        (["dpzero", "--backend", "gpu"], "--backend"),
        (["dpzero", "--replicates", "2", "--backend", "reference"], "--replicates"),
        (["dpzero", "--replicates", "0"], "--replicates"),
        (["dpzero", "--format", "xml"], "--format"),
        (["mezo", "--epsilon", "2"], "--epsilon"),
        (["mezo", "--accountant", "lemma22"], "--accountant"),
        (["dpgd", "--perturbation", "1e-3"], "--perturbation"),
        (["dpgd", "--direction", "sphere"], "--direction"),
    ],
)
def test_usage_errors_exit_2_and_name_the_option(capsys, argv, fragment):
    code, out, err = run(capsys, "run", *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("dpref run: error:") and fragment in err
