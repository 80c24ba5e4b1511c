"""Audit of everything a default spider_sosp run publishes (empirical_dp/spider_sosp_published.py): the pipeline is
the shipped ``run_spider_sosp`` with default arguments on the canary pair, the attacker's model (noiseless estimates
along the public path, the tree noise and the perturbations of the secret streams) is the algorithm's, every
published byte is a function of the releases and public inputs, the features read every file, the default
publication is consistent with the ledger's μ-GDP claim and the planted leak (the NOT PRIVATE diagnostics published)
is a violation named by its feature. The registered planted budget is run by tests/test_planted.py."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from dpref.audit import DEFAULT_TRIALS_BY_SCENARIO, QUICK_CONFIDENCE, QUICK_TRIALS_BY_SCENARIO
from empirical_dp import planted
from empirical_dp.published import PublishedAudit, audit_published
from empirical_dp.registry import SCENARIOS, SPIDER_SOSP_PUBLISHED_BUILTIN_NAMES
from empirical_dp.scenarios import Scenario, tree_release_matrix
from empirical_dp.spider_sosp_published import (
    SPIDER_SOSP_PUBLISHED_BUILTINS,
    VARIANTS,
    CanaryBuilder,
    PipelineMismatch,
    SpiderSospPublishedAudit,
    canary_records,
    noise_of_seed,
    noiseless_means,
    publish,
    read_releases,
    read_schedule,
    run_pipeline,
    spider_sosp_published_scenario,
    spider_sosp_published_setup,
)
from reference import runner_spider_sosp as spider_runner
from reference.algorithms.spider_sosp import (
    KEY,
    NonPrivateDebugTrace,
    PublicTrace,
    SpiderResult,
    public_permutation,
    replay_schedule,
)
from reference.rng import Streams

FILES = {"releases.csv", "trace.csv", "output.csv", "diagnostics.json", "ledger.json", "manifest.json"}
SECRET = 2**90 + 7


@pytest.fixture(scope="module")
def setup():
    return spider_sosp_published_setup()


def test_pair_and_setup(setup):
    plan, config = setup.plan, setup.config
    assert plan.rule == "gdp_exact" and plan.private and plan.dp_delta == 1e-6
    assert float(plan.mu) == pytest.approx(0.2367043806634, rel=1e-9)
    assert setup.samples == 10_000 and setup.d == 2 and config.batch_size == 80
    assert config.adjacency == "replace_one" and config.tree_scope == "global" and config.perturb
    np.testing.assert_array_equal(setup.shift, np.ones(2) / 80)
    np.testing.assert_array_equal(canary_records(10, 2, 5, 0), np.zeros((10, 2)))
    data = canary_records(10, 2, 5, 1)
    first = public_permutation(5, 10)[0]  # the record step 0's O1 batch reads first
    np.testing.assert_array_equal(data[first], [math.pi / 2, -math.pi / 2])
    assert np.count_nonzero(np.any(data != 0, axis=1)) == 1 and not data.flags.writeable
    # τ = 1: the canary moves TREE(1) = node 1 alone: μ = ‖c/b‖/σ, far below the plan's μ
    assert setup.releases_mu == pytest.approx(math.sqrt(2) / (80 * setup.noise_std), rel=1e-9)
    assert setup.releases_mu < 0.1 * float(plan.mu)


def test_pipeline_is_the_default_run_and_the_noise_model_is_the_algorithms(setup):
    original = spider_runner.build_spider_problem
    streams = Streams(SECRET)
    for which in (0, 1):
        outcome = run_pipeline(setup.builder(which), seed=11, noise_seed=SECRET)
        assert spider_runner.build_spider_problem is original  # the reference module is never modified
        settings = outcome.settings
        assert settings["problem"] == "cosine" and settings["start"] == "saddle" and settings["seed"] == 11
        assert settings["sigma_rule"] == "gdp_exact" and settings["epsilon"] == 1.0 and settings["delta"] == 1e-6
        assert settings["backend"] == ("fast" if spider_runner.fast_spider_available() else "reference")
        assert outcome.config == setup.config
        trace, debug = outcome.result.trace, outcome.result.debug
        released = np.asarray(trace.released)
        assert "O2" in trace.kinds and trace.perturbation_steps and trace.halt_reason == "data"
        tau, perturbed = read_schedule(setup, released)
        replay = replay_schedule(released, setup.config, setup.samples)
        assert tau == next(t for t in range(1, trace.steps) if replay.kinds[t] == "O1")
        assert tuple(np.flatnonzero(perturbed)) == trace.perturbation_steps == replay.perturbation_steps
        np.testing.assert_allclose(debug.estimates, noiseless_means(setup, released, which, tau), rtol=0, atol=1e-12)
        for t in trace.perturbation_steps:
            expected = streams.generator(KEY, "perturbation", t).standard_normal(2) * setup.perturbation_scale / 2**0.5
            np.testing.assert_allclose(debug.perturbations[t], expected, rtol=1e-12)
        residual = released - debug.estimates - debug.perturbations
        np.testing.assert_allclose(residual, noise_of_seed(setup, [SECRET], trace.steps)[0], rtol=1e-9, atol=1e-12)
    with pytest.raises(PipelineMismatch, match="asked for"):
        CanaryBuilder(setup.samples, 2, 0, 1)("quadratic", d=2, samples=None, data_seed=0, start=None, seed=0)
    with pytest.raises(PipelineMismatch, match="asked for"):
        CanaryBuilder(setup.samples, 2, 0, 1)("cosine", d=2, samples=5, data_seed=0, start=None, seed=0)


def _public_outcome(outcome, n):
    """The outcome rebuilt from the releases and public inputs only: no records, no secret seed, no debug trace."""
    released = np.asarray(outcome.result.trace.released)
    config = outcome.config
    replay = replay_schedule(released, config, n)
    order = public_permutation(outcome.settings["seed"], n)
    ends = np.concatenate([[0], np.cumsum(replay.batch_sizes)])
    trace = PublicTrace(released=released, kinds=replay.kinds, batch_sizes=replay.batch_sizes, drift=replay.drift,
                        leaves=replay.leaves, perturbation_steps=replay.perturbation_steps,
                        batch_indices=tuple(order[ends[i]:ends[i + 1]] for i in range(len(replay.kinds))),
                        records_used=replay.records_used, records_available=n, halt_reason=replay.halt_reason,
                        next_batch_size=replay.next_batch_size)
    problem = spider_runner.build_spider_problem("cosine", d=2, seed=outcome.settings["seed"])  # no records
    point, iterates = problem.x0.copy(), []
    for g in released:
        point = point - config.step_size * g
        iterates.append(point)
    iterates = np.array(iterates)
    nan = np.full_like(released, np.nan)
    debug = NonPrivateDebugTrace(nan, nan, nan, np.zeros(0, np.int64), np.zeros(0, np.int64), -1)
    result = SpiderResult(iterates, problem.x0, trace, debug, config, outcome.result.seed,
                          outcome.result.secret_seed_source, outcome.result.guarantee_condition)
    return dataclasses.replace(outcome, result=result, problem=problem, seconds=math.nan,
                               population=spider_runner.population_levels(problem, iterates))


def _without_time(files):
    files = dict(files)
    manifest = json.loads(files["manifest.json"])
    manifest.pop("created")
    files["manifest.json"] = json.dumps(manifest)
    return files


@pytest.mark.parametrize("which", [0, 1])
def test_every_published_byte_is_a_function_of_the_releases_and_public_inputs(setup, which):
    """The Done-when of the publication: the files, the printed summary (manifest.json's "summary", ``dpref run``'s
    record) and its rendering are the same when rebuilt from the releases and public inputs alone."""
    outcome = run_pipeline(setup.builder(which), seed=2**61 + 3)  # fresh operating-system entropy
    public = _public_outcome(outcome, setup.samples)
    assert _without_time(spider_runner.spider_publication(outcome, command="c")) == _without_time(
        spider_runner.spider_publication(public, command="c"))
    assert spider_runner.spider_summary(outcome) == spider_runner.spider_summary(public)
    assert spider_runner.render_spider(spider_runner.spider_summary(outcome)) == spider_runner.render_spider(
        spider_runner.spider_summary(public))
    # the NOT PRIVATE file is not: it reads the records and the noiseless estimates
    leaky = spider_runner.spider_publication(outcome, command="c", include_nonprivate=True)
    assert set(leaky) == FILES | {"nonprivate_diagnostics.json"}


def test_trials_publish_every_file_with_fresh_seeds(setup):
    first, second = (publish(setup, np.random.default_rng(5), 0) for _ in range(2))
    assert set(first) == set(second) == FILES
    assert json.loads(first["ledger.json"])["seed"] == json.loads(second["ledger.json"])["seed"]
    assert not np.array_equal(read_releases(first, 2), read_releases(second, 2))  # fresh secret entropy
    ledger = json.loads(first["ledger.json"])
    assert ledger["secret_seed_source"] == "os_entropy" and ledger["guarantee"] == "gaussian-dp" and ledger["private"]
    assert ledger["mu"] == float(setup.plan.mu) and ledger["dp_delta"] == 1e-6
    third = publish(setup, np.random.default_rng(6), 0)
    assert json.loads(third["ledger.json"])["seed"] != ledger["seed"]  # a fresh public seed per trial
    a, b = (publish(setup, np.random.default_rng(5), 1, proxy=True) for _ in range(2))
    np.testing.assert_array_equal(read_releases(a, 2), read_releases(b, 2))
    leaky = publish(spider_sosp_published_setup("nonprivate"), np.random.default_rng(2), 1)
    assert set(leaky) == FILES | {"nonprivate_diagnostics.json"}


def test_features_read_every_file_and_a_leaked_secret_is_regenerated(setup):
    audit = SpiderSospPublishedAudit(setup, "spider_sosp-published-test")
    files = publish(setup, np.random.default_rng(0), 1)
    features = audit.features(files)
    for name in FILES:
        assert features[f"file:{name}"] == 1.0 and f"regenerated[text:{name}]" in features
    assert {"regenerated[public seeds]", "regenerated[seed offsets]", "release_score", "completed"} <= set(features)
    assert "trace.csv:batch_size[0]" in features and "output.csv:population_sosp_level[0]" in features
    assert "manifest.json:summary.records_used" in features and "ledger.json:mu" in features
    assert not any(name.startswith("releases.csv:") for name in features)
    assert all(abs(v) < 1 for k, v in features.items() if k.startswith("regenerated["))
    # the release score is the exact log-likelihood ratio (a dense solve here)
    releases = read_releases(files, 2)
    tau, perturbed = read_schedule(setup, releases)
    steps = releases.shape[0]
    release = tree_release_matrix(steps)
    covariance = setup.noise_std**2 * release @ release.T + np.diag(perturbed * setup.perturbation_scale**2 / 2)
    delta = np.zeros((steps, 2))
    delta[:tau] = setup.shift
    residual = releases - noiseless_means(setup, releases, 0, tau)
    expected = float(np.sum(np.linalg.solve(covariance, delta) * (residual - delta / 2)))
    assert features["release_score"] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # a secret written anywhere is regenerated; the data seed and the public seed are candidates
    outcome = run_pipeline(setup.builder(1), seed=9, noise_seed=SECRET)
    files = spider_runner.spider_publication(outcome, command="test")
    files["notes.json"] = json.dumps({"note": f"secret {SECRET}"})
    leaked = audit.features(files)
    assert leaked["regenerated[text:notes.json]"] > 8 and abs(leaked["regenerated[public seeds]"]) < 1
    assert audit.features({"error.txt": "ValueError: x\n"})["completed"] == 0.0


def test_default_publication_is_consistent_at_the_quick_budget():
    trials = QUICK_TRIALS_BY_SCENARIO["spider_sosp-published"]
    outcome = audit_published(spider_sosp_published_scenario(), trials, seed=0, confidence=QUICK_CONFIDENCE)
    result = outcome.result
    assert result.verdict == "consistent" and result.claim_type == "gdp"
    assert result.claimed_mu == pytest.approx(0.2367043806634, rel=1e-9) and result.epsilon_lb <= 1.0


def test_planted_leak_is_a_violation_named_by_its_feature():
    target = spider_sosp_published_scenario("nonprivate", training_trials=16)
    outcome = audit_published(target, 30, seed=0, confidence=0.95)
    result = outcome.result
    assert result.verdict == "violation" and result.counts.fp == result.counts.fn == 0
    assert outcome.selection.ks == 1.0 and outcome.selection.files == ("nonprivate_diagnostics.json",)


def test_registered_scenario_planted_leak_and_twin():
    assert SPIDER_SOSP_PUBLISHED_BUILTIN_NAMES == ("spider_sosp-published",)
    assert DEFAULT_TRIALS_BY_SCENARIO["spider_sosp-published"] == 300
    assert QUICK_TRIALS_BY_SCENARIO["spider_sosp-published"] <= 50
    scenario = SCENARIOS["spider_sosp-published"]
    assert isinstance(scenario, Scenario) and scenario.name == "spider_sosp-published"
    assert scenario.claim_type == "gdp" and scenario.delta == 1e-6 and scenario.tight_epsilon is None
    assert set(planted.SPIDER_SOSP_PUBLISHED_PLANTED) == set(SPIDER_SOSP_PUBLISHED_BUILTINS) - set(
        SPIDER_SOSP_PUBLISHED_BUILTIN_NAMES)
    for name, (variant, twin) in planted.SPIDER_SOSP_PUBLISHED_PLANTED.items():
        factory, attack, budget = planted.PLANTED[name]
        built = factory()
        assert built.name == name and budget == planted.SPIDER_SOSP_PUBLISHED_BUDGET == 50
        assert attack(built) == built.log_likelihood_ratio
        assert built.claimed_mu == scenario.claimed_mu and built.claim_type == "gdp"
        assert VARIANTS[variant][1] == twin and planted.TWINS[name][0]().name == f"{name}-twin"
        assert len(name) <= 38
    assert isinstance(SPIDER_SOSP_PUBLISHED_BUILTINS["spider_sosp-published"](), PublishedAudit)


@pytest.mark.parametrize("call, parameter", [
    (lambda: spider_sosp_published_setup("nope"), "variant"),
    (lambda: spider_sosp_published_setup(colour=1), "colour"),
    (lambda: spider_sosp_published_setup(samples=1), "samples"),
    (lambda: spider_sosp_published_setup(public_seed=-1), "public_seed"),
    (lambda: canary_records(0, 2, 0, 1), "samples"),
])
def test_validation_errors_name_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()


def test_publish_rejects_a_non_generator(setup):
    with pytest.raises(TypeError, match="rng"):
        publish(setup, 0, 0)
