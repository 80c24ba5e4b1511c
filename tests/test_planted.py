"""Planted bugs (empirical_dp/planted.py): each is flagged at its stated budget, each correct twin is not."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from empirical_dp.planted import (
    CLIPPED_MEAN_BUDGET,
    PUBLISHED_PLANTED,
    PLANTED,
    TWINS,
    audit_planted,
    audit_twin,
    calibrated_noise_std,
    direction_seed_attack,
    direction_seed_scenario,
    noise_halved_scenario,
    poisson_run_scenario,
    sensitivity_c_over_n_scenario,
    shuffle_run_scenario,
)
from empirical_dp.scenarios import Scenario
from reference.fast.conversions import epsilon_from_rdp, gaussian_epsilon, gaussian_mu
from reference.fast.rdp import DEFAULT_ORDERS, rdp_poisson_gaussian

MU_AT_EPS_1 = gaussian_mu(1.0, 1e-5)


#: The claim each planted bug states (its twin states the same): (ε, δ) unless its accountant states μ-GDP.
CLAIM_TYPES = {
    "noise_halved": "epsilon_delta",
    "sensitivity_c_over_n": "epsilon_delta",
    "poisson_accounted_shuffle_run": "epsilon_delta",
    "noise_from_direction_seed": "epsilon_delta",
    "noise_from_direction_seed_full_run": "gdp",  # the gdp_exact plan of dpzero-full-run
    "zo_o2nc-noise-halved-sensitivity": "gdp",  # the exact rho of the tree release, as mu
    "zo_o2nc-nodes-renoised": "gdp",
    "zo_o2nc-published-public-seed-noise": "gdp",  # the ledger's exact rho, as mu, for the whole publication
    "zo_o2nc-published-training-diagnostics": "gdp",
    "nsnc_improved-fo-reset-halved": "gdp",  # the plan's exact mu of the single-pass tree
    "nsnc_improved-published-nonprivate": "gdp",  # the ledger's worst-case mu (the default m = 64)
    "spider-sosp-printed-noise": "epsilon_delta",  # Theorem 3.11's printed "(epsilon, delta)-DP"
    "spider_sosp-published-nonprivate": "gdp",  # the ledger's gdp_exact mu
    "bgm21-noisy-sfw-printed-sigma-hat": "epsilon_delta",  # Theorem 10 with the printed sigma_hat: "(epsilon, delta)-DP"
    "bgm21_nsfw-published-public-seed-noise": "gdp",  # the Algorithm 6 ledger's gdp_exact mu (its worst batch)
    **{name: "epsilon_delta" for name in PUBLISHED_PLANTED},
    "opacus-fixed-order-loader": "epsilon_delta",  # Opacus's own PRV accountant states (epsilon, delta)
    "dpzero-torch-seed-leak": "gdp",  # the gdp_exact plan of dpzero-torch-full-run
    "dpzero_torch-published-seed-leak": "epsilon_delta",  # a default torch run: Lemma 2.2's (epsilon, delta)
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_planted_bug_is_a_violation_at_its_budget(name):
    result = audit_planted(name, seed=0)
    assert result.trials == PLANTED[name][2]
    assert result.verdict == "violation"
    # decided by a bound valid for the bug's claim: Clopper–Pearson alone against (ε, δ)
    assert result.claim_type == CLAIM_TYPES[name]
    assert result.decided_by in result.verdict_bounds and result.margin > 0
    if result.claim_type == "epsilon_delta":
        assert result.verdict_bounds == ("clopper_pearson_epsilon",)
        assert result.decided_by == "clopper_pearson_epsilon"
        assert result.margin == result.epsilon_lb - result.claimed_epsilon > 0
    else:
        assert result.gdp_mu_lb > result.claimed_mu or result.epsilon_lb > result.claimed_epsilon


@pytest.mark.parametrize("name", sorted(TWINS))
def test_correct_twin_is_consistent(name):
    result = audit_twin(name, seed=0)
    assert result.trials == TWINS[name][2]
    assert result.verdict == "consistent"
    assert result.epsilon_lb <= result.claimed_epsilon
    assert result.claim_type == CLAIM_TYPES[name] and result.margin <= 0


def test_bugs_and_twins_state_the_same_claim():
    for name in set(PLANTED) - set(PUBLISHED_PLANTED):
        bug, twin = PLANTED[name][0](), TWINS[name][0]()
        assert bug.claim_type == twin.claim_type == CLAIM_TYPES[name], name
        assert bug.claimed_epsilon == pytest.approx(twin.claimed_epsilon, rel=1e-12), name
        assert bug.claimed_mu == twin.claimed_mu, name


def test_clipped_mean_bugs_are_caught_by_clopper_pearson_at_the_quick_confidence():
    """Bugs 1 and 2 claim (ε, δ) = (1, 1e-5) only; their true μ-GDP (2μ*) feeds the yardsticks, never the verdict.
    At the quick audits' confidence 1 − 1e-6 the Clopper–Pearson ε_lb refutes the claim at their budget."""
    for name in ("noise_halved", "sensitivity_c_over_n"):
        assert PLANTED[name][2] == TWINS[name][2] == CLIPPED_MEAN_BUDGET
        result = audit_planted(name, seed=0, confidence=1 - 1e-6)
        assert result.verdict == "violation" and result.decided_by == "clopper_pearson_epsilon"
        assert result.epsilon_lb > 1.2 and result.false_alarm_probability == pytest.approx(1e-6)


