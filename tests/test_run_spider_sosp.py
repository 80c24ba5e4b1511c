"""``dpref run spider_sosp`` (dpref/run.py over reference/runner_spider_sosp.py): runs on every problem at small sizes
on both backends (bitwise the same), the privacy plan and the run's config (the run's sensitivity never exceeds the
plan's), the population SOSP levels against ``reference.stationarity.sosp_level``, the public schedule recomputed from
the releases alone, the files written with --output and what they must never contain (the secret seed, the noiseless
estimates, the tree noise, the perturbation vectors, training-set quantities), the escape from the exact saddle with
and without the perturbation, reproducibility with a user noise seed, and hostile inputs (one line on stderr, exit 2,
no traceback, before anything large is built)."""

import io
import json
import math
import time
import tracemalloc
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dpref import cli
from reference import runner
from reference import runner_spider_sosp as spider
from reference.algorithms.spider_sosp import replay_schedule
from reference.algorithms.spider_sosp_privacy import spider_sosp_parameters, spider_sosp_plan
from reference.stationarity import sosp_level
from cli_refusals import refused

SECRET = "987654321987654321"
SMALL = {"samples": 4000}
CLI_SMALL = ["--samples", "4000"]
#: Training-set quantities and the algorithm's non-private arrays: never in a default output.
NOT_PUBLIC = ("training_", "estimate_error", "clipped_values", "nonfinite_values", "gradient_evaluations_counted",
              "seconds", "NOT PRIVATE")
FILES = {"releases.csv", "trace.csv", "output.csv", "diagnostics.json", "ledger.json", "manifest.json"}
BACKENDS = ("reference", "fast") if spider.fast_spider_available() else ("reference",)


def _secret_strings(secret: str) -> list[str]:
    value = int(secret)
    return [secret, hex(value)[2:], f"{value:x}", f"{value:.6g}", f"{value:.17g}"]


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--format", "json", "-q")
    assert code == 0, err
    return json.loads(out)


def written(directory) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(directory.iterdir())}


# --- runs -------------------------------------------------------------------------------------------------------

RUNS = {
    "cosine": {},
    "cosine-eps4-segment-zero-out": {"epsilon": 4.0, "tree_scope": "segment", "adjacency": "zero_out", "d": 3},
    "cosine-theory-mode": {"mode": "theory"},
    "cosine-random-start": {"start": "random"},
    "cosine-det-noiseless": {"problem": "cosine-det", "epsilon": math.inf},
    "quadratic": {"problem": "quadratic"},
    "lemma3.8": {"sigma_rule": "lemma3.8"},
}


@pytest.fixture(scope="module")
def outcomes():
    out = {}
    for name, kwargs in RUNS.items():
        for backend in BACKENDS:
            out[name, backend] = spider.run_spider_sosp(**{**SMALL, **kwargs}, seed=3, noise_seed=int(SECRET),
                                                        backend=backend)
    return out


@pytest.mark.skipif(len(BACKENDS) < 2, reason="reference.fast.spider_sosp is not installed")
@pytest.mark.parametrize("name", list(RUNS))
def test_backends_agree_bitwise(outcomes, name):
    reference, fast = outcomes[name, "reference"], outcomes[name, "fast"]
    assert np.array_equal(reference.result.iterates, fast.result.iterates)
    assert np.array_equal(reference.result.trace.released, fast.result.trace.released)
    assert reference.result.trace.kinds == fast.result.trace.kinds
    assert reference.result.trace.perturbation_steps == fast.result.trace.perturbation_steps
    assert spider.spider_summary(reference) == {**spider.spider_summary(fast), "backend": "reference"}


