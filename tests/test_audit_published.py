"""Audits of everything a run publishes (empirical_dp/published.py): the pipeline and its planted leaks, the
feature extractor reads every file, the feature is chosen on a separate training split, the default DPZero
publication is consistent and every planted leak is a violation named by its feature and file.

Verdicts, not exact numbers, are tested where fresh secret entropy is involved (the default secrets); budgets
are smaller than the registered ones (confidence 0.95 instead of the quick audits' 1 − 1e-6), the bounds are
still Clopper–Pearson."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from empirical_dp import planted
from empirical_dp.published import (
    EXCLUDED_KEYS,
    INTEGER_TOKEN,
    PUBLISHED_BUILTINS,
    VARIANTS,
    CanaryProblem,
    FeatureSchema,
    PublishedAudit,
    audit_published,
    publication_features,
    publish,
    published_scenario,
    published_setup,
    rebuild_outcome,
    select_feature,
)
from empirical_dp.registry import PUBLISHED_BUILTIN_NAMES, SCENARIOS
from empirical_dp.scenarios import Scenario
from reference.rng import Streams
from reference.runner import publication, run_algorithm

# test budgets: publications per data set for audit() and for the training split
TRIALS, TRAINING = 50, 16
FULL_FILES = {"releases.csv", "trajectory.csv", "ledger.json", "manifest.json"}


def _releases(files, replicate=0):
    rows = [line.split(",") for line in files["releases.csv"].splitlines()[1:]]
    return np.array([float(r[2]) for r in rows if int(r[0]) == replicate])


def _noise(seed, steps):
    return Streams(seed).generator("dpzero", "noise").standard_normal(steps)


def _audit(variant, **settings):
    target = published_scenario(variant, training_trials=TRAINING, **settings)
    return audit_published(target, TRIALS, seed=0, confidence=0.95)


# ---------------------------------------------------------------------------------------------------
# The pipeline


def test_canary_problem_is_the_linear_loss_with_a_nan_flag():
    problem = CanaryProblem([[2.0, 0.0], [0.0, 0.0]], "canary")
    x = np.array([[1.0, 3.0], [0.5, -1.0]])
    assert problem.d == 2 and problem.data.shape == (2, 3) and not problem.data.flags.writeable
    np.testing.assert_array_equal(problem.loss(x[:, None, :], problem.data), [[2.0, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(problem.objective_value(x), [1.0, 0.5])
    np.testing.assert_array_equal(problem.squared_gradient_norm(x), [1.0, 1.0])
    poisoned = CanaryProblem(np.zeros((3, 2)), "canary", nan_rows=(0,))
    values = poisoned.loss(x[0], poisoned.data)
    assert math.isnan(values[0]) and np.all(values[1:] == 0)
    assert np.all(np.isfinite(poisoned.data))  # the data stay finite: the loss is what turns NaN
    with pytest.raises(ValueError, match="features"):
        CanaryProblem([[math.nan, 0.0]], "bad")


def test_default_pair_and_public_held_out_data():
    setup = published_setup()
    d_rows, dp_rows = setup.problems[0].features, setup.problems[1].features
    np.testing.assert_array_equal(d_rows, 0.0)
    np.testing.assert_array_equal(dp_rows[1:], 0.0)
    assert dp_rows[0, 0] == 1e6 and setup.settings["n"] == 50 and setup.settings["replicates"] == 2
    # the clipped means: 0 on D, +C s_t / n on D′ along replicate 0's public directions
    np.testing.assert_array_equal(setup.means[0], 0.0)
    np.testing.assert_array_equal(setup.means[1], setup.signs / 50)
    np.testing.assert_array_equal(setup.signs, np.sign(setup.directions[:, 0]))
    held = Streams(setup.public_seed).generator("published", "held-out").standard_normal((50, 2))
    np.testing.assert_array_equal(setup.held_out.features, held)


def test_default_trials_publish_the_four_files_with_fresh_secrets():
    setup = published_setup()
    rng = np.random.default_rng(0)
    first, second = publish(setup, rng, 0), publish(setup, rng, 0)
    assert set(first) == FULL_FILES
    ledger = json.loads(first["ledger.json"])
    assert ledger["secret_seed_source"] == "os_entropy"
    assert [r["seed"] for r in ledger["runs"]] == list(setup.seeds)
    assert not np.array_equal(_releases(first), _releases(second))  # fresh entropy: new noise each run


def test_rebuild_outcome_reproduces_a_run_from_its_releases():
    setup = published_setup()
    outcome = run_algorithm("dpzero", objective=setup.problems[1], held_out=setup.held_out, noise_seed=[11, 12],
                            **setup.run_arguments())
    rebuilt = rebuild_outcome(outcome, outcome.releases)
    np.testing.assert_array_equal(rebuilt.output_index, outcome.output_index)
    for name in ("heldout_objective", "heldout_grad_norm_sq"):
        np.testing.assert_allclose(getattr(rebuilt, name), getattr(outcome, name), rtol=1e-12, atol=1e-12)
    a, b = (publication(o, command="x") for o in (outcome, rebuilt))
    assert a["releases.csv"] == b["releases.csv"] and a["ledger.json"] == b["ledger.json"]


def test_seed_bugs_are_reproduced_exactly():
    # (i): replicate r's noise is its public seed's ("dpzero", "noise") stream
    setup = published_setup("old_default_noise")
    files = publish(setup, np.random.default_rng(1), 1)
    sigma = setup.noise_std()
    seeds = [r["seed"] for r in json.loads(files["ledger.json"])["runs"]]
    for r in range(2):
        means = _releases(files, r) - sigma * _noise(seeds[r], setup.steps)
        assert np.all(np.abs(np.abs(means) - 1 / 50) < 1e-12)  # the canary's ±C/n exactly
    # (ii): public seeds P, P+1; replicate 0's noise is replicate 1's public seed's stream
    setup = published_setup("overlapping_replicate_seeds")
    files = publish(setup, np.random.default_rng(1), 0)
    seeds = [r["seed"] for r in json.loads(files["ledger.json"])["runs"]]
    assert seeds == [setup.public_seed, setup.public_seed + 1]
    np.testing.assert_allclose(_releases(files, 0), setup.noise_std() * _noise(seeds[1], setup.steps),
                               rtol=0, atol=1e-12)
    # (iii): the manifest holds the user secrets
    files = publish(published_setup("secret_seed_in_manifest"), np.random.default_rng(1), 0)
    assert len(json.loads(files["manifest.json"])["seeds"]["noise_seed"]) == 2


def test_poisson_counts_are_put_back_into_the_ledger():
    setup = published_setup("poisson_counts_published", steps=20)
    runs = json.loads(publish(setup, np.random.default_rng(0), 1)["ledger.json"])["runs"]
    assert len(runs) == 2 and all(len(r["batch_sizes"]) == 20 for r in runs)
    assert all(r["loss_evaluations"] == 2 * sum(r["batch_sizes"]) for r in runs)


def test_nonfinite_record_completes_and_the_planted_abort_publishes_only_an_error():
    rng = np.random.default_rng(2)
    completed = publish(published_setup("nonfinite"), rng, 1)
    assert set(completed) == FULL_FILES
    aborted = publish(published_setup("nonfinite_abort"), rng, 1)
    assert set(aborted) == {"error.txt"} and "non-finite" in aborted["error.txt"]
    assert set(publish(published_setup("nonfinite_abort"), rng, 0)) == FULL_FILES  # D: no NaN record


# ---------------------------------------------------------------------------------------------------
# Features


def test_feature_extractor_reads_every_file():
    setup = published_setup("clip_counts_published")
    outcome = run_algorithm("dpzero", objective=setup.problems[1], held_out=setup.held_out,
                            noise_seed=[2**100 + 7, 2**100 + 9], **setup.run_arguments())
    files = publication(outcome, command="x", include_nonprivate=True)
    files["notes.txt"] = f"debug run, noise seed {2**100 + 7}\n"  # an unexpected file leaking the secret
    files["extra.csv"] = "a,b\n1.5,x\n"
    features = publication_features(files, setup)
    assert features["completed"] == 1.0
    for name in files:
        assert features[f"file:{name}"] == 1.0 and features[f"{name}#len"] == len(files[name])
        assert f"regenerated[text:{name}]" in features  # integers of every file are candidate seeds
    assert {"release_score", "regenerated[public seeds]", "regenerated[seed offsets]"} <= set(features)
    assert any(k.startswith("recomputed[heldout_objective~") for k in features)
    for name in ("ledger.json", "manifest.json", "nonprivate_diagnostics.json", "trajectory.csv"):
        assert any(k.startswith(f"{name}:") for k in features), name
    assert features["extra.csv:a[0]"] == 1.5
    assert features["nonprivate_diagnostics.json:runs[0].clip_counts#sum"] == setup.steps
    assert not any(k.startswith("releases.csv:") for k in features)  # releases: features a, b, d
    assert not any(re.search(r"[:.](%s)(#|$)" % "|".join(EXCLUDED_KEYS), k) for k in features)  # no clock time
    # the secret in notes.txt regenerates replicate 0's noise exactly: D′ matches, D does not
    assert features["regenerated[text:notes.txt]"] > 5
    assert abs(features["regenerated[public seeds]"]) < 1
    assert publication_features({"error.txt": "ValueError: x\n"}, setup) == {
        "completed": 0.0, "file:error.txt": 1.0, "error.txt#len": 14.0}


def test_integer_tokens_skip_the_digits_of_decimals():
    text = 'seed 12345, 0.25, 1e-05, -3, 2.5e+20, [7, 8], "x9"'
    assert [int(m) for m in INTEGER_TOKEN.findall(text)] == [12345, 7, 8]


def test_schema_vectors_mark_missing_names():
    schema = FeatureSchema.from_features([{"a": 1.0}, {"b": math.inf}])
    assert set(schema.names) == {"a", "b", "present:a", "present:b"}
    vector = dict(zip(schema.names, schema.vector({"b": math.inf})))
    assert vector == {"a": 0.0, "b": 1e300, "present:a": 0.0, "present:b": 1.0}


def test_select_feature_takes_the_largest_ks_distance_with_its_sign_and_cut():
    rng = np.random.default_rng(0)
    schema = FeatureSchema(("noise", "leak", "weak"))
    d = np.column_stack([rng.normal(size=40), np.full(40, 3.0), rng.normal(size=40)])
    dp = np.column_stack([rng.normal(size=40), np.full(40, 1.0), rng.normal(0.5, 1, size=40)])
    selection = select_feature(d, dp, schema)
    assert (selection.name, selection.sign, selection.cut, selection.ks) == ("leak", -1, -2.0, 1.0)
    np.testing.assert_array_equal(selection.score(np.vstack([d, dp])), [0.0] * 40 + [1.0] * 40)
    assert selection.top[0] == ("leak", 1.0)
    with pytest.raises(ValueError, match="train_d"):
        select_feature(d[:, :2], dp, schema)


# ---------------------------------------------------------------------------------------------------
# Determinism


def test_training_is_reproducible_and_disjoint_from_the_audit_keys():
    first = published_scenario(training_trials=6, training_seed=3)
    second = published_scenario(training_trials=6, training_seed=3)
    a, b = first.selection, second.selection
    assert (a.name, a.sign, a.cut, a.schema) == (b.name, b.sign, b.cut, b.schema)
    # user secrets come from the trial generator: the same generator state gives the same publication features
    leak = published_scenario("secret_seed_in_manifest", training_trials=4)
    x = leak.sample(np.random.default_rng(5), 2, 1)
    y = leak.sample(np.random.default_rng(5), 2, 1)
    np.testing.assert_array_equal(x, y)


# ---------------------------------------------------------------------------------------------------
# Verdicts


def test_default_dpzero_publication_is_consistent():
    outcome = _audit("default")
    result = outcome.result
    assert result.verdict == "consistent" and result.epsilon_lb <= result.claimed_epsilon == 1.0
    assert result.scenario == "dpzero-published" and outcome.selection.training_trials == TRAINING


@pytest.mark.parametrize("variant, feature, file", [
    ("old_default_noise", "regenerated[", "releases.csv"),
    ("overlapping_replicate_seeds", "regenerated[", "releases.csv"),
    ("secret_seed_in_manifest", "regenerated[text:manifest.json]", "manifest.json"),
    ("clip_counts_published", "nonprivate_diagnostics.json:", "nonprivate_diagnostics.json"),
    ("training_diagnostics", "recomputed[", "trajectory.csv"),
    ("nonfinite_abort", "completed", "error.txt"),
])
def test_planted_leak_is_a_violation_named_by_its_feature(variant, feature, file):
    outcome = _audit(variant)
    result = outcome.result
    assert result.verdict == "violation", (variant, outcome.selection)
    assert result.epsilon_lb > result.claimed_epsilon == 1.0 and result.counts.fp == result.counts.fn == 0
    assert result.decided_by == "clopper_pearson_epsilon" and result.margin == result.epsilon_lb - 1.0
    assert outcome.selection.name.startswith(feature) and file in outcome.selection.files
    assert outcome.selection.ks == 1.0


def test_planted_poisson_counts_are_a_violation():
    outcome = audit_published(published_scenario("poisson_counts_published", training_trials=TRAINING), 40,
                              seed=0, confidence=0.95)
    assert outcome.result.verdict == "violation"
    # decided by the batch sizes / evaluation counts the planted bug puts back (ledger.json, the manifest's summary)
    assert {"ledger.json", "manifest.json"} & set(outcome.selection.files)
    assert "settings.n" not in outcome.selection.name


def test_poisson_add_remove_publication_does_not_reveal_n():
    # Under add/remove neighbours (sampling_probability given) n is private: the manifest leaves it out.
    setup = published_setup("poisson")
    rng = np.random.default_rng(0)
    files = [publish(setup, rng, which) for which in (0, 1)]
    for published in files:
        manifest = json.loads(published["manifest.json"])
        assert manifest["settings"]["n"] is None and manifest["summary"]["n"] is None
    d, d_prime = (publication_features(f, setup) for f in files)
    for key in d.keys() | d_prime.keys():
        if key.endswith(".n") or key.endswith("held_out_n"):
            assert d.get(key) == d_prime.get(key), key


def test_nonfinite_twin_is_consistent():
    assert _audit("nonfinite").result.verdict == "consistent"


# ---------------------------------------------------------------------------------------------------
# Registry


def test_registered_scenarios_planted_leaks_and_twins():
    assert PUBLISHED_BUILTIN_NAMES == ("dpzero-published",)
    scenario = SCENARIOS["dpzero-published"]
    assert isinstance(scenario, Scenario) and scenario.name == "dpzero-published"
    assert scenario.mu is None and scenario.claimed_epsilon == 1.0 and scenario.delta == 1e-5
    assert scenario.claim_type == "epsilon_delta" and scenario.claimed_mu is None  # the run's (ε, δ) target
    assert set(planted.PUBLISHED_PLANTED) == set(PUBLISHED_BUILTINS) - {"dpzero-published"}
    for name, (variant, twin) in planted.PUBLISHED_PLANTED.items():
        factory, attack, budget = planted.PLANTED[name]
        built = factory()
        assert built.name == name and budget == planted.PUBLISHED_BUDGET == 100
        assert attack(built) == built.log_likelihood_ratio
        assert VARIANTS[variant][1] == twin and planted.TWINS[name][0]().name == f"{name}-twin"
    assert isinstance(PUBLISHED_BUILTINS["dpzero-published"](), PublishedAudit)


@pytest.mark.parametrize("call, parameter", [
    (lambda: published_setup("nope"), "variant"),
    (lambda: published_setup(steps=0), "steps"),
    (lambda: published_setup(colour=1), "colour"),
    (lambda: published_setup("overlapping_replicate_seeds", replicates=1), "replicates"),
    (lambda: published_setup("poisson", sampling_probability=1.5), "sampling_probability"),
    (lambda: published_scenario(training_trials=1), "training_trials"),
    (lambda: audit_published("nope", 10), "target"),
    (lambda: published_scenario().sample(np.random.default_rng(0), 1, 2), "which"),
])
def test_validation_errors_name_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()
