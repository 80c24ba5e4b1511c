"""reference/runner.py: the problems and their held-out sets, the diagnostics, seeds (public replicate seeds,
secret seeds never written), the files of ``publication`` and what they must not contain."""

import ast
import json
import math
from pathlib import Path

import numpy as np
import pytest

from reference import runner
from reference.algorithms import dpzero as reference_dpzero
from reference.objectives import EffectiveRankQuadratic
from reference.objectives_dpzero import SubspaceLogistic
from reference.rng import Streams
from reference.secrets import replicate_seeds, secret_seed, secret_seeds

SECRET = 987654321987654321
SMALL = {"d": 6, "n": 30, "steps": 10, "step_size": 0.1, "clip": 2.0}
#: Keys of training-set quantities: never in a default file.
TRAINING_KEYS = ("clip_counts", "batch_sizes", "loss_evaluations", "gradient_evaluations", "clip_fraction",
                 "nonfinite", "training_grad_norm_sq", "seconds")


def _secret_strings(value: int) -> list[str]:
    return [str(value), hex(value), hex(value)[2:], f"{value:e}", repr(float(value))]


# --- problems and held-out sets ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["identity", "sqrt", "harmonic"])
def test_quadratic_training_and_held_out_sets(mode):
    training = runner.build_problem("quadratic", d=6, n=30, mode=mode, data_seed=3)
    expected = EffectiveRankQuadratic(6, 30, mode, Streams(3).generator("dpref run", "quadratic"))
    np.testing.assert_array_equal(training.data, expected.data)
    held = runner.held_out_problem("quadratic", d=6, n=30, mode=mode, data_seed=3, size=50)
    own = EffectiveRankQuadratic(6, 50, mode, Streams(3).generator("dpref run", "quadratic", "held-out"))
    np.testing.assert_array_equal(held.data, own.data)
    assert held.n == 50 and held.mode == mode
    np.testing.assert_array_equal(held.hessian_diagonal, training.hessian_diagonal)  # the same law
    assert not np.any(np.isin(held.data, training.data))  # independent rows


def test_subspace_logistic_held_out_shares_the_law():
    """The held-out rows share U and the planted direction w with the training rows; only the rows are new."""
    d, k, n = 9, 3, 4000
    training = runner.build_problem("subspace-logistic", d=d, n=n, k=k, data_seed=5)
    held = runner.held_out_problem("subspace-logistic", d=d, n=n, k=k, data_seed=5, size=3000)
    assert isinstance(held, SubspaceLogistic) and held.k == k and held.n == 3000
    np.testing.assert_array_equal(held.basis, training.basis)
    assert not np.any(np.isin(held.coefficients, training.coefficients))

    def planted(problem):  # E[b c] is parallel to w (labels agree with sign <c, w> 90% of the time)
        v = (problem.labels[:, None] * problem.coefficients).mean(axis=0)
        return v / np.linalg.norm(v)

    assert planted(held) @ planted(training) > 0.98
    # the naive construction (the class on another generator) draws another subspace: another law
    naive = SubspaceLogistic(d, 100, k, Streams(5).generator("dpref run", "subspace-logistic", "held-out"))
    assert np.max(np.abs(naive.basis - training.basis)) > 0.1
    # the label-flip rate of the law is kept: about 10% of held-out labels disagree with the planted direction
    w = training.basis.T @ (training.basis @ planted(training))
    disagree = np.mean(np.sign(held.coefficients @ w) != held.labels)
    assert 0.06 < disagree < 0.16


def test_problem_errors_name_the_parameter():
    with pytest.raises(ValueError, match="problem"):
        runner.build_problem("cubic", d=3, n=4)
    with pytest.raises(ValueError, match="size"):
        runner.held_out_problem("quadratic", d=3, n=4, size=0)
    with pytest.raises(ValueError, match="data_seed"):
        runner.build_problem("quadratic", d=3, n=4, data_seed=-1)


@pytest.mark.parametrize("problem", ["quadratic", "subspace-logistic"])
def test_objective_value_and_gradient_norm(problem):
    objective = runner.held_out_problem(problem, d=7, n=25, k=2, mode="sqrt", data_seed=1)
    value, norm = runner.objective_value(objective), runner.squared_gradient_norm(objective)
    points = np.random.default_rng(0).normal(size=(4, 7))
    for x in points:  # the objective's own F and ∇F
        assert value(x) == pytest.approx(objective.empirical_loss(x), rel=1e-12)
        assert norm(x) == pytest.approx(float(np.sum(objective.empirical_gradient(x) ** 2)), rel=1e-12)
    np.testing.assert_allclose(value(points), [value(x) for x in points], rtol=1e-15)
    np.testing.assert_allclose(norm(points), [norm(x) for x in points], rtol=1e-15)

    class Plain:  # only the duck-typed interface: loss, gradient, data, d
        def __init__(self, inner):
            self.loss, self.gradient, self.data, self.d = inner.loss, inner.gradient, inner.data, inner.d

    plain = Plain(objective)
    np.testing.assert_allclose(runner.objective_value(plain)(points), value(points), rtol=1e-12)
    np.testing.assert_allclose(runner.squared_gradient_norm(plain)(points), norm(points), rtol=1e-12)


# --- runs: seeds ------------------------------------------------------------------------------------------


def test_without_a_secret_seed_two_runs_with_the_same_public_seed_differ():
    first = runner.run_algorithm("dpzero", seed=4, backend="reference", **SMALL)
    second = runner.run_algorithm("dpzero", seed=4, backend="reference", **SMALL)
    assert first.secret_seed_source == second.secret_seed_source == "os_entropy"
    assert first.output_index.tolist() == second.output_index.tolist()  # τ is public
    assert not np.array_equal(first.releases, second.releases)
    assert "noise_seed" not in first.settings and first.settings["secret_seed_source"] == "os_entropy"


def test_a_user_secret_seed_reproduces_and_records_its_condition():
    first = runner.run_algorithm("dpzero", seed=4, noise_seed=SECRET, backend="reference", **SMALL)
    second = runner.run_algorithm("dpzero", seed=4, noise_seed=SECRET, backend="fast", **SMALL)
    np.testing.assert_allclose(first.releases, second.releases, rtol=1e-10)
    assert first.secret_seed_source == "user"
    assert first.guarantee_condition == secret_seed(SECRET).guarantee_condition
    assert first.result.ledger.secret_seed_source == "user"