@pytest.mark.parametrize("name", list(RUNS))
def test_the_schedule_is_public_and_the_levels_are_sosp_level(outcomes, name):
    outcome = outcomes[name, BACKENDS[-1]]
    result, problem = outcome.result, outcome.problem
    trace = result.trace
    # every branch, batch size and perturbation step follows from the releases and the public config alone
    replay = replay_schedule(trace.released, outcome.config, outcome.settings["samples"])
    assert replay.kinds == trace.kinds and replay.perturbation_steps == trace.perturbation_steps
    assert np.array_equal(replay.batch_sizes, trace.batch_sizes) and replay.records_used == trace.records_used
    assert np.array_equal(result.iterates[0], problem.x0 - trace.released[0] / outcome.config.smoothness)
    # the vectorised population levels are sosp_level's at every iterate
    family, rho = problem.family, problem.hessian_lipschitz
    levels = [sosp_level(family.population_gradient(x), family.population_hessian(x), rho) for x in result.iterates]
    assert np.allclose(outcome.population["sosp_level"], levels, rtol=1e-12, atol=1e-300)
    record = spider.spider_summary(outcome)
    assert record["population_sosp_level_min"] == pytest.approx(min(levels), rel=1e-12)
    assert record["population_sosp_level_last"] == levels[-1]
    assert record["population_sosp_level_min"] <= record["population_sosp_level_last"]
    assert record["steps"] == trace.steps and record["records_used"] <= record["records_available"] == 4000
    kinds = np.array(trace.kinds)
    assert record["o1_steps"] == int(np.sum(kinds == "O1")) and record["o1_batch_size"] == outcome.config.batch_size
    if record["o2_steps"]:
        o2 = trace.batch_sizes[kinds == "O2"]
        assert record["o2_batch_sizes"]["max"] == o2.max() and record["o2_batch_sizes"]["total"] == o2.sum()
    # the evaluations of the record are counted from the public trace: the algorithm's own count agrees
    assert record["gradient_evaluations"] == result.debug.evaluations
    assert record["perturbations"] == len(trace.perturbation_steps)
    assert record["escapes"] <= record["perturbations_at_saddle"] <= record["perturbations"]


@pytest.mark.parametrize("name", [n for n in RUNS if RUNS[n].get("epsilon") != math.inf])
def test_the_run_is_within_the_plan(outcomes, name):
    """σ is the plan's rounded up; α down, κ up and b the plan's: the run's sensitivity is at most the plan's sbar."""
    outcome = outcomes[name, BACKENDS[0]]
    plan, config, settings = outcome.plan, outcome.config, outcome.settings
    adjacency, scope = settings["adjacency"], settings["tree_scope"]
    problem = outcome.problem
    kwargs = dict(lipschitz=problem.lipschitz, smoothness=problem.smoothness, loss_gap=problem.loss_gap,
                  d=problem.d, n=settings["samples"], epsilon=settings["epsilon"])
    import mpmath

    with mpmath.workdps(30):
        expected = spider_sosp_plan(delta=settings["delta"], adjacency=adjacency, tree_scope=scope,
                                    rule=settings["sigma_rule"], **kwargs)
        params = spider_sosp_parameters(adjacency=adjacency, **kwargs)
    assert plan == expected and plan.rule == settings["sigma_rule"]
    assert mpmath.mpf(config.noise_std) >= plan.noise_std and config.noise_std <= float(plan.noise_std) * (1 + 1e-15)
    assert mpmath.mpf(config.alpha) <= params["alpha"] and mpmath.mpf(config.kappa) >= params["kappa"]
    assert config.batch_size == params["b"] and config.enforce_constants
    c_adj = 2 if adjacency == "replace_one" else 1
    sbar = spider._fraction(plan.sbar)
    assert c_adj * Fraction(problem.lipschitz) / config.batch_size <= sbar
    coefficient = Fraction(config.kappa) / Fraction(config.alpha) ** 2
    assert c_adj / coefficient <= sbar or config.d >= (c_adj / sbar * Fraction(config.alpha)
                                                       * Fraction(config.epsilon)) ** 2
    record = spider.spider_summary(outcome)
    assert record["epsilon_spent"] == float(plan.epsilon) and record["mu"] == float(plan.mu)
    assert record["private"] is bool(plan.private) and record["sigma_rule"] == plan.rule
    if plan.rule == "gdp_exact":
        assert plan.private and record["epsilon_spent"] <= settings["epsilon"] * (1 + 1e-12)
    ledger = spider.spider_ledger(outcome)
    assert ledger["plan"]["noise_std"] == float(plan.noise_std) and ledger["config"]["noise_std"] == config.noise_std
    assert ledger["sigma_rule_label"].startswith({"gdp_exact": "exact", "lemma3.8": "Lemma 3.8"}[plan.rule])


def test_noiseless_limit_has_no_plan(outcomes):
    outcome = outcomes["cosine-det-noiseless", BACKENDS[0]]
    assert outcome.plan is None and outcome.config.noise_std == 0.0
    record = spider.spider_summary(outcome)
    assert record["guarantee"] == "not private" and record["private"] is False and record["epsilon_spent"] is None
    assert record["delta"] is None and record["sigma_rule"] is None and record["adjacency"] is None
    assert spider.spider_ledger(outcome)["settings"]["delta"] is None
    assert "not private (epsilon = inf" in spider.render_spider(record)


def test_quadratic_is_clipped_and_reports_its_domain(outcomes):
    outcome = outcomes["quadratic", BACKENDS[0]]
    record = spider.spider_summary(outcome)
    assert record["start"] == "random" and record["lipschitz"] == 3.0 and record["population_lambda_min_min"] > 0
    assert record["max_iterate_norm"] == pytest.approx(np.max(np.linalg.norm(outcome.result.iterates, axis=1)))
    assert record["perturbations_at_saddle"] == 0 and record["start_is_saddle"] is False
    assert "max |x_t|" in spider.render_spider(record)