def test_a_planted_bug_is_missed_at_a_tiny_budget():
    """Not caught with 2 000 trials: the audit says "consistent" (the CLI reports it as missed)."""
    result = audit_planted("noise_halved", seed=0, trials=2000)
    assert result.verdict == "consistent" and result.decided_by == "clopper_pearson_epsilon" and result.margin <= 0


def test_registries_have_the_same_names_and_budgets():
    assert sorted(PLANTED) == sorted(TWINS) == sorted(
        ["noise_halved", "sensitivity_c_over_n", "poisson_accounted_shuffle_run", "noise_from_direction_seed",
         "noise_from_direction_seed_full_run", "zo_o2nc-noise-halved-sensitivity", "zo_o2nc-nodes-renoised",
         "zo_o2nc-published-public-seed-noise", "zo_o2nc-published-training-diagnostics",
         "nsnc_improved-fo-reset-halved", "nsnc_improved-published-nonprivate", "spider-sosp-printed-noise",
         "spider_sosp-published-nonprivate", "bgm21-noisy-sfw-printed-sigma-hat",
         "bgm21_nsfw-published-public-seed-noise", "opacus-fixed-order-loader", "dpzero-torch-seed-leak",
         "dpzero_torch-published-seed-leak", *PUBLISHED_PLANTED])
    for name, (scenario_factory, attack_factory, budget) in PLANTED.items():
        scenario = scenario_factory()
        assert isinstance(scenario, Scenario) and scenario.name == name
        assert callable(attack_factory(scenario)) and budget >= 2


def test_gaussian_bugs_double_mu_against_a_claim_of_one():
    # exact GDP: the bug runs at μ = 2·μ(ε=1, δ=1e-5), the twin at μ(ε=1, δ=1e-5) itself.
    for factory in (noise_halved_scenario, sensitivity_c_over_n_scenario):
        bug, twin = factory(), factory(buggy=False)
        assert bug.claimed_epsilon == twin.claimed_epsilon == 1.0
        assert bug.claim_type == twin.claim_type == "epsilon_delta" and bug.claimed_mu is None  # μ: true law only
        assert bug.mu == pytest.approx(2 * MU_AT_EPS_1, rel=1e-12)
        assert twin.mu == pytest.approx(MU_AT_EPS_1, rel=1e-12)
        assert twin.tight_epsilon == pytest.approx(1.0, rel=1e-9)
        assert bug.tight_epsilon == pytest.approx(gaussian_epsilon(1e-5, 2 * MU_AT_EPS_1), rel=1e-12)


def test_clipped_mean_pair_means_and_noise():
    n, clip = 50, 2.0
    scenario = noise_halved_scenario(n, clip)
    sigma_run = (2 * clip / n) / MU_AT_EPS_1 / 2
    draws = {w: scenario.sample(np.random.default_rng(3), 200_000, w)[:, 0] for w in (0, 1)}
    # same generator state, so the two outputs differ by exactly the replace-one shift 2C/n
    np.testing.assert_allclose(draws[1] - draws[0], 2 * clip / n, rtol=0, atol=1e-12)
    assert draws[0].mean() == pytest.approx(-clip / n, abs=5 * sigma_run / math.sqrt(200_000))
    assert draws[0].std() == pytest.approx(sigma_run, rel=0.01)


