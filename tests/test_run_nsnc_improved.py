"""``dpref run nsnc_improved`` (dpref/run.py over reference/runner_nsnc_improved.py): runs of every oracle at tiny
sizes on both backends (bitwise the same), the theory's settings and the run's own, which guarantee holds, the files
written with --output and what they must never contain (the secret seed, training-set quantities, the noiseless
sums), the NOT PRIVATE section on request, and hostile inputs (one line on stderr, exit 2, no traceback, before
anything large is built)."""

import json
import math
import time
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from dpref import cli
from reference import runner
from reference import runner_nsnc_improved as nsnc
from reference.algorithms.nsnc_improved_theory import (
    multi_pass_settings,
    o2nc_certified_bound,
    single_pass_settings,
)
from cli_refusals import refused

SECRET = "987654321987654321"
TINY = {"d": 3, "population": 40, "goldstein_samples": 16}
#: Per oracle: the keyword arguments of a tiny run (the multi-pass ones as printed: T = 3 steps).
TINY_RUNS = {
    "single-pass": {"samples": 800, "directions": 4},
    "single-pass-crn": {"samples": 800, "directions": 4},
    "first-order": {"samples": 800, "directions": 4},
    "multi-pass": {"samples": 200, "directions": 3, "variant": "paper", "target_stationarity": 2.0},
    "multi-pass-first-order": {"samples": 200, "directions": 3, "variant": "paper", "target_stationarity": 2.0},
}
#: Training-set quantities and the algorithm's non-private arrays: never in a default output.
NOT_PUBLIC = ("training_", "training F", "loss_evaluations", "nonfinite", "clipped_values", "noiseless", "seconds")
CLI_TINY = ["--d", "3", "--population", "40", "--goldstein-samples", "16", "--samples", "800", "--directions", "4"]


def _secret_strings(secret: str) -> list[str]:
    value = int(secret)
    return [secret, hex(value)[2:], f"{value:x}", f"{value:.6g}"]


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def written(directory) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(directory.iterdir())}


# --- runs of every oracle ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def outcomes():
    """Every oracle on both backends, the same public and secret seeds."""
    out = {}
    for oracle, kwargs in TINY_RUNS.items():
        for backend in ("reference", "fast"):
            out[oracle, backend] = nsnc.run_nsnc_improved(oracle, **TINY, **kwargs, seed=3, noise_seed=int(SECRET),
                                                          backend=backend)
    return out


@pytest.mark.parametrize("oracle", list(TINY_RUNS))
def test_backends_agree_bitwise_and_the_plan_holds(outcomes, oracle):
    reference, fast = outcomes[oracle, "reference"], outcomes[oracle, "fast"]
    for field in ("releases", "block_averages", "output", "final_iterate", "query_points"):
        assert np.array_equal(getattr(fast.result, field), getattr(reference.result, field)), field
    assert fast.result.output_index == reference.result.output_index
    assert fast.diagnostics == reference.diagnostics and fast.run == reference.run
    plan = fast.result.ledger.plan
    assert plan.oracle == nsnc.NSNC_ORACLES[oracle] and plan.relation == "replace_one"
    assert plan.epsilon <= 1.0 * (1 + 1e-12) and plan.guarantee == "worst-case" and plan.delta_fail == 0
    # the evaluations counted by the algorithm are the ones planned from the settings
    assert fast.result.diagnostics.evaluations == fast.run["evaluations_planned"]
    assert reference.result.diagnostics.evaluations == fast.run["evaluations_planned"]
    record = nsnc.nsnc_summary(fast)
    assert record["guarantee"] == "worst-case" and record["epsilon_spent"] == plan.epsilon
    assert record["secret_seed_source"] == "user" and "secret" in record["guarantee_condition"]
    for prefix in ("heldout", "population"):
        for point in ("initial", "output"):
            assert 0 <= record[f"{prefix}_goldstein_lower_{point}"] <= record[f"{prefix}_goldstein_upper_{point}"]
        assert record[f"{prefix}_spread_output"] <= record["smoothing_radius"]  # M·D <= α/4
        assert record[f"{prefix}_stationarity_upper_output"] <= record[f"{prefix}_goldstein_upper_output"]