def test_gradient_is_the_familys_in_both_conventions():
    for name in ("cosine", "quadratic"):
        problem = spider.build_spider_problem(name, d=3, samples=20, data_seed=2)
        gradient = spider._Gradient(problem)
        rng = np.random.default_rng(1)
        x = rng.normal(size=3)
        batch = gradient(x, problem.data)
        assert batch.shape == (20, 3)
        for i in range(20):
            one = gradient(x, problem.data[i])
            assert np.array_equal(one, batch[i])
            assert np.array_equal(one, problem.family.gradient(x, problem.data[i]))


# --- escape from the exact saddle, reproducibility ------------------------------------------------------------------

ESCAPE = ["run", "spider_sosp", "--problem", "cosine-det", "--epsilon", "inf", "--samples", "3000"]


def test_escape_from_the_exact_saddle_needs_the_perturbation(capsys):
    """cosine-det (every record 0: exact gradients), ε = inf (σ = 0), x0 = 0: without the perturbation of lines 9–11
    no iterate ever leaves the saddle (level 1 = φ²c²/ρ everywhere); with it the run escapes to a minimum."""
    for noise_seed in ("11", "12", "13"):
        record = run_json(capsys, *ESCAPE, "--noise-seed", noise_seed)
        assert record["start_is_saddle"] and record["perturbations_at_saddle"] >= 1 and record["escapes"] >= 1
        assert record["population_sosp_level_min"] <= 1e-6
        assert record["population_objective_min"] == pytest.approx(-2.0, abs=1e-9)
        assert record["first_alpha_sosp_step"] is not None and record["first_tenth_gap_step"] is not None
    record = run_json(capsys, *ESCAPE, "--no-perturb")
    assert record["perturbations"] == 0 and record["escapes"] == 0
    assert record["population_sosp_level_min"] == record["population_sosp_level_last"] == 1.0
    assert record["last_point"] == [0.0, 0.0] and record["first_alpha_sosp_step"] is None
    assert record["first_tenth_gap_step"] is None and record["records_used"] > 2900  # it ran, and stayed


def test_private_run_escapes_the_saddle(capsys):
    record = run_json(capsys, "run", "spider_sosp", "--samples", "20000", "--epsilon", "4", "--noise-seed", SECRET)
    assert record["population_sosp_level_initial"] == pytest.approx(math.exp(-0.25), rel=1e-12)  # φ²/ρ at 0
    assert record["population_sosp_level_min"] < 0.1 and record["population_lambda_min_min"] > 0
    assert record["epsilon_spent"] <= 4 * (1 + 1e-12) and record["private"] is True


def test_a_user_noise_seed_reproduces_the_run(capsys, tmp_path):
    argv = ["run", "spider_sosp", *CLI_SMALL, "--seed", "5"]
    for name, extra in (("a", ["--noise-seed", SECRET]), ("b", ["--noise-seed", SECRET]), ("c", ["--noise-seed", "77"]),
                        ("d", []), ("e", [])):
        code, out, err = run(capsys, *argv, *extra, "--output", str(tmp_path / name), "-q")
        assert code == 0, err
    releases = {name: (tmp_path / name / "releases.csv").read_text() for name in "abcde"}
    outputs = {name: (tmp_path / name / "output.csv").read_text() for name in "abcde"}
    assert releases["a"] == releases["b"] and outputs["a"] == outputs["b"]
    assert releases["a"] != releases["c"]
    assert releases["d"] != releases["e"]  # fresh operating-system entropy: two runs differ
    ledger = json.loads((tmp_path / "d" / "ledger.json").read_text())
    assert ledger["secret_seed_source"] == "os_entropy"


# --- what is published ------------------------------------------------------------------------------------------


