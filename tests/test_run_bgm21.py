"""``dpref run bgm21`` (dpref/run.py over reference/runner_bgm21.py): every algorithm on its problems at small sizes,
the reported measure recomputed independently from the published candidates (brute-force gaps, the module's exact
population through another route), the ε spent equal to the ledger's certification and within the target for the
defaults, the printed variants reported as exceeding it where the paper's formula is not private (bgm21.E10, E28),
the data fraction, both backends of Algorithms 1/6 agreeing bit for bit, the files written with --output and what they
must never contain (the secret seed, the records, the noiseless estimates and noise draws), reproducibility with a user
noise seed, and hostile inputs (one line on stderr, exit 2, no traceback, before anything large is built)."""

import io
import json
import math
import time
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from dpref import cli
from reference import runner
from reference import runner_bgm21 as bgm21
from reference.algorithms.bgm21_ledgers import privacy_report
from reference.algorithms.bgm21_sfw import sfw_data_budget
from reference.rng import Streams
from cli_refusals import refused

SECRET = "987654321987654321"
SMALL_N = {"polysfw": 2000, "nsfw": 2000, "noisy-fw": 400, "phased-sgd": 1024, "prox-smd": 600}
FILES = {"releases.csv", "trace.csv", "output.csv", "diagnostics.json", "ledger.json", "manifest.json"}
BACKENDS = ("reference", "fast") if bgm21.fast_bgm21_available() else ("reference",)

RUNS = {
    "polysfw": {"algorithm": "polysfw"},
    "polysfw-theory": {"algorithm": "polysfw", "schedule": "theory"},
    "nsfw-l2": {"algorithm": "nsfw"},
    "nsfw-l1.5": {"algorithm": "nsfw", "problem": "sigmoid-l1.5", "d": 6},
    "noisy-fw": {"algorithm": "noisy-fw", "d": 6},
    "phased-sgd": {"algorithm": "phased-sgd", "d": 5},
    "prox-smd": {"algorithm": "prox-smd", "d": 5},
}


def _run(name, **extra):
    kwargs = {**RUNS[name], **extra}
    kwargs.setdefault("n", SMALL_N[kwargs["algorithm"]])
    return bgm21.run_bgm21(**kwargs, seed=3, noise_seed=int(SECRET))


@pytest.fixture(scope="module")
def outcomes():
    return {name: _run(name, backend="reference") for name in RUNS}


def _brute_measure(outcome, w) -> float:
    """The theorem's measure at w computed without the problem's ``accuracy``: brute-force gaps over the vertices
    or the closed form λ‖g‖_q, the excess risk through ``population_risk`` minus the closed-form F*, the prox distance
    from a fresh, tighter solve."""
    P, algorithm = outcome.problem, outcome.settings["algorithm"]
    if algorithm == "polysfw":
        g = P.population_gradient(w)
        return max(float(np.dot(g, w - v)) for v in P.W.vertices)
    if algorithm == "nsfw":
        g = P.population_gradient(w)
        return float(np.dot(g, w)) + P.radius * float(np.linalg.norm(g, ord=P.p / (P.p - 1)))
    if algorithm in ("noisy-fw", "phased-sgd"):
        return P.population_risk(w) - P.L0 * P.noise_std * math.sqrt(2 / math.pi)
    tight = bgm21.build_bgm21_problem("sigmoid-wc", P.d, beta=P.beta)
    return float(np.linalg.norm(type(tight)(base=tight.base, beta=P.beta, tol=1e-14).prox(w).point - w))


