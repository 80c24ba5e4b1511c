"""Audit of everything a zo_o2nc run publishes (empirical_dp/zo_o2nc_published.py): the pipeline is the shipped
``run_zo_o2nc`` with default privacy arguments on the flat/canary pair, the attacker's noise model is the
algorithm's, the feature extractor reads every file and regenerates the noise from every public seed and integer
token, the default publication is consistent and each planted leak is a violation named by its feature.

Verdicts, not exact numbers, are tested where fresh secret entropy is involved. The named-feature tests use smaller
budgets than the registered ones (50 publications, 16 for training, confidence 0.95); the registered budgets are
run by tests/test_planted.py, and the default scenario here at its registered configuration and the quick
confidence."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from empirical_dp import planted
from empirical_dp.published import PublishedAudit, audit_published
from empirical_dp.registry import SCENARIOS, ZO_O2NC_PUBLISHED_BUILTIN_NAMES
from empirical_dp.scenarios import Scenario
from empirical_dp.zo_o2nc_published import (
    FLAT_OFFSET,
    VARIANTS,
    ZO_O2NC_PUBLISHED_BUILTINS,
    CanaryBuilder,
    PipelineMismatch,
    ZoO2ncPublishedAudit,
    canary_problems,
    noise_of_seed,
    publish,
    run_pipeline,
    zo_o2nc_published_scenario,
    zo_o2nc_published_setup,
)
from reference import runner
from reference.fast.conversions import gaussian_mu
from reference.fast.mechanisms import participation_count

TRIALS, TRAINING = 50, 16
FILES = {"releases.csv", "epochs.csv", "output.csv", "diagnostics.json", "ledger.json", "manifest.json"}
RHO = gaussian_mu(1.0, 1e-5)


@pytest.fixture(scope="module")
def setup():
    return zo_o2nc_published_setup()


def _releases(files):
    rows = [line.split(",") for line in files["releases.csv"].splitlines()[1:]]
    return np.array([float(r[2]) for r in rows])


# ---------------------------------------------------------------------------------------------------
# The pair, the pipeline and the noise model


def test_pair_flat_records_and_a_leaf_one_canary(setup):
    d_problem, d_prime = setup.problems
    assert d_problem.samples == d_prime.samples == 32 and d_problem.d == 1
    np.testing.assert_array_equal(d_problem.training_index, np.zeros(32))
    np.testing.assert_array_equal(d_prime.training_index, np.r_[1, np.zeros(31)])  # record 0: first of Z_1^1
    # the same public population {flat, canary} and held-out draws for both data sets
    np.testing.assert_array_equal(d_problem.population.data, d_prime.population.data)
    np.testing.assert_array_equal(d_problem.held_out_index, d_prime.held_out_index)
    flat, canary = d_problem.population.data
    np.testing.assert_array_equal(flat, [1.0, FLAT_OFFSET])
    np.testing.assert_allclose(canary, [1.0, 5.0 - 0.5])  # c = <v, x_1> − τ/2
    assert setup.shape == (3, 5, 1) and setup.B1 == 6  # T = 5, K = 3, B1 = T + 1
    # the flat records contribute nothing; the canary moves every release of epoch 1 by L/B1 (λ = 1 at d = 1)
    np.testing.assert_array_equal(setup.means[0], 0.0)
    expected = np.zeros((3, 5, 1))
    expected[0] = 1 / setup.B1
    np.testing.assert_allclose(setup.means[1], expected, rtol=0, atol=1e-15)
    # the claim is the ledger's exact ρ, the target; the releases' μ is the leaf-1 canary's
    assert setup.plan.rho_exact == pytest.approx(RHO, rel=1e-12) and setup.rho == RHO
    c1 = participation_count(1, 5)
    assert c1 == math.floor(math.log2(5)) + 1 == 3
    assert setup.releases_mu == pytest.approx((1 / setup.B1) * math.sqrt(c1) / setup.noise_std, rel=1e-9)
    assert setup.releases_mu < setup.plan.rho_exact


def test_pipeline_is_run_zo_o2nc_with_default_privacy_arguments(setup):
    original = runner.build_ridge_problem
    outcome = run_pipeline(setup.problems[1], seed=3, **setup.run_arguments())
    assert runner.build_ridge_problem is original  # reference.runner is never modified
    assert isinstance(outcome, runner.O2ncOutcome) and outcome.problem is setup.problems[1]
    assert outcome.settings["backend"] == ("fast" if runner.fast_zo_o2nc_available() else "reference")
    assert outcome.secret_seed_source == "os_entropy" and outcome.settings["count_rule"] == "exact"
    assert outcome.settings["T_rule"] == "max" and outcome.settings["goldstein_samples"] == 256
    assert outcome.result.ledger.plan.rho_exact == setup.plan.rho_exact
    with pytest.raises(PipelineMismatch, match="asked for"):
        CanaryBuilder(setup.problems[0])("wshape", d=1, samples=32, population=2, held_out_n=None, data_seed=0)


def test_noise_model_is_the_algorithms(setup):
    """A run with a known secret S: its releases are the known means plus TREE(σ z_S), which is what the
    regeneration features subtract; its noiseless sums are the means (the builder's checks, repeated here for
    another public seed and both data sets)."""
    secret = 2**90 + 7
    for which in (0, 1):
        outcome = run_pipeline(setup.problems[which], seed=11, noise_seed=secret, **setup.run_arguments())
        np.testing.assert_allclose(outcome.result.diagnostics.noiseless_sums, setup.means[which], rtol=0, atol=1e-12)
        residual = np.asarray(outcome.result.releases).reshape(-1) - setup.means[which].reshape(-1)
        np.testing.assert_allclose(residual, noise_of_seed(setup, [secret])[0], rtol=1e-9, atol=1e-12)


def test_means_do_not_depend_on_the_public_seed_at_d_1(setup):
    fixed = zo_o2nc_published_setup(public_seed=123)
    np.testing.assert_array_equal(fixed.means, setup.means)
    assert fixed.noise_std == setup.noise_std and fixed.public_seed == 123


def test_higher_dimension_takes_the_top_eigenvector_of_the_public_directions():
    from reference.algorithms.zo_o2nc import directions_for_round

    s = zo_o2nc_published_setup(d=2, public_seed=0)
    u = directions_for_round(0, 1, 1, s.B1, 2)[0]
    eigenvalues, vectors = np.linalg.eigh(u.T @ u)
    v = s.problems[1].population.data[1, :2]
    assert abs(abs(v @ vectors[:, -1]) - 1) < 1e-12
    # the canary's move a = (L/B1) λ v in every release of epoch 1, checked by the builder on a private run too
    np.testing.assert_allclose(s.means[1][0], np.tile(eigenvalues[-1] * v / s.B1, (s.shape[1], 1)), atol=1e-12)
    np.testing.assert_array_equal(s.means[0], 0.0)


def test_default_trials_publish_every_file_with_fresh_secrets(setup):
    first, second = (publish(setup, np.random.default_rng(5), 0) for _ in range(2))
    assert set(first) == set(second) == FILES
    # the same generator state gives the same public seed, but fresh entropy gives different noise
    assert json.loads(first["ledger.json"])["seed"] == json.loads(second["ledger.json"])["seed"]
    assert not np.array_equal(_releases(first), _releases(second))
    ledger = json.loads(first["ledger.json"])
    assert ledger["secret_seed_source"] == "os_entropy" and ledger["plan"]["rho_exact"] == setup.plan.rho_exact
    # training publications: the proxy secret is reproducible
    a, b = (publish(setup, np.random.default_rng(5), 1, proxy=True) for _ in range(2))
    np.testing.assert_array_equal(_releases(a), _releases(b))


def test_planted_variants_change_one_thing(setup):
    seed_noise = zo_o2nc_published_setup("public_seed_noise")
    files = publish(seed_noise, np.random.default_rng(2), 0)
    ledger = json.loads(files["ledger.json"])
    public = ledger["seed"]
    assert ledger["secret_seed_source"] == "user"  # noise_seed = seed + 1, accepted by the runner
    residual = _releases(files) - seed_noise.means[0].reshape(-1)
    np.testing.assert_allclose(residual, noise_of_seed(seed_noise, [public + 1])[0], rtol=1e-9, atol=1e-12)
    training = publish(zo_o2nc_published_setup("training_diagnostics"), np.random.default_rng(2), 1)
    assert set(training) == FILES | {"nonprivate_diagnostics.json"}
    assert "NOT PRIVATE" in json.loads(training["nonprivate_diagnostics.json"])["warning"]


# ---------------------------------------------------------------------------------------------------
# Features


def test_features_read_every_file_and_regenerate_from_every_source(setup):
    audit = ZoO2ncPublishedAudit(setup, "zo_o2nc-published-test")
    files = publish(setup, np.random.default_rng(0), 1)
    features = audit.features(files)
    for name in FILES:
        assert features[f"file:{name}"] == 1.0 and features[f"{name}#len"] == len(files[name])
        assert f"regenerated[text:{name}]" in features
    assert {"regenerated[public seeds]", "regenerated[seed offsets]", "release_score", "completed"} <= set(features)
    assert "ledger.json:plan.rho_exact" in features and "epochs.csv:heldout_objective[0]" in features
    assert "output.csv:output[0]" in features and "diagnostics.json:held_out.output.objective" in features
    assert not any(name.startswith("releases.csv:") for name in features)  # the releases are scored by a and b
    # honest run: nothing regenerates (the best match under D′ and under D are both noise)
    assert all(abs(v) < 1 for k, v in features.items() if k.startswith("regenerated["))
    # release score: the log-likelihood ratio of the releases (+ on D′ on average)
    x = _releases(files).reshape(setup.shape)
    assert features["release_score"] == pytest.approx(np.sum(setup.weights * (x - setup.midpoint)))


def test_a_secret_written_anywhere_is_regenerated(setup):
    """The attack works: a run with a known secret S, S then written into a file — the residual under the true
    data set matches S's tree noise to rounding."""
    audit = ZoO2ncPublishedAudit(setup, "zo_o2nc-published-test")
    secret = 2**80 + 12345
    for which, sign in ((1, 1), (0, -1)):
        outcome = run_pipeline(setup.problems[which], seed=9, noise_seed=secret, **setup.run_arguments())
        files = runner.publication(outcome, command="test")
        files["notes.json"] = json.dumps({"note": f"secret {secret}"})
        features = audit.features(files)
        assert sign * features["regenerated[text:notes.json]"] > 8
        assert abs(features["regenerated[text:manifest.json]"]) < 1