def test_publication_files_hold_only_public_values(outcomes):
    outcome = outcomes["cosine", BACKENDS[0]]
    files = spider.spider_publication(outcome, command=f"dpref run spider_sosp --noise-seed {SECRET}")
    assert set(files) == FILES
    result, d = outcome.result, outcome.problem.d
    trace = result.trace
    releases = pd.read_csv(io.StringIO(files["releases.csv"]))
    assert list(releases.columns) == ["t", "release_0", "release_1"]
    assert np.array_equal(releases[["release_0", "release_1"]].to_numpy(), trace.released)
    schedule = pd.read_csv(io.StringIO(files["trace.csv"]))
    assert list(schedule["kind"]) == list(trace.kinds)
    assert np.array_equal(schedule["batch_size"], trace.batch_sizes)
    assert np.array_equal(np.flatnonzero(schedule["perturbed"]), trace.perturbation_steps)
    assert schedule["record_offset"].iloc[-1] + schedule["batch_size"].iloc[-1] == trace.records_used
    output = pd.read_csv(io.StringIO(files["output.csv"]))
    assert np.array_equal(output[[f"x_{j}" for j in range(d)]].to_numpy(), result.iterates)
    assert np.array_equal(output["population_sosp_level"], outcome.population["sosp_level"])
    diagnostics = json.loads(files["diagnostics.json"])
    assert diagnostics["min"]["sosp_level"] == spider.spider_summary(outcome)["population_sosp_level_min"]
    assert "never the training records" in diagnostics["diagnostics"]["data"]
    ledger = json.loads(files["ledger.json"])
    assert ledger["private"] is True and ledger["sigma_rule"] == "gdp_exact" and ledger["seed"] == 3
    assert ledger["secret_seed_source"] == "user" and ledger["plan"]["adjacency"] == "replace_one"
    manifest = json.loads(files["manifest.json"])
    assert "--noise-seed <secret>" in manifest["command"] and "noise_seed" not in json.dumps(manifest["settings"])
    assert manifest["seeds"]["data_stream"] == ["dpref run", "spider_sosp", "cosine"]
    # nothing computed on the records outside the plan, nothing drawn from the secret seed: not the noiseless
    # estimates, not the tree noise, not the perturbation vectors, not the training-set diagnostics
    debug = result.debug
    hidden = {repr(float(v)) for array in (debug.estimates, debug.tree_noise, debug.perturbations)
              for v in np.asarray(array).reshape(-1)[:400] if v != 0}
    training = spider.spider_nonprivate(outcome)
    hidden |= {repr(training["training_sosp_level_last"]), repr(training["training_objective_min"]),
               repr(training["estimate_error_max"])}
    for name, text in files.items():
        for secret in _secret_strings(SECRET):
            assert secret not in text, name
        for key in NOT_PUBLIC:
            assert key not in text, (name, key)
        for value in hidden:
            assert value not in text, (name, value)
    files = spider.spider_publication(outcome, command="dpref run spider_sosp", include_nonprivate=True)
    nonprivate = json.loads(files["nonprivate_diagnostics.json"])
    assert nonprivate["warning"].startswith("NOT PRIVATE")
    assert nonprivate["gradient_evaluations_counted"] == debug.evaluations
    assert "training_" not in files["manifest.json"]
    assert "training_sosp_level_min" in files["nonprivate_diagnostics.json"]


def test_cli_json_table_files_and_no_secret(capsys, tmp_path):
    record = run_json(capsys, "run", "spider_sosp", *CLI_SMALL, "--backend", "reference")
    assert record["algorithm"] == "spider_sosp" and record["problem"] == "cosine" and record["d"] == 2
    assert record["backend"] == "reference" and record["sigma_rule"] == "gdp_exact" and record["mode"] == "unit"
    assert record["adjacency"] == "replace_one" and record["tree_scope"] == "global" and record["start"] == "saddle"
    assert record["secret_seed_source"] == "os_entropy" and "nonprivate" not in record
    code, out, err = run(capsys, "run", "spider_sosp", *CLI_SMALL, "--noise-seed", SECRET, "--output",
                         str(tmp_path / "a"), "--include-nonprivate", "-q")
    assert code == 0, err
    for label in ("spider_sosp Algorithm 2 + 3", "O1:", "O2 steps", "records", "perturbations", "privacy",
                  "sigma rule", "epsilon", "secret seed", "population", "best iterate", "alpha-SOSP", "NOT PRIVATE",
                  "training level"):
        assert label in out, label
    assert set(written(tmp_path / "a")) == FILES | {"nonprivate_diagnostics.json"}
    code, out, err = run(capsys, "run", "spider_sosp", *CLI_SMALL, "--noise-seed", SECRET, "--output",
                         str(tmp_path / "b"))
    assert code == 0, err
    assert "NOT PRIVATE" not in out
    files = written(tmp_path / "b")
    assert set(files) == FILES
    for name, text in {**files, "stdout": out, "stderr": err}.items():
        for secret in _secret_strings(SECRET):
            assert secret not in text, name
        for key in NOT_PUBLIC:
            assert key not in text, (name, key)
    # the whole published directory, as bytes, holds no form of the secret seed
    blob = b"".join(path.read_bytes() for path in (tmp_path / "b").iterdir())
    for secret in _secret_strings(SECRET):
        assert secret.encode() not in blob


