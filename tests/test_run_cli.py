"""``dpref run`` (dpref/run.py over reference/runner.py): the record, both backends, replicates, the files
written with --output, what they must never contain (the secret seed, training-set quantities), the NOT PRIVATE
section on request, and usage errors (exit code 2, the message naming the option)."""

import json
import math

import mpmath
import numpy as np
import pandas as pd
import pytest

from dpref import cli
from dpref import run as run_module
from reference import runner
from reference.secrets import replicate_seeds

SMALL = ["--d", "8", "--n", "40", "--steps", "12", "--step-size", "0.05", "--clip", "3"]
SECRET = "987654321987654321"
#: Training-set quantities: never in the default output.
TRAINING_KEYS = ("clip_counts", "batch_sizes", "loss_evaluations", "gradient_evaluations", "clip_fraction",
                 "clip fraction", "nonfinite", "training_grad_norm_sq", "evaluations", "seconds")


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


def written(directory) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(directory.iterdir())}


# --- runs -------------------------------------------------------------------------------------------------


def test_dpzero_json_record(capsys):
    record = run_json(capsys, "run", "dpzero", *SMALL, "--epsilon", "2", "--delta", "1e-5", "--seed", "4")
    assert record["algorithm"] == "dpzero" and record["backend"] == "fast" and record["replicates"] == 1
    assert record["accountant"] == "lemma22" and record["relation"] == "replace_one"
    assert record["guarantee"] == "proven" and record["epsilon_claimed"] == 2.0
    assert record["sensitivity"] == pytest.approx(2 * 3 / 40, rel=1e-15)  # Δ = 2C/n
    assert record["noise_std"] == pytest.approx(lemma22_sigma(3, 40, 12, 2, 1e-5), rel=1e-14)
    assert record["epsilon_tight"] < 2.0  # Lemma 2.2 is conservative
    assert record["secret_seed_source"] == "os_entropy" and "entropy" in record["guarantee_condition"]
    held = runner.held_out_problem("quadratic", d=8, n=40, mode="harmonic")
    x0 = np.zeros(8)
    assert record["heldout_grad_norm_sq_initial"] == pytest.approx(float(np.sum(held.empirical_gradient(x0) ** 2)))
    assert record["heldout_objective_initial"] == pytest.approx(held.empirical_loss(np.zeros(8)))
    assert record["effective_rank"] == pytest.approx(sum(1 / i for i in range(1, 9)))  # H_8
    assert 0 <= record["output_index"][0] < 12 and record["seeds"] == [4]
    assert record["heldout_grad_norm_sq_mean_se"] is None  # one run: no standard error
    assert "nonprivate" not in record and "noise_seed" not in record
    for key in TRAINING_KEYS:
        assert key not in json.dumps(record), key


def test_reference_and_fast_backends_agree(capsys):
    args = ["run", "dpgd0", *SMALL, "--seed", "7", "--noise-seed", "11"]
    ref = run_json(capsys, *args, "--backend", "reference")
    fast = run_json(capsys, *args, "--backend", "fast")
    for key in ("heldout_objective_initial", "heldout_objective_mean", "heldout_objective_output",
                "heldout_objective_final", "heldout_grad_norm_sq_mean", "heldout_grad_norm_sq_final", "noise_std"):
        assert fast[key] == pytest.approx(ref[key], rel=1e-10), key
    assert fast["output_index"] == ref["output_index"] and fast["secret_seed_source"] == "user"


def test_without_noise_seed_two_runs_release_different_values(capsys, tmp_path):
    for name in ("a", "b"):
        code, _, err = run(capsys, "run", "dpzero", *SMALL, "--seed", "3", "--output", str(tmp_path / name))
        assert code == 0, err
    first, second = (pd.read_csv(tmp_path / name / "releases.csv") for name in ("a", "b"))
    assert list(first.columns) == ["replicate", "t", "release"] and len(first) == 12
    assert not np.array_equal(first["release"], second["release"])
    ledger = json.loads((tmp_path / "a" / "ledger.json").read_text())
    assert ledger["secret_seed_source"] == "os_entropy"


def test_dpgd_and_mezo(capsys):
    dpgd = run_json(capsys, "run", "dpgd", *SMALL)
    assert dpgd["algorithm"] == "dpgd" and dpgd["perturbation"] is None and dpgd["direction"] is None
    mezo = run_json(capsys, "run", "mezo", "--d", "8", "--n", "40", "--steps", "12", "--step-size", "0.05")
    assert mezo["algorithm"] == "mezo" and mezo["guarantee"] == "not private" and mezo["noise_std"] is None
    assert mezo["clip"] == "inf" and mezo["direction"] == "gaussian" and mezo["secret_seed_source"] is None


