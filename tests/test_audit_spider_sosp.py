"""spider_sosp audited through the algorithm (empirical_dp/spider_sosp.py; docs/audits.md, spider_sosp): the worst-case
pair and its means, the vectorised law equals ``stochastic_spider`` draw for draw (also where restarts and
perturbations vary: the printed-noise twin), the exact log-likelihood ratio, the whole-run audit consistent and tight
against the plan's exact μ, the printed-noise planted bug caught at its budget, and the registry/catalogue entries."""

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from empirical_dp import planted
from empirical_dp import spider_sosp as audit_spider
from empirical_dp.audit import audit
from empirical_dp.catalogue import CATALOGUE
from empirical_dp.registry import SCENARIOS, SPIDER_SOSP_BUILTIN_NAMES, Deferred, ScenarioRegistry
from empirical_dp.scenarios import tree_release_matrix
from reference.algorithms.spider_sosp import public_permutation, replay_schedule, stochastic_spider
from reference.algorithms.spider_sosp_privacy import (
    spider_sosp_changed_node_count,
    spider_sosp_node_count_upper_bound,
    spider_sosp_node_counts,
    spider_sosp_worst_case_leaves,
)
from reference.fast.conversions import gaussian_epsilon, gaussian_mu

QUICK_CONFIDENCE = 1 - 1e-6
RUN = "spider-sosp-run"
BUG = "spider-sosp-printed-noise"


@pytest.fixture(scope="module")
def run_setup():
    return audit_spider.spider_audit_setup(**audit_spider.RUN_SETTINGS)


@pytest.fixture(scope="module")
def bug_setup():
    return audit_spider.spider_audit_setup(**audit_spider.PRINTED_NOISE_SETTINGS, rule="thm3.11")


@pytest.fixture(scope="module")
def twin_setup(bug_setup):
    return audit_spider.spider_audit_setup(**{**audit_spider.PRINTED_NOISE_SETTINGS,
                                              "record_norm": bug_setup.record_norm}, rule="gdp_exact")


def _covariance(setup):
    """σ²(R Rᵀ ⊗ I_d) of the flattened releases (one global tree)."""
    release = tree_release_matrix(setup.steps)
    return setup.noise_std**2 * np.kron(release @ release.T, np.eye(setup.d))


# ---------------------------------------------------------------------------------------------------
# The pair


def test_pair_attains_the_plans_exact_mu(run_setup):
    """Canary = the first record of the public order (step 0's O1 batch, leaf 1), ∓G·e_2; every other record w·e_1
    with ‖w‖ ≤ G. ∇_0 differs by exactly 2G/b = sbar (O1 sets sbar); the restart at leaf 9 = the worst pair (1, 9) of a
    16-leaf global tree, 7 nodes (5 with no restart, 10 a priori); μ = (2G/b)√7/σ = the plan's μ = μ*(3, 1e-5)."""
    setup = run_setup
    config, plan = setup.config, setup.plan
    b = config.batch_size
    assert setup.leaves == spider_sosp_worst_case_leaves(16, "global") == (1, 9)
    assert setup.node_count == spider_sosp_changed_node_count(1, 9, 16) == spider_sosp_node_counts(16, "global") == 7
    assert spider_sosp_changed_node_count(1, None, 16) == 5 and spider_sosp_node_count_upper_bound(16, "global") == 10
    assert plan.rule == "gdp_exact" and plan.node_count == 7 and plan.private
    assert float(plan.sbar) == pytest.approx(2 / b, rel=1e-15)  # O1 sets sbar: κ ≥ G + α√d/ε + α²/G
    assert config.kappa >= 1 + config.alpha * math.sqrt(2) / 3 + config.alpha**2
    order = public_permutation(0, setup.n)
    assert setup.canary_index == order[0]
    D, D2 = setup.datasets
    differ = np.flatnonzero(np.any(D != D2, axis=1))
    assert differ.tolist() == [setup.canary_index]
    np.testing.assert_array_equal(D[setup.canary_index], [0.0, -1.0])
    np.testing.assert_array_equal(D2[setup.canary_index], [0.0, 1.0])
    others = np.delete(D, setup.canary_index, axis=0)
    assert np.all(others[:, 0] == setup.record_norm) and np.all(others[:, 1] == 0) and setup.record_norm <= 1
    # the means: ∇_0 = ((b − 1)w ∓ G e_2)/b, the restart batch's mean w, computed as Algorithm 3's O1 loop
    shift = setup.segment_means[1] - setup.segment_means[0]
    np.testing.assert_array_equal(shift, [0.0, 2 / b])
    assert setup.segment_means[0][0] == pytest.approx((b - 1) * setup.record_norm / b, rel=1e-12)
    np.testing.assert_allclose(setup.restart_mean, [setup.record_norm, 0.0], rtol=1e-12)
    path = setup.path_means(1) - setup.path_means(0)
    assert np.all(path[:8] == shift) and np.all(path[8:] == 0)  # the shift ends at the restart of step 8 (leaf 9)
    assert setup.mu == pytest.approx(2 / b * math.sqrt(7) / setup.noise_std, rel=1e-12)
    assert setup.mu == pytest.approx(float(plan.mu), rel=1e-12) == pytest.approx(gaussian_mu(3.0, 1e-5), rel=1e-9)
    assert setup.noise_std >= float(plan.noise_std)  # rounded up: never less noise than planned