@pytest.mark.parametrize("replicates", [2, 3])
def test_replicate_public_seeds_are_spawned_not_seed_plus_r(replicates):
    outcome = runner.run_algorithm("dpzero", seed=5, noise_seed=SECRET, replicates=replicates, **SMALL)
    assert outcome.seeds == replicate_seeds(5, replicates)
    assert not set(outcome.seeds) & set(range(5, 5 + replicates + 1))
    assert outcome.heldout_objective.shape == (replicates, 11) and outcome.releases.shape == (replicates, 10)
    # replicate 1 is the single reference run with its public seed and its spawned secret seed
    public = sorted(set(outcome.seeds) | {5, 0})
    secret = secret_seeds(SECRET, replicates, public_seeds=public)[1]
    single = runner.run_algorithm("dpzero", seed=outcome.seeds[1], noise_seed=secret, backend="reference", **SMALL)
    np.testing.assert_allclose(outcome.releases[1], single.releases[0], rtol=1e-10)
    np.testing.assert_allclose(outcome.heldout_grad_norm_sq[1], single.heldout_grad_norm_sq[0], rtol=1e-10)


def test_secret_seed_errors_never_echo_the_secret():
    with pytest.raises(ValueError, match="noise_seed") as equal_to_seed:
        runner.run_algorithm("dpzero", seed=SECRET, noise_seed=SECRET, **SMALL)
    with pytest.raises(ValueError, match="data_seed") as equal_to_data:
        runner.run_algorithm("dpzero", data_seed=SECRET, noise_seed=SECRET, **SMALL)
    for exc in (equal_to_seed, equal_to_data):
        assert str(SECRET) not in str(exc.value)
    with pytest.raises(ValueError, match="mezo"):
        runner.run_algorithm("mezo", noise_seed=SECRET, d=4, n=10, steps=3)
    with pytest.raises(ValueError, match="replicates"):
        runner.run_algorithm("dpzero", replicates=2, backend="reference", **SMALL)
    with pytest.raises(ValueError, match="algorithm"):
        runner.run_algorithm("sgd", **SMALL)
    with pytest.raises(ValueError, match="held_out"):
        runner.run_algorithm("dpzero", held_out=runner.build_problem("quadratic", d=6, n=5), **SMALL)


# --- runs: held-out diagnostics ---------------------------------------------------------------------------


@pytest.mark.parametrize("problem", ["quadratic", "subspace-logistic"])
def test_diagnostics_are_computed_on_the_held_out_data(problem):
    kwargs = dict(SMALL, problem=problem, data_seed=2)
    if problem == "subspace-logistic":
        kwargs["k"] = 2
    outcome = runner.run_algorithm("dpzero", seed=3, noise_seed=SECRET, backend="reference", **kwargs)
    training, held = outcome.objective, outcome.held_out
    assert held is not training and not np.array_equal(held.data, training.data)
    direct = reference_dpzero.dpzero(training.loss, training.data, np.zeros(6), steps=10, step_size=0.1,
                                     perturbation=1e-4, clip_threshold=2.0, epsilon=2.0, delta=1e-6, seed=3,
                                     noise_seed=SECRET, record_trajectory=True)
    np.testing.assert_array_equal(outcome.releases[0], direct.releases)
    path = direct.trajectory
    np.testing.assert_allclose(outcome.heldout_objective[0], [held.empirical_loss(x) for x in path], rtol=1e-12)
    np.testing.assert_allclose(outcome.heldout_grad_norm_sq[0],
                               [np.sum(held.empirical_gradient(x) ** 2) for x in path], rtol=1e-12)
    np.testing.assert_allclose(outcome.training_grad_norm_sq[0],
                               [np.sum(training.empirical_gradient(x) ** 2) for x in path], rtol=1e-12)
    assert not np.allclose(outcome.heldout_grad_norm_sq, outcome.training_grad_norm_sq)
    record = runner.summary(outcome)
    tau = int(outcome.output_index[0])
    assert record["heldout_grad_norm_sq_output"] == outcome.heldout_grad_norm_sq[0, tau]
    assert record["heldout_objective_mean"] == pytest.approx(np.mean(outcome.heldout_objective[0, :10]), rel=1e-15)
    assert record["heldout_objective_final"] == outcome.heldout_objective[0, -1]
    assert record["effective_rank"] == pytest.approx(held.effective_rank)


def test_a_callers_problem_objects():
    """objective/held_out: the duck-typed interface (loss, gradient, data, d, name; objective_value and
    squared_gradient_norm optional)."""
    base = runner.build_problem("quadratic", d=4, n=12, mode="identity", data_seed=9)
    other = runner.held_out_problem("quadratic", d=4, n=12, mode="identity", data_seed=9)

    class Canary:
        name = "canary"

        def __init__(self, inner):
            self.loss, self.gradient, self.data, self.d = inner.loss, inner.gradient, inner.data, inner.d

    class HeldOut(Canary):
        def objective_value(self, x):
            return runner.objective_value(other)(x)

        def squared_gradient_norm(self, x):
            return runner.squared_gradient_norm(other)(x)

    for backend, replicates in (("reference", 1), ("fast", 3)):
        outcome = runner.run_algorithm("dpgd", objective=Canary(base), held_out=HeldOut(other), steps=6,
                                       step_size=0.2, clip=1.0, perturbation=None, seed=1, backend=backend,
                                       replicates=replicates)
        assert outcome.settings["problem"] == "canary" and outcome.settings["n"] == 12
        assert outcome.settings["data_seed"] is None and outcome.heldout_objective.shape == (replicates, 7)
        assert outcome.releases.shape == (replicates, 6, 4)
    bare = runner.run_algorithm("dpzero", objective=Canary(base), steps=5, step_size=0.1, clip=1.0)
    assert bare.heldout_objective is None and bare.training_grad_norm_sq is None
    files = runner.publication(bare, command="audit")
    assert "trajectory.csv" not in files and "releases.csv" in files


# --- publication ------------------------------------------------------------------------------------------


def _read_csv(text: str):
    lines = text.strip().split("\n")
    return lines[0].split(","), [line.split(",") for line in lines[1:]]