def test_gdp_exact_accountant(capsys):
    record = run_json(capsys, "run", "dpzero", *SMALL, "--accountant", "gdp_exact")
    assert record["accountant"] == "gdp_exact"
    assert record["epsilon_claimed"] == record["epsilon_tight"] <= 2.0
    assert record["epsilon_claimed"] == pytest.approx(2.0, rel=1e-6)
    assert record["noise_std"] < lemma22_sigma(3, 40, 12, 2, 1e-6)


def test_table_output(capsys):
    code, out, err = run(capsys, "run", "dpzero", *SMALL, "--problem", "subspace-logistic", "--k", "2", "--no-progress")
    assert code == 0, err
    for label in ("algorithm", "problem", "privacy", "epsilon", "secret seed", "held-out", "|grad F|^2(x_0)",
                  "E_tau |grad F|^2", "|grad F|^2(x_tau)", "F(x_T)", "subspace_logistic[k=2]"):
        assert label in out, label
    assert "NOT PRIVATE" not in out and "clip fraction" not in out
    assert err == ""  # no progress bar when stderr is not a terminal
    code, out, err = run(capsys, "run", "dpzero", *SMALL, "--include-nonprivate")
    assert code == 0, err
    public, private = out.split("NOT PRIVATE")
    assert "clip fraction" in private and "evaluations" in private and "clip fraction" not in public