def test_path_mus_are_the_node_counts(run_setup):
    """μ_τ² = ‖Δ‖²·c(1, τ + 1)/σ² for a first restart at step τ (c(1, none) = 5 without one), from Σ⁻¹ itself."""
    setup = run_setup
    unit = (2 / setup.config.batch_size) / setup.noise_std
    for tau in range(1, 17):
        count = spider_sosp_changed_node_count(1, None if tau == 16 else tau + 1, 16)
        assert setup.path_mus[tau - 1] == pytest.approx(unit * math.sqrt(count), rel=1e-9)
    assert np.argmax(setup.path_mus) + 1 == setup.restart_step == 8


def test_designed_path_is_nearly_certain(run_setup, bug_setup, twin_setup):
    """The restart at step q − 1, no perturbation and no early halt, except with the stated tiny probability (Gaussian
    concentration of the drift, a Lipschitz function of the secret normals); the twin's larger σ gives no such bound."""
    assert run_setup.failure_log10["total"] < -30 and run_setup.failure_log10["early"] < -30
    assert run_setup.failure_log10["late"] < -30 and run_setup.failure_log10["perturbation"] < -1000
    assert bug_setup.failure_log10["total"] < -15 and bug_setup.mu is not None
    assert twin_setup.failure_log10["total"] > math.log10(audit_spider.DETERMINISTIC_PATH) and twin_setup.mu is None
    # margins: κ between the drift after q − 2 and after q − 1 steps
    s0 = float(np.linalg.norm(run_setup.segment_means[0]))
    assert 7 * s0 < run_setup.config.kappa < 8 * s0
    assert run_setup.config.threshold < s0 / 10  # far below every release norm: no perturbation


# ---------------------------------------------------------------------------------------------------
# The law: the vectorised simulation against the algorithm


def _normals(seeds, setup):
    pairs = [audit_spider.secret_normals(s, setup.steps, setup.d) for s in seeds]
    return np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])


@pytest.mark.parametrize("which", [0, 1])
def test_simulation_equals_the_algorithm_on_the_run(run_setup, which):
    """Same secret seed, same releases: ``stochastic_spider`` (plain loops over ≈ 51 000 records, the global
    ``TreeMechanism``) and the vectorised simulation agree to 1e-12; the run restarts at step 8 only."""
    seeds = [3, 2**70 + 1]
    reference = audit_spider.reference_releases(run_setup, which, seeds)
    tree, perturbation = _normals(seeds, run_setup)
    simulated = audit_spider.simulated_releases(run_setup, which, tree, perturbation)
    np.testing.assert_allclose(simulated, reference, rtol=0, atol=1e-12)
    assert audit_spider.first_restart_steps(run_setup, reference).tolist() == [8, 8]
    schedule = replay_schedule(reference[0], run_setup.config, run_setup.n)  # the schedule is public post-processing
    assert [t for t, kind in enumerate(schedule.kinds) if kind == "O1"] == [0, 8]
    assert schedule.perturbation_steps == ()