def test_an_error_publication_is_scored(setup):
    audit = ZoO2ncPublishedAudit(setup, "zo_o2nc-published-test")
    assert audit.features({"error.txt": "ValueError: x\n"}) == {
        "completed": 0.0, "file:error.txt": 1.0, "error.txt#len": len("ValueError: x\n")}


# ---------------------------------------------------------------------------------------------------
# Audits


def test_default_publication_is_consistent_at_its_registered_configuration():
    """``zo_o2nc-published`` as registered (48 training publications per data set, 100 counted), at the quick
    confidence 1 − 1e-6: consistent with the μ-GDP claim at the ledger's ρ."""
    outcome = audit_published(zo_o2nc_published_scenario(), 100, seed=0, confidence=1 - 1e-6)
    result = outcome.result
    assert result.verdict == "consistent" and result.claim_type == "gdp"
    assert result.claimed_mu == pytest.approx(RHO, rel=1e-12) and result.claimed_epsilon == pytest.approx(1.0)
    assert result.epsilon_lb <= 1.0 and result.gdp_mu_lb <= result.claimed_mu
    assert outcome.selection.training_trials == 48


@pytest.mark.parametrize("variant, feature, file", [
    ("public_seed_noise", "regenerated[seed offsets]", "releases.csv"),
    ("training_diagnostics", "nonprivate_diagnostics.json:training_", "nonprivate_diagnostics.json"),
])
def test_planted_leak_is_a_violation_named_by_its_feature(variant, feature, file):
    target = zo_o2nc_published_scenario(variant, training_trials=TRAINING)
    outcome = audit_published(target, TRIALS, seed=0, confidence=0.95)
    result = outcome.result
    assert result.verdict == "violation", (variant, outcome.selection)
    assert result.counts.fp == result.counts.fn == 0 and outcome.selection.ks == 1.0
    assert result.gdp_mu_lb > result.claimed_mu and result.epsilon_lb > result.claimed_epsilon
    assert outcome.selection.name.startswith(feature) and file in outcome.selection.files