def test_publication_files_are_exact_and_hold_no_training_quantity():
    outcome = runner.run_algorithm("dpzero", seed=2, noise_seed=SECRET, replicates=2, **SMALL)
    command = f"dpref run dpzero --seed 2 --noise-seed {SECRET} --replicates 2"
    files = runner.publication(outcome, command=command)
    assert set(files) == {"releases.csv", "trajectory.csv", "ledger.json", "manifest.json"}
    header, rows = _read_csv(files["releases.csv"])
    assert header == ["replicate", "t", "release"] and len(rows) == 2 * 10
    released = np.array([[float(row[2]) for row in rows if int(row[0]) == r] for r in range(2)])
    np.testing.assert_array_equal(released, outcome.releases)  # repr-exact
    header, rows = _read_csv(files["trajectory.csv"])
    assert header == ["replicate", "t", "heldout_objective", "heldout_grad_norm_sq"] and len(rows) == 2 * 11
    np.testing.assert_array_equal(np.array([float(row[2]) for row in rows]).reshape(2, 11), outcome.heldout_objective)
    np.testing.assert_array_equal(np.array([float(row[3]) for row in rows]).reshape(2, 11),
                                  outcome.heldout_grad_norm_sq)
    ledger = json.loads(files["ledger.json"])
    assert ledger["secret_seed_source"] == "user" and "secret" in ledger["guarantee_condition"]
    assert [run["seed"] for run in ledger["runs"]] == list(outcome.seeds)
    assert [run["output_index"] for run in ledger["runs"]] == outcome.output_index.tolist()
    assert ledger["plan"]["noise_std"] == outcome.result.ledger.plan.noise_std
    manifest = json.loads(files["manifest.json"])
    assert manifest["command"] == "dpref run dpzero --seed 2 --noise-seed <secret> --replicates 2"
    assert manifest["seeds"]["seed"] == list(outcome.seeds)
    assert manifest["files"] == sorted(files)
    assert {"numpy", "scipy", "mpmath", "dpref", "python"} <= set(manifest["versions"])
    assert manifest["summary"] == runner.summary(outcome)
    for name, text in files.items():
        for secret in _secret_strings(SECRET):
            assert secret not in text, (name, secret)
        for key in TRAINING_KEYS:
            assert key not in text, (name, key)
    # deterministic given the outcome, up to the creation time
    again = runner.publication(outcome, command=command)
    for name in files:
        strip = (lambda t: "\n".join(line for line in t.split("\n") if '"created"' not in line))
        assert strip(again[name]) == strip(files[name]), name


def test_nonprivate_diagnostics_only_on_request():
    outcome = runner.run_algorithm("dpzero", seed=2, batching="poisson", batch_size=10, **SMALL)
    assert "nonprivate" not in runner.summary(outcome)
    record = runner.summary(outcome, include_nonprivate=True)["nonprivate"]
    assert record["warning"].startswith("NOT PRIVATE")
    files = runner.publication(outcome, command="dpref run dpzero", include_nonprivate=True)
    assert "nonprivate_diagnostics.json" in files
    diagnostics = json.loads(files["nonprivate_diagnostics.json"])
    assert diagnostics["warning"].startswith("NOT PRIVATE")
    (run,) = diagnostics["runs"]
    single = outcome.diagnostics(0)
    assert run["clip_counts"] == list(single.clip_counts) and run["batch_sizes"] == list(single.batch_sizes)
    assert run["loss_evaluations"] == 2 * sum(single.batch_sizes) == diagnostics["loss_evaluations"]
    np.testing.assert_array_equal(run["training_grad_norm_sq"], outcome.training_grad_norm_sq[0])
    assert "nonprivate_diagnostics.json" in json.loads(files["manifest.json"])["files"]
    for name in ("releases.csv", "trajectory.csv", "ledger.json", "manifest.json"):
        for key in TRAINING_KEYS:
            assert key not in files[name], (name, key)


@pytest.mark.parametrize("algorithm, columns", [("dpgd0", 6), ("dpgd", 6), ("mezo", 1)])
def test_release_columns(algorithm, columns):
    kwargs = dict(SMALL)
    if algorithm == "dpgd":
        kwargs["perturbation"] = None
    if algorithm == "mezo":
        kwargs.update(epsilon=None, delta=None, clip=math.inf)
    outcome = runner.run_algorithm(algorithm, seed=1, **kwargs)
    header, rows = _read_csv(runner.publication(outcome, command="x")["releases.csv"])
    expected = ["release"] if columns == 1 else [f"release_{j}" for j in range(columns)]
    assert header == ["replicate", "t", *expected] and len(rows) == 10
    values = np.array([[float(v) for v in row[2:]] for row in rows])
    np.testing.assert_array_equal(values.reshape(outcome.releases[0].shape), outcome.releases[0])
    ledger = json.loads(runner.publication(outcome, command="x")["ledger.json"])
    if algorithm == "mezo":
        assert ledger["plan"] is None and ledger["secret_seed_source"] is None
        assert runner.summary(outcome)["clip"] == "inf"


@pytest.mark.parametrize("command, expected", [
    ("dpref run dpzero --noise-seed 123 --seed 4", "dpref run dpzero --noise-seed <secret> --seed 4"),
    ("dpref run dpzero --noise-seed=123", "dpref run dpzero --noise-seed=<secret>"),
    ("dpref run dpzero --noise 123 --d 3", "dpref run dpzero --noise <secret> --d 3"),
    ("dpref run dpzero --nois=123", "dpref run dpzero --nois=<secret>"),
    (["dpref", "run", "dpzero", "--noise-seed", "123"], "dpref run dpzero --noise-seed '<secret>'"),
    (["dpref", "run", "--noise-s=123", "--seed", "123"], "dpref run '--noise-s=<secret>' --seed 123"),
    ("dpref run dpzero --seed 123", "dpref run dpzero --seed 123"),
])
def test_mask_command(command, expected):
    assert runner.mask_command(command) == expected


def test_table_marks_the_nonprivate_section():
    outcome = runner.run_algorithm("dpzero", seed=1, **SMALL)
    text = runner.render_table(runner.summary(outcome))
    assert "NOT PRIVATE" not in text and "clip fraction" not in text and "held-out" in text
    text = runner.render_table(runner.summary(outcome, include_nonprivate=True))
    public, private = text.split("NOT PRIVATE")
    assert "clip fraction" in private and "evaluations" in private and "train |grad F|^2" in private
    assert "clip fraction" not in public


def test_reference_imports_nothing_from_the_layers_above():
    tree = ast.parse(Path(runner.__file__).read_text())
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    modules |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {m for m in modules if m.split(".")[0] in {"dpref", "proofs_checks", "empirical_dp"}}


# --- refusals of run_algorithm: every parameter checked before anything is built ---------------------------