@pytest.mark.parametrize("which", [0, 1])
def test_simulation_follows_varying_restarts_and_perturbations(twin_setup, bug_setup, which):
    """The twin's exact σ is 5.7 times the printed one: its first restart moves (step 1 or 2) and perturbations fire;
    the simulation follows the algorithm's own schedule and equals it to 1e-12 on every seed, and
    ``first_restart_steps`` reads the restart off the releases. The bug's runs all follow the designed path."""
    seeds = list(range(1, 31))
    for setup, varying in ((twin_setup, True), (bug_setup, False)):
        tree, perturbation = _normals(seeds, setup)
        simulated = audit_spider.simulated_releases(setup, which, tree, perturbation)
        restarts, perturbed = [], 0
        for i, seed in enumerate(seeds):
            run = stochastic_spider(audit_spider.LinearGradient(), setup.datasets[which], np.zeros(setup.d),
                                    setup.config, seed=0, noise_seed=seed)
            np.testing.assert_allclose(simulated[i], run.trace.released, rtol=0, atol=1e-12)
            later = [t for t, kind in enumerate(run.trace.kinds) if kind == "O1" and t > 0]
            restarts.append(later[0] if later else setup.steps)
            perturbed += bool(run.trace.perturbation_steps)
        assert audit_spider.first_restart_steps(setup, simulated).tolist() == restarts
        if varying:
            assert len(set(restarts)) > 1 and perturbed > 0
        else:
            assert set(restarts) == {2} and perturbed == 0


def test_simulation_without_perturbation_normals_refuses_a_perturbation(twin_setup):
    tree, _ = _normals(range(1, 31), twin_setup)
    with pytest.raises(ValueError, match="perturbation_normals"):
        audit_spider.simulated_releases(twin_setup, 0, tree)


def test_sample_draws_tree_normals_first(run_setup):
    scenario = audit_spider.spider_scenario(run_setup, name="x")
    for which in (0, 1):
        outputs = scenario.sample(np.random.default_rng(7), 5, which)
        z = np.random.default_rng(7).standard_normal((5, 16, 2))
        expected = audit_spider.simulated_releases(run_setup, which, z)
        np.testing.assert_array_equal(outputs, expected.reshape(5, -1))
    assert scenario.sample(np.random.default_rng(0), 0, 1).shape == (0, 32)


def test_sample_moments_are_the_tree_law(run_setup):
    """Mean m_which (the designed path) and covariance σ²(R Rᵀ ⊗ I_d), within 6 standard errors."""
    setup = run_setup
    n = 100_000
    covariance = _covariance(setup)
    scenario = audit_spider.spider_scenario(setup, name="x")
    for which in (0, 1):
        x = scenario.sample(np.random.default_rng(which), n, which)
        mean_error = np.abs(x.mean(axis=0) - setup.path_means(which).reshape(-1))
        assert np.all(mean_error <= 6 * np.sqrt(np.diag(covariance) / n))
        empirical = np.cov(x, rowvar=False)
        standard_error = np.sqrt((np.outer(np.diag(covariance), np.diag(covariance)) + covariance**2) / n)
        assert np.all(np.abs(empirical - covariance) <= 6 * standard_error)


