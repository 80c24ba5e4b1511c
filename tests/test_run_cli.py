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
from cli_refusals import refused

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


# --- hostile input: one line on stderr, exit 2, the option named, no traceback ------------------------------


HUGE = [
    (["dpzero", "--problem", "quadratic", "--d", "100000000"], ["--d 100000000", "--n 1000"]),
    (["dpzero", "--replicates", "100000000"], ["--replicates 100000000"]),
    (["dpzero", "--steps", "1000000000000"], ["--steps 1000000000000"]),
    (["dpzero", "--n", "1000000000"], ["--n 1000000000"]),
    (["dpzero", "--held-out-n", "1000000000000"], ["--held-out-n 1000000000000"]),
    (["dpgd0", "--d", "100000", "--steps", "100000"], ["--d 100000", "--steps 100000"]),
    (["dpzero", "--problem", "subspace-logistic", "--d", "100000000"], ["--d 100000000"]),
    (["dpzero", "--d", str(10**30), "--n", str(10**30), "--steps", str(10**20), "--replicates", str(10**20)],
     ["--d", "--n"]),
]


@pytest.mark.parametrize("argv, options", HUGE)
def test_a_run_too_large_for_memory_is_refused_at_once(capsys, argv, options):
    import time
    import tracemalloc

    tracemalloc.start()
    start = time.perf_counter()
    try:
        line = refused(capsys, *argv)
    finally:
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert seconds < 1.0 and peak < 20 * 2**20  # instant, nothing allocated
    assert "needs an estimated" in line and "of memory, more than" in line and "--memory-limit" in line
    for option in options:
        assert option in line, line


def test_memory_limit_option(capsys, monkeypatch):
    line = refused(capsys, "dpzero", *SMALL, "--memory-limit", "1K")
    assert "more than --memory-limit 1 KiB" in line
    # the default limit is the memory available now; --memory-limit overrides it
    monkeypatch.setattr(runner, "available_memory", lambda: (2**20, "available memory"))
    line = refused(capsys, "dpzero", *SMALL)
    assert "more than the 1 MiB of available memory (--memory-limit overrides)" in line
    record = run_json(capsys, "run", "dpzero", *SMALL, "--memory-limit", "2G")
    assert record["algorithm"] == "dpzero"
    monkeypatch.setattr(runner, "available_memory", lambda: (None, "unknown"))  # no reading: no limit
    assert run_json(capsys, "run", "dpzero", *SMALL)["algorithm"] == "dpzero"


@pytest.mark.parametrize("text", ["lots", "0", "-5", "1e400", "12Q", ""])
def test_malformed_memory_limit(capsys, text):
    assert "--memory-limit" in refused(capsys, "dpzero", *SMALL, f"--memory-limit={text}")


@pytest.mark.parametrize("text, size", [("1", 1), ("512", 512), ("1K", 1024), ("1.5k", 1536), ("16G", 16 * 2**30),
                                        ("2MiB", 2 * 2**20), ("1 GB", 2**30), ("1T", 2**40)])
def test_parse_size(text, size):
    assert run_module.parse_size(text) == size


def test_memory_is_checked_before_the_output_directory_is_made(capsys, tmp_path):
    target = tmp_path / "out"
    refused(capsys, "dpzero", "--d", "100000000", "--output", str(target))
    assert not target.exists()


DIVERGING = [
    (["dpzero", "--problem", "quadratic", "--step-size", "1e300"],
     ["--step-size 1e+300", "--clip 10", "--perturbation 0.0001"]),
    (["dpzero", "--step-size", "1e300", "--backend", "reference"], ["--step-size 1e+300", "--clip 10"]),
    (["dpgd0", "--step-size", "1e300", "--replicates", "3"], ["--step-size 1e+300", "replicate 0"]),
    (["dpgd", "--step-size", "1e300"], ["--step-size 1e+300", "--clip 10"]),
    (["dpgd0", "--step-size", "1e308", "--clip", "1e308"], ["--step-size 1e+308", "--clip 1e+308", "iterate x_1"]),
    (["mezo", "--step-size", "1e200"], ["--step-size 1e+200", "--clip inf", "set a finite --clip"]),
    (["dpzero", "--epsilon", "1e-300"], ["--step-size 0.01", "--epsilon 1e-300", "raise --epsilon"]),
    (["dpzero", "--problem", "subspace-logistic", "--step-size", "1e308", "--clip", "1e308"], ["--step-size 1e+308"]),
]