def test_single_pass_run_uses_the_theorys_settings(outcomes):
    outcome = outcomes["single-pass", "reference"]
    problem = outcome.problem
    gap = problem.value(problem.weights("population"), problem.x1)
    expected = single_pass_settings(800, 3, 1.0, gap, 0.25, 1.0, 1e-6, directions=4, allow_vacuous=True)
    assert outcome.theory == expected and outcome.settings["initial_gap"] == gap
    run = outcome.run
    for key in ("T", "K", "M", "tree_size", "B1", "B2", "step_size", "G0", "G1", "certified_bound"):
        assert run[key] == getattr(expected, key), key
    assert run["noise_stds"] == (float(expected.noise_std),) and (run["m_reset"], run["m_increment"]) == (4, 4)
    settings = outcome.result.ledger.settings
    assert settings.noise_stds == run["noise_stds"] and settings.step_size == run["step_size"]
    assert settings.directions == (4, 4) and settings.records_used == expected.records_used


def test_multi_pass_run_recalibrates_for_the_given_directions(outcomes):
    outcome = outcomes["multi-pass", "fast"]
    problem = outcome.problem
    gap = problem.value(problem.weights("population"), problem.x1)
    expected = multi_pass_settings(200, 3, 1.0, gap, 0.25, 2.0, 1.0, 1e-6, variant="paper", allow_vacuous=True)
    assert outcome.theory == expected and expected.m > 3
    run, plan = outcome.run, outcome.result.ledger.plan
    assert (run["T"], run["M"], run["tree_size"]) == (expected.T, expected.M, expected.tree_size)
    assert plan.m_reset == plan.m_increment == 3 and plan.n == 200 and plan.epsilon == pytest.approx(1.0, rel=1e-9)
    # m = 3 << the privacy floor: the worst case applies, and σ is calibrated for it (larger than the theory's)
    assert run["noise_stds"][0] > float(expected.noise_std_reset)
    assert run["certified_bound"] == pytest.approx(o2nc_certified_bound(
        gap, 1.0, 0.25, run["step_bound"], run["T"], run["M"], run["G0"], run["G1"]), rel=1e-15)
    assert run["step_size"] == run["step_bound"] / (run["G1"] * math.sqrt(run["M"]))
    record = nsnc.nsnc_summary(outcome)
    assert record["meets_target"] is False and record["theory"]["certified_bound"] == expected.certified_bound
    assert record["noise_std"] is None and record["noise_std_reset"] == run["noise_stds"][0]


def test_guarantees_high_probability_clip_hardened_and_worst_case():
    common = dict(**TINY, samples=800, seed=2, backend="fast")
    auto = nsnc.run_nsnc_improved("single-pass", directions=200, **common)
    plan = auto.result.ledger.plan
    assert plan.guarantee == "high-probability" and plan.reset_branch == plan.increment_branch == "high-probability"
    assert 0 < plan.delta_fail <= 1e-6 / 2 and plan.epsilon <= 1.0 * (1 + 1e-12)
    hardened = nsnc.run_nsnc_improved("single-pass", directions=200, clip_hardening=True, **common)
    assert hardened.result.ledger.plan.guarantee == "clip-hardened" and hardened.result.ledger.plan.delta_fail == 0
    worst = nsnc.run_nsnc_improved("single-pass", directions=200, sensitivity_mode="worst_case", **common)
    assert worst.result.ledger.plan.guarantee == "worst-case" and worst.result.ledger.plan.delta_fail == 0
    # the worst case needs more noise; the step size and the certified bound follow the run's σ
    assert worst.run["noise_stds"][0] > auto.run["noise_stds"][0]
    assert worst.run["step_size"] < auto.run["step_size"]
    assert worst.run["certified_bound"] > auto.run["certified_bound"]
    assert "high-probability guarantee (delta_fail" in nsnc.render_nsnc(nsnc.nsnc_summary(auto))
    assert "clip-hardened guarantee" in nsnc.render_nsnc(nsnc.nsnc_summary(hardened))


