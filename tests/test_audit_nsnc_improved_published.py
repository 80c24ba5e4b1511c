"""Audit of everything a default nsnc_improved run publishes (empirical_dp/nsnc_improved_published.py): the pipeline
is the shipped ``run_nsnc_improved`` with default arguments on the flat/canary pair, the attacker's noise model is
the algorithm's, the features read every file, the default publication (m = 64: worst-case μ-GDP, public
directions) and the theory-directions one (the high-probability (ε, δ) claim, secret directions) are consistent
with their ledgers' claims, and the planted leak (the NOT PRIVATE diagnostics published) is a violation named by
its feature. The registered planted budget is run by tests/test_planted.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpref.audit import DEFAULT_TRIALS_BY_SCENARIO, QUICK_CONFIDENCE, QUICK_TRIALS_BY_SCENARIO
from empirical_dp import planted
from empirical_dp.nsnc_improved_published import (
    FLAT_OFFSET,
    NSNC_IMPROVED_PUBLISHED_BUILTINS,
    VARIANTS,
    CanaryBuilder,
    NsncImprovedPublishedAudit,
    PipelineMismatch,
    canary_problems,
    noise_of_seed,
    nsnc_improved_published_scenario,
    nsnc_improved_published_setup,
    publish,
    run_pipeline,
)
from empirical_dp.published import PublishedAudit, audit_published
from empirical_dp.registry import NSNC_IMPROVED_PUBLISHED_BUILTIN_NAMES, SCENARIOS
from empirical_dp.scenarios import Scenario
from reference import runner_nsnc_improved as nsnc_runner

FILES = {"releases.csv", "blocks.csv", "output.csv", "diagnostics.json", "ledger.json", "manifest.json"}


@pytest.fixture(scope="module")
def setup():
    return nsnc_improved_published_setup()


@pytest.fixture(scope="module")
def theory_setup():
    return nsnc_improved_published_setup("theory_directions")


def _releases(files):
    return np.array([float(line.split(",")[2]) for line in files["releases.csv"].splitlines()[1:]])


def test_pair_and_noiseless_sums(setup):
    d_problem, d_prime = setup.problems
    assert d_problem.samples == d_prime.samples == 32 and d_problem.d == 1
    np.testing.assert_array_equal(d_prime.training_index, np.r_[1, np.zeros(31)])  # record 0: first reset record
    np.testing.assert_array_equal(d_problem.held_out_index, d_prime.held_out_index)
    np.testing.assert_array_equal(d_problem.population.data, [[1.0, FLAT_OFFSET], [1.0, 4.5]])
    assert setup.shape == (17, 1, 1) and setup.tree_size == 4 and setup.B1 == 4
    np.testing.assert_array_equal(setup.means[0], 0.0)
    expected = np.zeros((17, 1))
    expected[:4] = 1 / setup.B1  # the canary's L/B1 on period 1, whatever the (secret) directions
    np.testing.assert_allclose(setup.means[1], expected, rtol=0, atol=1e-15)
    plan = setup.plan
    assert plan.guarantee == "worst-case" and plan.delta_fail == 0 and plan.dp_delta == 1e-6
    # leaf 1 of a 4-leaf tree enters 3 nodes: μ = (L/B1)√3/σ, far below the plan's μ
    assert setup.releases_mu == pytest.approx(np.sqrt(3) / (setup.B1 * setup.noise_std), rel=1e-9)
    assert setup.releases_mu < plan.mu


def test_theory_directions_variant_is_the_high_probability_path(theory_setup, setup):
    plan = theory_setup.plan
    assert plan.guarantee == "high-probability" and plan.delta_fail > 0 and plan.dp_delta == 1e-6
    assert theory_setup.shape == setup.shape and theory_setup.tree_size == setup.tree_size
    np.testing.assert_array_equal(theory_setup.means, setup.means)  # the pair's sums do not depend on m at d = 1
    assert theory_setup.releases_mu == pytest.approx(np.sqrt(3) / (theory_setup.B1 * theory_setup.noise_std),
                                                     rel=1e-9)
    assert theory_setup.run_arguments()["directions"] == "theory" and "directions" not in setup.run_arguments()
    outcome = run_pipeline(theory_setup.problems[1], seed=11, noise_seed=2**90 + 7, **theory_setup.run_arguments())
    assert outcome.result.ledger.settings.direction_seed == "secret"


def test_pipeline_is_the_default_run_and_the_noise_model_is_the_algorithms(setup):
    original = nsnc_runner.build_ridge_problem
    secret = 2**90 + 7
    for which in (0, 1):
        outcome = run_pipeline(setup.problems[which], seed=11, noise_seed=secret, **setup.run_arguments())
        assert nsnc_runner.build_ridge_problem is original  # the reference module is never modified
        assert outcome.problem is setup.problems[which] and outcome.settings["oracle"] == "single_pass"
        assert outcome.settings["goldstein_samples"] == 256 and outcome.settings["sensitivity_mode"] == "auto"
        assert outcome.result.ledger.settings.direction_seed == "public"
        np.testing.assert_allclose(np.asarray(outcome.result.diagnostics.noiseless_sums).reshape(-1, 1),
                                   setup.means[which], rtol=0, atol=1e-12)
        residual = np.asarray(outcome.result.releases).reshape(-1) - setup.means[which].reshape(-1)
        np.testing.assert_allclose(residual, noise_of_seed(setup, [secret])[0], rtol=1e-9, atol=1e-12)
    with pytest.raises(PipelineMismatch, match="asked for"):
        CanaryBuilder(setup.problems[0])("wshape", d=1, samples=32, population=2, held_out_n=None, data_seed=0)


def test_trials_publish_every_file_with_fresh_secrets(setup):
    first, second = (publish(setup, np.random.default_rng(5), 0) for _ in range(2))
    assert set(first) == set(second) == FILES
    assert json.loads(first["ledger.json"])["seed"] == json.loads(second["ledger.json"])["seed"]
    assert not np.array_equal(_releases(first), _releases(second))
    ledger = json.loads(first["ledger.json"])
    assert ledger["secret_seed_source"] == "os_entropy" and ledger["guarantee"] == "worst-case"
    a, b = (publish(setup, np.random.default_rng(5), 1, proxy=True) for _ in range(2))
    np.testing.assert_array_equal(_releases(a), _releases(b))
    leaky = publish(nsnc_improved_published_setup("nonprivate"), np.random.default_rng(2), 1)
    assert set(leaky) == FILES | {"nonprivate_diagnostics.json"}


def test_features_read_every_file_and_a_leaked_secret_is_regenerated(setup):
    audit = NsncImprovedPublishedAudit(setup, "nsnc_improved-published-test")
    files = publish(setup, np.random.default_rng(0), 1)
    features = audit.features(files)
    for name in FILES:
        assert features[f"file:{name}"] == 1.0 and f"regenerated[text:{name}]" in features
    assert {"regenerated[public seeds]", "regenerated[seed offsets]", "release_score", "completed"} <= set(features)
    assert "blocks.csv:heldout_objective[0]" in features and "output.csv:output[0]" in features
    assert not any(name.startswith("releases.csv:") for name in features)
    assert all(abs(v) < 1 for k, v in features.items() if k.startswith("regenerated["))
    assert features["release_score"] == pytest.approx(np.sum(setup.weights[:, 0] * (_releases(files)
                                                                                    - setup.midpoint[:, 0])))
    secret = 2**80 + 12345
    outcome = run_pipeline(setup.problems[1], seed=9, noise_seed=secret, **setup.run_arguments())
    files = nsnc_runner.nsnc_publication(outcome, command="test")
    files["notes.json"] = json.dumps({"note": f"secret {secret}"})
    assert audit.features(files)["regenerated[text:notes.json]"] > 8
    assert audit.features({"error.txt": "ValueError: x\n"})["completed"] == 0.0


@pytest.mark.parametrize("variant, claim_type", [("default", "gdp"), ("theory_directions", "epsilon_delta")])
def test_publications_are_consistent_at_the_quick_budget(variant, claim_type):
    name = "nsnc_improved-published" + ("" if variant == "default" else "-theory-m")
    trials = QUICK_TRIALS_BY_SCENARIO[name]
    outcome = audit_published(nsnc_improved_published_scenario(variant), trials, seed=0, confidence=QUICK_CONFIDENCE)
    result = outcome.result
    assert result.verdict == "consistent" and result.claim_type == claim_type
    assert result.claimed_epsilon == pytest.approx(1.0) and result.epsilon_lb <= 1.0


def test_planted_leak_is_a_violation_named_by_its_feature():
    target = nsnc_improved_published_scenario("nonprivate", training_trials=16)
    outcome = audit_published(target, 30, seed=0, confidence=0.95)
    result = outcome.result
    assert result.verdict == "violation" and result.counts.fp == result.counts.fn == 0
    assert result.epsilon_lb > result.claimed_epsilon and outcome.selection.ks == 1.0
    assert "nonprivate_diagnostics.json" in outcome.selection.files


def test_registered_scenario_planted_leak_and_twin():
    assert NSNC_IMPROVED_PUBLISHED_BUILTIN_NAMES == ("nsnc_improved-published",
                                                     "nsnc_improved-published-theory-m")
    assert DEFAULT_TRIALS_BY_SCENARIO["nsnc_improved-published"] == 300
    scenario = SCENARIOS["nsnc_improved-published"]
    assert isinstance(scenario, Scenario) and scenario.name == "nsnc_improved-published"
    assert scenario.claim_type == "gdp" and scenario.delta == 1e-6 and scenario.tight_epsilon is None
    theory = SCENARIOS["nsnc_improved-published-theory-m"]
    assert theory.claim_type == "epsilon_delta" and theory.delta == 1e-6
    assert set(planted.NSNC_IMPROVED_PUBLISHED_PLANTED) == set(NSNC_IMPROVED_PUBLISHED_BUILTINS) - set(
        NSNC_IMPROVED_PUBLISHED_BUILTIN_NAMES)
    for name, (variant, twin) in planted.NSNC_IMPROVED_PUBLISHED_PLANTED.items():
        factory, attack, budget = planted.PLANTED[name]
        built = factory()
        assert built.name == name and budget == planted.NSNC_IMPROVED_PUBLISHED_BUDGET == 50
        assert attack(built) == built.log_likelihood_ratio
        assert built.claimed_epsilon == scenario.claimed_epsilon and built.claim_type == "gdp"
        assert VARIANTS[variant][1] == twin and planted.TWINS[name][0]().name == f"{name}-twin"
        assert len(name) <= 38
    assert isinstance(NSNC_IMPROVED_PUBLISHED_BUILTINS["nsnc_improved-published"](), PublishedAudit)


@pytest.mark.parametrize("call, parameter", [
    (lambda: nsnc_improved_published_setup("nope"), "variant"),
    (lambda: nsnc_improved_published_setup(colour=1), "colour"),
    (lambda: nsnc_improved_published_setup(samples=1), "samples"),
    (lambda: nsnc_improved_published_setup(smoothing_radius=0.5), "smoothing_radius"),
    (lambda: nsnc_improved_published_setup(d=2), "d"),
    (lambda: canary_problems(1), "samples"),
])
def test_validation_errors_name_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()


def test_publish_rejects_a_non_generator(setup):
    with pytest.raises(TypeError, match="rng"):
        publish(setup, 0, 0)