@pytest.mark.parametrize("argv, fragments", DIVERGING)
def test_a_diverging_run_is_one_line_naming_the_step_size(capsys, argv, fragments):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = refused(capsys, *argv, "--d", "8", "--n", "40", "--steps", "12")
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]
    assert line.startswith("dpref run: error: the run diverged") and "after step 1 of 12" in line, line
    assert "reduce --step-size" in line
    for fragment in fragments:
        assert fragment in line, line
    if argv[0] == "dpgd":
        assert "--perturbation" not in line  # first-order: no finite differences


def test_a_diverged_run_writes_nothing(capsys, tmp_path):
    refused(capsys, "dpzero", *SMALL, "--step-size", "1e300", "--output", str(tmp_path / "out"))
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["dpzero", "--d", "abc"], "--d"),
        (["dpzero", "--steps", "1e9"], "--steps"),
        (["dpzero", "--step-size", "fast"], "--step-size"),
        ([], "ALGORITHM"),
        (["dpzero", "--foo", "3"], "--foo"),
        (["dpzero", "extra"], "extra"),
        (["dpzero", "--d"], "--d"),
        (["dpzero", "--batching", "poisson", "--batch-size", "10", "--sampling-probability", "0.1"], "--held-out-n"),
    ],
)
def test_parser_refusals_are_one_line(capsys, argv, fragment):
    line = refused(capsys, *argv)
    assert fragment in line and "usage:" not in line


@pytest.mark.parametrize("argv", [["--noise-seed", "98765x4321"], ["--noise-sed", "987654321"],
                                  ["--noise-seed=98765x4321"]])
def test_parser_refusals_do_not_repeat_a_secret(capsys, argv):
    line = refused(capsys, "dpzero", *argv)
    assert "98765" not in line and "noise" in line


def test_usage_error_is_one_line(capsys):
    for argv in (["foo"], ["dpzero", "--d", "0"], ["dpzero", "--clip", "inf"], ["mezo", "--epsilon", "2"]):
        refused(capsys, *argv)


def test_add_remove_runs_need_an_explicit_held_out_size(capsys):
    record = run_json(capsys, "run", "dpzero", *SMALL, "--batching", "poisson", "--batch-size", "10",
                      "--sampling-probability", "0.25", "--held-out-n", "30")
    assert record["relation"] == "add_remove" and record["n"] is None and record["held_out_n"] == 30
    assert "40" not in json.dumps({k: v for k, v in record.items() if k in ("n", "held_out_n", "diagnostics")})


# --- progress ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("quiet", [[], ["--quiet"], ["-q"], ["--no-progress"]])
def test_progress_lines_on_stderr_unless_quiet(capsys, monkeypatch, quiet):
    monkeypatch.setattr(runner, "PROGRESS_DELAY", 0.0)  # every run counts as long
    code, out, err = run(capsys, "run", "dpzero", *SMALL, "--replicates", "2", "--format", "json", *quiet)
    assert code == 0, err
    json.loads(out)  # stdout holds only the record
    if quiet:
        assert err == ""
    else:  # stderr is not a terminal here: whole lines, the last one with the final count
        lines = err.splitlines()
        assert lines and all(line.startswith("dpref run:") for line in lines)
        assert "26/26" in lines[-1] and "\r" not in err


def test_short_runs_print_no_progress(capsys):
    code, _, err = run(capsys, "run", "dpzero", *SMALL)
    assert code == 0 and err == ""