@pytest.mark.parametrize(
    "kwargs, error, fragment",
    [
        ({"replicates": 0}, ValueError, "replicates must be >= 1"),
        ({"replicates": -2}, ValueError, "replicates must be >= 1"),
        ({"replicates": True}, TypeError, "replicates must be an integer"),
        ({"replicates": 2.0}, TypeError, "replicates must be an integer"),
        ({"steps": 0}, ValueError, "steps must be >= 1"),
        ({"steps": True}, TypeError, "steps must be an integer"),
        ({"steps": 10.5}, TypeError, "steps must be an integer"),
        ({"d": 0}, ValueError, "d must be >= 1"),
        ({"d": True}, TypeError, "d must be an integer"),
        ({"n": 0}, ValueError, "n must be >= 1"),
        ({"n": np.float64(30)}, TypeError, "n must be an integer"),
        ({"held_out_n": 0}, ValueError, "held_out_n must be >= 1"),
        ({"held_out_n": False}, TypeError, "held_out_n must be an integer"),
        ({"step_size": 0.0}, ValueError, "step_size must be > 0"),
        ({"step_size": -0.1}, ValueError, "step_size must be > 0"),
        ({"step_size": math.nan}, ValueError, "step_size must be a finite real number"),
        ({"step_size": math.inf}, ValueError, "step_size must be a finite real number"),
        ({"step_size": "0.1"}, TypeError, "step_size must be a real number"),
        ({"step_size": True}, TypeError, "step_size must be a real number"),
        ({"perturbation": 0.0}, ValueError, "perturbation must be > 0"),
        ({"perturbation": None}, ValueError, "perturbation must be a finite real number > 0"),
        ({"clip": 0.0}, ValueError, "clip must be > 0"),
        ({"clip": math.inf}, ValueError, "clip must be finite for a private algorithm"),
        ({"clip": math.nan}, ValueError, "clip must be a finite real number"),
        ({"epsilon": 0.0}, ValueError, "epsilon must be > 0"),
        ({"epsilon": math.inf}, ValueError, "epsilon must be a finite real number"),
        ({"delta": 1.0}, ValueError, "delta must lie in (0, 1)"),
        ({"delta": 0.0}, ValueError, "delta must lie in (0, 1)"),
        ({"batching": "mini"}, ValueError, "batching must be one of"),
        ({"batching": "poisson"}, ValueError, "needs batch_size"),
        ({"batching": "poisson", "batch_size": 0}, ValueError, "batch_size must be >= 1"),
        ({"batching": "shuffle", "batch_size": 31}, ValueError, "batch_size must be <= 30"),
        ({"batch_size": 5}, ValueError, "batch_size must be None for batching='full'"),
        ({"batching": "poisson", "batch_size": 5, "sampling_probability": 0.0}, ValueError,
         "sampling_probability must lie in (0, 1]"),
        ({"batching": "poisson", "batch_size": 5, "sampling_probability": 0.5}, ValueError,
         "held_out_n is required"),
        ({"sampling_probability": 0.5}, ValueError, "sampling_probability must be None for batching='full'"),
        ({"accountant": "nope"}, ValueError, "accountant must be one of"),
        ({"direction": "unit"}, ValueError, "direction must be one of"),
        ({"seed": -1}, ValueError, "seed must be >= 0"),
        ({"data_seed": True}, TypeError, "data_seed must be an integer"),
        ({"progress": 1}, TypeError, "progress must be a bool"),
        ({"memory_limit": 0}, ValueError, "memory_limit must be >= 1"),
        ({"memory_limit": True}, TypeError, "memory_limit must be an integer"),
        ({"backend": "gpu"}, ValueError, "backend must be one of"),
        ({"problem": "cubic"}, ValueError, "problem must be one of"),
        ({"mode": "cubic"}, ValueError, "mode must be one of"),
        ({"problem": "subspace-logistic", "k": 0}, ValueError, "k must be >= 1"),
        ({"problem": "subspace-logistic", "k": 7}, ValueError, "k must be <= 6"),
    ],
)
def test_run_algorithm_refuses_bad_settings(monkeypatch, kwargs, error, fragment):
    monkeypatch.setattr(runner, "build_problem", _must_not_build)  # refused before anything is built
    with pytest.raises(error) as caught:
        runner.run_algorithm("dpzero", **{**SMALL, **kwargs})
    assert fragment in str(caught.value)


def _must_not_build(*args, **kwargs):
    raise AssertionError("the problem was built before the settings were checked")


def test_mezo_takes_no_privacy_settings():
    for param, value in (("epsilon", 2.0), ("delta", 1e-6), ("accountant", "lemma22")):
        with pytest.raises(ValueError, match=f"{param} must be None for mezo"):
            runner.run_algorithm("mezo", d=4, n=10, steps=3, **{param: value})
    outcome = runner.run_algorithm("mezo", d=4, n=10, steps=3, clip=math.inf)
    assert outcome.settings["epsilon"] is None and outcome.settings["delta"] is None
    with pytest.raises(ValueError, match="clip must be a finite real number"):
        runner.run_algorithm("mezo", d=4, n=10, steps=3, clip=math.nan)
    private = runner.run_algorithm("dpzero", **SMALL)  # epsilon, delta default for a private algorithm
    assert (private.settings["epsilon"], private.settings["delta"]) == (runner.DEFAULT_EPSILON, runner.DEFAULT_DELTA)


# --- memory ------------------------------------------------------------------------------------------------


def test_estimate_memory_is_the_lasting_parts_plus_the_largest_transient_one():
    parts = runner.memory_parts("dpzero", d=100, n=1000, steps=200)
    assert all(isinstance(p, runner.MemoryPart) for p in parts)
    assert [p.bytes for p in parts] == sorted((p.bytes for p in parts), reverse=True)
    lasting = sum(p.bytes for p in parts if not p.transient)
    assert runner.estimate_memory("dpzero", d=100, n=1000, steps=200) == \
        lasting + max(p.bytes for p in parts if p.transient)
    assert runner.estimate_memory("dpzero", d=100, n=1000, steps=200) < 128 * 2**20  # the default run is small
    parts = runner.memory_parts("dpzero", d=10**8, n=1000, steps=200)
    data = next(p for p in parts if p.what.startswith("training"))
    assert data.bytes == 8 * 10**8 * 1000 and data.parameters == ("d", "n")  # the 745 GiB of the (n, d) data
    # grows with every size
    base = dict(d=50, n=200, steps=100, replicates=2)
    for key in base:
        larger = {**base, key: base[key] * 10}
        assert runner.estimate_memory("dpgd0", **larger) > runner.estimate_memory("dpgd0", **base)
    # a caller's problem: its data exist already
    assert runner.estimate_memory("dpzero", d=100, n=1000, steps=200, problem=None) < \
        runner.estimate_memory("dpzero", d=100, n=1000, steps=200)