@pytest.mark.parametrize("name", RUNS)
def test_measure_data_fraction_and_epsilon(outcomes, name):
    outcome = outcomes[name]
    record = bgm21.bgm21_summary(outcome)
    result, s = outcome.result, outcome.settings
    # the candidates are the run's: iterates of Algorithms 1, 6, 2 (uniform output), the single output otherwise
    if s["algorithm"] in ("polysfw", "nsfw", "prox-smd"):
        assert np.array_equal(outcome.candidates, result.iterates)
        assert np.array_equal(outcome.candidates[record["output_position"]], result.output)
    else:
        assert outcome.candidates.shape[0] == 1 and np.array_equal(outcome.candidates[0], result.output)
    brute = np.array([_brute_measure(outcome, w) for w in outcome.candidates])
    assert np.allclose(outcome.measures, brute, rtol=1e-9, atol=1e-12)
    assert record["measure_mean"] == pytest.approx(float(np.mean(brute)), rel=1e-9, abs=1e-12)
    assert record["measure_start"] == pytest.approx(_brute_measure(outcome, outcome.problem.start), rel=1e-9,
                                                    abs=1e-12)
    # the ε spent is the ledger's certification of this result, within the target for the default variants
    report = privacy_report(result, s["epsilon"], s["delta"])
    assert record["epsilon_spent"] == float(report.epsilon) and record["route"] == report.route
    assert record["meets_target"] and 0 < record["epsilon_spent"] <= s["epsilon"]
    # the fraction of the data read
    if s["algorithm"] in ("polysfw", "nsfw"):
        assert record["records_used"] == sfw_data_budget(outcome.config.batch_size, outcome.config.n_rounds)
    if s["algorithm"] == "noisy-fw":
        assert record["data_fraction"] == 1.0 and record["passes"] == outcome.params.steps - 1
    else:
        assert record["data_fraction"] == record["records_used"] / s["n"] and record["passes"] == 1
    assert record["records_used"] <= s["n"]


def test_theory_schedule_reads_a_small_fraction(outcomes):
    practical = bgm21.bgm21_summary(outcomes["polysfw"])
    theory = bgm21.bgm21_summary(outcomes["polysfw-theory"])
    assert practical["data_fraction"] > 0.99 and theory["data_fraction"] < 0.1
    assert theory["run_settings"]["rounds_R"] == 1


@pytest.mark.skipif(len(BACKENDS) < 2, reason="reference.fast.bgm21_sfw is not installed")
@pytest.mark.parametrize("name", ["polysfw", "nsfw-l2", "nsfw-l1.5", "prox-smd"])
def test_backends_agree_bitwise(outcomes, name):
    fast = _run(name, backend="fast")
    reference = outcomes[name]
    assert np.array_equal(fast.candidates, reference.candidates)
    assert np.array_equal(fast.measures, reference.measures)
    assert fast.report.epsilon == reference.report.epsilon


def test_printed_variants_exceed_the_target():
    """σ̂ with η_{r,t} (bgm21.E10) at ε = 4, δ = 1e-5 and Talwar–Thakurta–Zhang's Laplace scale (bgm21.E28) run as
    printed; their ledgers certify more than the target, and the summary says so."""
    printed = bgm21.run_bgm21("nsfw", n=2000, epsilon=4.0, delta=1e-5, sigma_hat_eta="printed", seed=1)
    record = bgm21.bgm21_summary(printed)
    assert record["sigma_hat_eta"] == "printed" and not record["meets_target"] and record["epsilon_spent"] > 4.0
    assert "EXCEEDS the target" in bgm21.render_bgm21(record)
    corrected = bgm21.run_bgm21("nsfw", n=2000, epsilon=4.0, delta=1e-5, seed=1)
    assert bgm21.bgm21_summary(corrected)["meets_target"]
    ttz = bgm21.run_bgm21("noisy-fw", n=300, d=4, laplace_scale="ttz15", seed=1)
    record = bgm21.bgm21_summary(ttz)
    assert record["laplace_scale"] == "ttz15" and record["epsilon_spent"] > 1.0 and not record["meets_target"]
    alpha = bgm21.run_bgm21("noisy-fw", n=300, d=4, alpha="printed", seed=1)
    assert alpha.params.alpha == 1 / (300 * math.log(300)) and bgm21.bgm21_summary(alpha)["meets_target"]
    beta = bgm21.run_bgm21("phased-sgd", n=256, d=3, beta="printed", seed=1)
    assert beta.params.beta_variant == "printed" and bgm21.bgm21_summary(beta)["meets_target"]


def test_records_come_from_the_data_seed_and_the_noise_from_the_secret(outcomes):
    again = _run("nsfw-l2", backend="reference")
    assert np.array_equal(again.candidates, outcomes["nsfw-l2"].candidates)  # same public and secret seeds
    fresh = bgm21.run_bgm21("nsfw", n=SMALL_N["nsfw"], seed=3)  # fresh secret entropy: other noise
    assert not np.array_equal(fresh.result.trace.noisy_estimates, outcomes["nsfw-l2"].result.trace.noisy_estimates)
    # the records are the data seed's draws: the first step's fresh mean, recomputed record by record as the
    # reference sums it, is the run's (NOT PRIVATE debug value, compared here only)
    outcome = outcomes["nsfw-l2"]
    P, trace = outcome.problem, outcome.result.trace
    rows = P.sample(SMALL_N["nsfw"], Streams(0).generator("dpref run", "bgm21", "sigmoid-l2"))
    total = np.zeros(P.d)
    for i in trace.batch_indices[0]:
        total += P.gradient(P.start, rows[i])
    assert np.array_equal(outcome.result.debug.estimates[0], total / trace.batch_sizes[0])