def test_quiet_is_documented_and_no_progress_is_hidden(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = capsys.readouterr().out
    assert "--quiet" in out and "--memory-limit" in out and "--no-progress" not in out


# --- the objective value and the stationarity measure, on held-out data ----------------------------------------


def test_record_reports_objective_and_stationarity_on_held_out_data(capsys, tmp_path):
    record = run_json(capsys, "run", "dpzero", *SMALL, "--held-out-n", "25", "--seed", "2", "--output", str(tmp_path))
    diagnostics = record["diagnostics"]
    assert diagnostics["rows"] == 25 and diagnostics["data"].startswith("held-out set")
    assert "never the training data" in diagnostics["data"]
    assert "mean loss" in diagnostics["objective"] and "gradient norm" in diagnostics["stationarity"]
    for key in ("heldout_objective_output", "heldout_objective_final", "heldout_grad_norm_sq_output",
                "heldout_grad_norm_sq_final"):
        assert math.isfinite(record[key]), key
    trajectory = pd.read_csv(tmp_path / "trajectory.csv")
    tau = record["output_index"][0]
    assert record["heldout_objective_output"] == trajectory["heldout_objective"][tau]
    assert record["heldout_grad_norm_sq_final"] == trajectory["heldout_grad_norm_sq"].iloc[-1]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["summary"]["diagnostics"] == diagnostics
    assert manifest["summary"]["heldout_objective_output"] == record["heldout_objective_output"]
    code, out, err = run(capsys, "run", "dpzero", *SMALL, "--held-out-n", "25")
    assert code == 0, err
    rows = {line.split("  ")[0].strip(): line for line in out.splitlines()}
    assert "25 rows" in rows["held-out set"] and "never on the training data" in rows["held-out set"]
    assert "mean loss over the held-out rows" in rows["objective"]
    assert "held-out rows" in rows["stationarity"]
    assert "released point" in rows["F(x_tau)"] and "final iterate" in rows["F(x_T)"]
    assert "released point" in rows["|grad F|^2(x_tau)"]


def test_noise_is_named_only_when_it_outweighs_the_clipped_mean(capsys):
    line = refused(capsys, "dpgd", *SMALL[:6], "--step-size", "1e300")
    assert "--epsilon" not in line and "noise" not in line
    line = refused(capsys, "dpgd", *SMALL[:6], "--epsilon", "1e-300")
    assert "noise std" in line and "--epsilon 1e-300" in line and "raise --epsilon" in line


def test_running_out_of_memory_anyway_is_one_line(capsys, monkeypatch):
    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(run_module, "run_algorithm", exhausted)
    line = refused(capsys, "dpzero", *SMALL)
    assert "out of memory" in line and "estimated to need" in line and "--d" in line


# --- zo_o2nc and zo_o2nc-naive ---------------------------------------------------------------------------------

O2NC = ["--d", "3", "--samples", "1500", "--population", "60", "--goldstein-samples", "24", "--backend", "reference"]
#: Training-set quantities of a zo_o2nc run: never in the default output.
O2NC_TRAINING = ("training_", "training F", "loss_evaluations",
                  "nonfinite", "lipschitz_exceedances", "seconds", "evaluations")


def test_zo_o2nc_json_record(capsys):
    record = run_json(capsys, "run", "zo_o2nc", *O2NC, "--seed", "3", "--rho", "2", "--delta", "1e-5")
    assert record["algorithm"] == "zo_o2nc" and record["backend"] == "reference" and record["problem"] == "wshape"
    assert record["relation"] == "replace_one" and record["rho_target"] == 2.0 and record["rho_exact"] <= 2.0
    assert record["delta"] == 1e-5 and record["epsilon_claimed"] == record["epsilon_tight"]
    assert record["epsilon_claimed"] <= record["epsilon_exact"] and record["epsilon_printed"] > 0
    assert record["B1"] == record["T"] + 1 and record["B2"] == 1 and record["step_bound"] == 0.25 / record["T"]
    assert record["goldstein_radius"] == 0.5 and 1 <= record["output_epoch"] <= record["K"]
    assert record["secret_seed_source"] == "os_entropy" and "entropy" in record["guarantee_condition"]
    for prefix in ("heldout", "population"):
        for point in ("initial", "output"):
            assert 0 <= record[f"{prefix}_goldstein_lower_{point}"] <= record[f"{prefix}_goldstein_upper_{point}"]
        assert record[f"{prefix}_stationarity_upper_output"] <= record[f"{prefix}_goldstein_upper_output"]
    assert record["diagnostics"]["held_out_rows"] == 1500 and "never the training" in record["diagnostics"]["data"]
    assert "nonprivate" not in record and "noise_seed" not in record
    for key in O2NC_TRAINING:
        assert key not in json.dumps(record), key


def test_zo_o2nc_table(capsys):
    code, out, err = run(capsys, "run", "zo_o2nc", *O2NC)
    assert code == 0 and err == "", err
    for label in ("Algorithm 3 + 4 (tree oracle)", "Theorem 4.9", "privacy", "epsilon", "exact rule", "printed rule",
                  "secret seed", "held-out data", "population data", "|grad F|_{2delta}", "proxy", "theorem 4.9",
                  "never the training data"):
        assert label in out, label
    assert "NOT PRIVATE" not in out and "training" not in out.replace("never the training data", "")
    code, out, err = run(capsys, "run", "zo_o2nc-naive", *O2NC, "--batch-rule", "dimension", "--include-nonprivate")
    assert code == 0, err
    public, private = out.split("NOT PRIVATE")
    assert "Algorithm 3 + 6 (naive oracle)" in public and "App. E" in public and "training F" in private


def test_zo_o2nc_output_files_hold_no_secret_and_no_training_quantity(capsys, tmp_path):
    for fmt in ("json", "table"):
        out_dir = tmp_path / fmt
        code, out, err = run(capsys, "run", "zo_o2nc", *O2NC, "--noise-seed", SECRET, "--output", str(out_dir),
                             "--format", fmt)
        assert code == 0, err
        files = written(out_dir)
        assert set(files) == {"releases.csv", "epochs.csv", "output.csv", "diagnostics.json", "ledger.json",
                              "manifest.json"}
        for name, text in {**files, "stdout": out, "stderr": err}.items():
            assert SECRET not in text and hex(int(SECRET))[2:] not in text, name
            for key in O2NC_TRAINING:
                assert key not in text, (name, key)
        manifest = json.loads(files["manifest.json"])
        assert manifest["command"].startswith("dpref run zo_o2nc") and "--noise-seed <secret>" in manifest["command"]
        assert manifest["settings"]["samples"] == 1500 and "noise_seed" not in manifest["settings"]
        ledger = json.loads(files["ledger.json"])
        assert ledger["secret_seed_source"] == "user" and ledger["plan"]["relation"] == "replace_one"
        releases = pd.read_csv(out_dir / "releases.csv")
        assert list(releases.columns) == ["k", "t", "release_0", "release_1", "release_2"]
        assert len(releases) == ledger["settings"]["T"] * ledger["settings"]["K"]
    code, out, err = run(capsys, "run", "zo_o2nc", *O2NC, "--include-nonprivate", "--output", str(tmp_path / "np"))
    assert code == 0, err
    nonprivate = json.loads((tmp_path / "np" / "nonprivate_diagnostics.json").read_text())
    assert nonprivate["warning"].startswith("NOT PRIVATE") and "training_objective_output" in nonprivate


def test_zo_o2nc_fast_backend_when_installed(capsys):
    if not runner.fast_zo_o2nc_available():
        pytest.skip("reference.fast.zo_o2nc is not installed")
    args = ["run", "zo_o2nc", *O2NC[:-2], "--seed", "7", "--noise-seed", "11"]
    default = run_json(capsys, *args)
    reference = run_json(capsys, *args, "--backend", "reference")
    assert default["backend"] == "fast"
    assert default["output_point"] == reference["output_point"]
    assert default["population_goldstein_upper_output"] == reference["population_goldstein_upper_output"]


def test_zo_o2nc_without_noise(capsys):
    record = run_json(capsys, "run", "zo_o2nc", *O2NC, "--rho", "inf")
    assert record["rho"] == "inf" and record["noise_std"] == 0 and record["epsilon_claimed"] is None
    assert record["guarantee"] == "not private" and record["secret_seed_source"] is None


def test_zo_o2nc_progress_lines(capsys, monkeypatch):
    monkeypatch.setattr(runner, "PROGRESS_DELAY", 0.0)
    record = run_json(capsys, "run", "zo_o2nc", *O2NC)
    code, out, err = run(capsys, "run", "zo_o2nc", *O2NC, "--format", "json")
    assert code == 0 and json.loads(out)
    rounds = record["T"] * record["K"]
    lines = err.splitlines()
    assert lines and all(line.startswith("dpref run:") for line in lines) and f"{rounds}/{rounds}" in lines[-1]
    code, out, err = run(capsys, "run", "zo_o2nc", *O2NC, "-q")
    assert code == 0 and err == ""


def test_zo_o2nc_help_lists_its_options(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = capsys.readouterr().out
    for option in ("zo_o2nc-naive", "--samples", "--rho", "--smoothing-radius", "--T-rule", "--count-rule",
                   "--sigma-rule", "--batch-rule", "--goldstein-samples", "--population"):
        assert option in out, option


O2NC_REFUSALS = [
    (["zo_o2nc", "--samples", "3"], ["--samples 3 cannot hold one epoch", "suffices"]),
    (["zo_o2nc-naive", "--samples", "10", "--batch-size", "8"], ["--samples 10", "App. E", "suffices"]),
    (["zo_o2nc", "--samples", "0"], ["--samples"]),
    (["zo_o2nc", "--samples", "1e5"], ["--samples"]),
    (["zo_o2nc", "--d", "0"], ["--d"]),
    (["zo_o2nc", "--population", "0"], ["--population"]),
    (["zo_o2nc", "--held-out-n", "0"], ["--held-out-n"]),
    (["zo_o2nc", "--rho", "0"], ["--rho"]),
    (["zo_o2nc", "--rho", "-inf"], ["--rho"]),
    (["zo_o2nc", "--rho", "nan"], ["--rho"]),
    (["zo_o2nc", "--rho", "one"], ["--rho"]),
    (["zo_o2nc", "--smoothing-radius", "0"], ["--smoothing-radius"]),
    (["zo_o2nc", "--smoothing-radius", "1e300"], ["--smoothing-radius"]),
    (["zo_o2nc", "--smoothing-radius", "nan"], ["--smoothing-radius"]),
    (["zo_o2nc", "--T-rule", "min"], ["--T-rule"]),
    (["zo_o2nc", "--count-rule", "paper"], ["--count-rule"]),
    (["zo_o2nc", "--sigma-rule", "paper"], ["--sigma-rule", "zo_o2nc-naive only"]),
    (["zo_o2nc", "--batch-rule", "one"], ["--batch-rule", "zo_o2nc-naive only"]),
    (["zo_o2nc", "--batch-size", "4"], ["--batch-size", "zo_o2nc-naive only"]),
    (["zo_o2nc-naive", "--count-rule", "exact"], ["--count-rule", "zo_o2nc only"]),
    (["zo_o2nc-naive", "--batch-rule", "dimension", "--batch-size", "3"], ["--batch-size", "--batch-rule"]),
    (["zo_o2nc-naive", "--batch-size", "0"], ["--batch-size"]),
    (["zo_o2nc-naive", "--batch-rule", "two"], ["--batch-rule"]),
    (["zo_o2nc", "--delta", "1"], ["--delta"]),
    (["zo_o2nc", "--rho", "inf", "--delta", "1e-5"], ["--delta", "not private"]),
    (["zo_o2nc", "--rho", "inf", "--noise-seed", "5"], ["--noise-seed", "not private"]),
    (["zo_o2nc", "--seed", "5", "--noise-seed", "5"], ["noise_seed"]),
    (["zo_o2nc", "--data-seed", "5", "--noise-seed", "5"], ["data_seed"]),
    (["zo_o2nc", "--noise-seed", "-3"], ["--noise-seed"]),
    (["zo_o2nc", "--goldstein-samples", "0"], ["--goldstein-samples"]),
    (["zo_o2nc", "--goldstein-samples", "1000000"], ["--goldstein-samples"]),
    (["zo_o2nc", "--problem", "quadratic"], ["--problem"]),
    (["zo_o2nc", "--backend", "gpu"], ["--backend"]),
    (["zo_o2nc", "--format", "xml"], ["--format"]),
    (["zo_o2nc", "--steps", "10"], ["--steps", "Theorem 4.9"]),
    (["zo_o2nc", "--step-size", "0.1"], ["--step-size", "zo_o2nc.E10"]),
    (["zo_o2nc", "--epsilon", "1"], ["--epsilon", "--rho"]),
    (["zo_o2nc", "--n", "100"], ["--n", "--samples"]),
    (["zo_o2nc", "--clip", "1"], ["--clip"]),
    (["zo_o2nc", "--perturbation", "1e-3"], ["--perturbation", "--smoothing-radius"]),
    (["zo_o2nc", "--mode", "sqrt"], ["--mode"]),
    (["zo_o2nc", "--k", "2"], ["--k"]),
    (["zo_o2nc", "--accountant", "rdp"], ["--accountant"]),
    (["zo_o2nc", "--batching", "poisson"], ["--batching"]),
    (["zo_o2nc", "--sampling-probability", "0.1"], ["--sampling-probability"]),
    (["zo_o2nc", "--direction", "sphere"], ["--direction"]),
    (["zo_o2nc", "--replicates", "2"], ["--replicates"]),
    (["zo_o2nc", "--memory-limit", "1K"], ["more than --memory-limit 1 KiB"]),
    (["zo_o2nc", "--samples", "1000000000000"], ["of memory", "--samples 1000000000000"]),
    (["zo_o2nc", "--d", "100000000"], ["of memory", "--d 100000000"]),
    (["zo_o2nc", "--population", "1000000000000"], ["of memory", "--population 1000000000000"]),
    (["zo_o2nc", "--held-out-n", "1000000000000"], ["of memory", "--held-out-n 1000000000000"]),
    (["zo_o2nc", "--samples", str(10**40), "--d", str(10**30)], ["of memory", "--samples", "--d"]),
    (["dpzero", "--rho", "1"], ["--rho", "zo_o2nc"]),
    (["dpzero", "--samples", "100"], ["--samples", "zo_o2nc"]),
    (["dpzero", "--smoothing-radius", "0.1"], ["--smoothing-radius", "zo_o2nc"]),
    (["zo-o2nc"], ["ALGORITHM", "zo_o2nc-naive"]),
]


@pytest.mark.parametrize("argv, fragments", O2NC_REFUSALS)
def test_zo_o2nc_refusals_are_one_line(capsys, argv, fragments):
    import time
    import tracemalloc

    tracemalloc.start()
    start = time.perf_counter()
    try:
        line = refused(capsys, *argv, "--population", "50") if "--population" not in argv and argv[0] != "dpzero" \
            and argv[0] != "zo-o2nc" else refused(capsys, *argv)
    finally:
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert seconds < 5.0 and peak < 50 * 2**20  # refused before anything large is built
    for fragment in fragments:
        assert fragment in line, line
    if "--noise-seed" in argv:
        assert argv[argv.index("--noise-seed") + 1] not in line.replace("noise_seed", "")


def test_zo_o2nc_refusals_write_nothing(capsys, tmp_path):
    target = tmp_path / "out"
    refused(capsys, "zo_o2nc", "--samples", "1000000000000", "--output", str(target))
    assert not target.exists()
    refused(capsys, "zo_o2nc", "--samples", "3", "--output", str(target))
    assert list(target.iterdir()) == []