def test_shuffle_run_claims_poisson_but_is_the_unsampled_gaussian():
    scenario = shuffle_run_scenario(n=1000, batch_size=10, noise_std=1.0)
    claim, _ = epsilon_from_rdp(DEFAULT_ORDERS, rdp_poisson_gaussian(DEFAULT_ORDERS, 0.01, 1.0), 1e-5)
    assert scenario.claimed_epsilon == claim
    assert scenario.tight_epsilon == gaussian_epsilon(1e-5, 1.0)
    assert scenario.tight_epsilon > 4 * scenario.claimed_epsilon
    a = scenario.sample(np.random.default_rng(1), 1000, 0)
    b = scenario.sample(np.random.default_rng(1), 1000, 1)
    np.testing.assert_allclose(b - a, 1.0, rtol=0, atol=1e-12)  # the differing record is always in the batch
    twin = poisson_run_scenario(n=1000, batch_size=10, noise_std=1.0)
    assert twin.claimed_epsilon == claim and twin.tight_epsilon <= claim


def test_shuffle_target_is_in_the_public_batch_for_any_public_seed():
    for public_seed in range(5):
        scenario = shuffle_run_scenario(n=20, batch_size=3, public_seed=public_seed)
        out = [scenario.sample(np.random.default_rng(0), 3, w) for w in (0, 1)]
        np.testing.assert_allclose(out[1] - out[0], 1.0, rtol=0, atol=1e-12)


def test_direction_seed_bug_reveals_the_clipped_mean_exactly():
    attack = direction_seed_attack()
    bug, fix = direction_seed_scenario(), direction_seed_scenario(buggy=False)
    for scenario, separable in ((bug, True), (fix, False)):
        d_scores = attack(scenario.sample(np.random.default_rng(5), 300, 0))
        dp_scores = attack(scenario.sample(np.random.default_rng(6), 300, 1))
        # bug: residual = ∓C/n exactly, so the score is −2C/n on D and +2C/n on D'
        assert (d_scores.max() < 0 < dp_scores.min()) == separable
    d_scores = attack(bug.sample(np.random.default_rng(5), 50, 0))
    np.testing.assert_allclose(d_scores, -2 / 100, rtol=0, atol=1e-12)


def test_direction_seed_outputs_carry_the_public_seed_and_share_a_schedule():
    bug, fix = direction_seed_scenario(), direction_seed_scenario(buggy=False)
    a, b = bug.sample(np.random.default_rng(9), 10, 1), fix.sample(np.random.default_rng(9), 10, 1)
    np.testing.assert_array_equal(a[:, 1], b[:, 1])
    assert np.all(a[:, 1] == np.floor(a[:, 1])) and np.all(a[:, 1] >= 0)
    assert not np.array_equal(a[:, 0], b[:, 0])


@settings(max_examples=30, deadline=None)
@given(sensitivity=st.floats(1e-3, 10), epsilon=st.floats(0.1, 8), log_delta=st.floats(-12, -2))
def test_calibrated_noise_std_hits_the_target_epsilon(sensitivity, epsilon, log_delta):
    delta = 10.0**log_delta
    sigma = calibrated_noise_std(sensitivity, epsilon, delta)
    assert gaussian_epsilon(delta, sensitivity / sigma) == pytest.approx(epsilon, rel=1e-9)


@pytest.mark.parametrize("call, parameter", [
    (lambda: audit_planted("no_such_bug", 0), "name"),
    (lambda: audit_twin(3, 0), "name"),
    (lambda: audit_planted("noise_halved", 0, trials=1), "trials"),
    (lambda: audit_planted("noise_halved", -1), "seed"),
    (lambda: noise_halved_scenario(n=1), "n"),
    (lambda: sensitivity_c_over_n_scenario(clip_threshold=-1.0), "clip_threshold"),
    (lambda: shuffle_run_scenario(n=10, batch_size=10), "batch_size"),
    (lambda: shuffle_run_scenario(noise_std=0.0), "noise_std"),
    (lambda: shuffle_run_scenario(delta=1.5), "delta"),
    (lambda: shuffle_run_scenario(public_seed=-2), "public_seed"),
    (lambda: direction_seed_scenario(dimension=0), "dimension"),
    (lambda: calibrated_noise_std(0.0, 1.0, 1e-5), "sensitivity"),
    (lambda: calibrated_noise_std(1.0, -1.0, 1e-5), "epsilon"),
    (lambda: noise_halved_scenario().sample(np.random.default_rng(0), 5, 2), "which"),
    (lambda: noise_halved_scenario().sample(np.random.default_rng(0), -1, 0), "trials"),
    (lambda: direction_seed_attack()(np.zeros((3, 1))), "outputs"),
    (lambda: noise_halved_scenario().log_likelihood_ratio(np.zeros((3, 2))), "outputs"),
])
def test_validation_errors_name_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()


def test_sample_rejects_a_non_generator():
    with pytest.raises(TypeError, match="rng"):
        shuffle_run_scenario().sample(0, 5, 0)