def test_noise_seed_help(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert run_module.NOISE_SEED_HELP in out
    assert run_module.NOISE_SEED_HELP == ("secret seed (default: fresh OS entropy); the guarantee then rests on it "
                                          "staying secret; never written")


# --- files --------------------------------------------------------------------------------------------------


def test_output_files_with_replicates(capsys, tmp_path):
    record = run_json(capsys, "run", "dpzero", *SMALL, "--replicates", "3", "--seed", "5", "--noise-seed", SECRET,
                      "--output", str(tmp_path))
    assert record["output"] == str(tmp_path)
    files = written(tmp_path)
    assert set(files) == {"releases.csv", "trajectory.csv", "ledger.json", "manifest.json"}
    trajectory = pd.read_csv(tmp_path / "trajectory.csv")
    assert list(trajectory.columns) == ["replicate", "t", "heldout_objective", "heldout_grad_norm_sq"]
    assert len(trajectory) == 3 * 13 and sorted(trajectory["replicate"].unique()) == [0, 1, 2]
    releases = pd.read_csv(tmp_path / "releases.csv")
    assert list(releases.columns) == ["replicate", "t", "release"] and len(releases) == 3 * 12
    ledger = json.loads(files["ledger.json"])
    assert ledger["plan"]["noise_std"] == record["noise_std"] and ledger["plan"]["accountant"] == "lemma22"
    seeds = list(replicate_seeds(5, 3))
    assert [r["seed"] for r in ledger["runs"]] == seeds and seeds != [5, 6, 7]
    assert not set(seeds) & {5, 6, 7}
    assert ledger["secret_seed_source"] == "user" and ledger["runs"][0].keys() == {"replicate", "seed", "output_index"}
    manifest = json.loads(files["manifest.json"])
    assert manifest["command"].startswith("dpref run dpzero") and "--noise-seed <secret>" in manifest["command"]
    assert manifest["seeds"]["seed"] == seeds and manifest["seeds"]["data_seed"] == 0
    assert manifest["seeds"]["held_out_stream"] == ["dpref run", "quadratic", "held-out"]
    assert {"numpy", "scipy", "mpmath", "dpref", "python"} <= set(manifest["versions"])
    assert manifest["settings"]["replicates"] == 3 and "noise_seed" not in manifest["settings"]
    means = trajectory[trajectory["t"] < 12].groupby("replicate")["heldout_grad_norm_sq"].mean()
    assert record["heldout_grad_norm_sq_mean"] == pytest.approx(means.mean(), rel=1e-12)
    assert record["heldout_grad_norm_sq_mean_se"] == pytest.approx(means.std(ddof=1) / math.sqrt(3), rel=1e-9)


@pytest.mark.parametrize("spelling", [["--noise-seed", SECRET], [f"--noise-seed={SECRET}"], ["--noise", SECRET]])
def test_the_secret_seed_is_written_nowhere(capsys, tmp_path, spelling):
    for fmt in ("json", "table"):
        out_dir = tmp_path / fmt
        code, out, err = run(capsys, "run", "dpzero", *SMALL, "--replicates", "2", *spelling, "--include-nonprivate",
                             "--output", str(out_dir), "--format", fmt)
        assert code == 0, err
        assert SECRET not in out and SECRET not in err
        files = written(out_dir)
        assert "nonprivate_diagnostics.json" in files
        for name, text in files.items():
            assert SECRET not in text and hex(int(SECRET))[2:] not in text, name
        assert "<secret>" in json.loads(files["manifest.json"])["command"]


def test_default_files_hold_no_training_quantity(capsys, tmp_path):
    code, out, err = run(capsys, "run", "dpzero", *SMALL, "--batching", "poisson", "--batch-size", "10",
                         "--output", str(tmp_path), "--format", "json")
    assert code == 0, err
    files = written(tmp_path)
    assert "nonprivate_diagnostics.json" not in files
    for name, text in {**files, "stdout": out}.items():
        for key in TRAINING_KEYS:
            assert key not in text, (name, key)


def test_include_nonprivate(capsys, tmp_path):
    record = run_json(capsys, "run", "dpzero", *SMALL, "--batching", "shuffle", "--batch-size", "10",
                      "--include-nonprivate", "--output", str(tmp_path))
    nonprivate = record["nonprivate"]
    assert nonprivate["warning"].startswith("NOT PRIVATE")
    assert nonprivate["loss_evaluations"] == 2 * 10 * 12 and nonprivate["gradient_evaluations"] == 0
    assert 0 <= nonprivate["clip_fraction"] <= 1
    diagnostics = json.loads((tmp_path / "nonprivate_diagnostics.json").read_text())
    assert diagnostics["warning"].startswith("NOT PRIVATE")
    assert diagnostics["runs"][0]["batch_sizes"] == [10] * 12 and len(diagnostics["runs"][0]["clip_counts"]) == 12
    assert len(diagnostics["runs"][0]["training_grad_norm_sq"]) == 13
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert "nonprivate" not in manifest["summary"]  # the manifest stays publishable
    for name in ("releases.csv", "trajectory.csv", "ledger.json", "manifest.json"):
        assert "clip_counts" not in (tmp_path / name).read_text()


def test_shuffle_batching(capsys):
    record = run_json(capsys, "run", "dpzero", *SMALL, "--batching", "shuffle", "--batch-size", "10")
    assert record["accountant"] == "gdp_participation" and record["relation"] == "replace_one"
    assert record["sensitivity"] == pytest.approx(2 * 3 / 10, rel=1e-15)  # 2C/B: the record keeps its batch
    assert record["epsilon_claimed"] == pytest.approx(2.0, rel=1e-6) and record["epsilon_claimed"] <= 2.0


def test_the_cli_is_thin():
    assert not hasattr(run_module, "run_algorithm") or run_module.run_algorithm is runner.run_algorithm
    assert not hasattr(run_module, "build_problem")


# --- usage errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["foo"], "ALGORITHM"),
        (["dpzero", "--d", "0"], "--d"),
        (["dpzero", "--n", "0"], "--n"),
        (["dpzero", "--held-out-n", "0"], "--held-out-n"),
        (["dpzero", "--steps", "0"], "--steps"),
        (["dpzero", "--step-size", "-1"], "--step-size"),
        (["dpzero", "--step-size", "nan"], "--step-size"),
        (["dpzero", "--perturbation", "0"], "--perturbation"),
        (["dpzero", "--clip", "inf"], "--clip"),
        (["dpzero", "--clip", "-2"], "--clip"),
        (["dpzero", "--epsilon", "0"], "--epsilon"),
        (["dpzero", "--delta", "1"], "--delta"),
        (["dpzero", "--seed", "-1"], "--seed"),
        (["dpzero", "--noise-seed", "-5"], "--noise-seed"),
        (["dpzero", "--seed", "17", "--noise-seed", "17"], "noise_seed"),
        (["dpzero", "--data-seed", "17", "--noise-seed", "17"], "data_seed"),
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
        (["mezo", "--noise-seed", "5"], "--noise-seed"),
        (["dpgd", "--perturbation", "1e-3"], "--perturbation"),
        (["dpgd", "--direction", "sphere"], "--direction"),
    ],
)
def test_usage_errors_exit_2_and_name_the_option(capsys, argv, fragment):
    code, out, err = run(capsys, "run", *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("dpref run: error:") and fragment in err
    if "--noise-seed" in argv:  # the secret is not repeated in the message
        assert argv[argv.index("--noise-seed") + 1] not in err
