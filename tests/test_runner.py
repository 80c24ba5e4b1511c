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