def test_without_noise_is_the_twin_of_the_private_settings(outcomes):
    private = outcomes["single-pass-crn", "fast"]
    twin = nsnc.run_nsnc_improved("single-pass-crn", **TINY, **TINY_RUNS["single-pass-crn"], seed=3, noise="none",
                                  backend="fast")
    assert twin.result.ledger.plan is None and twin.secret_seed_source is None
    for key in ("T", "K", "M", "step_size", "step_bound", "tree_size"):
        assert twin.run[key] == private.run[key], key
    assert twin.result.output_index == private.result.output_index  # the same public draws
    record = nsnc.nsnc_summary(twin)
    assert record["guarantee"] == "not private" and record["epsilon_spent"] is None and record["noise_std"] == 0.0
    assert "not private (noise none" in nsnc.render_nsnc(record)
    with pytest.raises(ValueError, match="noise_seed does not apply"):
        nsnc.run_nsnc_improved("single-pass-crn", **TINY, samples=800, directions=4, noise="none", noise_seed=5)


def test_the_ridge_gradient_is_the_problems_gradient_in_both_conventions():
    problem = runner.build_ridge_problem("wshape", d=4, samples=30, population=30)
    gradient = nsnc._RidgeGradient("wshape", 1.0, 1.0, 4)
    rng = np.random.default_rng(1)
    points = rng.normal(scale=2.0, size=(2, 5, 3, 4))
    rows = problem.data[:5, None, :]
    stacked = gradient(points, rows)
    assert stacked.shape == points.shape
    for i in range(5):
        one = np.zeros(30)
        one[problem.training_index[i]] = 1.0
        for j in range(3):
            value = gradient(points[1, i, j], problem.data[i])
            assert np.array_equal(value, stacked[1, i, j])
            assert np.array_equal(value, problem.gradient(one, points[1, i, j]))


# --- what is published ------------------------------------------------------------------------------------------