def test_log_likelihood_ratio_is_exact(run_setup, twin_setup):
    """The score is log N(x; m_1(τ), Σ) − log N(x; m_0(τ), Σ) with τ the first restart read off x (scipy), also where
    τ varies (the twin's outputs, on draws without a perturbation)."""
    for setup in (run_setup, twin_setup):
        covariance = _covariance(setup)
        scenario = audit_spider.spider_scenario(setup, name="x", claimed_epsilon=1.0)
        x = scenario.sample(np.random.default_rng(1), 40, 0)
        taus = audit_spider.first_restart_steps(setup, x.reshape(-1, setup.steps, setup.d))
        expected = []
        for row, tau in zip(x, taus):
            laws = [multivariate_normal(setup.path_means(w, tau).reshape(-1), covariance) for w in (0, 1)]
            expected.append(laws[1].logpdf(row) - laws[0].logpdf(row))
        replay = np.array([replay_schedule(row.reshape(setup.steps, setup.d), setup.config, setup.n).perturbation_steps
                           == () for row in x])
        assert replay.sum() >= 10
        np.testing.assert_allclose(scenario.log_likelihood_ratio(x)[replay], np.array(expected)[replay], rtol=1e-9,
                                   atol=1e-9)
    with pytest.raises(ValueError, match="outputs must have shape"):
        scenario.log_likelihood_ratio(np.zeros((2, 3)))


# ---------------------------------------------------------------------------------------------------
# Claims and audits


def test_run_claims_the_plans_mu():
    scenario = SCENARIOS[RUN]
    assert scenario.name == RUN and scenario.claim_type == "gdp"
    assert scenario.claimed_mu == pytest.approx(gaussian_mu(3.0, 1e-5), rel=1e-12)
    assert scenario.claimed_epsilon == pytest.approx(3.0, rel=1e-9)
    assert scenario.mu == pytest.approx(scenario.claimed_mu, rel=1e-12)
    assert scenario.tight_epsilon == pytest.approx(3.0, rel=1e-9)


def test_run_is_consistent_at_the_quick_budget():
    """``dpref check``'s audit: 10⁵ trials per dataset at confidence 1 − 1e-6, no violation, ε_lb reported."""
    from dpref.audit import QUICK_TRIALS_BY_SCENARIO

    trials = QUICK_TRIALS_BY_SCENARIO[RUN]
    assert trials == 100_000
    result = audit(SCENARIOS[RUN], trials, seed=0, confidence=QUICK_CONFIDENCE)
    assert result.verdict == "consistent" and result.margin <= 0
    assert result.verdict_bounds == ("clopper_pearson_epsilon", "gdp_mu")
    assert 1.0 < result.epsilon_lb <= result.claimed_epsilon
    assert 0.85 * result.tight_epsilon < result.gdp_epsilon_lb <= result.claimed_epsilon


def test_run_audit_is_tight_at_1e5_trials():
    """The target: at 10⁵ trials per dataset the Gaussian-DP ε_lb of the whole run reaches ≥ 0.9 of its exact ε
    (= the claimed ε), with no violation (seed 0: 2.908 of 3, ratio 0.969)."""
    scenario = SCENARIOS[RUN]
    result = audit(scenario, 100_000, seed=0)
    assert result.verdict == "consistent"
    assert 0.9 * scenario.tight_epsilon <= result.gdp_epsilon_lb <= scenario.claimed_epsilon


def test_printed_noise_bug_and_twin_claims(bug_setup, twin_setup):
    """σ = α/√d (Theorem 3.11) claims (ε, δ) = (1, 1e-5): an (ε, δ) claim (no μ). The pair's true μ is 1.194 (exact ε
    5.38); the plan's own μ for that σ (with sbar = 2/coef_bt > 2G/b here) is larger still. The twin: the exact σ on
    the same pair (same records), against the same claim."""
    bug = audit_spider.printed_noise_scenario()
    twin = audit_spider.printed_noise_scenario(buggy=False)
    assert bug.claim_type == twin.claim_type == "epsilon_delta" and bug.claimed_mu is None
    assert bug.claimed_epsilon == twin.claimed_epsilon == 1.0 and bug.delta == twin.delta == 1e-5
    assert bug_setup.plan.rule == "thm3.11" and not bug_setup.plan.private
    alpha = bug_setup.config.alpha
    assert bug_setup.noise_std == pytest.approx(alpha / 4, rel=1e-15)  # α/√d, d = 16
    assert bug.mu == pytest.approx(1.1936, abs=1e-4) and bug.tight_epsilon == pytest.approx(5.3796, abs=1e-3)
    assert bug.mu == pytest.approx(2 / 87 * math.sqrt(3) / bug_setup.noise_std, rel=1e-12)
    assert float(bug_setup.plan.mu) > bug.mu
    for a, b in zip(bug_setup.datasets, twin_setup.datasets):
        np.testing.assert_array_equal(a, b)
    assert twin_setup.plan.private and float(twin_setup.plan.mu) == pytest.approx(gaussian_mu(1.0, 1e-5), rel=1e-12)
    assert twin_setup.noise_std == pytest.approx(5.75 * bug_setup.noise_std, rel=0.01)
    assert bug.tight_epsilon == gaussian_epsilon(1e-5, bug.mu) and twin.tight_epsilon is None