def test_cli_printed_rules_and_the_nonprivate_one(capsys):
    record = run_json(capsys, "run", "spider_sosp", *CLI_SMALL, "--sigma-rule", "thm3.11", "--allow-nonprivate")
    assert record["sigma_rule"] == "thm3.11" and record["private"] is False and record["epsilon_spent"] > 1
    assert "not private" in record["sigma_rule_label"]
    code, out, err = run(capsys, "run", "spider_sosp", *CLI_SMALL, "--sigma-rule", "thm3.11", "--allow-nonprivate",
                         "-q")
    assert code == 0 and "NOT private at the target" in out
    record = run_json(capsys, "run", "spider_sosp", *CLI_SMALL, "--sigma-rule", "thm2.2")
    assert record["sigma_rule_label"].startswith("Theorem 2.2") and record["private"] is True
    record = run_json(capsys, "run", "spider_sosp", *CLI_SMALL, "--adjacency", "zero-out", "--tree-scope", "segment",
                      "--reset-drift-on-perturb", "--mode", "theory")
    assert record["adjacency"] == "zero_out" and record["tree_scope"] == "segment"
    assert record["reset_drift_on_perturb"] is True and record["mode"] == "theory"


def test_cli_progress(capsys, monkeypatch):
    monkeypatch.setattr(runner, "PROGRESS_DELAY", 0.0)
    code, out, err = run(capsys, "run", "spider_sosp", *CLI_SMALL, "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    lines = err.splitlines()
    assert lines and all(line.startswith("dpref run:") for line in lines)
    assert f"{record['records_used']}/4000" in lines[-1] and f"{record['steps']} steps" in lines[-1]
    code, out, err = run(capsys, "run", "spider_sosp", *CLI_SMALL, "-q")
    assert code == 0 and err == ""
    code, out, err = run(capsys, "run", "spider_sosp", *CLI_SMALL, "-q", "--progress")
    assert code == 0 and err.startswith("dpref run:")


def test_cli_help_lists_the_options(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = capsys.readouterr().out
    for option in ("spider_sosp", "--adjacency", "--tree-scope", "--no-perturb", "--reset-drift-on-perturb", "--start",
                   "--allow-nonprivate", "--progress", "cosine-det", "gdp_exact", "thm3.11"):
        assert option in out, option


# --- hostile inputs -------------------------------------------------------------------------------------------------


S = ["spider_sosp"]
HOSTILE = [
    # numbers out of range, NaN, inf
    (S + ["--epsilon", "-1"], ["--epsilon"]),
    (S + ["--epsilon", "0"], ["--epsilon"]),
    (S + ["--epsilon", "nan"], ["--epsilon"]),
    (S + ["--epsilon", "-inf"], ["--epsilon"]),
    (S + ["--epsilon", "1e-300"], ["--epsilon", "inf"]),
    (S + ["--epsilon", "1e300"], ["--epsilon", "inf"]),
    (S + ["--epsilon", "two"], ["--epsilon"]),
    (S + ["--delta", "0"], ["--delta"]),
    (S + ["--delta", "1"], ["--delta"]),
    (S + ["--delta", "nan"], ["--delta"]),
    (S + ["--delta", "-1e-5"], ["--delta"]),
    (S + ["--delta", "inf"], ["--delta"]),
    (S + ["--d", "0"], ["--d"]),
    (S + ["--d", "-3"], ["--d"]),
    (S + ["--d", "2.5"], ["--d"]),
    (S + ["--samples", "0"], ["--samples"]),
    (S + ["--samples", "-5"], ["--samples"]),
    (S + ["--samples", "1e5"], ["--samples"]),
    (S + ["--seed", "-1"], ["--seed"]),
    (S + ["--data-seed", str(2**128)], ["--data-seed"]),
    # huge sizes: refused by the dimension cap, the memory estimate or the budget, before anything large is built
    (S + ["--d", "100000000"], ["--d", "<= 1000"]),
    (S + ["--d", "1000", "--samples", "1000000000"], ["of memory", "--samples 1000000000"]),
    (S + ["--samples", "1000000000000"], ["of memory", "--samples 1000000000000"]),
    (S + ["--samples", "10000000", "--backend", "reference", "--memory-limit", "1T"],
     ["steps", "budget", "reduce --samples (at most"]),
    (S + ["--samples", "100000000", "--memory-limit", "1T"], ["steps", "budget", "reduce --samples (at most"]),
    (S + ["--d", "1000", "--samples", "100000", "--backend", "reference", "--memory-limit", "1T"],
     ["gradient evaluations", "budget", "reduce --samples (at most", "--d"]),
    (S + ["--memory-limit", "1K"], ["more than --memory-limit 1 KiB"]),
    (S + ["--memory-limit", "lots"], ["--memory-limit"]),
    # records too few for the first O1 batch: a number that suffices
    (S + ["--epsilon", "1e-6", "--samples", "1000"], ["--samples 1000 cannot hold the first O1 batch", "suffices"]),
    (S + ["--d", "1000", "--samples", "50"], ["--samples 50 cannot hold", "suffices"]),
    # choices
    (S + ["--problem", "wshape"], ["--problem", "cosine-det"]),
    (S + ["--problem", "subspace-logistic"], ["--problem"]),
    (S + ["--mode", "harmonic"], ["--mode", "unit"]),
    (S + ["--sigma-rule", "exact"], ["--sigma-rule", "gdp_exact"]),
    (S + ["--sigma-rule", "paper"], ["--sigma-rule"]),
    (S + ["--adjacency", "replace_one"], ["--adjacency", "replace-one"]),
    (S + ["--adjacency", "add-remove"], ["--adjacency"]),
    (S + ["--tree-scope", "local"], ["--tree-scope"]),
    (S + ["--start", "origin"], ["--start"]),
    (S + ["--backend", "gpu"], ["--backend"]),
    (S + ["--format", "xml"], ["--format"]),
    # combinations that do not apply
    (S + ["--sigma-rule", "thm3.11"], ["thm3.11", "not private", "--allow-nonprivate"]),
    (S + ["--allow-nonprivate"], ["--allow-nonprivate", "thm3.11"]),
    (S + ["--sigma-rule", "lemma3.8", "--allow-nonprivate"], ["--allow-nonprivate", "thm3.11"]),
    (S + ["--problem", "quadratic", "--start", "saddle"], ["--start saddle", "no saddle"]),
    (S + ["--epsilon", "inf", "--delta", "1e-5"], ["--delta", "--epsilon inf"]),
    (S + ["--epsilon", "inf", "--sigma-rule", "gdp_exact"], ["--sigma-rule", "--epsilon inf"]),
    (S + ["--epsilon", "inf", "--adjacency", "zero-out"], ["--adjacency", "--epsilon inf"]),
    (S + ["--epsilon", "inf", "--tree-scope", "segment"], ["--tree-scope", "--epsilon inf"]),
    (S + ["--epsilon", "inf", "--sigma-rule", "thm3.11", "--allow-nonprivate"], ["--epsilon inf"]),
    # options of the other algorithms, with the reason
    (S + ["--steps", "10"], ["--steps", "T = n"]),
    (S + ["--step-size", "0.1"], ["--step-size", "1/M"]),
    (S + ["--n", "100"], ["--n", "--samples"]),
    (S + ["--clip", "1"], ["--clip"]),
    (S + ["--perturbation", "0.1"], ["--perturbation"]),
    (S + ["--k", "2"], ["--k"]),
    (S + ["--batching", "poisson"], ["--batching"]),
    (S + ["--batch-size", "4"], ["--batch-size", "Lemma 3.8"]),
    (S + ["--sampling-probability", "0.1"], ["--sampling-probability"]),
    (S + ["--direction", "sphere"], ["--direction"]),
    (S + ["--replicates", "2"], ["--replicates"]),
    (S + ["--accountant", "rdp"], ["--accountant", "--sigma-rule"]),
    (S + ["--held-out-n", "100"], ["--held-out-n", "population"]),
    (S + ["--population", "100"], ["--population"]),
    (S + ["--rho", "1"], ["--rho", "--epsilon"]),
    (S + ["--smoothing-radius", "0.1"], ["--smoothing-radius"]),
    (S + ["--T-rule", "max"], ["--T-rule"]),
    (S + ["--count-rule", "exact"], ["--count-rule"]),
    (S + ["--batch-rule", "one"], ["--batch-rule"]),
    (S + ["--goldstein-samples", "8"], ["--goldstein-samples"]),
    (S + ["--oracle", "single-pass"], ["--oracle", "nsnc_improved"]),
    (S + ["--directions", "4"], ["--directions"]),
    (S + ["--variant", "paper"], ["--variant"]),
    (S + ["--clip-hardening"], ["--clip-hardening"]),
    (S + ["--sensitivity-mode", "auto"], ["--sensitivity-mode"]),
    (S + ["--target-stationarity", "1"], ["--target-stationarity"]),
    # the spider_sosp options, refused for the other algorithms
    (["dpzero", "--adjacency", "zero-out"], ["--adjacency", "spider_sosp only"]),
    (["zo_o2nc", "--tree-scope", "segment"], ["--tree-scope", "spider_sosp only"]),
    (["nsnc_improved", "--oracle", "single-pass", "--no-perturb"], ["--no-perturb", "spider_sosp only"]),
    (["mezo", "--reset-drift-on-perturb"], ["--reset-drift-on-perturb", "spider_sosp only"]),
    (["dpgd", "--start", "saddle"], ["--start", "spider_sosp only"]),
    (["zo_o2nc-naive", "--allow-nonprivate"], ["--allow-nonprivate", "spider_sosp only"]),
    (["dpzero", "--samples", "10"], ["--samples", "spider_sosp"]),
    (["spider-sosp"], ["ALGORITHM", "spider_sosp"]),
    # the secret seed: never equal to a public seed, never repeated
    (S + ["--noise-seed", "7", "--data-seed", "7"], ["--noise-seed", "--data-seed"]),
    (S + ["--noise-seed", "9", "--seed", "9"], ["--noise-seed", "--seed"]),
    (S + ["--noise-seed", "0"], ["--noise-seed", "--data-seed"]),
    (S + ["--noise-seed", "-3"], ["--noise-seed"]),
    (S + ["--noise-seed", "12345678901x"], ["--noise-seed"]),
    (S + ["--noise-seed", str(2**130)], ["--noise-seed"]),
    (S + ["--epsilon", "inf", "--noise-seed", "5", "--seed", "5"], ["--noise-seed", "--seed"]),
]


@pytest.mark.parametrize("argv, fragments", HOSTILE, ids=[" ".join(a)[:60] for a, _ in HOSTILE])
def test_hostile_inputs_are_one_line_refusals(capsys, argv, fragments):
    tracemalloc.start()
    start = time.perf_counter()
    try:
        line = refused(capsys, *argv)
    finally:
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert seconds < 8.0 and peak < 60 * 2**20, (seconds, peak)  # before anything large is built
    for fragment in fragments:
        assert fragment in line, line
    if "--noise-seed" in argv:
        value = argv[argv.index("--noise-seed") + 1]
        if value not in ("0", "5", "7", "9"):  # small values also occur as other options' values
            assert value not in line and value.lstrip("-") not in line, line


def test_refusals_are_fast_untraced(capsys):
    """Huge sizes are refused in well under a second (the better of two tries: the machine may be busy)."""
    for argv in (S + ["--d", "100000000"], S + ["--samples", "1000000000000"],
                 S + ["--samples", "10000000", "--backend", "reference", "--memory-limit", "1T"],
                 S + ["--epsilon", "1e-6", "--samples", "10"]):
        times = []
        for _ in range(2):
            start = time.perf_counter()
            refused(capsys, *argv)
            times.append(time.perf_counter() - start)
        assert min(times) < 1.0, (argv, times)


def test_output_directory_refusals_and_refused_runs_write_nothing(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    line = refused(capsys, *S, *CLI_SMALL, "--output", str(blocker / "out"))
    assert "--output" in line and "not a directory" in line
    full = tmp_path / "full"
    full.mkdir()
    (full / "old.txt").write_text("old")
    line = refused(capsys, *S, *CLI_SMALL, "--output", str(full))
    assert "--overwrite" in line and [p.name for p in full.iterdir()] == ["old.txt"]
    code, out, err = run(capsys, "run", *S, *CLI_SMALL, "--output", str(full), "--overwrite", "-q")
    assert code == 0 and FILES <= {p.name for p in full.iterdir()}
    target = tmp_path / "never"
    refused(capsys, *S, "--sigma-rule", "thm3.11", "--output", str(target))
    refused(capsys, *S, "--epsilon", "1e-6", "--samples", "10", "--output", str(target))
    refused(capsys, *S, "--samples", "1000000000000", "--output", str(target))
    assert not target.exists()  # refused before the output directory is created


def test_unwritable_output_directory(capsys, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        probe = locked / "probe"
        try:
            probe.write_text("x")
        except OSError:
            pass
        else:  # running as root: permissions do not bind
            pytest.skip("permissions are not enforced for this user")
        line = refused(capsys, *S, *CLI_SMALL, "--output", str(locked / "out"))
        assert "--output" in line and "cannot create" in line
        line = refused(capsys, *S, *CLI_SMALL, "--output", str(locked))
        assert "--output" in line and "not writable" in line
    finally:
        locked.chmod(0o700)


# --- budget, memory, samples ----------------------------------------------------------------------------------------


def test_budget_memory_and_samples_helpers():
    parts = spider.spider_memory_parts(d=2, samples=100_000, publish=True)
    assert parts == sorted(parts, key=lambda p: -p.bytes) and runner._total(parts) < 400 * 2**20
    assert spider.evaluation_budget("reference", 2) == 5 * 10**7 // 3
    with pytest.raises(spider.BudgetExceeded) as caught:
        spider.prepare_spider_sosp(samples=2 * 10**6, backend="reference", memory_limit=2**50)
    error = caught.value
    assert error.kind == "steps" and error.needed == 2 * 10**6 and error.fits == spider.STEP_BUDGET["reference"]
    assert "--samples" in error.describe(cli=True) and "samples" in str(error)
    with pytest.raises(spider.BudgetExceeded) as caught:
        spider.prepare_spider_sosp(d=1000, samples=3 * 10**6, backend="fast", memory_limit=2**50) \
            if len(BACKENDS) == 2 else spider.prepare_spider_sosp(d=1000, samples=2 * 10**5, backend="reference",
                                                                  memory_limit=2**50)
    assert caught.value.kind == "evaluations"
    fits = caught.value.fits
    assert 2 * fits <= caught.value.budget < 2 * (fits + 1)
    with pytest.raises(spider.SamplesNeeded) as caught:
        spider.prepare_spider_sosp(epsilon=1e-5, samples=100)
    needed = caught.value.needed
    assert needed > 100 and spider.prepare_spider_sosp(epsilon=1e-5, samples=needed).config.batch_size <= needed
    with pytest.raises(runner.MemoryLimitError) as caught:
        spider.prepare_spider_sosp(memory_limit=2**20)
    assert "--memory-limit" in caught.value.describe(cli=True)
    default = spider.prepare_spider_sosp()
    assert default.settings["samples"] == 100_000 and default.settings["d"] == 2 and default.plan.private
    assert default.settings["backend"] == BACKENDS[-1]


def test_python_api_refusals():
    for kwargs, error, fragment in (
            ({"problem": "ridge"}, ValueError, "problem"), ({"d": 0}, ValueError, "d"),
            ({"d": 2.0}, TypeError, "d"), ({"epsilon": float("nan")}, ValueError, "epsilon"),
            ({"epsilon": 1e-9}, ValueError, "epsilon"), ({"delta": 1.5}, ValueError, "delta"),
            ({"mode": "practical"}, ValueError, "mode"), ({"sigma_rule": "thm3.11"}, ValueError, "allow_nonprivate"),
            ({"allow_nonprivate": True}, ValueError, "thm3.11"), ({"perturb": 1}, TypeError, "perturb"),
            ({"epsilon": math.inf, "delta": 1e-5}, ValueError, "delta"),
            ({"epsilon": math.inf, "tree_scope": "segment"}, ValueError, "tree_scope"),
            ({"problem": "quadratic", "start": "saddle"}, ValueError, "saddle"),
            ({"noise_seed": 0}, ValueError, "noise_seed"), ({"noise_seed": 4, "data_seed": 4}, ValueError, "data_seed"),
            ({"noise_seed": "secret"}, TypeError, "noise_seed"), ({"backend": "gpu"}, ValueError, "backend")):
        with pytest.raises(error, match=fragment):
            spider.prepare_spider_sosp(**kwargs)
    with pytest.raises(TypeError, match="prepared"):
        spider.execute_spider_sosp({"settings": {}})


def test_the_secret_seed_is_nowhere_in_the_outcome_records(outcomes):
    outcome = outcomes["cosine", BACKENDS[0]]
    text = json.dumps(spider.spider_summary(outcome, include_nonprivate=True))
    text += json.dumps(spider.spider_ledger(outcome))
    text += repr(outcome.settings) + repr(spider.prepare_spider_sosp(samples=4000, noise_seed=int(SECRET)))
    for secret in _secret_strings(SECRET):
        assert secret not in text


@pytest.mark.parametrize("name", ["cosine", "quadratic"])
def test_nonprivate_training_diagnostics_are_the_empirical_loss(outcomes, name):
    """NOT PRIVATE diagnostics (on request only): the empirical loss F_D of the training records, computed from their
    means, equals the direct average of the per-record losses and gradients."""
    outcome = outcomes[name, BACKENDS[0]]
    problem = outcome.problem
    family, data = problem.family, problem.data
    record = spider.spider_nonprivate(outcome)
    for point, x in (("initial", problem.x0), ("last", outcome.result.iterates[-1])):
        gradient = np.mean(family.gradients(x, data), axis=0)
        assert record[f"training_grad_norm_{point}"] == pytest.approx(np.linalg.norm(gradient), rel=1e-9, abs=1e-12)
        assert record[f"training_objective_{point}"] == pytest.approx(np.mean([family.loss(x, z) for z in data]),
                                                                      rel=1e-9, abs=1e-12)
        if name == "quadratic":
            assert record[f"training_sosp_level_{point}"] == pytest.approx(
                sosp_level(gradient, family.A, problem.hessian_lipschitz), rel=1e-9)
    assert record["estimate_error_max"] >= record["estimate_error_median"] >= 0
