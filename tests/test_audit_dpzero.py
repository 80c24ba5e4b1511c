"""DPZero audit scenarios (empirical_dp/dpzero_scenarios.py) and the whole-run planted bug of erratum E13
(empirical_dp/planted.py): the pair's sensitivity is exactly 2C/n, the exact μ and the log-likelihood ratio, the fast
and the reference algorithm agree draw for draw, Lemma 2.2's ε is never below the tight ε, the planted bug is caught
with a small budget and the verdict follows the claim."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from empirical_dp.audit import audit
from empirical_dp.dpzero_scenarios import (
    CanaryPair,
    canary_pair,
    dpzero_full_run_scenario,
    dpzero_releases,
    dpzero_run_scenario,
    dpzero_run_setup,
    dpzero_scenario,
    lemma22_epsilon,
    linear_loss,
    poisson_pld_epsilon,
    poisson_pld_interval,
)
from empirical_dp.planted import (
    PLANTED,
    TWINS,
    audit_planted,
    audit_twin,
    direction_seed_run_attack,
    direction_seed_run_scenario,
    planted_dpzero,
)
from empirical_dp.registry import DPZERO_BUILTIN_NAMES, SCENARIOS, Deferred, ScenarioRegistry
from empirical_dp.scenarios import poisson_gaussian_tight_epsilon
from reference.algorithms.dpzero import direction_for_step, dpzero, mezo
from reference.algorithms.dpzero_privacy import dpzero_lemma22_sigma
from reference.fast.conversions import gaussian_epsilon, gaussian_mu
from reference.rng import Streams, sample_sphere

FULL = SCENARIOS["dpzero-full-run"]
STEP = SCENARIOS["dpzero-step"]
# a short run for the draw-for-draw comparisons (the reference loops in Python)
SHORT = dict(steps=8, n=12, d=3, clip_threshold=0.7, epsilon=2.0, delta=1e-5, public_seed=5)


# ---------------------------------------------------------------------------------------------------
# The pair: sensitivity exactly 2C/n in every step


def test_canary_pair_replace_one_shifts_every_step_by_exactly_two_c():
    pair = canary_pair(12, 3, 40, 0.7, public_seed=5)
    assert isinstance(pair, CanaryPair) and pair.relation == "replace_one"
    u = np.array([direction_for_step(5, t, 3) for t in range(40)])
    np.testing.assert_array_equal(pair.directions, u)
    np.testing.assert_array_equal(pair.signs, np.sign(u[:, 0]))
    np.testing.assert_array_equal(pair.canary_differences, [-0.7 * pair.signs, 0.7 * pair.signs])
    d, d_prime = pair.datasets
    np.testing.assert_array_equal(d[1:], 0.0)  # the other records: zero loss
    np.testing.assert_array_equal(d_prime[1:], 0.0)
    np.testing.assert_array_equal(d[0], -d_prime[0])  # replace-one: the canary is negated
    assert d_prime[0, 0] == 0.7e6 and not d.flags.writeable


def test_canary_pair_add_remove_adds_the_canary_to_a_zero_slot():
    pair = canary_pair(10, 2, 6, 1.0, relation="add_remove")
    np.testing.assert_array_equal(pair.datasets[0], 0.0)
    np.testing.assert_array_equal(pair.canary_differences[0], 0.0)
    np.testing.assert_array_equal(pair.canary_differences[1], pair.signs)


def test_noiseless_algorithm_releases_differ_by_exactly_the_sensitivity():
    # Alg 2 without noise (MeZO with clipping, sphere directions) on D and D′: m_t = ∓C s_t/n exactly
    n, clip = SHORT["n"], SHORT["clip_threshold"]
    pair = canary_pair(n, SHORT["d"], SHORT["steps"], clip, public_seed=SHORT["public_seed"])
    means = [mezo(linear_loss, data, np.zeros(SHORT["d"]), steps=SHORT["steps"], step_size=0.1, perturbation=1e-3,
                  seed=SHORT["public_seed"], clip_threshold=clip, direction="sphere").releases
             for data in pair.datasets]
    np.testing.assert_array_equal(means[0], -clip * pair.signs / n)
    np.testing.assert_array_equal(means[1], clip * pair.signs / n)
    np.testing.assert_array_equal(np.abs(means[1] - means[0]), np.full(SHORT["steps"], 2 * clip / n))


def test_private_runs_with_the_same_noise_seed_differ_by_the_sensitivity():
    scenario = dpzero_run_scenario(**SHORT, backend="reference")
    a = scenario.sample(np.random.default_rng(3), 2, 0)
    b = scenario.sample(np.random.default_rng(3), 2, 1)  # same generator state: the same secret noise seeds
    signs = canary_pair(SHORT["n"], SHORT["d"], SHORT["steps"], 0.7, public_seed=5).signs
    np.testing.assert_allclose(b - a, np.broadcast_to(2 * 0.7 / SHORT["n"] * signs, a.shape), rtol=0, atol=1e-15)


def test_poisson_pair_shifts_a_sampled_step_by_exactly_c_over_b():
    # Alg 2 without noise, Poisson batches of expected size B = 5 of n = 20: the canary adds C s_t/B when sampled
    pair = canary_pair(20, 2, 60, 1.0, relation="add_remove", public_seed=2)
    runs = [mezo(linear_loss, data, np.zeros(2), steps=60, step_size=0.1, perturbation=1e-3, seed=2,
                 clip_threshold=1.0, direction="sphere", batching="poisson", batch_size=5).releases
            for data in pair.datasets]
    np.testing.assert_array_equal(runs[0], 0.0)
    sampled = runs[1] != 0
    np.testing.assert_array_equal(runs[1][sampled], pair.signs[sampled] / 5)
    assert 0 < sampled.sum() < 60  # both cases occur (q = 1/4)


def test_canary_clip_must_bind_with_margin():
    with pytest.raises(ValueError, match="public_seed"):
        canary_pair(10, 2, 50, 1.0, canary_scale=1.0)


# ---------------------------------------------------------------------------------------------------
# μ, tight ε, claims and the log-likelihood ratio


def test_full_run_mu_is_sqrt_t_times_two_c_over_n_over_sigma():
    setup = dpzero_run_setup()
    sigma = setup.plan.noise_std
    assert (setup.steps, setup.n, setup.d, setup.clip_threshold) == (100, 100, 2, 1.0)
    assert FULL.mu == pytest.approx(math.sqrt(100) * (2 / 100) / sigma, rel=1e-15)
    assert FULL.mu == pytest.approx(gaussian_mu(2.0, 1e-5), rel=1e-12)  # gdp_exact at ε = 2: μ*(2, 1e-5)
    assert FULL.mu == pytest.approx(0.5015516892, rel=1e-9)  # dpzero.md §5.2
    assert FULL.tight_epsilon == pytest.approx(2.0, rel=1e-12)
    assert FULL.tight_epsilon <= setup.plan.epsilon_tight
    assert FULL.claimed_epsilon == setup.plan.epsilon_claimed == 2.0
    assert STEP.mu == pytest.approx(gaussian_mu(1.0, 1e-5), rel=1e-12) and STEP.tight_epsilon == pytest.approx(1.0)
    # gdp_exact states μ-GDP: the claim is the plan's μ (rounded up), apart from the true μ of the pair
    assert FULL.claim_type == STEP.claim_type == "gdp"
    assert FULL.claimed_mu == setup.plan.mu_gdp and FULL.claimed_mu == pytest.approx(FULL.mu, rel=1e-12)
    assert FULL.claimed_epsilon == pytest.approx(gaussian_epsilon(1e-5, FULL.claimed_mu), rel=1e-9)


def test_full_batch_llr_is_the_exact_log_density_ratio_and_the_sign_statistic():
    scenario = dpzero_run_scenario(**SHORT, backend="reference")
    setup = dpzero_run_setup(**SHORT)
    sigma, n = setup.plan.noise_std, SHORT["n"]
    means = setup.pair.canary_differences / n
    x = np.random.default_rng(0).normal(0.0, 0.3, (6, SHORT["steps"]))
    want = norm.logpdf(x, means[1], sigma).sum(axis=1) - norm.logpdf(x, means[0], sigma).sum(axis=1)
    llr = scenario.log_likelihood_ratio(x)
    np.testing.assert_allclose(llr, want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(llr, 2 * SHORT["clip_threshold"] / (n * sigma**2) * (x @ setup.pair.signs),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="outputs"):
        scenario.log_likelihood_ratio(np.zeros((2, SHORT["steps"] + 1)))


def test_lemma22_claim_for_the_same_sigma_is_conservative():
    setup = dpzero_run_setup()
    # Lemma 2.2's σ at its own ε is the algorithm's σ: the inversion is right
    sigma = float(dpzero_lemma22_sigma(2 / 100, 100, setup.lemma22_epsilon, 1e-5))
    assert sigma == pytest.approx(setup.plan.noise_std, rel=1e-10)
    assert setup.lemma22_epsilon >= setup.tight_epsilon
    assert setup.lemma22_epsilon == pytest.approx(5.144, abs=1e-3)
    assert lemma22_epsilon(0.2023936046, 1e-5) == pytest.approx(2.0, rel=1e-9)  # dpzero.md §5.2


@settings(max_examples=60, deadline=None)
@given(mu=st.floats(1e-3, 20.0), log_delta=st.floats(-14, -1))
def test_lemma22_epsilon_is_never_below_the_tight_epsilon_up_to_80(mu, log_delta):
    delta = 10.0**log_delta
    claimed = lemma22_epsilon(mu, delta)
    if claimed <= 80:  # Lemma 2.2 is verified (and valid) only there (erratum E5)
        assert claimed >= gaussian_epsilon(delta, mu) * (1 - 1e-12)


def test_lemma22_accountant_scenario_claims_the_target():
    scenario = dpzero_run_scenario(accountant="lemma22", backend="reference")
    assert scenario.claimed_epsilon == 2.0
    assert scenario.claim_type == "epsilon_delta" and scenario.claimed_mu is None  # Lemma 2.2 states (ε, δ)
    assert scenario.mu == pytest.approx(0.2023936046, rel=1e-9)
    assert scenario.tight_epsilon == pytest.approx(0.735, abs=1e-3)  # dpzero.md §4, Lemma 2.2 slack


def test_poisson_llr_is_the_exact_mixture_log_density_ratio():
    setup = dpzero_run_setup(steps=4, n=20, batching="poisson", batch_size=5, public_seed=1)  # calibrates (~4 s)
    scenario = dpzero_scenario(setup)
    q, sigma, c = 0.25, setup.plan.noise_std, 1.0 / 5
    assert setup.plan.relation == "zero_out" and setup.plan.sensitivity == pytest.approx(c, rel=1e-15)
    x = np.random.default_rng(1).normal(0.0, 0.5, (5, 4))
    dens_d = norm.pdf(x, 0.0, sigma)
    dens_dp = (1 - q) * norm.pdf(x, 0.0, sigma) + q * norm.pdf(x, c * setup.pair.signs, sigma)
    want = np.log(dens_dp / dens_d).sum(axis=1)
    np.testing.assert_allclose(scenario.log_likelihood_ratio(x), want, rtol=1e-10, atol=1e-12)
    assert scenario.mu is None and scenario.claimed_epsilon == setup.plan.epsilon_claimed
    assert scenario.claim_type == "epsilon_delta"  # RDP converted to (ε, δ): no μ-GDP claim
    lower, upper = poisson_pld_interval(q, setup.plan.noise_multiplier, 4, 1e-5)
    assert scenario.tight_epsilon == upper == poisson_pld_epsilon(q, setup.plan.noise_multiplier, 4, 1e-5)
    assert lower <= scenario.claimed_epsilon  # the RDP claim bounds the exact ε, which is ≥ the certified lower end


# ---------------------------------------------------------------------------------------------------
# The Poisson tight ε: the certified PLD interval's upper end


@pytest.mark.parametrize("q, z", [(0.01, 1.0), (0.25, 2.0), (0.5, 0.8), (1.0, 3.0)])
def test_poisson_pld_interval_contains_the_exact_one_step_epsilon(q, z):
    # One step: the exact ε solves the mpmath closed form of δ(ε) (both directions), an independent computation.
    exact = poisson_gaussian_tight_epsilon(q, z, 1e-5)  # brentq to ~1e-14, then stepped up until δ(ε) ≤ δ
    lower, upper = poisson_pld_interval(q, z, 1, 1e-5)
    assert lower <= exact * (1 + 1e-12) and exact <= upper * (1 + 1e-12)
    assert (upper - lower) / upper <= 1e-3  # the requested tolerance (PLD_TOLERANCE)
    assert poisson_pld_epsilon(q, z, 1, 1e-5) == upper  # the yardstick is the conservative end


def test_poisson_pld_epsilon_needs_no_dp_accounting(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "dp_accounting", None)  # any import of it now raises ImportError
    lower, upper = poisson_pld_interval(0.03, 1.3, 7, 1e-6)  # parameters no other test caches
    assert 0 < lower <= upper < math.inf and poisson_pld_epsilon(0.03, 1.3, 7, 1e-6) == upper


def test_dp_accounting_pessimistic_pld_is_above_our_lower_end():
    # dp_accounting's pessimistic (connect-the-dots) estimate is an upper bound on the exact ε, so never below our
    # certified lower end (up to its float64 rounding).
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.GaussianDpEvent(2.0)), 50)
    theirs = accountant.get_epsilon(1e-5)
    lower, _ = poisson_pld_interval(0.1, 2.0, 50, 1e-5)
    assert theirs >= lower * (1 - 1e-9)


def test_poisson_pld_epsilon_is_none_outside_the_pld_range():
    assert poisson_pld_epsilon(0.1, 0.01, 10, 1e-5) is None  # noise multiplier below the PLD's 0.05
    with pytest.raises(ValueError, match="noise_multiplier"):
        poisson_pld_interval(0.1, 0.01, 10, 1e-5)


# ---------------------------------------------------------------------------------------------------
# Fast and reference algorithm: draw for draw


def test_fast_and_reference_releases_agree_draw_for_draw():
    setup = dpzero_run_setup(**SHORT)
    seeds = np.array([0, 7, 2**40 + 3])
    kwargs = {k: v for k, v in setup.run.items() if k not in ("backend", "chunk")}
    data = setup.pair.datasets[1].copy()
    data[1:] = np.random.default_rng(4).normal(0.0, 0.3, data[1:].shape)  # non-trivial other records
    fast = dpzero_releases(data, seeds, backend="fast", chunk=2, **kwargs)
    ref = dpzero_releases(data, seeds, backend="reference", **kwargs)
    assert fast.shape == ref.shape == (3, SHORT["steps"])
    np.testing.assert_array_equal(fast, ref)  # bitwise: same draws, same order of operations
    one = dpzero(linear_loss, data, np.zeros(3), noise_seed=7, step_size=0.1, perturbation=1e-3,
                 accountant="gdp_exact", seed=5, steps=8, clip_threshold=0.7, epsilon=2.0, delta=1e-5)
    np.testing.assert_array_equal(ref[1], one.releases)


def test_fast_and_reference_scenarios_sample_the_same_outputs():
    fast = dpzero_run_scenario(**SHORT, backend="fast", chunk=3)
    ref = dpzero_run_scenario(**SHORT, backend="reference")
    for which in (0, 1):
        a = fast.sample(np.random.default_rng(11), 4, which)
        b = ref.sample(np.random.default_rng(11), 4, which)
        np.testing.assert_array_equal(a, b)
    assert fast.sample(np.random.default_rng(0), 0, 1).shape == (0, SHORT["steps"])


def test_registered_full_run_trials_equal_the_reference_algorithm():
    # the audited scenario itself (T = 100, n = 100): two trials per dataset through the plain-loop reference
    ref = dpzero_full_run_scenario(backend="reference")
    for which in (0, 1):
        np.testing.assert_array_equal(FULL.sample(np.random.default_rng(which), 2, which),
                                      ref.sample(np.random.default_rng(which), 2, which))


# ---------------------------------------------------------------------------------------------------
# The planted bug of erratum E13 in the whole run


def test_planted_run_without_the_bug_is_the_reference_algorithm():
    setup = dpzero_run_setup(**SHORT)
    data = setup.pair.datasets[0].copy()
    data[1:] = np.random.default_rng(8).normal(0.0, 0.3, data[1:].shape)
    got = planted_dpzero(linear_loss, data, np.zeros(3), steps=8, step_size=0.1, perturbation=1e-3,
                         clip_threshold=0.7, noise_std=setup.plan.noise_std, seed=5, noise_seed=np.array([1, 9]),
                         noise_from_direction=False)
    for row, noise_seed in zip(got, (1, 9)):
        want = dpzero(linear_loss, data, np.zeros(3), steps=8, step_size=0.1, perturbation=1e-3, clip_threshold=0.7,
                      epsilon=2.0, delta=1e-5, accountant="gdp_exact", seed=5, noise_seed=noise_seed).releases
        np.testing.assert_array_equal(row, want)


def test_planted_run_draws_its_noise_from_the_direction_generator():
    setup = dpzero_run_setup(**SHORT)
    sigma = setup.plan.noise_std
    got = planted_dpzero(linear_loss, setup.pair.datasets[1], np.zeros(3), steps=8, step_size=0.1,
                         perturbation=1e-3, clip_threshold=0.7, noise_std=sigma, seed=5, noise_seed=np.array([1, 2]))
    np.testing.assert_array_equal(got[0], got[1])  # the secret seed plays no part
    for t in range(8):
        rng = Streams(5).generator("dpzero", "direction", t)
        np.testing.assert_array_equal(sample_sphere(rng, (), 3, math.sqrt(3)), direction_for_step(5, t, 3))
        residual = got[0, t] - sigma * rng.standard_normal()
        assert residual == pytest.approx(0.7 * setup.pair.signs[t] / 12, rel=0, abs=1e-15)


def test_planted_full_run_is_caught_with_a_small_budget():
    assert PLANTED["noise_from_direction_seed_full_run"][2] <= 500
    result = audit_planted("noise_from_direction_seed_full_run", seed=1, trials=200)
    assert result.verdict == "violation"
    assert result.counts.fp == result.counts.fn == 0  # perfectly separated
    assert result.epsilon_lb > 1.5 * result.claimed_epsilon and result.claimed_epsilon == 2.0
    # the plan's claim (gdp_exact: μ-GDP) is its twin's; both of its bounds refute it, the GDP one by more
    twin_claim = TWINS["noise_from_direction_seed_full_run"][0]().claim
    assert result.claim_type == twin_claim.kind == "gdp" and result.claimed_mu == twin_claim.mu
    assert result.decided_by == "gdp_mu" and result.margin == result.gdp_mu_lb - result.claimed_mu > 0
    scores = [direction_seed_run_attack()(direction_seed_run_scenario().sample(np.random.default_rng(w), 3, w))
              for w in (0, 1)]
    np.testing.assert_allclose(scores[0], -1.0, rtol=0, atol=1e-12)  # ∓T·C/n
    np.testing.assert_allclose(scores[1], 1.0, rtol=0, atol=1e-12)


def test_planted_full_run_twin_is_the_real_algorithm_and_consistent():
    twin = TWINS["noise_from_direction_seed_full_run"][0]()
    a = twin.sample(np.random.default_rng(2), 3, 1)
    b = FULL.sample(np.random.default_rng(2), 3, 1)
    np.testing.assert_array_equal(a, b)
    result = audit_twin("noise_from_direction_seed_full_run", seed=0, trials=300)
    assert result.verdict == "consistent"


# ---------------------------------------------------------------------------------------------------
# Verdicts and the registry


def test_full_run_audit_is_consistent_and_an_underclaim_is_a_violation():
    result = audit(FULL, 2000, seed=3)
    assert result.verdict == "consistent"
    assert result.epsilon_lb <= result.tight_epsilon and result.gdp_mu_lb <= FULL.mu
    assert result.known_law_oracle_epsilon_lb is not None  # μ-GDP with its likelihood ratio
    assert result.claim_type == "gdp" and result.decided_by in ("clopper_pearson_epsilon", "gdp_mu")
    # an (ε, δ) underclaim is refuted by Clopper–Pearson (the only bound valid against it), a μ-GDP underclaim too
    underclaimed = dataclasses.replace(FULL, name="dpzero-full-run-underclaimed", claimed_epsilon=0.1, claimed_mu=None)
    r = audit(underclaimed, 2000, seed=3)
    assert r.verdict == "violation" and r.decided_by == "clopper_pearson_epsilon" and r.margin > 0
    gdp_underclaimed = dataclasses.replace(FULL, name="dpzero-full-run-gdp-underclaimed", claimed_epsilon=None,
                                           claimed_mu=0.1)
    r = audit(gdp_underclaimed, 2000, seed=3)
    # both bounds are valid against it (each at 0.975); at 2 000 trials the Clopper–Pearson one is the stronger
    assert r.verdict == "violation" and r.verdict_bounds == ("clopper_pearson_epsilon", "gdp_mu") and r.margin > 0
    with pytest.raises(ValueError, match="claimed_epsilon"):  # ε alone would contradict the μ-GDP claim
        dataclasses.replace(FULL, claimed_epsilon=0.1)


def test_registry_builds_deferred_entries_once_on_first_use():
    calls = []

    def factory():
        calls.append(1)
        return STEP

    registry = ScenarioRegistry({"a": Deferred(factory)})
    assert "a" in registry and not calls
    assert registry["a"] is STEP and registry.get("a") is STEP and registry.values() == [STEP]
    assert registry.items() == [("a", STEP)] and len(calls) == 1
    assert registry.get("missing") is None
    assert set(DPZERO_BUILTIN_NAMES) <= set(SCENARIOS)
    assert all(SCENARIOS[name].name == name for name in ("dpzero-step", "dpzero-full-run"))


@pytest.mark.parametrize("call, parameter", [
    (lambda: canary_pair(10, 2, 5, 1.0, relation="swap"), "relation"),
    (lambda: canary_pair(0, 2, 5, 1.0), "n"),
    (lambda: canary_pair(10, 2, 5, -1.0), "clip_threshold"),
    (lambda: dpzero_run_setup(batching="shuffle"), "batching"),
    (lambda: dpzero_run_setup(batching="poisson", batch_size=10, accountant="rdp_opacus"), "accountant"),
    (lambda: dpzero_run_setup(backend="gpu"), "backend"),
    (lambda: dpzero_run_setup(n=1), "n"),
    (lambda: dpzero_releases(np.zeros((3, 2)), np.array([-1]), steps=2, clip_threshold=1.0, epsilon=1.0,
                             delta=1e-5, public_seed=0), "noise_seeds"),
    (lambda: dpzero_releases(np.zeros((3, 2)), np.array([1.5]), steps=2, clip_threshold=1.0, epsilon=1.0,
                             delta=1e-5, public_seed=0), "noise_seeds"),
    (lambda: lemma22_epsilon(0.0, 1e-5), "mu"),
    (lambda: lemma22_epsilon(1.0, 1.0), "delta"),
    (lambda: planted_dpzero(linear_loss, np.zeros((3, 2)), np.zeros(2), steps=1, step_size=1.0, perturbation=1.0,
                            clip_threshold=1.0, noise_std=1.0, seed=0, noise_seed=-1), "noise_seed"),
    (lambda: STEP.sample(np.random.default_rng(0), 2, 2), "which"),
    (lambda: poisson_pld_epsilon(0.0, 1.0, 10, 1e-5), "sampling_probability"),
    (lambda: poisson_pld_epsilon(0.1, math.nan, 10, 1e-5), "noise_multiplier"),
    (lambda: poisson_pld_epsilon(0.1, 1.0, 0, 1e-5), "steps"),
    (lambda: poisson_pld_epsilon(0.1, 1.0, 10, 1.0), "delta"),
    (lambda: poisson_pld_interval(0.1, 1.0, 10, 1e-5, tolerance=0.0), "tolerance"),
])
def test_validation_errors_name_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()