def test_publication_files_hold_only_public_values(outcomes):
    outcome = outcomes["single-pass", "reference"]
    files = nsnc.nsnc_publication(outcome, command=f"dpref run nsnc_improved --noise-seed {SECRET}")
    assert set(files) == {"releases.csv", "blocks.csv", "output.csv", "diagnostics.json", "ledger.json",
                          "manifest.json"}
    result = outcome.result
    K, M, d = np.shape(result.releases)
    releases = np.loadtxt(files["releases.csv"].splitlines()[1:], delimiter=",")
    assert releases.shape == (K * M, 2 + d)
    assert np.array_equal(releases[:, 2:], np.asarray(result.releases).reshape(K * M, d))
    blocks = np.loadtxt(files["blocks.csv"].splitlines()[1:], delimiter=",", ndmin=2)
    assert np.array_equal(blocks[:, 3:], result.block_averages)
    assert np.array_equal(blocks[:, 2], outcome.block_objectives["population"])
    output = np.loadtxt(files["output.csv"].splitlines()[1:], delimiter=",", ndmin=2)
    assert np.array_equal(output[:, 1], result.output)
    diagnostics = json.loads(files["diagnostics.json"])
    assert diagnostics["population"]["output"]["goldstein_upper"] == \
        outcome.diagnostics["population"]["output"]["goldstein_upper"]
    ledger = json.loads(files["ledger.json"])
    assert ledger["guarantee"] == "worst-case" and ledger["epsilon_spent"] == result.ledger.plan.epsilon
    assert ledger["plan"]["relation"] == "replace_one" and ledger["seed"] == 3
    assert ledger["settings"]["directions"] == [4, 4] and ledger["secret_seed_source"] == "user"
    manifest = json.loads(files["manifest.json"])
    assert "--noise-seed <secret>" in manifest["command"] and "noise_seed" not in manifest["settings"]
    assert manifest["seeds"]["held_out_stream"] == ["dpref run", "wshape", "held-out"]
    # nothing computed on the training records outside the plan: not the noiseless sums, not the noise
    noiseless = np.asarray(result.diagnostics.noiseless_sums).reshape(-1)
    noise = np.asarray(result.diagnostics.noise).reshape(-1)
    hidden = {repr(float(v)) for v in np.concatenate([noiseless[:200], noise[:200]]) if v != 0}
    training = outcome.training_diagnostics()
    hidden |= {repr(training["output"]["objective"]), repr(training["initial"]["objective"])}
    for name, text in files.items():
        for secret in _secret_strings(SECRET):
            assert secret not in text, name
        for key in NOT_PUBLIC:
            assert key not in text, (name, key)
        for value in hidden:
            assert value not in text, (name, value)
    files = nsnc.nsnc_publication(outcome, command="dpref run nsnc_improved", include_nonprivate=True)
    nonprivate = json.loads(files["nonprivate_diagnostics.json"])
    assert nonprivate["warning"].startswith("NOT PRIVATE")
    assert nonprivate["loss_evaluations"] == outcome.result.diagnostics.evaluations
    assert nonprivate["training_objective_output"] == training["output"]["objective"]
    assert "training_" not in files["manifest.json"]


def test_summary_diagnostics_are_on_public_data(outcomes):
    outcome = outcomes["first-order", "fast"]
    problem, result = outcome.problem, outcome.result
    record = nsnc.nsnc_summary(outcome)
    for which, prefix in (("held_out", "heldout"), ("population", "population")):
        weights = problem.weights(which)
        assert record[f"{prefix}_objective_initial"] == problem.value(weights, problem.x1)
        assert record[f"{prefix}_objective_output"] == problem.value(weights, result.output)
        interval = runner.goldstein_interval(problem, weights, result.output, 0.5, samples=16, seed=3)
        assert record[f"{prefix}_goldstein_upper_output"] == interval["upper"]
        proxy = runner.ridge_proxy(problem, weights, result.query_points[result.output_index], 0.25)
        assert record[f"{prefix}_proxy_output"] == proxy["proxy"]
    assert record["diagnostics"]["held_out_rows"] == 800 and "never the training" in record["diagnostics"]["data"]
    text = json.dumps(record)
    for key in NOT_PUBLIC:
        assert key not in text, key


# --- the command line -------------------------------------------------------------------------------------------