def test_training_is_reproducible():
    first, second = (zo_o2nc_published_scenario(training_trials=4).selection for _ in range(2))
    assert (first.name, first.sign, first.cut, first.schema) == (second.name, second.sign, second.cut, second.schema)


# ---------------------------------------------------------------------------------------------------
# Registry


def test_registered_scenario_planted_leaks_and_twins():
    assert ZO_O2NC_PUBLISHED_BUILTIN_NAMES == ("zo_o2nc-published",)
    scenario = SCENARIOS["zo_o2nc-published"]
    assert isinstance(scenario, Scenario) and scenario.name == "zo_o2nc-published"
    assert scenario.claim_type == "gdp" and scenario.claimed_mu == pytest.approx(RHO, rel=1e-12)
    assert scenario.mu is None and scenario.tight_epsilon is None and scenario.delta == 1e-5
    assert set(planted.ZO_O2NC_PUBLISHED_PLANTED) == set(ZO_O2NC_PUBLISHED_BUILTINS) - {"zo_o2nc-published"}
    for name, (variant, twin) in planted.ZO_O2NC_PUBLISHED_PLANTED.items():
        factory, attack, budget = planted.PLANTED[name]
        built = factory()
        assert built.name == name and budget == planted.ZO_O2NC_PUBLISHED_BUDGET  # sufficient: test_planted.py
        assert attack(built) == built.log_likelihood_ratio
        assert built.claimed_mu == scenario.claimed_mu and built.claim_type == "gdp"
        assert VARIANTS[variant][1] == twin and planted.TWINS[name][0]().name == f"{name}-twin"
        assert len(name) <= 38  # ``dpref audit list`` never shortens a name
    assert isinstance(ZO_O2NC_PUBLISHED_BUILTINS["zo_o2nc-published"](), PublishedAudit)


@pytest.mark.parametrize("call, parameter", [
    (lambda: zo_o2nc_published_setup("nope"), "variant"),
    (lambda: zo_o2nc_published_setup(colour=1), "colour"),
    (lambda: zo_o2nc_published_setup(samples=1), "samples"),
    (lambda: zo_o2nc_published_setup(smoothing_radius=0.5), "smoothing_radius"),
    (lambda: zo_o2nc_published_setup(d=2), "public_seed"),
    (lambda: zo_o2nc_published_setup(delta=2.0), "delta"),
    (lambda: zo_o2nc_published_scenario(training_trials=1), "training_trials"),
    (lambda: canary_problems(1, 1, [1.0]), "samples"),
])
def test_validation_errors_name_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()


def test_publish_rejects_a_non_generator(setup):
    with pytest.raises(TypeError, match="rng"):
        publish(setup, 0, 0)