@pytest.mark.parametrize("kwargs, names", [
    ({"d": 10**8}, ["d = 100000000", "n = 1000"]),
    ({"replicates": 10**8}, ["replicates = 100000000"]),
    ({"steps": 10**12}, ["steps = 1000000000000"]),
    ({"held_out_n": 10**12}, ["held_out_n = 1000000000000"]),
])
def test_run_algorithm_refuses_a_run_that_cannot_fit(monkeypatch, kwargs, names):
    import time

    monkeypatch.setattr(runner, "build_problem", _must_not_build)
    start = time.perf_counter()
    with pytest.raises(runner.MemoryLimitError) as caught:
        runner.run_algorithm("dpzero", **kwargs)
    assert time.perf_counter() - start < 1.0
    exc = caught.value
    assert isinstance(exc, ValueError) and exc.estimate > exc.limit
    message = str(exc)
    assert "needs an estimated" in message and "memory_limit overrides" in message
    for name in names:
        assert name in message, message
    assert "--" not in message and "--" in exc.describe(cli=True)


def test_memory_limit_parameter(monkeypatch):
    with pytest.raises(runner.MemoryLimitError, match="more than memory_limit = 1 KiB") as caught:
        runner.run_algorithm("dpzero", memory_limit=1024, **SMALL)
    assert caught.value.limit_source == "memory_limit"
    monkeypatch.setattr(runner, "available_memory", lambda: (1024, "available memory"))
    with pytest.raises(runner.MemoryLimitError, match="of available memory"):
        runner.run_algorithm("dpzero", **SMALL)
    assert runner.run_algorithm("dpzero", memory_limit=2**31, **SMALL).steps == 10  # the override
    monkeypatch.setattr(runner, "available_memory", lambda: (None, "unknown"))
    assert runner.check_memory("dpzero", d=10**8, n=1000, steps=200) > 2**40  # no reading, no limit


def test_available_memory():
    size, source = runner.available_memory()
    assert source in ("available memory", "physical memory") and size > 2**20


def test_fixed_costs_alone_over_the_limit_ask_for_a_larger_limit():
    with pytest.raises(runner.MemoryLimitError) as caught:
        runner.check_memory("dpzero", memory_limit=1, d=1, n=1, steps=1)
    assert "raise memory_limit" in str(caught.value)


# --- divergence ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend, replicates", [("reference", 1), ("fast", 1), ("fast", 3)])
def test_a_diverging_run_raises_run_diverged_without_warnings(backend, replicates):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(runner.RunDiverged) as raised:
            runner.run_algorithm("dpzero", **{**SMALL, "step_size": 1e300}, backend=backend, replicates=replicates)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    exc = raised.value
    assert isinstance(exc, ValueError)
    assert (exc.step, exc.steps, exc.replicate, exc.quantity, exc.value) == (1, 10, 0, "objective", math.inf)
    assert exc.settings == {"step_size": 1e300, "clip": 2.0, "perturbation": 1e-4}
    message = str(exc)
    assert message.startswith("the run diverged") and "F(x_1) = inf after step 1 of 10" in message
    assert "step_size = 1e+300" in message and "clip = 2" in message and "reduce step_size" in message
    assert ("(replicate 0)" in message) == (replicates > 1)


def test_divergence_is_decided_on_public_quantities_only():
    """A training-set ‖∇F‖² that overflows while the held-out values stay finite is not a divergence."""
    base = runner.build_problem("quadratic", d=4, n=12, mode="identity", data_seed=9)
    other = runner.held_out_problem("quadratic", d=4, n=12, mode="identity", data_seed=9)

    class Training:
        name = "training"

        def __init__(self, inner):
            self.loss, self.gradient, self.data, self.d = inner.loss, inner.gradient, inner.data, inner.d

        def squared_gradient_norm(self, x):
            return np.full(np.shape(x)[:-1], np.inf)

    outcome = runner.run_algorithm("dpzero", objective=Training(base), held_out=other, steps=5, step_size=0.1,
                                   clip=1.0)
    assert np.all(np.isinf(outcome.training_grad_norm_sq)) and np.all(np.isfinite(outcome.heldout_objective))


def test_replicate_blocks_are_reassembled(monkeypatch):
    """The recorder's (R, T+1, 3) array is filled block by block when the fast backend splits the replicates."""
    whole = runner.run_algorithm("dpzero", seed=3, noise_seed=SECRET, replicates=3, **SMALL)
    from reference.fast import dpzero as fast_dpzero

    monkeypatch.setattr(fast_dpzero, "_BLOCK_BYTES", 1)  # one replicate per block
    blocked = runner.run_algorithm("dpzero", seed=3, noise_seed=SECRET, replicates=3, **SMALL)
    for name in ("heldout_objective", "heldout_grad_norm_sq", "training_grad_norm_sq"):
        np.testing.assert_array_equal(getattr(blocked, name), getattr(whole, name))
    np.testing.assert_array_equal(blocked.releases, whole.releases)


def test_progress_bar_is_reference_progress(monkeypatch, capsys):
    monkeypatch.setattr(runner, "PROGRESS_DELAY", 0.0)
    runner.run_algorithm("dpzero", replicates=2, progress=True, **SMALL)
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("dpref run: 100%") and "22/22" in err
    runner.run_algorithm("dpzero", replicates=2, progress=False, **SMALL)
    assert capsys.readouterr().err == ""


def test_summary_says_which_data_the_results_are_on():
    outcome = runner.run_algorithm("dpzero", seed=1, held_out_n=17, **SMALL)
    record = runner.summary(outcome)
    assert record["diagnostics"] == {**runner.HELD_OUT_DIAGNOSTICS, "rows": 17}
    tau = int(outcome.output_index[0])
    assert record["heldout_objective_output"] == outcome.heldout_objective[0, tau]
    assert record["heldout_grad_norm_sq_final"] == outcome.heldout_grad_norm_sq[0, -1]


# --- zo_o2nc: Algorithm 3 with Algorithm 4 / 6 on the built-in ridge problems -----------------------------------

from reference import stationarity  # noqa: E402
from reference.algorithms.zo_o2nc_privacy import zo_o2nc_naive_privacy_plan, zo_o2nc_privacy_plan  # noqa: E402
from reference.algorithms.zo_o2nc_theory import naive_settings, thm49_bound, thm49_settings  # noqa: E402
from reference.objectives import RidgeSum  # noqa: E402

O2NC_SMALL = {"d": 3, "samples": 1500, "population": 60, "goldstein_samples": 24}
#: Keys of training-set quantities of a zo_o2nc run: never in a default file.
O2NC_TRAINING_KEYS = ("training_", "loss_evaluations", "nonfinite", "lipschitz_exceedances", "seconds")