@pytest.mark.parametrize("name", ["polysfw", "nsfw-l2", "noisy-fw", "phased-sgd", "prox-smd"])
def test_publication_files_hold_only_public_values(outcomes, name):
    outcome = outcomes[name]
    files = bgm21.bgm21_publication(outcome, command=f"dpref run bgm21 --noise-seed {SECRET}")
    assert set(files) == FILES
    output = pd.read_csv(io.StringIO(files["output.csv"]))
    d = outcome.problem.d
    assert np.array_equal(output[[f"x_{j}" for j in range(d)]].to_numpy(), outcome.candidates)
    assert np.array_equal(output["population_measure"].to_numpy(), outcome.measures)
    assert int(output["is_output"].sum()) == 1
    ledger = json.loads(files["ledger.json"])
    assert ledger["epsilon_spent"] == float(outcome.report.epsilon) and ledger["secret_seed_source"] == "user"
    manifest = json.loads(files["manifest.json"])
    assert "--noise-seed <secret>" in manifest["command"] and "noise_seed" not in json.dumps(manifest["settings"])
    # never: the secret seed, the records, what the debug traces hold (noiseless estimates, noise draws)
    result = outcome.result
    s = outcome.settings
    rng = Streams(s["data_seed"]).generator("dpref run", "bgm21", s["problem"])
    sample = outcome.problem.sample(s["n"], rng)
    records = sample[0] if isinstance(sample, tuple) else sample
    hidden = {repr(float(v)) for v in np.asarray(records).reshape(-1)[:300] if v not in (0.0, 1.0, -1.0)}
    debug = result.debug
    arrays = [np.asarray(getattr(debug, f)) for f in ("estimates", "gradient_noise", "difference_noise",
                                                      "phase_averages", "noises", "gradients", "scores")
              if hasattr(debug, f)]
    if isinstance(debug, tuple):  # Algorithm 2: one solver debug trace per round
        arrays = [np.asarray(t.mean_gradients) for t in debug[:3]] + [np.asarray(t.noises) for t in debug[:3]]
    hidden |= {repr(float(v)) for a in arrays for v in a.reshape(-1)[:300] if v != 0}
    assert hidden
    for file_name, text in files.items():
        assert SECRET not in text and f"{int(SECRET):x}" not in text, file_name
        for value in hidden:
            assert value not in text, (file_name, value)
    with pytest.raises(ValueError, match="include_nonprivate"):
        bgm21.bgm21_publication(outcome, command="x", include_nonprivate=True)


# --- the command line --------------------------------------------------------------------------------------------


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_table_files_and_no_secret(capsys, tmp_path):
    code, out, err = run(capsys, "run", "bgm21", "--algorithm", "nsfw", "--n", "1500", "--format", "json", "-q")
    assert code == 0, err
    record = json.loads(out)
    assert record["algorithm"] == "nsfw" and record["problem"] == "sigmoid-l2" and record["n"] == 1500
    assert record["meets_target"] and record["epsilon_spent"] <= 1.0 and record["secret_seed_source"] == "os_entropy"
    target = tmp_path / "out"
    code, out, err = run(capsys, "run", "bgm21", "--algorithm", "polysfw", "--n", "1500", "--noise-seed", SECRET,
                         "--output", str(target), "-q")
    assert code == 0, err
    for label in ("Algorithm 1", "data used", "privacy", "route", "E over output", "at the output", "files"):
        assert label in out, label
    assert {p.name for p in target.iterdir()} == FILES
    for text in [out, err, *(p.read_text() for p in target.iterdir())]:
        assert SECRET not in text
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["summary"]["algorithm"] == "polysfw" and "<secret>" in manifest["command"]


def test_cli_runs_every_algorithm(capsys):
    for algorithm, extra in (("noisy-fw", ["--n", "300", "--d", "4"]), ("phased-sgd", ["--n", "300", "--d", "3"]),
                             ("prox-smd", ["--n", "300", "--d", "3"]),
                             ("nsfw", ["--n", "600", "--problem", "sigmoid-l1.5", "--sigma-hat-eta", "printed"])):
        code, out, err = run(capsys, "run", "bgm21", "--algorithm", algorithm, *extra, "--format", "json", "-q")
        assert code == 0, err
        record = json.loads(out)
        assert record["algorithm"] == algorithm and math.isfinite(record["measure_mean"])