@pytest.mark.parametrize("confidence", [0.95, QUICK_CONFIDENCE])
def test_printed_noise_bug_caught_at_its_budget_and_twin_consistent(confidence):
    """Only Clopper–Pearson may refute an (ε, δ) claim: it does, at the budget sized from the expected bound (1.93 at
    1 − 1e-6), and the correctly calibrated twin is consistent."""
    bug = planted.audit_planted(BUG, 0, confidence=confidence)
    assert bug.trials == planted.PLANTED[BUG][2] == planted.SPIDER_SOSP_PRINTED_NOISE_BUDGET == 10_000
    assert bug.verdict == "violation" and bug.claim_type == "epsilon_delta"
    assert bug.verdict_bounds == ("clopper_pearson_epsilon",) and bug.decided_by == "clopper_pearson_epsilon"
    assert bug.margin == bug.epsilon_lb - 1.0 > 0.3
    twin = planted.audit_twin(BUG, 0, confidence=confidence)
    assert twin.trials == planted.TWINS[BUG][2]
    assert twin.verdict == "consistent" and twin.margin <= 0 and twin.epsilon_lb <= 1.0


# ---------------------------------------------------------------------------------------------------
# Registry and catalogue


def test_registered_deferred_and_listed():
    assert SPIDER_SOSP_BUILTIN_NAMES == (RUN,) and RUN in SCENARIOS
    fresh = ScenarioRegistry({"x": Deferred(audit_spider.SPIDER_SOSP_BUILTINS[RUN])})
    assert fresh["x"].name == RUN
    assert BUG in planted.PLANTED and BUG in planted.TWINS
    listed = {entry.name: entry for entry in CATALOGUE}
    for name, kind, scenario in ((RUN, "scenario", SCENARIOS[RUN]), (BUG, "planted bug", planted.PLANTED[BUG][0]())):
        entry = listed[name]
        assert len(name) <= 38 and entry.kind == kind
        assert entry.claim_type == scenario.claim_type and entry.description == scenario.description
        assert entry.claimed_epsilon == pytest.approx(scenario.claimed_epsilon, rel=1e-9)
        assert entry.tight_epsilon == pytest.approx(scenario.tight_epsilon, rel=1e-9)
        assert (entry.claimed_mu is None) == (scenario.claimed_mu is None)


@pytest.mark.parametrize("call, parameter", [
    (lambda: audit_spider.spider_audit_setup(steps=4), "restart leaf"),
    (lambda: audit_spider.spider_audit_setup(d=1), "d"),
    (lambda: audit_spider.spider_audit_setup(**audit_spider.PRINTED_NOISE_SETTINGS, record_norm=1.5), "record_norm"),
    (lambda: audit_spider.spider_audit_setup(**{**audit_spider.PRINTED_NOISE_SETTINGS, "loss_gap": 8.0}), "kappa"),
    (lambda: audit_spider.spider_scenario(audit_spider.spider_audit_setup(
        **audit_spider.PRINTED_NOISE_SETTINGS, rule="thm3.11"), name="x"), "claimed_epsilon"),
])
def test_validation_errors_name_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()