@pytest.mark.parametrize("profile", runner.O2NC_PROBLEMS)
def test_ridge_problem_streams_weights_and_values(profile):
    problem = runner.build_ridge_problem(profile, d=3, samples=50, population=20, held_out_n=40, data_seed=5)
    streams = Streams(5)
    population = RidgeSum.random(3, 20, streams.generator("dpref run", profile, "population"), profile=profile,
                                 tau=1.0, offset_scale=0.5)
    assert np.array_equal(problem.population.data, population.data)
    training = streams.generator("dpref run", profile).integers(20, size=50)
    held = streams.generator("dpref run", profile, "held-out").integers(20, size=40)
    assert np.array_equal(problem.training_index, training) and np.array_equal(problem.held_out_index, held)
    assert np.array_equal(problem.data, population.data[training]) and not problem.data.flags.writeable
    assert problem.samples == 50 and problem.held_out_n == 40 and problem.name == f"ridge[{profile}]"
    assert np.linalg.norm(problem.x1) == pytest.approx(5.0) and np.all(problem.x1 == problem.x1[0])
    rng = np.random.default_rng(0)
    for which, rows in (("population", population.data), ("held_out", population.data[held]),
                        ("training", population.data[training])):
        weights = problem.weights(which)
        assert weights.sum() == pytest.approx(1.0, abs=1e-14)
        same = RidgeSum(rows[:, :3], rows[:, 3], profile=profile, tau=1.0)  # the rows themselves
        for x in rng.normal(size=(3, 3)):
            assert problem.value(weights, x) == pytest.approx(same.empirical_loss(x), rel=1e-13)
            np.testing.assert_allclose(problem.gradient(weights, x), same.empirical_gradient(x), rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(problem.smoothed_gradients(weights, x[None], 0.2)[0],
                                       same.empirical_smoothed_gradient(x, 0.2), rtol=1e-12, atol=1e-15)
    points = rng.normal(size=(2, 4, 3))
    assert problem.value(problem.weights("population"), points).shape == (2, 4)


def test_the_held_out_draws_are_not_the_training_draws():
    problem = runner.build_ridge_problem("wshape", d=3, samples=500, population=50)
    assert problem.held_out_n == 500  # default: as many draws as records
    assert not np.array_equal(problem.held_out_index, problem.training_index)


@pytest.mark.parametrize("profile", runner.O2NC_PROBLEMS)
def test_the_ridge_loss_is_the_objectives_loss_bitwise(profile):
    problem = runner.build_ridge_problem(profile, d=4, samples=30, population=30)
    loss = runner._RidgeLoss(profile, 1.0, 1.0, 4)
    rng = np.random.default_rng(1)
    points = rng.normal(scale=2.0, size=(2, 5, 3, 4))
    rows = problem.data[:5, None, :]
    expected = problem.population.loss(points, rows)
    assert np.array_equal(loss(points, rows), expected)
    for i in range(5):
        value = loss(points[0, i, 1], problem.data[i])
        assert isinstance(value, float) and value == expected[0, i, 1]


@pytest.mark.parametrize("profile", runner.O2NC_PROBLEMS)
def test_goldstein_interval_brackets_the_exact_value_of_one_ridge(profile):
    """One ridge: the exact ‖∇F(x)‖_{2δ} (``exact_goldstein_ridge``) lies in [lower, upper] at many points."""
    problem = runner.build_ridge_problem(profile, d=3, samples=5, population=1, data_seed=2)
    ridge = problem.population
    weights = problem.weights("population")
    rng = np.random.default_rng(2)
    hits = 0
    for _ in range(25):
        x = rng.normal(scale=1.5, size=3)
        radius = float(rng.choice([0.05, 0.3, 1.0]))
        interval = runner.goldstein_interval(problem, weights, x, radius, samples=32, seed=4)
        residual = float(ridge.directions[0] @ x - ridge.offsets[0])
        exact = stationarity.exact_goldstein_ridge(residual, radius, profile=profile, tau=1.0)
        assert interval["lower"] <= exact * (1 + 1e-12) + 1e-15 and exact <= interval["upper"] * (1 + 1e-12)
        hits += interval["lower"] == pytest.approx(interval["upper"])
    assert hits >= 5  # the interval is often exact for one ridge


def test_goldstein_interval_uses_the_public_stream_and_the_library_estimate():
    problem = runner.build_ridge_problem("capped", d=3, samples=20, population=40)
    weights, x = problem.weights("held_out"), problem.x1 * 0.3
    interval = runner.goldstein_interval(problem, weights, x, 0.5, samples=16, seed=9)
    estimate = stationarity.goldstein_stationarity(lambda y: problem.gradient(weights, y), x, 0.5, samples=16,
                                                   rng=Streams(9).generator("dpref run", "zo_o2nc", "goldstein"))
    assert interval["upper"] == estimate.upper_bound and interval["samples"] == 16
    assert 0 <= interval["lower"] <= interval["upper"]


def test_ridge_proxy_is_proxy_stationarity():
    problem = runner.build_ridge_problem("wshape", d=3, samples=20, population=30)
    weights = problem.weights("population")
    points = problem.x1 + np.random.default_rng(3).normal(scale=0.05, size=(7, 3))
    mine = runner.ridge_proxy(problem, weights, points, 0.2)
    theirs = stationarity.proxy_stationarity(lambda w: problem.smoothed_gradients(weights, w[None], 0.2)[0], points)
    assert mine["proxy"] == pytest.approx(theirs.value, rel=1e-14) and mine["spread"] == pytest.approx(theirs.spread)


@pytest.fixture(scope="module")
def o2nc_outcome():
    return runner.run_zo_o2nc("zo_o2nc", **O2NC_SMALL, seed=4, noise_seed=SECRET, backend="reference")


def test_zo_o2nc_run_uses_theorem_4_9_settings_and_plan(o2nc_outcome):
    outcome = o2nc_outcome
    problem = outcome.problem
    gap = problem.value(problem.weights("population"), problem.x1)
    expected = thm49_settings(1500, 3, 1.0, 0.25, 1.0, gap)
    assert outcome.theory == expected and outcome.settings["rho"] == 1.0
    plan = outcome.result.ledger.plan
    assert plan == zo_o2nc_privacy_plan(d=3, lipschitz=1.0, T=expected.T, K=expected.K, B1=expected.B1, B2=1,
                                        smoothing_radius=0.25, step_bound=float(expected.step_bound),
                                        noise_std=plan.noise_std, dp_delta=1e-6, rho_target=1.0, noise_rule="exact")
    assert plan.rho_exact <= 1.0 * (1 + 1e-12)
    record = runner.summary(outcome)
    assert record["epsilon_claimed"] == plan.epsilon_claimed == plan.epsilon_tight
    assert record["epsilon_printed"] == plan.epsilon_printed and record["epsilon_exact"] == plan.epsilon_exact
    assert record["rho_printed"] == plan.rho_printed and record["T"] == expected.T and record["K"] == expected.K
    assert record["theory_bound"] == pytest.approx(float(thm49_bound(expected)))
    assert record["goldstein_radius"] == 0.5 and record["output_epoch"] == outcome.result.output_index + 1
    assert record["secret_seed_source"] == "user" and "secret" in record["guarantee_condition"]
    assert record["output_point"] == [float(v) for v in outcome.result.output]


def test_zo_o2nc_diagnostics_are_on_public_data(o2nc_outcome):
    outcome, problem = o2nc_outcome, o2nc_outcome.problem
    result = outcome.result
    for which, prefix in (("held_out", "heldout"), ("population", "population")):
        weights = problem.weights(which)
        record = runner.summary(outcome)
        assert record[f"{prefix}_objective_initial"] == problem.value(weights, problem.x1)
        assert record[f"{prefix}_objective_output"] == problem.value(weights, result.output)
        assert record[f"{prefix}_objective_final"] == problem.value(weights, result.final_iterate)
        interval = runner.goldstein_interval(problem, weights, result.output, 0.5, samples=24, seed=4)
        assert record[f"{prefix}_goldstein_upper_output"] == interval["upper"]
        assert record[f"{prefix}_goldstein_lower_output"] == interval["lower"]
        proxy = runner.ridge_proxy(problem, weights, result.query_points[result.output_index], 0.25)
        assert record[f"{prefix}_proxy_output"] == proxy["proxy"] and proxy["spread"] <= 0.25
        assert record[f"{prefix}_stationarity_upper_output"] == min(interval["upper"], proxy["proxy"])
        epochs = problem.value(weights, result.epoch_averages)
        assert np.array_equal(outcome.epoch_objectives[which], epochs)
    text = json.dumps(runner.summary(outcome))
    for key in O2NC_TRAINING_KEYS:
        assert key not in text, key
    nonprivate = runner.summary(outcome, include_nonprivate=True)["nonprivate"]
    assert nonprivate["warning"].startswith("NOT PRIVATE")
    training = problem.weights("training")
    assert nonprivate["training_objective_output"] == problem.value(training, result.output)
    assert nonprivate["loss_evaluations"] == result.diagnostics.loss_evaluations


def test_zo_o2nc_publication_files(o2nc_outcome):
    outcome = o2nc_outcome
    files = runner.publication(outcome, command=f"dpref run zo_o2nc --noise-seed {SECRET}")
    assert set(files) == {"releases.csv", "epochs.csv", "output.csv", "diagnostics.json", "ledger.json",
                          "manifest.json"}
    diagnostics = json.loads(files["diagnostics.json"])
    assert diagnostics["population"]["output"]["goldstein_upper"] == \
        outcome.diagnostics["population"]["output"]["goldstein_upper"]
    assert diagnostics["held_out"]["initial"]["objective"] == outcome.diagnostics["held_out"]["initial"]["objective"]
    K, T, d = np.shape(outcome.result.releases)
    releases = np.loadtxt(files["releases.csv"].splitlines()[1:], delimiter=",")
    assert releases.shape == (K * T, 2 + d)
    assert np.array_equal(releases[:, 2:], np.asarray(outcome.result.releases).reshape(K * T, d))
    epochs = np.loadtxt(files["epochs.csv"].splitlines()[1:], delimiter=",", ndmin=2)
    assert np.array_equal(epochs[:, 3:], outcome.result.epoch_averages)
    assert np.array_equal(epochs[:, 2], outcome.epoch_objectives["population"])
    output = np.loadtxt(files["output.csv"].splitlines()[1:], delimiter=",", ndmin=2)
    assert np.array_equal(output[:, 1], outcome.result.output)
    ledger = json.loads(files["ledger.json"])
    assert ledger["plan"]["accountant_event"]["event"] == "TreeAggregationEvent"
    assert ledger["epsilon_spent"] == outcome.result.ledger.plan.epsilon_claimed and ledger["seed"] == 4
    manifest = json.loads(files["manifest.json"])
    assert "<secret>" in manifest["command"] and manifest["seeds"]["held_out_stream"] == ["dpref run", "wshape",
                                                                                          "held-out"]
    for name, text in files.items():
        for secret in _secret_strings(SECRET):
            assert secret not in text, name
        for key in O2NC_TRAINING_KEYS:
            assert key not in text, (name, key)
    files = runner.publication(outcome, command="dpref run zo_o2nc", include_nonprivate=True)
    assert json.loads(files["nonprivate_diagnostics.json"])["warning"].startswith("NOT PRIVATE")
    assert "training_" not in files["manifest.json"]


def test_zo_o2nc_backends_agree_bitwise(o2nc_outcome):
    if not runner.fast_zo_o2nc_available():
        pytest.skip("reference.fast.zo_o2nc is not installed")
    fast = runner.run_zo_o2nc("zo_o2nc", **O2NC_SMALL, seed=4, noise_seed=SECRET, backend="fast")
    assert np.array_equal(fast.result.releases, o2nc_outcome.result.releases)
    assert np.array_equal(fast.result.output, o2nc_outcome.result.output)
    assert fast.diagnostics == o2nc_outcome.diagnostics


def test_zo_o2nc_naive_settings_batch_rules_and_plan():
    outcome = runner.run_zo_o2nc("zo_o2nc-naive", **O2NC_SMALL, rho=0.5, batch_rule="dimension", backend="reference")
    problem = outcome.problem
    gap = problem.value(problem.weights("population"), problem.x1)
    expected = naive_settings(1500, 3, 1.0, 0.25, 0.5, gap, batch_size="dimension")
    assert outcome.theory == expected and expected.batch_size == round(3**1.5 / 0.5)
    plan = outcome.result.ledger.plan
    assert plan == zo_o2nc_naive_privacy_plan(d=3, lipschitz=1.0, T=expected.T, K=expected.K,
                                              batch_size=expected.batch_size, noise_std=plan.noise_std, dp_delta=1e-6,
                                              rho_target=0.5, noise_rule="exact")
    record = runner.summary(outcome)
    assert record["batch_size"] == expected.batch_size and record["batch_rule"] == "dimension"
    assert record["theory_bound"] is None and record["B1"] is None
    paper = runner.run_zo_o2nc("zo_o2nc-naive", **O2NC_SMALL, rho=0.5, sigma_rule="paper", batch_size=4,
                               backend="reference")
    assert paper.theory.batch_size == 4 and paper.result.ledger.plan.rho_exact == pytest.approx(1.0)  # zo_o2nc.E8
    assert runner.summary(paper)["batch_rule"] == "given"


def test_zo_o2nc_without_noise():
    private = runner.run_zo_o2nc("zo_o2nc", **O2NC_SMALL, seed=2, backend="reference")
    twin = runner.run_zo_o2nc("zo_o2nc", **O2NC_SMALL, seed=2, noise="none", backend="reference")
    assert twin.result.ledger.plan is None and twin.secret_seed_source is None
    for field in ("T", "K", "step_size", "step_bound"):
        assert getattr(twin.theory, field) == getattr(private.theory, field), field
    assert twin.result.output_index == private.result.output_index  # the same public draws
    open_run = runner.run_zo_o2nc("zo_o2nc", **O2NC_SMALL, rho=math.inf, backend="reference")
    record = runner.summary(open_run)
    assert record["rho"] == "inf" and record["epsilon_claimed"] is None and record["noise_std"] == 0
    assert open_run.theory.T_privacy is None and "not private (rho = inf" in runner.render_table(record)
    assert "sigma = 0 twin" in runner.render_table(runner.summary(twin))
    with pytest.raises(ValueError, match="noise_seed does not apply"):
        runner.run_zo_o2nc("zo_o2nc", **O2NC_SMALL, rho=None, noise_seed=5)


def test_zo_o2nc_too_few_records_names_a_count_that_suffices():
    with pytest.raises(runner.RecordsNeeded) as caught:
        runner.run_zo_o2nc("zo_o2nc", d=3, samples=3, population=20, backend="reference")
    error = caught.value
    assert error.samples == 3 and error.needed > 3 and error.per_epoch == 2 * error.T
    assert "samples = 3 cannot hold one epoch of Theorem 4.9's settings" in str(error)
    message = error.describe(cli=True)
    assert "--samples 3" in message and f"--samples {error.needed} suffices" in message
    runner.run_zo_o2nc("zo_o2nc", d=3, samples=error.needed, population=20, backend="reference", goldstein_samples=4)
    with pytest.raises(runner.RecordsNeeded, match="App. E"):
        runner.run_zo_o2nc("zo_o2nc-naive", d=3, samples=10, population=20, batch_size=8, backend="reference")


@pytest.mark.parametrize("kwargs, fragment", [
    ({"algorithm": "zo_o2nc-tree"}, "algorithm"),
    ({"problem": "quadratic"}, "problem"),
    ({"d": 0}, "d"),
    ({"samples": 0}, "samples"),
    ({"population": 0}, "population"),
    ({"held_out_n": 0}, "held_out_n"),
    ({"rho": 0}, "rho"),
    ({"rho": float("nan")}, "rho"),
    ({"smoothing_radius": 0.0}, "smoothing_radius"),
    ({"smoothing_radius": 1e12}, "smoothing_radius"),
    ({"T_rule": "min"}, "T_rule"),
    ({"count_rule": "paper"}, "count_rule"),
    ({"batch_size": 3}, "batch_size"),
    ({"delta": 1.0}, "delta"),
    ({"seed": -1}, "seed"),
    ({"noise_seed": 0, "seed": 0}, "noise_seed"),
    ({"noise_seed": 7, "data_seed": 7}, "data_seed"),
    ({"noise": "laplace"}, "noise"),
    ({"backend": "gpu"}, "backend"),
    ({"goldstein_samples": 0}, "goldstein_samples"),
    ({"goldstein_samples": 10**6}, "goldstein_samples"),
    ({"progress": 1}, "progress"),
    ({"memory_limit": 1024}, "memory_limit"),
])
def test_run_zo_o2nc_refuses_bad_settings(kwargs, fragment):
    kwargs = {"algorithm": "zo_o2nc", **O2NC_SMALL, "backend": "reference", **kwargs}
    with pytest.raises((ValueError, TypeError)) as caught:
        runner.run_zo_o2nc(kwargs.pop("algorithm"), **kwargs)
    assert fragment in str(caught.value)


def test_zo_o2nc_memory_is_refused_before_anything_is_built(monkeypatch):
    built = []
    monkeypatch.setattr(runner, "build_ridge_problem", lambda *a, **k: built.append(1))
    with pytest.raises(runner.MemoryLimitError) as caught:
        runner.run_zo_o2nc("zo_o2nc", d=4, samples=10**10, backend="reference")
    assert not built and "samples" in caught.value.reduce
    assert "--samples 10000000000" in caught.value.describe(cli=True)
    parts = runner.o2nc_memory_parts("zo_o2nc", d=4, samples=20_000)
    assert runner._total(parts) < 200 * 2**20 and parts == sorted(parts, key=lambda p: -p.bytes)


def test_zo_o2nc_progress_counts_rounds(monkeypatch, capsys):
    monkeypatch.setattr(runner, "PROGRESS_DELAY", 0.0)
    outcome = runner.run_zo_o2nc("zo_o2nc", **O2NC_SMALL, backend="reference", progress=True)
    err = capsys.readouterr().err
    rounds = outcome.theory.T * outcome.theory.K
    assert err.splitlines()[-1].startswith("dpref run:") and f"{rounds}/{rounds}" in err.splitlines()[-1]
    runner.run_zo_o2nc("zo_o2nc", **O2NC_SMALL, backend="reference")
    assert capsys.readouterr().err == ""


def test_round_progress_follows_the_evaluations():
    progress = runner._RoundProgress([6, 2, 2], 2, True)
    progress.start -= 10  # as if the run had been going for a while
    for count, done in ((5, 0), (1, 1), (2, 2), (1, 2), (1, 3), (6, 4), (4, 6)):
        progress.add(count)
        assert progress.shown == done
    progress.close()


def test_backend_module_names_the_other_backend_when_a_twin_is_missing():
    assert runner.backend_module("reference", "zo_o2nc", runner) is runner
    assert runner.backend_module("fast", "zo_o2nc", None).__name__ == "reference.fast.zo_o2nc"
    assert runner.fast_twin_available("zo_o2nc") and not runner.fast_twin_available("no_such_twin")
    with pytest.raises(ValueError, match=r"backend 'fast' needs reference\.fast\.no_such_twin.*use backend 'reference'"):
        runner.backend_module("fast", "no_such_twin", None)