def test_cli_json_table_and_files(capsys, tmp_path):
    record = run_json(capsys, "run", "nsnc_improved", "--oracle", "single-pass-crn", *CLI_TINY, "--seed", "5",
                      "--backend", "reference")
    assert record["algorithm"] == "nsnc_improved" and record["oracle"] == "single_pass_crn"
    assert record["backend"] == "reference" and record["guarantee"] == "worst-case"
    assert record["epsilon"] == 1.0 and record["epsilon_spent"] <= 1.0 and record["directions"] == 4
    assert record["secret_seed_source"] == "os_entropy" and "nonprivate" not in record
    code, out, err = run(capsys, "run", "nsnc_improved", "--oracle", "first-order", *CLI_TINY, "--noise-seed", SECRET,
                         "--output", str(tmp_path / "a"), "--include-nonprivate")
    assert code == 0, err
    for label in ("Algorithm 2 + 5", "Theorem C.4", "privacy", "worst-case guarantee", "epsilon", "secret seed",
                  "held-out data", "population data", "|grad F|_{2alpha}", "proxy", "certified", "NOT PRIVATE",
                  "training F"):
        assert label in out, label
    files = written(tmp_path / "a")
    assert set(files) == {"releases.csv", "blocks.csv", "output.csv", "diagnostics.json", "ledger.json",
                          "manifest.json", "nonprivate_diagnostics.json"}
    code, out, err = run(capsys, "run", "nsnc_improved", "--oracle", "single-pass", *CLI_TINY, "--noise-seed", SECRET,
                         "--output", str(tmp_path / "b"))
    assert code == 0, err
    assert "NOT PRIVATE" not in out
    files = written(tmp_path / "b")
    assert "nonprivate_diagnostics.json" not in files
    for name, text in {**files, "stdout": out, "stderr": err}.items():
        for secret in _secret_strings(SECRET):
            assert secret not in text, name
        for key in NOT_PUBLIC:
            assert key not in text, (name, key)
    releases = pd.read_csv(tmp_path / "b" / "releases.csv")
    ledger = json.loads(files["ledger.json"])
    assert list(releases.columns) == ["k", "t", "release_0", "release_1", "release_2"]
    assert len(releases) == ledger["settings"]["K"] * ledger["settings"]["block_length"]