def test_cli_progress(capsys, monkeypatch):
    monkeypatch.setattr(runner, "PROGRESS_DELAY", 0.0)
    code, out, err = run(capsys, "run", "bgm21", "--algorithm", "phased-sgd", "--n", "3000", "--d", "3")
    assert code == 0 and "dpref run bgm21" in err
    code, out, err = run(capsys, "run", "bgm21", "--algorithm", "phased-sgd", "--n", "3000", "--d", "3", "-q")
    assert code == 0 and err == ""


def test_cli_help_lists_the_options(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = capsys.readouterr().out
    for option in ("bgm21", "--algorithm", "--schedule", "--sigma-hat-eta", "--laplace-scale", "--beta", "--alpha",
                   "polysfw", "prox-smd", "ttz15"):
        assert option in out, option


B = ["bgm21", "--algorithm", "polysfw"]
HOSTILE = [
    # sizes: negative, not a number, huge
    (B + ["--n", "-5"], ["--n"]),
    (B + ["--n", "0"], ["--n"]),
    (B + ["--n", "nan"], ["--n"]),
    (B + ["--n", "1e5"], ["--n"]),
    (B + ["--n", "1000000000000"], ["--n", "<= 100000000"]),
    (B + ["--d", "1"], ["--d", ">= 2"]),
    (B + ["--d", "100000000"], ["--d", "<= 200"]),
    (B + ["--n", "100000000", "--d", "200", "--memory-limit", "1G"], ["of memory", "--memory-limit 1 GiB", "--n"]),
    # ε and δ
    (B + ["--epsilon", "0"], ["--epsilon"]),
    (B + ["--epsilon", "-1"], ["--epsilon"]),
    (B + ["--epsilon", "nan"], ["--epsilon"]),
    (B + ["--epsilon", "inf"], ["--epsilon", "finite"]),
    (B + ["--epsilon", "1e9"], ["--epsilon", "[0.001, 1000]"]),
    (B + ["--delta", "0"], ["--delta"]),
    (B + ["--delta", "1"], ["--delta"]),
    (B + ["--delta", "1.5"], ["--delta"]),
    (B + ["--delta", "-1e-5"], ["--delta"]),
    (B + ["--delta", "nan"], ["--delta"]),
    # unknown names, mismatches
    (["bgm21"], ["--algorithm is required"]),
    (["bgm21", "--algorithm", "sgd"], ["--algorithm", "polysfw"]),
    (B + ["--problem", "wshape"], ["--problem", "sigmoid-l1"]),
    (B + ["--problem", "abs-cube"], ["--problem", "not a problem of polysfw"]),
    (["bgm21", "--algorithm", "noisy-fw", "--d", "15"], ["--d must be <= 14", "enumeration"]),
    (B + ["--backend", "gpu"], ["--backend"]),
    (["bgm21", "--algorithm", "phased-sgd", "--backend", "fast"], ["fast", "prox-smd", "only"]),
    (B + ["--format", "xml"], ["--format"]),
    # variants: unknown values, and those of another algorithm
    (B + ["--schedule", "fast"], ["--schedule", "practical"]),
    (B + ["--sigma-hat-eta", "printed"], ["--sigma-hat-eta", "does not apply to polysfw"]),
    (["bgm21", "--algorithm", "nsfw", "--sigma-hat-eta", "paper"], ["--sigma-hat-eta", "prev"]),
    (B + ["--laplace-scale", "ttz15"], ["--laplace-scale", "noisy-fw"]),
    (["bgm21", "--algorithm", "noisy-fw", "--laplace-scale", "tight"], ["--laplace-scale", "certified"]),
    (B + ["--beta", "printed"], ["--beta", "phased-sgd"]),
    (B + ["--alpha", "printed"], ["--alpha", "noisy-fw"]),
    (["bgm21", "--algorithm", "phased-sgd", "--schedule", "theory"], ["--schedule", "polysfw, nsfw"]),
    # over-budget schedules
    (["bgm21", "--algorithm", "noisy-fw", "--n", "1000000"], ["gradient evaluations", "budget", "reduce --n"]),
    (["bgm21", "--algorithm", "phased-sgd", "--n", "5000000", "--memory-limit", "1T"], ["budget", "--n"]),
    (B + ["--n", "20000000", "--backend", "reference", "--memory-limit", "1T"], ["budget", "--n"]),
    (B + ["--memory-limit", "1K"], ["--memory-limit"]),
    # options of the other algorithms, with the reason, and bgm21's for them
    (B + ["--steps", "10"], ["--steps", "does not apply to bgm21"]),
    (B + ["--samples", "100"], ["--samples", "--n"]),
    (B + ["--sigma-rule", "exact"], ["--sigma-rule"]),
    (B + ["--include-nonprivate"], ["--include-nonprivate"]),
    (B + ["--clip", "1"], ["--clip"]),
    (["dpzero", "--algorithm", "polysfw"], ["--algorithm", "bgm21 only"]),
    (["spider_sosp", "--beta", "printed"], ["--beta", "bgm21 only"]),
    (["nsnc_improved", "--oracle", "single-pass", "--schedule", "theory"], ["--schedule", "bgm21 only"]),
    # the secret seed
    (B + ["--noise-seed", "7", "--data-seed", "7"], ["--noise-seed", "--data-seed"]),
    (B + ["--noise-seed", "9", "--seed", "9"], ["--noise-seed", "--seed"]),
    (B + ["--noise-seed", "-3"], ["--noise-seed"]),
    (B + ["--noise-seed", str(2**130)], ["--noise-seed"]),
    (B + ["--seed", "-1"], ["--seed"]),
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
        if value not in ("7", "9"):
            assert value not in line and value.lstrip("-") not in line, line


def test_output_directory_refusals_and_refused_runs_write_nothing(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    line = refused(capsys, *B, "--n", "500", "--output", str(blocker / "out"))
    assert "--output" in line and "not a directory" in line
    full = tmp_path / "full"
    full.mkdir()
    (full / "old.txt").write_text("old")
    line = refused(capsys, *B, "--n", "500", "--output", str(full))
    assert "--overwrite" in line and [p.name for p in full.iterdir()] == ["old.txt"]
    code, out, err = run(capsys, "run", *B, "--n", "500", "--output", str(full), "--overwrite", "-q")
    assert code == 0 and FILES <= {p.name for p in full.iterdir()}
    target = tmp_path / "never"
    refused(capsys, *B, "--epsilon", "0", "--output", str(target))
    refused(capsys, "bgm21", "--algorithm", "noisy-fw", "--n", "1000000", "--output", str(target))
    assert not target.exists()  # refused before the output directory is created


def test_unwritable_output_directory(capsys, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        try:
            (locked / "probe").write_text("x")
        except OSError:
            pass
        else:  # running as root: permissions do not bind
            pytest.skip("permissions are not enforced for this user")
        line = refused(capsys, *B, "--n", "500", "--output", str(locked / "out"))
        assert "--output" in line and "cannot create" in line
    finally:
        locked.chmod(0o700)


def test_python_api_refusals():
    with pytest.raises(ValueError, match="algorithm must be one of"):
        bgm21.prepare_bgm21("sgd")
    with pytest.raises(TypeError, match="n must be an integer"):
        bgm21.prepare_bgm21("polysfw", n=1000.0)
    with pytest.raises(ValueError, match="noise_seed must differ"):
        bgm21.prepare_bgm21("polysfw", seed=5, noise_seed=5)
    with pytest.raises(bgm21.BudgetExceeded, match="budget"):
        bgm21.prepare_bgm21("noisy-fw", n=10**6)
    with pytest.raises(TypeError, match="prepared must be"):
        bgm21.execute_bgm21({})


def test_the_facade_reexports_the_implementations():
    """``reference.algorithms.bgm21`` defines nothing: every name is the submodule's own object."""
    import importlib

    from reference.algorithms import bgm21 as facade

    homes = ("reference.algorithms.bgm21_sfw", "reference.algorithms.bgm21_gll", "reference.algorithms.bgm21_prox",
             "reference.algorithms.bgm21_theory", "reference.algorithms.bgm21_accounting",
             "reference.algorithms.bgm21_ledgers", "reference.algorithms.bgm21_privacy", "reference.gll")
    modules = [importlib.import_module(m) for m in homes]
    for name in facade.__all__:
        if name in ("ALGORITHMS", "THEOREMS"):
            continue
        obj = getattr(facade, name)
        assert any(getattr(m, name, None) is obj for m in modules), name
        assert obj.__module__ != facade.__name__, name
    for table in (facade.ALGORITHMS, facade.THEOREMS):
        assert all(hasattr(facade, entry) for entry in table.values())