def test_cli_multi_pass_and_progress(capsys, monkeypatch):
    monkeypatch.setattr(runner, "PROGRESS_DELAY", 0.0)
    argv = ["run", "nsnc_improved", "--oracle", "multi-pass", "--d", "3", "--population", "40", "--samples", "460",
            "--target-stationarity", "6", "--directions", "2", "--goldstein-samples", "8", "--format", "json"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    record = json.loads(out)
    assert record["oracle"] == "multi_pass" and record["target_stationarity"] == 6.0 and record["accountant"] is None
    lines = err.splitlines()
    steps = record["T"]
    assert lines and all(line.startswith("dpref run:") for line in lines) and f"{steps}/{steps}" in lines[-1]
    code, out, err = run(capsys, *argv, "-q")
    assert code == 0 and err == ""


def test_cli_help_lists_the_options(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = capsys.readouterr().out
    for option in ("nsnc_improved", "--oracle", "--directions", "--variant", "--clip-hardening", "--sensitivity-mode",
                   "--target-stationarity", "single-pass-crn", "multi-pass-first-order"):
        assert option in out, option


NS = ["nsnc_improved", "--oracle", "single-pass"]
NM = ["nsnc_improved", "--oracle", "multi-pass"]
HOSTILE = [
    # numbers out of range, NaN, inf
    (NS + ["--epsilon", "-1"], ["--epsilon"]),
    (NS + ["--epsilon", "0"], ["--epsilon"]),
    (NS + ["--epsilon", "nan"], ["--epsilon"]),
    (NS + ["--epsilon", "inf"], ["--epsilon"]),
    (NS + ["--epsilon", "two"], ["--epsilon"]),
    (NS + ["--delta", "0"], ["--delta"]),
    (NS + ["--delta", "1"], ["--delta"]),
    (NS + ["--delta", "nan"], ["--delta"]),
    (NS + ["--delta", "-1e-5"], ["--delta"]),
    (NS + ["--smoothing-radius", "0"], ["--smoothing-radius"]),
    (NS + ["--smoothing-radius", "nan"], ["--smoothing-radius"]),
    (NS + ["--smoothing-radius", "inf"], ["--smoothing-radius"]),
    (NS + ["--smoothing-radius", "1e300"], ["--smoothing-radius"]),
    (NS + ["--smoothing-radius", "5"], ["--smoothing-radius", "F(x0)/L"]),
    (NM + ["--target-stationarity", "0"], ["--target-stationarity"]),
    (NM + ["--target-stationarity", "-1"], ["--target-stationarity"]),
    (NM + ["--target-stationarity", "nan"], ["--target-stationarity"]),
    (NM + ["--target-stationarity", "inf"], ["--target-stationarity"]),
    (NS + ["--directions", "0"], ["--directions"]),
    (NS + ["--directions", "-5"], ["--directions"]),
    (NS + ["--directions", "1e5"], ["--directions"]),
    (NS + ["--d", "0"], ["--d"]),
    (NS + ["--samples", "0"], ["--samples"]),
    (NS + ["--population", "0"], ["--population"]),
    (NS + ["--held-out-n", "0"], ["--held-out-n"]),
    (NS + ["--goldstein-samples", "0"], ["--goldstein-samples"]),
    (NS + ["--goldstein-samples", "1000000"], ["--goldstein-samples"]),
    (NS + ["--seed", "-1"], ["--seed"]),
    (NS + ["--data-seed", str(2**128)], ["--data-seed"]),
    # huge sizes: refused by the memory estimate or the evaluation / step budget, before anything large is built
    (NS + ["--d", "100000000"], ["of memory", "--d 100000000"]),
    (NS + ["--samples", "1000000000000"], ["of memory", "--samples 1000000000000"]),
    (NS + ["--population", "1000000000000"], ["of memory", "--population 1000000000000"]),
    (NS + ["--held-out-n", "1000000000000"], ["of memory", "--held-out-n 1000000000000"]),
    (NS + ["--samples", "100000000"], ["steps", "budget", "reduce --samples"]),
    (NS + ["--directions", "1000000000000"], ["evaluations", "budget", "lower --directions (at most"]),
    (NS + ["--directions", "theory"], ["evaluations", "the theory's privacy floor", "lower --directions (at most"]),
    (NS + ["--directions", "many"], ["--directions", "'theory'"]),
    (NM + ["--directions", "1000000"], ["evaluations", "every step reads all 5000 records", "--target-stationarity"]),
    (NM + ["--samples", "100000000", "--directions", "1"], ["evaluations", "reduce --samples"]),
    (["nsnc_improved", "--oracle", "first-order", "--directions", "1000000000000"], ["gradient evaluations"]),
    (NS + ["--memory-limit", "1K"], ["more than --memory-limit 1 KiB"]),
    (NS + ["--memory-limit", "lots"], ["--memory-limit"]),
    # records too few for the settings: a number that suffices
    (NS + ["--samples", "1"], ["--samples 1 cannot hold one block", "--samples 2 suffices"]),
    # choices
    (["nsnc_improved"], ["--oracle", "single-pass-crn"]),
    (["nsnc_improved", "--oracle", "tree"], ["--oracle", "multi-pass-first-order"]),
    (NS + ["--variant", "printed"], ["--variant"]),
    (NS + ["--accountant", "rdp"], ["--accountant"]),
    (NS + ["--sensitivity-mode", "worst_case"], ["--sensitivity-mode"]),
    (NS + ["--problem", "quadratic"], ["--problem"]),
    (NS + ["--backend", "gpu"], ["--backend"]),
    (NS + ["--format", "xml"], ["--format"]),
    # combinations that do not apply
    (NM + ["--accountant", "paper"], ["--accountant", "single-pass"]),
    (NM + ["--clip-hardening"], ["--clip-hardening", "single-pass"]),
    (NS + ["--target-stationarity", "1"], ["--target-stationarity", "multi-pass"]),
    (NS + ["--clip-hardening", "--sensitivity-mode", "worst-case"], ["--clip-hardening", "--sensitivity-mode"]),
    # options of the other algorithms, with the reason
    (NS + ["--steps", "10"], ["--steps", "Theorem 3.1"]),
    (NS + ["--step-size", "0.1"], ["--step-size", "eta"]),
    (NS + ["--n", "100"], ["--n", "--samples"]),
    (NS + ["--clip", "1"], ["--clip"]),
    (NS + ["--perturbation", "0.1"], ["--perturbation", "--smoothing-radius"]),
    (NS + ["--mode", "sqrt"], ["--mode"]),
    (NS + ["--k", "2"], ["--k"]),
    (NS + ["--batching", "poisson"], ["--batching"]),
    (NS + ["--batch-size", "4"], ["--batch-size"]),
    (NS + ["--sampling-probability", "0.1"], ["--sampling-probability"]),
    (NS + ["--direction", "sphere"], ["--direction", "--directions"]),
    (NS + ["--replicates", "2"], ["--replicates"]),
    (NS + ["--rho", "1"], ["--rho", "--epsilon"]),
    (NS + ["--T-rule", "max"], ["--T-rule"]),
    (NS + ["--count-rule", "exact"], ["--count-rule"]),
    (NS + ["--sigma-rule", "exact"], ["--sigma-rule"]),
    (NS + ["--batch-rule", "one"], ["--batch-rule"]),
    (["dpzero", "--oracle", "single-pass"], ["--oracle", "nsnc_improved only"]),
    (["dpzero", "--directions", "4"], ["--directions", "nsnc_improved only"]),
    (["zo_o2nc", "--target-stationarity", "1"], ["--target-stationarity", "nsnc_improved only"]),
    (["zo_o2nc", "--clip-hardening"], ["--clip-hardening", "nsnc_improved only"]),
    (["zo_o2nc-naive", "--variant", "paper"], ["--variant", "nsnc_improved only"]),
    (["mezo", "--sensitivity-mode", "auto"], ["--sensitivity-mode", "nsnc_improved only"]),
    (["nsnc-improved", "--oracle", "single-pass"], ["ALGORITHM", "nsnc_improved"]),
    # the secret seed: never equal to a public seed, never repeated
    (NS + ["--noise-seed", "7", "--data-seed", "7"], ["--noise-seed", "--data-seed"]),
    (NS + ["--noise-seed", "9", "--seed", "9"], ["--noise-seed", "--seed"]),
    (NS + ["--noise-seed", "-3"], ["--noise-seed"]),
    (NS + ["--noise-seed", "12345678901x"], ["--noise-seed"]),
    (NS + ["--noise-seed", str(2**130)], ["--noise-seed"]),
]


@pytest.mark.parametrize("argv, fragments", HOSTILE, ids=[" ".join(a[1:])[:60] for a, _ in HOSTILE])
def test_hostile_inputs_are_one_line_refusals(capsys, argv, fragments):
    tracemalloc.start()
    start = time.perf_counter()
    try:
        line = refused(capsys, *argv)
    finally:
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    # before anything large is built (tracing slows the mpmath calibrations down up to tenfold: untraced times are
    # checked by test_refusals_are_fast_untraced)
    assert seconds < 8.0 and peak < 60 * 2**20, (seconds, peak)
    for fragment in fragments:
        assert fragment in line, line
    if "--noise-seed" in argv:
        value = argv[argv.index("--noise-seed") + 1]
        assert value not in line and value.lstrip("-") not in line, line


def test_multi_pass_records_needed(capsys):
    """The theory searches the smallest number of records (a bisection of calibrations: about 1 s, not traced)."""
    start = time.perf_counter()
    line = refused(capsys, *NM, "--samples", "10")
    assert time.perf_counter() - start < 5.0
    assert "--samples 10 cannot certify --target-stationarity 1.5" in line and "smallest that suffices" in line
    needed = int(line.split("certified bound")[1].split("--samples ")[1].split()[0])
    with pytest.raises(nsnc.BudgetExceeded):  # enough records; the theory's m is beyond the budget
        nsnc.prepare_nsnc_improved("multi-pass", samples=needed, directions="theory")
    assert nsnc.prepare_nsnc_improved("multi-pass", samples=needed).run["m_reset"] == 64  # the default m fits


def test_refusals_are_fast_untraced(capsys):
    """Huge sizes are refused in under a second (the better of two tries: the machine may be busy)."""
    for argv in (NS + ["--d", "100000000"], NS + ["--samples", "100000000"], NS + ["--directions", str(10**12)],
                 NS + ["--directions", "theory"],
                 NM + ["--directions", "1000000"], NM + ["--samples", "100000000", "--directions", "1"]):
        times = []
        for _ in range(2):
            start = time.perf_counter()
            refused(capsys, *argv)
            times.append(time.perf_counter() - start)
        assert min(times) < 1.0, (argv, times)


def test_output_directory_refusals_and_refused_runs_write_nothing(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    line = refused(capsys, *NS, *CLI_TINY, "--output", str(blocker / "out"))
    assert "--output" in line and "not a directory" in line
    full = tmp_path / "full"
    full.mkdir()
    (full / "old.txt").write_text("old")
    line = refused(capsys, *NS, *CLI_TINY, "--output", str(full))
    assert "--overwrite" in line and [p.name for p in full.iterdir()] == ["old.txt"]
    target = tmp_path / "never"
    refused(capsys, *NS, "--directions", str(10**12), "--output", str(target))
    refused(capsys, *NS, "--samples", "1", "--output", str(target))
    assert not target.exists()  # refused before the output directory is created


def test_budget_and_memory_helpers():
    parts = nsnc.nsnc_memory_parts("single-pass", d=4, samples=20_000, steps=10_000, step_points=100 * 2 * 64)
    assert parts == sorted(parts, key=lambda p: -p.bytes) and runner._total(parts) < 400 * 2**20
    assert nsnc.evaluation_budget("fast", 4) == 10**9 and nsnc.evaluation_budget("reference", 4) == 10**7
    with pytest.raises(nsnc.BudgetExceeded) as caught:
        nsnc.prepare_nsnc_improved("single-pass", backend="fast", directions="theory")
    error = caught.value
    assert error.kind == "evaluations" and error.needed > error.budget and error.fits >= 1
    assert "--directions" in error.describe(cli=True) and "directions" in str(error)
    fits = nsnc.prepare_nsnc_improved("single-pass", backend="fast", directions=error.fits)
    assert fits.run["evaluations_planned"] <= error.budget
    with pytest.raises(nsnc.BudgetExceeded):
        nsnc.prepare_nsnc_improved("single-pass", backend="fast", directions=error.fits + 1)
    with pytest.raises(nsnc.SamplesNeeded) as caught:
        nsnc.prepare_nsnc_improved("single-pass", samples=1, directions=4)
    nsnc.prepare_nsnc_improved("single-pass", samples=caught.value.needed, directions=4)  # enough indeed
    default = nsnc.prepare_nsnc_improved("single-pass", backend="fast")  # the default m = 64 fits the budget
    assert default.run["m_reset"] == default.run["m_increment"] == 64 == nsnc.NSNC_DEFAULTS["directions"]
    assert default.settings["directions"] == 64
    assert nsnc.prepare_nsnc_improved("single-pass-crn", directions="theory").settings["directions"] == "theory"
    for bad, error in (("many", ValueError), (None, TypeError), (0, ValueError), (2.5, TypeError)):
        with pytest.raises(error, match="directions"):
            nsnc.prepare_nsnc_improved("single-pass", directions=bad)


def test_manifest_names_the_seed_that_drew_the_directions():
    """Under the high-probability guarantee the directions come from the secret seed, and the manifest says so."""
    for directions, where in ((64, "secret"), (1, "public")):
        outcome = nsnc.run_nsnc_improved("single-pass", d=4, samples=2000, population=40, goldstein_samples=8,
                                         directions=directions)
        assert outcome.result.ledger.settings.direction_seed == where
        streams = json.loads(nsnc.nsnc_publication(outcome, command="dpref run")["manifest.json"])["seeds"][
            "algorithm_streams"]
        public, secret = streams.split(" under seed; ")
        assert ('"direction", t' in secret) == (where == "secret") and ('"direction", t' in public) == (where == "public")
